"""Plugins named by file: ``plugins/guard.py`` (its ``setup``) or ``plugins/guard.py:register``.

A plugin that is not installed (a test double for the application, a plugin still being
written) can be loaded from its file, as the reference harness loads extensions by path. The
file is imported as a module of its own (its directory first on ``sys.path``, so it imports
its neighbours), and then loaded like any ``module:attr`` plugin. A relative path is relative
to the working directory, or, in a TOML playbook, to the playbook.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts import PluginLoadError

_FILE_SPEC = re.compile(r"(?P<path>.+\.py)(?::(?P<attr>[A-Za-z_][A-Za-z0-9_.]*))?")


def file_spec(spec: str) -> tuple[str, str | None] | None:
    """``(path, attr)`` if ``spec`` names a plugin by its file, else None."""
    match = _FILE_SPEC.fullmatch(spec.strip())
    if match is None:
        return None
    return match.group("path"), match.group("attr")


def absolute_file_spec(spec: str, base: str) -> str:
    """``spec`` with its file's path made absolute against ``base`` (other specs unchanged)."""
    parsed = file_spec(spec)
    if parsed is None:
        return spec
    path, attr = parsed
    path = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    return f"{path}:{attr}" if attr else path


@dataclass(frozen=True)
class PluginFile:
    """A plugin named by ``path`` (``spec`` as written), imported when it loads."""

    spec: str
    path: str
    attr: str | None

    def load(self, group: str, host: str) -> EntryPointRef:
        """Import the file; the entry point that names what it provides."""
        path = os.path.abspath(self.path)
        if not os.path.isfile(path):
            raise PluginLoadError("import", FileNotFoundError(f"no plugin file {path}"))
        module = _import_file(path)
        if host == "native":
            return EntryPointRef(self.spec, group, f"{module}:{self.attr or 'setup'}")
        return EntryPointRef(self.spec, group, f"{module}:{self.attr}" if self.attr else module)


def _import_file(path: str) -> str:
    """The name ``path`` is imported under (once per file and process)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() else "plugin_file"
    known = sys.modules.get(name)
    if known is not None and os.path.abspath(getattr(known, "__file__", "") or "") == path:
        return name
    if known is not None or name in sys.builtin_module_names:
        name = f"{name}_{hashlib.sha256(path.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginLoadError("import", ImportError(f"cannot import {path}"))
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its neighbours import as they do when it runs as a script
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        raise PluginLoadError("import", exc) from exc
    return name
