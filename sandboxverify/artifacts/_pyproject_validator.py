"""validate-pyproject's validator for ``pyproject.toml``, compiled to Python once and kept.

validate-pyproject compiles its JSON schemas into a Python function in every process that
validates (~0.1 s, on the critical path of every check). Its own ``pre_compile`` writes that
function out as a package; it is written once per version of validate-pyproject, fastjsonschema,
sandboxverify and interpreter into the cache directory (beside the artifacts), with its
bytecode, and imported from there (~0.02 s). What is compiled is the same schemas the in-process
validator uses, so the verdict is the same either way; where the package cannot be written or
imported the schemas are compiled in process, as before.

Only validate-pyproject's own plugins (the ``[tool.setuptools]`` and ``[tool.distutils]``
schemas) are used, not every plugin installed beside sandboxverify: a project's verdict does
not depend on what else the machine has.
"""

from __future__ import annotations

import compileall
import contextlib
import hashlib
import importlib.util
import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify._version import __version__
from sandboxverify.artifacts._cache import default_root

#: validate-pyproject's built-in tool plugins
_BUILTIN_TOOLS = ("distutils", "setuptools")
_DIRECTORY = "validate-pyproject"


@frozen
class PyprojectValidator:
    """``validate(document)`` raises ``error`` (schema errors, with ``message``) or another
    ``ValueError`` (validate-pyproject's checks beside the schema)."""

    validate: Callable[[Any], object]
    error: type[ValueError]


#: a check loads it ahead on a thread of its own (``pipeline/_headstart``) while it builds
_loading = threading.Lock()


@cache
def pyproject_validator() -> PyprojectValidator:
    """One per process: the compiled package from the cache directory, written there first if
    need be; the schemas compiled in process where that fails."""
    with _loading:  # a second caller waits for the first, then finds the package imported
        with contextlib.suppress(Exception):  # a cache that cannot be used is no cache
            return compiled_validator(default_root() / _DIRECTORY)
        return in_process_validator()


def in_process_validator() -> PyprojectValidator:
    from validate_pyproject.api import Validator  # noqa: PLC0415 - ~0.1 s to import
    from validate_pyproject.errors import ValidationError  # noqa: PLC0415

    return PyprojectValidator(Validator(_plugins()), ValidationError)


def _plugins() -> list[Any]:
    from validate_pyproject.api import load_builtin_plugin  # noqa: PLC0415
    from validate_pyproject.plugins import PluginWrapper  # noqa: PLC0415

    return [PluginWrapper(tool, load_builtin_plugin) for tool in _BUILTIN_TOOLS]


def compiled_validator(root: Path) -> PyprojectValidator:
    key = _key()
    package = root / key
    if not (package / "__init__.py").is_file():
        _write(package)
    module = _load(f"_sandboxverify_pyproject_{key[:16]}", package)
    return PyprojectValidator(module.validate, module.ValidationError)


def _key() -> str:
    from importlib.metadata import version  # noqa: PLC0415

    inputs = {
        "validate-pyproject": version("validate-pyproject"),
        "fastjsonschema": version("fastjsonschema"),
        "trove-classifiers": version("trove-classifiers"),
        "sandboxverify": __version__,
        "python": sys.implementation.cache_tag,
        "plugins": _BUILTIN_TOOLS,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _write(package: Path) -> None:
    """Compile into a staging directory, with bytecode (also where ``PYTHONDONTWRITEBYTECODE``
    would keep the import from writing it), then rename it into place: a reader never sees
    half a package, and of two checks writing at once one wins."""
    from validate_pyproject.pre_compile import pre_compile  # noqa: PLC0415

    package.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=package.parent))
    try:
        pre_compile(staging, plugins=_plugins())
        if not compileall.compile_dir(staging, quiet=2):
            raise OSError(f"could not compile {staging}")
        staging.rename(package)
    except OSError:
        if not (package / "__init__.py").is_file():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _load(name: str, package: Path) -> Any:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {package}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
