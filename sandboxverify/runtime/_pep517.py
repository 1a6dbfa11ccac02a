"""PEP 517 hooks for one build step, the backend imported once for all of them.

Run as a script by the build environment's interpreter, from a directory of its own (so nothing
next to it is importable)::

    python _pep517.py REQUEST.json

A step is ``sdist`` (``get_requires_for_build_sdist``, then ``build_sdist``) or ``wheel``
(``get_requires_for_build_wheel``, then ``build_wheel``), run in the tree the request names:
the wheel's is the sdist as sandboxverify unpacked it, never unpacked here.

The backend is imported once. Where ``os.fork`` exists each hook then runs in a child forked
from that process, so it starts from a freshly imported backend, as in a process of its own,
without paying for the interpreter and the imports again: what one hook leaves behind (modules
of the project imported from the tree, a changed ``sys.path``) cannot change the next. What a
hook imported from the environment and the standard library is imported in this process
afterwards, for the next fork, and reported, so the caller can pass it as ``preload`` next
time: many backends import their builders inside the hooks. An in-tree backend
(``backend-path``), and a platform without ``fork``, run the hooks in this process.

The request (JSON): ``backend`` (``module:object``), ``backend_path``, ``step``, ``source`` (the
tree), ``out`` (where the artifact goes), ``ready`` (the step's ``get_requires_for_build_*``
requirements are installed), ``preload`` and ``result`` (the file the result goes to). The
result (JSON): ``done`` (the artifact's file name), or ``need`` (install these and call again
with ``ready``), or ``error`` (a hook failed; its traceback is on stderr); and ``imported``.

Standard library only, Python >= 3.9: it runs in build environments, never imports sandboxverify.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import sysconfig
import traceback
from typing import Any

#: modules of the environment the hooks imported (the caller may pass them as ``preload``)
_IMPORTED: set[str] = set()


class HookFailed(Exception):
    def __init__(self, hook: str, message: str) -> None:
        super().__init__(message)
        self.hook = hook


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        request = json.load(handle)
    try:
        result = _run(request)
    except HookFailed as exc:
        result, code = {"error": {"hook": exc.hook, "message": str(exc)}}, 1
    else:
        code = 0
    _write(request["result"], {**result, "imported": sorted(_IMPORTED)})
    return code


def _run(request: dict[str, Any]) -> dict[str, Any]:
    step = request["step"]
    if step not in ("sdist", "wheel"):
        raise HookFailed("request", f"unknown step {step!r}")
    # an in-tree backend comes from the tree it builds: nothing to share between processes
    forking = hasattr(os, "fork") and not request.get("backend_path")
    os.chdir(request["source"])
    backend = _load_backend(request["backend"], request.get("backend_path") or [])
    if forking:  # what the hooks imported last time, so no fork imports it again
        _warm_up(list(request.get("preload") or ()))
    if not request.get("ready"):
        need = _hook(backend, f"get_requires_for_build_{step}", [{}], forking)
        if need:
            return {"need": need}
    args = [request["out"], {}] if step == "sdist" else [request["out"], {}, None]
    return {"done": _hook(backend, f"build_{step}", args, forking)}


def _load_backend(spec: str, backend_path: list[str]) -> Any:
    for entry in reversed(backend_path):
        sys.path.insert(0, os.path.abspath(entry))
    module_name, _, attrs = spec.partition(":")
    try:
        backend: Any = importlib.import_module(module_name.strip())
        for attr in attrs.strip().split(".") if attrs.strip() else ():
            backend = getattr(backend, attr)
    except Exception as exc:
        traceback.print_exc()
        raise HookFailed("import", f"cannot import the build backend {spec!r}: {exc!r}") from None
    return backend


def _hook(backend: Any, name: str, args: list[Any], forking: bool) -> Any:
    """The hook's return value (``[]`` for an optional hook the backend lacks)."""
    hook = getattr(backend, name, None)
    if hook is None:
        if name.startswith("get_requires_"):
            return []
        raise HookFailed(name, f"the build backend has no {name} hook")
    if not forking:
        return _call(hook, name, args)
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run the hook, send its value back, leave without cleanup
        os.close(read_end)
        status = 0
        before = set(sys.modules)
        try:
            payload: dict[str, Any] = {"value": _call(hook, name, args)}
            payload["imported"] = _installed_modules(set(sys.modules) - before)
        except HookFailed as exc:
            payload, status = {"error": str(exc)}, 1
        except BaseException as exc:  # SystemExit from setup.py, KeyboardInterrupt
            traceback.print_exc()
            payload, status = {"error": f"{name} raised {exc!r}"}, 1
        try:
            with os.fdopen(write_end, "w", encoding="utf-8") as channel:
                json.dump(payload, channel)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as channel:
        text = channel.read()
    _, wait_status = os.waitpid(pid, 0)
    try:
        payload = json.loads(text)
    except ValueError:
        code = os.waitstatus_to_exitcode(wait_status)
        raise HookFailed(name, f"{name} ended the process (exit status {code})") from None
    if "error" in payload:
        raise HookFailed(name, str(payload["error"]))
    imported = [str(name) for name in payload.get("imported") or ()]
    _IMPORTED.update(imported)
    _warm_up(imported)
    return payload["value"]


def _call(hook: Any, name: str, args: list[Any]) -> Any:
    try:
        value = hook(*args)
    except Exception as exc:
        traceback.print_exc()
        raise HookFailed(name, f"{name} raised {exc!r}") from None
    if name.startswith("get_requires_"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise HookFailed(name, f"{name} returned {value!r}, not a list of requirements")
        return list(value)
    if not isinstance(value, str):
        raise HookFailed(name, f"{name} returned {value!r}, not a file name")
    return value


def _installed_modules(names: set[str]) -> list[str]:
    """Of the modules a hook imported, those of the build environment and the standard
    library: the backend's own (many import their builders lazily, in the hook)."""
    roots = tuple(
        os.path.join(os.path.realpath(path), "")
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        for path in [sysconfig.get_paths().get(key)]
        if path
    )
    found = []
    for name in sorted(names):
        origin = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(origin, str) and os.path.realpath(origin).startswith(roots):
            found.append(name)
    return found


def _warm_up(names: list[str]) -> None:
    """Import here what a hook imported from the environment, so the next hook's process,
    forked from this one, starts with it: the backend's modules are compiled and imported once.
    Never a module of the project: those come from the tree being built."""
    for name in names:
        with contextlib.suppress(Exception):  # only a head start: the hook imports it itself
            importlib.import_module(name)


def _write(path: str, data: dict[str, Any]) -> None:
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(partial, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
