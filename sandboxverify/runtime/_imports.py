"""The ``imports`` action: import every module the installed distribution ships, one by one.

The modules come from the distribution's RECORD (what the installer actually put in
site-packages), not from the source tree. They are imported in one process, packages before
their submodules. Before each import the module's name goes to a progress file, flushed, so
that if the interpreter dies or hangs the host can still name the module it died in. Afterwards
every loaded module must come from the sandbox's site-packages, the standard library or the
runtime: anything else (a ``.pth`` file or a ``sys.path`` hack reaching into a source tree)
would not exist on a stranger's machine.

The modules the distribution's entry points name (its plugins and console scripts) are imported
first, as their applications import them: a failure they meet, or a module whose failure made
one of them fail, is ``reached_by`` that entry point, and the host never excuses it. Each
failure carries its ``cause`` (``_causes``): what it was missing.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import os
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from importlib import machinery

from sandboxverify.runtime._sitedirs import is_pth, path_sources, site_packages
from sandboxverify.runtime._tracebacks import format_traceback

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import IO, Any

    from sandboxverify.runtime._discovery import Installed

#: the directory the runtime copy lives in (appended last to ``sys.path`` by the bootstrap)
RUNTIME_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
_BYTECODE = (".pyc", ".pyo")


def import_all(request: dict[str, Any]) -> dict[str, Any]:
    """Run the action: ``dist``, ``skip`` (globs), ``exclude`` ({module: reason}), ``progress``;
    ``only``: import just these modules (a sandbox with an extra installed), entry points
    not first."""
    from sandboxverify.runtime._discovery import find_distribution, record_entries  # noqa: PLC0415

    dist = find_distribution(request["dist"])
    if dist is None:
        return _error("PackageNotFoundError", f"{request['dist']!r} is not installed")
    files = record_entries(dist)
    if files is None:
        return _error("FileNotFoundError", f"{request['dist']!r} has no RECORD file")
    # where the installer put the distribution counts too, whatever sysconfig says
    site_dirs = _unique([*site_packages(), os.path.realpath(str(dist.locate_file("")))])
    located = [dist.locate_file(entry) for entry in files]
    missing = missing_files(files, located)
    modules, skipped = plan(
        # a missing file is reported as missing, not once more as a module that fails
        module_names([path for path in located if os.path.exists(path)], site_dirs),
        skip=request.get("skip") or (),
        exclude=dict(request.get("exclude") or {}),
    )
    only = request.get("only")
    if only is not None:
        modules, skipped = [name for name in modules if name in set(only)], []
    with open(request["progress"], "w", encoding="utf-8") as progress:
        _note(progress, {"planned": modules})
        entries = entry_modules(dist, modules) if only is None else {}
        reached = reach(entries, set(modules), progress)
        configure = request.get("configure")
        results, failed_parents = import_modules(
            modules, progress, configure if isinstance(configure, dict) else None
        )
        _note(progress, {"done": True})
    for result in results:
        if not result["ok"] and result["module"] in reached:
            result["reached_by"] = reached[result["module"]]
    skipped += failed_parents
    own = {os.path.realpath(path) for path in located if is_pth(path)}
    return {
        "ok": True,
        "error": None,
        "modules": modules,
        "results": results,
        "skipped": skipped,
        "missing_files": missing,
        "outside": outside_modules(
            allowed_roots(site_dirs),
            path_sources(site_dirs, own),
            linked_from=standard_library(),
        ),
    }


def missing_files(entries: Sequence[str], located: Sequence[str]) -> list[str]:
    """RECORD entries that do not exist; bytecode is the installer's business, not the wheel's."""
    return [
        entry
        for entry, path in zip(entries, located)
        if "__pycache__" not in entry.replace(os.sep, "/").split("/")
        and not entry.endswith(_BYTECODE)
        and not os.path.exists(path)
    ]


def module_names(files: Iterable[str], site_dirs: Sequence[str]) -> list[str]:
    """Dotted names of the ``.py`` files and extension modules installed in ``site_dirs``."""
    suffixes = sorted(machinery.EXTENSION_SUFFIXES, key=len, reverse=True)
    names: set[str] = set()
    for path in files:
        parts = _relative_parts(os.path.realpath(path), site_dirs)
        if not parts or parts[0].endswith((".dist-info", ".data")):
            continue
        last = parts[-1]
        if last.endswith(".py"):
            stem = last[: -len(".py")]
        else:
            stem = next((last[: -len(s)] for s in suffixes if last.endswith(s)), "")
        dotted = [*parts[:-1], stem]
        if dotted[-1] == "__init__":
            dotted.pop()
        if dotted and all(part.isidentifier() for part in dotted):
            names.add(".".join(dotted))
    return sorted(names, key=lambda name: name.split("."))


def plan(
    names: Sequence[str], *, skip: Sequence[str], exclude: dict[str, str]
) -> tuple[list[str], list[dict[str, str]]]:
    """What to import, packages first, and what not to (with why).

    Skipping a package skips its submodules too: importing them would import the package.
    """
    modules: list[str] = []
    skipped: list[dict[str, str]] = []
    for name in sorted(names, key=lambda n: n.split(".")):
        lineage = _lineage(name)
        reason = next((exclude[m] for m in lineage if m in exclude), None)
        if reason is None and name.split(".")[-1] == "__main__":
            reason = "a __main__ module runs its program when imported"
        if reason is None:
            glob = next((g for g in skip for m in lineage if fnmatch.fnmatchcase(m, g)), None)
            reason = f"--import-skip {glob}" if glob is not None else None
        if reason is None:
            modules.append(name)
        else:
            skipped.append({"module": name, "reason": reason})
    return modules, skipped


def entry_modules(dist: Installed, modules: Sequence[str]) -> dict[str, str]:
    """The modules of ``modules`` the distribution's entry points name, each with its first
    entry point (``group:name``). A group whose entry points name a file in a package
    (``napari.manifest``) names no module: its application reads the file, imports nothing."""
    from sandboxverify.runtime.hosts import names_file  # noqa: PLC0415

    planned = set(modules)
    found: dict[str, str] = {}
    for entry in sorted(dist.entry_points, key=lambda e: (e.group, e.name)):
        if names_file(entry.group):
            continue
        module = entry.value.split(":", 1)[0].split("[", 1)[0].strip()
        if module in planned:
            found.setdefault(module, f"{entry.group}:{entry.name}")
    return found


class _Attempts:
    """A finder first on ``sys.meta_path`` that finds nothing: it notes each module asked for."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        self.names.append(fullname)


