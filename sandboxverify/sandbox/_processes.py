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

from sandboxverify.sandbox._reaper import descendants, process_stat

__all__ = ["descendants", "kill_and_wait", "process_stat"]


def kill_and_wait(pids: Sequence[int], timeout: float) -> None:
    """SIGKILL ``pids`` and wait (briefly) until none runs: a zombie holds nothing."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [process_stat(pid) for pid in pids]
        if all(state is None or state[0] in "ZX" for state in states):
            return
        time.sleep(0.01)
