"""Run a command and leave nothing of it behind (Linux; process isolation only).

``python -I -S _reaper.py ARGV...``: becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), runs
ARGV, and when it ends, or the reaper is told to stop (SIGTERM, SIGINT, SIGHUP), kills and reaps
every process left below it: a daemon that double-forked and called ``setsid`` is re-parented
to the reaper, not to init, so it is found and killed too. Exits as ARGV did (the same code, or
the same signal). Stdlib only, run by path with any Python from 3.9; the host side imports its
process-tree walk (``_processes``), never runs ``main`` in-process.
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


def main(argv: list[str]) -> None:
    # not Linux: no subreaper, only the command's own process group is stopped
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    child = os.fork()
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
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