def reach(entries: dict[str, str], own: set[str], progress: IO[str]) -> dict[str, str]:
    """Import each entry point's module first, as its application does: the module itself, and
    every module of ours whose import it attempted when it failed, are reached by it. (A
    failure the entry point's module survived, a guarded optional import, is not met.)"""
    reached: dict[str, str] = {}
    for module, entry in entries.items():
        reached.setdefault(module, entry)
        attempts = _Attempts()
        _note(progress, {"reaching": module})
        sys.meta_path.insert(0, attempts)
        try:
            importlib.import_module(module)
        except BaseException as exc:  # what users would meet: pytest's skip, a config error...
            if isinstance(exc, KeyboardInterrupt):
                raise
            for name in attempts.names:
                if name in own:
                    reached.setdefault(name, entry)
        finally:
            sys.meta_path.remove(attempts)
        _note(progress, {"reached": module})
    return reached


def import_modules(
    modules: Sequence[str], progress: IO[str], configure: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Import each module in turn; a module whose package failed is not tried (same cause).
    ``configure``: the application to set up first (``_configured``); if that raises, each
    module fails with what it raised."""
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    if configure is not None:
        from sandboxverify.runtime._configured import configure as set_up  # noqa: PLC0415

        try:
            set_up(configure)
        except Exception as exc:  # an app's own code runs in its setup
            return [_failed(name, exc) for name in modules], skipped
    not_found = NotFound()
    sys.meta_path.append(not_found)
    try:
        _import_each(modules, progress, not_found, results, skipped)
    finally:
        if not_found in sys.meta_path:
            sys.meta_path.remove(not_found)
    return results, skipped


def _import_each(
    modules: Sequence[str],
    progress: IO[str],
    not_found: NotFound,
    results: list[dict[str, Any]],
    skipped: list[dict[str, str]],
) -> None:
    failed: set[str] = set()
    for name in modules:
        broken = next((m for m in _lineage(name)[:-1] if m in failed), None)
        if broken is not None:
            failed.add(name)
            skipped.append({"module": name, "reason": f"its package {broken} failed to import"})
            continue
        _note(progress, {"importing": name})
        del not_found.names[:]
        try:
            importlib.import_module(name)
        except BaseException as exc:  # a module may raise any exception class at import
            if isinstance(exc, KeyboardInterrupt):
                raise
            failed.add(name)
            result = _failed(name, exc)
            result["cause"]["swallowed"] = list(dict.fromkeys(not_found.names))
        else:
            result = {"module": name, "ok": True, "error": None}
        results.append(result)
        _note(progress, result)


class NotFound:
    """A finder last on ``sys.meta_path``, asked only for what no other finder found: the
    top-level modules a module's import looked for in vain. A failure that caught the
    ``ModuleNotFoundError`` no longer says what it lacked (kombu's ``confluentkafka``: ``try:
    from confluent_kafka import KafkaException`` ``except ImportError: ...``, then
    ``class NoBrokersAvailable(KafkaException)``: ``NameError``)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if path is None:  # a submodule of a package found is that package's lack of a name
            self.names.append(fullname)


def _failed(name: str, exc: BaseException) -> dict[str, Any]:
    from sandboxverify.runtime._causes import cause_of  # noqa: PLC0415 - failures only

    return {
        "module": name,
        "ok": False,
        "error": {
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": format_traceback(exc),
        },
        "cause": cause_of(exc),
    }


def allowed_roots(site_dirs: Sequence[str]) -> list[str]:
    """Where loaded modules may come from: site-packages, the standard library, the runtime."""
    paths = sysconfig.get_paths()
    roots = [*site_dirs, paths["stdlib"], paths["platstdlib"], RUNTIME_ROOT]
    bases = [os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)]
    # a zipped standard library (python3XY.zip) sits next to the lib directory
    roots += [
        entry
        for entry in sys.path
        if entry.endswith(".zip") and any(_within(os.path.realpath(entry), b) for b in bases)
    ]
    return _unique(os.path.realpath(root) for root in roots)


