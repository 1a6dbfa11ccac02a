"""The processes below one of ours, found through ``/proc`` (Linux), and how to end them for good.

A command's process group is not all it started: a daemon may call ``setsid``, and the processes
of an OS sandbox run in a session of their own. These find them by their chain of parents.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Sequence


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux; elsewhere none are known)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        stat = _stat(int(name))
        if stat is not None:
            children.setdefault(stat[1], []).append(int(name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent, or ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1])


def kill_and_wait(pids: Sequence[int], timeout: float) -> None:
    """SIGKILL ``pids`` and wait (briefly) until none runs: a zombie holds nothing."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [_stat(pid) for pid in pids]
        if all(state is None or state[0] in "ZX" for state in states):
            return
        time.sleep(0.01)
