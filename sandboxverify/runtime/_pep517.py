"""PEP 517 hooks for the steps of one build, the backend imported once for all of them.

Run as a script by the build environment's interpreter, from a directory of its own (so nothing
next to it is importable)::

    python _pep517.py

Requests arrive on standard input, one JSON document per line; each is answered with one JSON
line on standard output, which is kept for the answers (what the backend prints goes to standard
error). The runner ends when its input ends, or after an error. A step is ``sdist``
(``get_requires_for_build_sdist``, then ``build_sdist``) or ``wheel``
(``get_requires_for_build_wheel``, then ``build_wheel``), run in the tree the request names: the
wheel's is the sdist as sandboxverify unpacked it, never unpacked here.

The backend is imported once. Where ``os.fork`` exists each hook then runs in a child forked
from that process, so it starts from a freshly imported backend, as in a process of its own,
without paying for the interpreter and the imports again: what one hook leaves behind (modules
of the project imported from the tree, a changed ``sys.path``, on Linux a process it started
and left running) cannot change the next, of this step or of the next one. What a hook imported
from the environment and the standard library is imported in this process afterwards, for the
next fork, and reported, so the caller can pass it as ``preload`` next time: many backends
import their builders inside the hooks. An in-tree backend (``backend-path``), and a platform
without ``fork``, run the hooks in this process: the caller then starts a runner per request.

A request: ``backend`` (``module:object``), ``backend_path``, ``step``, ``source`` (the tree),
``out`` (where the artifact goes), ``ready`` (the step's ``get_requires_for_build_*``
requirements are installed) and ``preload``. An answer: ``done`` (the artifact's file name), or
``need`` (install these and ask again with ``ready``), or ``error`` (a hook failed; its traceback
is on standard error; the runner then exits 1); and ``imported``.

Standard library only, Python >= 3.9: it runs in build environments, never imports sandboxverify.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import sysconfig
import traceback
from typing import Any

#: modules of the environment the hooks imported (the caller may pass them as ``preload``)
_IMPORTED: set[str] = set()
#: the runner's own file descriptors (its answers), closed in every hook's child
_CHANNELS: list[int] = []
_PR_SET_CHILD_SUBREAPER = 36


class HookFailed(Exception):
    def __init__(self, hook: str, message: str) -> None:
        super().__init__(message)
        self.hook = hook


def main() -> int:
    # the answers get standard output to themselves; what the backend prints goes to stderr
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    _CHANNELS.append(answers.fileno())
    subreaper = _become_subreaper()
    backends: dict[str, Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            result, code = _run(request, backends, subreaper), 0
        except HookFailed as exc:
            result, code = {"error": {"hook": exc.hook, "message": str(exc)}}, 1
        answers.write(json.dumps({**result, "imported": sorted(_IMPORTED)}) + "\n")
        answers.flush()
        if code:
            return code
    return 0


def _run(request: dict[str, Any], backends: dict[str, Any], subreaper: bool) -> dict[str, Any]:
    step = request["step"]
    if step not in ("sdist", "wheel"):
        raise HookFailed("request", f"unknown step {step!r}")
    # an in-tree backend comes from the tree it builds: nothing to share between processes
    forking = hasattr(os, "fork") and not request.get("backend_path")
    os.chdir(request["source"])
    spec = request["backend"]
    backend = backends.get(spec) if forking else None
    if backend is None:
        backend = backends[spec] = _load_backend(spec, request.get("backend_path") or [])
    if forking:  # what the hooks imported last time, so no fork imports it again
        _warm_up(list(request.get("preload") or ()))
    hooks = _Hooks(backend, forking, subreaper)
    if not request.get("ready"):
        need = hooks.call(f"get_requires_for_build_{step}", [{}])
        if need:
            return {"need": need}
    args = [request["out"], {}] if step == "sdist" else [request["out"], {}, None]
    return {"done": hooks.call(f"build_{step}", args)}


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


class _Hooks:
    """The backend's hooks, each called in a child forked from this process (``forking``), or
    here. A child's leftovers are killed when it ends (``subreaper``: orphans become ours)."""

    def __init__(self, backend: Any, forking: bool, subreaper: bool) -> None:
        self.backend = backend
        self.forking = forking
        self.subreaper = subreaper

    def call(self, name: str, args: list[Any]) -> Any:
        """The hook's return value (``[]`` for an optional hook the backend lacks)."""
        hook = getattr(self.backend, name, None)
        if hook is None:
            if name.startswith("get_requires_"):
                return []
            raise HookFailed(name, f"the build backend has no {name} hook")
        if not self.forking:
            return _call(hook, name, args)
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the hook, send its value back, leave without cleanup
            os.close(read_end)
            _leave_the_runner()
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
        if self.subreaper:
            _kill_orphans()
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


def _leave_the_runner() -> None:
    """In a hook's child: the requests and the answers are the runner's, not the backend's;
    requirements installed since the runner started are found."""
    for fd in _CHANNELS:
        with contextlib.suppress(OSError):
            os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    importlib.invalidate_caches()


def _become_subreaper() -> bool:
    """On Linux, adopt the orphans of the hooks' children (``PR_SET_CHILD_SUBREAPER``), so a
    process a hook left running can be found and killed before the next hook."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        import ctypes  # noqa: PLC0415 - only where it is used

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _kill_orphans() -> None:
    """Kill and reap every child left: the hook's child has ended, so each is an orphan it left
    (a daemon, a compiler server), adopted by this subreaper."""
    while True:
        children = _children()
        if not children:
            return
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _children() -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(pid) for pid in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


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


if __name__ == "__main__":
    status = main()
    # the check waits for this process to end before it reads what the hooks wrote, and
    # tearing down the backend's modules one by one took ~30 ms of it: the hooks ran in
    # processes of their own, and every answer is written and flushed
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
