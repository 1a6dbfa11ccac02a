"""The ``pyinstaller`` host: one ``pyinstaller40`` entry point, read as PyInstaller reads it.

PyInstaller reads only the entry points of the group named ``hook-dirs``
(``discover_hook_directories``, in a subprocess of its own): it calls what ``EntryPoint.load()``
returns and extends its hook path with the directories the call returns; a failure is a warning
and the hooks are silently missing from every frozen application. ``tests`` is read the same way
by PyInstaller's test runner (``PyInstaller.utils.run_tests``); any other name is read by no one.

This host calls the function as PyInstaller does, requires every directory it returns to exist,
compiles each ``hook-<module>.py`` there (PyInstaller runs them while it analyses an
application: one that does not compile stops the build) and asks PyInstaller's own discovery,
which must list the directories. The hook files are not importable modules of the package; an
entry point naming a function that returns data (not an object to use) is what PyInstaller
reads, so nothing else is asked of it.

Registrations: ``hook_dir`` per directory (its path below site-packages), ``hook`` per hook
file (the module it hooks), ``test_dir`` for ``tests``. PyInstaller is imported at call time.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    require_callable,
    resolve,
)

_KINDS = {"pyinstaller40": "hook_dir"}
#: the entry-point names PyInstaller reads, and the kind of directory each returns
NAMES = {"hook-dirs": "hook_dir", "tests": "test_dir"}


def load_pyinstaller(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Call the entry point's function as PyInstaller does, check what it returns, and ask
    PyInstaller's discovery; raises :class:`PluginLoadError`: ``application`` (PyInstaller
    missing, or it does not find the directories), ``import``, ``validate`` (a name PyInstaller
    does not read, not callable), ``setup`` (the call raised or returned no directories)."""
    del registry, context  # hook directories register no tools, and need no limits
    kind_of_group(_KINDS, "PyInstaller", ref.group)
    kind = NAMES.get(ref.name)
    if kind is None:
        raise PluginLoadError(
            "validate",
            LookupError(
                f"PyInstaller reads only the pyinstaller40 entry points named 'hook-dirs' (and "
                f"'tests', for its test runner), not {ref.name!r}: this one is never used"
            ),
        )
    import_application("PyInstaller", "pyinstaller", ref.group)
    function = resolve(ref)
    require_callable(ref, function, "a function returning directories")
    directories = _directories(ref, function)
    tools = [_registration(kind, directory) for directory in directories]
    if kind == "hook_dir":
        tools += [hook for directory in directories for hook in _hooks(directory)]
        _discovered(directories)
    return LoadedPlugin(ref=ref, tools=tools, handlers={})


def _directories(ref: EntryPointRef, function: Any) -> list[Path]:
    try:
        returned = function()
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("setup", exc, where=f"{ref.value}()") from exc
    if isinstance(returned, (str, os.PathLike)) or not hasattr(returned, "__iter__"):
        raise PluginLoadError(
            "setup",
            TypeError(f"{ref.value}() returned {returned!r}, not a list of directories"),
        )
    directories = [Path(entry) for entry in returned]
    missing = [str(path) for path in directories if not path.is_dir()]
    if missing or not directories:
        why = f"no such directory: {', '.join(missing)}" if missing else "an empty list"
        raise PluginLoadError(
            "setup", FileNotFoundError(f"{ref.value}() returned {why}: PyInstaller finds no hooks")
        )
    return [path.resolve() for path in directories]


def _hooks(directory: Path) -> list[dict[str, Any]]:
    """The hook files of a directory, each compiled as PyInstaller will run it."""
    hooks = []
    for path in sorted(directory.glob("hook-*.py")):
        try:
            compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError, OSError) as exc:
            raise PluginLoadError("application", exc, where=f"the hook file {path.name}") from exc
        module = path.stem[len("hook-") :]
        hooks.append({"name": module, "kind": "hook", "description": f"hook for {module}"})
    return [{**hook, "parameters": None} for hook in hooks]


def _discovered(directories: list[Path]) -> None:
    """PyInstaller's own discovery lists the directories."""
    build_main = importlib.import_module("PyInstaller.building.build_main")
    try:
        found = build_main.discover_hook_directories()
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where="discover_hook_directories()") from exc
    listed = {Path(entry[0] if isinstance(entry, tuple) else entry).resolve() for entry in found}
    missing = [str(path) for path in directories if path not in listed]
    if missing:
        raise PluginLoadError(
            "application",
            ApplicationFailed(
                "PyInstaller's discover_hook_directories() does not list "
                + ", ".join(missing)
                + " (its warnings say why)"
            ),
        )


def _registration(kind: str, directory: Path) -> dict[str, Any]:
    name = _below_site(directory)
    return {"name": name, "kind": kind, "description": str(directory), "parameters": None}


def _below_site(directory: Path) -> str:
    """The directory's path below the nearest ``sys.path`` entry that holds it
    (``webview/__pyinstaller``)."""
    import sys  # noqa: PLC0415

    below = []
    for entry in sys.path:
        try:
            below.append(directory.relative_to(Path(entry).resolve()))
        except (ValueError, OSError):
            continue
    return min(below, key=lambda path: len(path.parts)).as_posix() if below else str(directory)