def standard_library() -> list[str]:
    """The standard library's directories as the interpreter names them, links unresolved."""
    paths = sysconfig.get_paths()
    return _unique(os.path.abspath(paths[key]) for key in ("stdlib", "platstdlib"))


def outside_modules(
    roots: Sequence[str], sources: dict[str, dict[str, Any]], linked_from: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Loaded modules whose file lies outside ``roots``, with the ``.pth`` file that let them in.
    A file found in one of ``linked_from`` counts as inside wherever its link leads: Debian's
    Python links the standard library's ``sitecustomize.py`` to ``/etc``."""
    found: list[dict[str, Any]] = []
    for name, module in sorted(sys.modules.items(), key=lambda item: str(item[0])):
        try:
            file = vars(module).get("__file__")
        except TypeError:  # not a module object
            continue
        if not isinstance(file, str) or not file:
            continue
        real = os.path.realpath(file)
        if any(_within(real, root) for root in roots):
            continue
        if any(_within(os.path.abspath(file), root) for root in linked_from):
            continue
        entry: dict[str, Any] = {"module": name, "file": file}
        via = next((s for d, s in sources.items() if _within(real, d)), None)
        if via is not None:
            entry.update(via)
        found.append(entry)
    return found


def _relative_parts(path: str, site_dirs: Sequence[str]) -> tuple[str, ...]:
    for site_dir in site_dirs:
        if _within(path, site_dir) and path != site_dir:
            return tuple(os.path.relpath(path, site_dir).split(os.sep))
    return ()


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _lineage(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b", "a.b.c"]``."""
    parts = name.split(".")
    return [".".join(parts[: index + 1]) for index in range(len(parts))]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _note(progress: IO[str], data: dict[str, Any]) -> None:
    progress.write(json.dumps(data) + "\n")
    progress.flush()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"type": kind, "message": message, "traceback": ""}}
