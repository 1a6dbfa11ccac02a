"""The processes below one of ours, found through ``/proc`` (Linux), and how to end them for good:
a command's whole group and what it started outside it.

A command's process group is not all it started: a daemon may call ``setsid``, and the processes
of an OS sandbox run in a session of their own. These find them by their chain of parents.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from sandboxverify.sandbox._reaper import descendants, process_stat

__all__ = [
    "GRACE_SECONDS",
    "descendants",
    "kill_and_wait",
    "kill_group",
    "process_stat",
    "stop",
]

#: how long a stopped command is given to end after SIGTERM, before SIGKILL
GRACE_SECONDS = 2.0


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


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the whole process group, give it a moment, then kill it. What the command
    started outside its group (the processes of an OS sandbox run in a session of their own)
    is killed too, and waited for: when this returns, nothing of the command is running."""
    if proc.poll() is not None:
        return
    below = held_descendants(proc)
    signal_group(proc, signal.SIGTERM)
    if sys.platform.startswith("linux"):
        signal_group(proc, signal.SIGCONT)  # the TERM is acted on as the group resumes
    try:
        proc.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        signal_group(proc, signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM)
        proc.wait()
    kill_and_wait(below, GRACE_SECONDS)


def held_descendants(proc: subprocess.Popen[bytes]) -> list[int]:
    """What ``proc`` started, read while its group is held still (Linux).

    A process caught in ``fork`` finishes it after a look at the tree has passed it by: the OS
    sandbox's launcher forks its namespace's init, which leaves the session and binds its life to
    the launcher's only once set up. Stopped, the command's own children cannot change until it
    resumes, and it resumes with the TERM already pending, so it starts nothing more."""
    if not sys.platform.startswith("linux"):
        return descendants(proc.pid)
    signal_group(proc, signal.SIGSTOP)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        state = process_stat(proc.pid)
        # stopped, traced, a zombie or gone; "D" (in the kernel) stops on the way out
        if state is None or state[0] in "TtZX":
            break
        time.sleep(0.001)
    return descendants(proc.pid)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Nothing a command spawned may outlive it (a plugin's stray background process)."""
    if sys.platform != "win32":
        signal_group(proc, signal.SIGKILL)


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if sys.platform == "win32":  # pragma: no cover
            proc.send_signal(sig)
        else:
            os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
