"""The judge of a smoke run keeps the processes it starts below it, and ends them before it
decides.

Plugin code runs in processes the judge starts; what those start may outlive them (a
double-forked daemon) and, left running, could rewrite the run's result once the judge has
written it. On Linux the judge becomes a *child subreaper* while the run lasts: every orphan of
its processes becomes its child, and all of them are killed before the result is written. In
the sandbox it also makes itself non-dumpable, so that no process of the run can read its
memory or reach its pipes through ``/proc``. Elsewhere both are no-ops: the sandbox around the
run ends what is left when it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
#: rounds of killing what is left: orphans of the killed become children in the next round
_ROUNDS = 50


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # noqa: PLC0415 - only the judge of a run needs it

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def keep_to_myself() -> None:
    """No process of the same user may read this one's memory or open its files through
    ``/proc`` (where the kernel allows it to say so)."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


@contextlib.contextmanager
def kept_to_myself() -> Iterator[None]:
    """:func:`keep_to_myself` while inside, as it was on the way out: the command's process that
    judges a playbook in place (``run``) goes back to what it was, but while plugin code runs
    beside it, no process of the same user may attach to it or write its memory."""
    prctl = _prctl()
    was = prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) if prctl is not None else None
    keep_to_myself()
    try:
        yield
    finally:
        if prctl is not None and was == 1:  # 2 (core dumps for root only) cannot be set back
            prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)


def _children() -> set[int]:
    """The processes whose parent this one is, from ``/proc``."""
    me = os.getpid()
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children", encoding="ascii") as handle:
                found.update(int(pid) for pid in handle.read().split())
    except (OSError, ValueError):  # a kernel without the children files: read every process
        return _children_by_stat(me)
    return found


def _children_by_stat(me: int) -> set[int]:
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(me):
            found.add(int(entry))
    return found


def _end(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)


@contextlib.contextmanager
def ended_at_exit() -> Iterator[None]:
    """While inside, orphans of the processes started here become children of this process;
    on the way out, every child started inside (and whatever they started) is killed."""
    prctl = _prctl()
    if prctl is None:
        yield
        return
    import ctypes  # noqa: PLC0415 - only the judge of a run needs it

    was = ctypes.c_int(0)
    prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0)
    before = _children()
    prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        for _ in range(_ROUNDS):
            left = _children() - before
            if not left:
                break
            for pid in left:
                _end(pid)
        prctl(_PR_SET_CHILD_SUBREAPER, was.value, 0, 0, 0)
