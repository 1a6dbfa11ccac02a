"""Run a command and leave nothing of it behind (Linux; process isolation only).

``python -I -S _reaper.py [--seccomp FD --] ARGV...``: becomes a child subreaper
(``PR_SET_CHILD_SUBREAPER``), runs ARGV, and when it ends, or the reaper is told to stop (SIGTERM,
SIGINT, SIGHUP), kills and reaps every process left below it: a daemon that double-forked and
called ``setsid`` is re-parented to the reaper, not to init, so it is found and killed too. Exits
as ARGV did (the same code, or the same signal). With ``--seccomp FD``, ARGV runs under the
system call filter read from FD (``struct sock_filter[]``, see ``_seccomp``), and with no new
privileges; a filter that cannot be applied is exit code 126, never a run without it. Stdlib
only, run by path with any Python from 3.9; the host side imports its process-tree walk
(``_processes``), never runs ``main`` in-process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from types import FrameType

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_ROUNDS = 400


def descendants(root: int) -> list[int]:
    """Every process whose chain of parents reaches ``root`` (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        stat = process_stat(int(name))
        if stat is not None:
            children.setdefault(stat[1], []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def process_stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent, or ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1])


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_all() -> None:
    for _ in range(_ROUNDS):
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        time.sleep(0.005)


def _die_like(sig: int) -> None:
    _end_all()
    with contextlib.suppress(OSError, ValueError):
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _die_like(signum)


def _read_filter(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            os.close(fd)
            return b"".join(chunks)
        chunks.append(chunk)


def _apply_filter(program: bytes) -> str | None:
    """Load ``program`` for this process and what it executes; why not, if it cannot."""

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    if not program or len(program) % 8:
        return "the filter is empty or cut short"
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or (
        libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0
    ):
        return os.strerror(ctypes.get_errno())
    return None


def main(argv: list[str]) -> None:
    program = None
    if argv[:1] == ["--seccomp"] and argv[2:3] == ["--"]:
        program = _read_filter(int(argv[1]))
        argv = argv[3:]
    # not Linux: no subreaper, only the command's own process group is stopped
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    child = os.fork()
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        problem = _apply_filter(program) if program is not None else None
        if problem is not None:
            sys.stderr.write(f"cannot apply the system call filter: {problem}\n")
            os._exit(126)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            sys.stderr.write(f"cannot start {argv[0]}: {exc}\n")
        os._exit(127)
    _, status = os.waitpid(child, 0)
    _end_all()
    if os.WIFSIGNALED(status):
        _die_like(os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main(sys.argv[1:])
