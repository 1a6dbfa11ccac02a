"""The ``setuptools`` host: one plugin of a group setuptools loads, in a setuptools
``Distribution``, in an empty directory.

What setuptools does with each group (``setuptools/dist.py``, ``command/sdist.py``):

- ``distutils.commands``: ``Distribution.get_command_class(name)`` takes the first entry point of
  that name and loads it; ``get_command_obj`` creates the command (``initialize_options``) and
  running it finalizes it first. This host does both, and ``finalize_options()``: a command that
  needs options only a real project gives (a ``DistutilsError`` saying so) is said, not failed;
  anything else it raises fails, as it would in every build that uses the command.
- ``setuptools.finalize_distribution_options``: every installed hook is called by
  ``Distribution.finalize_options()`` in every build; one that raises breaks them all. This host
  runs it.
- ``setuptools.file_finders``: each is called with the directory an sdist is made from; this host
  calls it on the empty directory.
- ``distutils.setup_keywords`` and ``egg_info.writers``: called only with a project's keyword
  value or an ``egg_info`` command, so loaded, and required to be callable.

Registrations: ``command``, ``hook``, ``file_finder``, ``keyword``, ``writer``, named by the
entry point. setuptools is imported at call time only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    require_callable,
    resolve,
    summary,
)

_KINDS = {
    "distutils.commands": "command",
    "setuptools.finalize_distribution_options": "hook",
    "setuptools.file_finders": "file_finder",
    "distutils.setup_keywords": "keyword",
    "egg_info.writers": "writer",
}

#: the project a Distribution describes here
ATTRS = {"name": "sandboxverify-demo", "version": "0.1", "script_name": "setup.py"}


def load_setuptools(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Load the plugin as setuptools does and use it where setuptools would; raises
    :class:`PluginLoadError`: ``application`` (setuptools missing, or it failed with the plugin),
    ``import``, ``validate`` (not a command class, not callable, another command of the name)."""
    del registry, context  # a setuptools plugin registers no tools, and needs no limits
    kind = kind_of_group(_KINDS, "setuptools", ref.group)
    dist = import_application("setuptools.dist", "setuptools", ref.group)
    target = resolve(ref)
    with _empty_directory():
        if kind == "command":
            description = _command(dist, ref, target)
        else:
            require_callable(ref, target, "a function setuptools calls")
            description = summary(target)
            if kind == "hook":
                # creating a Distribution runs finalize_options(), and so every installed hook
                _use("Distribution(...).finalize_options()", dist.Distribution, ATTRS)
            elif kind == "file_finder":
                found = _use(f"the file finder {ref.name!r} on an empty directory", target, "")
                _use(f"listing the files {ref.name!r} finds", list, found)
    registration = {"name": ref.name, "kind": kind, "description": description}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _command(dist: Any, ref: EntryPointRef, target: Any) -> str | None:
    """``get_command_class``, ``get_command_obj`` and ``finalize_options()`` as a build does."""
    import distutils.cmd  # noqa: PLC0415 - setuptools' own, once setuptools is imported
    import distutils.errors  # noqa: PLC0415

    distribution = _use("Distribution(...)", dist.Distribution, ATTRS)
    cls = _use(f"get_command_class({ref.name!r})", distribution.get_command_class, ref.name)
    if cls is not target:
        shown = f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls)}"
        raise PluginLoadError(
            "validate",
            LookupError(
                f"setuptools finds {shown} for the command {ref.name!r}, not {ref.value!r}: "
                "its own commands and the first entry point of a name win"
            ),
        )
    if not (isinstance(cls, type) and issubclass(cls, distutils.cmd.Command)):
        shown = getattr(cls, "__qualname__", None) or type(cls).__name__
        raise PluginLoadError(
            "validate",
            TypeError(
                f"distutils.commands entry point {ref.name!r} = {ref.value!r} resolved to "
                f"{shown}, not a Command subclass: setuptools creates it as a command"
            ),
        )
    command = _use(f"get_command_obj({ref.name!r})", distribution.get_command_obj, ref.name)
    description = getattr(cls, "description", None) or summary(cls)
    try:
        command.ensure_finalized()
    except distutils.errors.DistutilsError as exc:
        # it needs what a real project gives it (options, files): it loads and is created
        return f"{description or ref.name} (not finalized without a project: {exc})"
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=f"{ref.name}.finalize_options()") from exc
    return description


def _use(what: str, step: Any, *args: Any) -> Any:
    try:
        return step(*args)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=what) from exc


@contextlib.contextmanager
def _empty_directory() -> Iterator[None]:
    """An empty working directory: no project files for setuptools or the plugin to find."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="sandboxverify-setuptools-") as directory:
        os.chdir(directory)
        try:
            yield
        finally:
            os.chdir(before)
