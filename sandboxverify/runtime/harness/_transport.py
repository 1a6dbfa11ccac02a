"""How the judge of a session reaches the process that holds its plugins.

``Spawned``: a process this one starts, with two pipes only the two of them hold (the judge of a
TOML playbook, of ``run`` and of a pytest session with ``isolate=True``). ``Brokered``: for the
sessions a ``.py`` playbook creates under ``check --smoke`` and ``run``, the judge of the
playbook starts the process and relays every message, keeping its own account of them
(``runtime._playbook_judge``); the playbook's process talks to it over one channel, each
message tagged with its session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from typing import Any, Protocol

from sandboxverify.runtime.harness._channel import Channel, Merged
from sandboxverify.runtime.harness._errors import HarnessError

#: how long a closing plugin process may take to end before it is killed
_CLOSE_SECONDS = 5.0


class Transport(Protocol):
    """How the judge reaches one session's plugin process."""

    def send(self, message: dict[str, Any]) -> None: ...

    def receive(self, timeout: float | None) -> dict[str, Any] | None: ...

    def kill(self) -> None: ...

    def close(self) -> str:
        """End the process; returns how it ended (for messages)."""


def absolute(path: list[str]) -> list[str]:
    """``sys.path`` for a process started elsewhere: relative entries made absolute here."""
    return [os.path.abspath(entry) if entry else os.getcwd() for entry in path]


def runtime_root() -> str:
    """The directory holding the ``sandboxverify`` package this process runs."""
    here = os.path.abspath(__file__)
    for _ in range(4):  # harness -> runtime -> sandboxverify -> its parent
        here = os.path.dirname(here)
    return here


def spawn(
    module: str,
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    merged: Merged[tuple[Any, Any]] | None = None,
    tag: Any = None,
) -> tuple[subprocess.Popen[bytes], Channel]:
    """This interpreter running ``module``'s ``main(argv)`` in a process of its own (and its
    own process group), with two pipes only the two processes hold: the other ends' numbers
    are its ``argv``."""
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    boot = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        f"from {module} import main; main(sys.argv[2:])"
    )
    argv = [sys.executable, "-I", "-c", boot, runtime_root(), str(to_child), str(to_parent)]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            pass_fds=(to_child, to_parent),
            start_new_session=True,  # its process group ends with it, servers included
            cwd=cwd,
            env=env,
        )
    except BaseException:
        os.close(from_child)
        os.close(from_parent)
        raise
    finally:
        os.close(to_child)
        os.close(to_parent)
    channel = Channel.over_fds(from_child, from_parent, name=module, merged=merged, tag=tag)
    return process, channel


class Spawned:
    """A plugin process this one started."""

    def __init__(self, *, merged: Merged[tuple[Any, Any]] | None = None, tag: Any = None) -> None:
        self.process, self.channel = spawn(
            "sandboxverify.runtime.harness._plugin_process", merged=merged, tag=tag
        )
        # a session never closed (dropped at collection or exit) still ends its plugin process
        self._reaper = weakref.finalize(self, _abandon, self.process, self.channel)

    def send(self, message: dict[str, Any]) -> None:
        self.channel.send(message)

    def receive(self, timeout: float | None) -> dict[str, Any] | None:
        return self.channel.receive(timeout)

    def kill(self) -> None:
        self._reaper()

    def close(self) -> str:
        self.channel.close()  # the process reads the end of its requests and exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_CLOSE_SECONDS)
        self.kill()
        return exit_status(self.process.returncode)


def _abandon(process: subprocess.Popen[bytes], channel: Channel) -> None:
    channel.close()
    end_process(process)


def end_process(process: subprocess.Popen[bytes]) -> None:
    """End ``process`` and everything it started in its process group (an MCP server)."""
    try:  # the group too: what the process started lives on after it (a server)
        os.killpg(process.pid, signal.SIGKILL)
    except (OSError, AttributeError):  # nothing left in it, or no process groups here
        if process.poll() is None:
            process.kill()
    process.wait()


def exit_status(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _Broker:
    """This process's one channel to the judge of its playbook, shared by its sessions."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.channel: Channel | None = None
        #: messages read for a session while another one was waiting (``None``: its end)
        self.stash: dict[int, deque[dict[str, Any] | None]] = {}
        self.count = 0

    def open(self) -> tuple[Channel, int]:
        with self.lock:
            if self.channel is None:
                raise RuntimeError("no judge to open a session with")
            self.count += 1
            self.stash[self.count] = deque()
            return self.channel, self.count


_broker = _Broker()


def serve_judge(channel: Channel) -> None:
    """This process runs a ``.py`` playbook for the judge at the other end of ``channel``:
    from now on its sessions start their plugins through that judge."""
    _broker.channel = channel


class Brokered:
    """A plugin process the judge of a ``.py`` playbook started for one of its sessions: the
    messages travel over the playbook's channel to that judge, tagged with the session."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.channel, self.session = _broker.open()
        self.channel.send({"s": self.session, "op": "open", "options": options})

    def send(self, message: dict[str, Any]) -> None:
        self.channel.send({**message, "s": self.session})

    def receive(self, timeout: float | None) -> dict[str, Any] | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with _broker.lock:
            while True:
                stash = _broker.stash[self.session]
                if stash:
                    return stash.popleft()
                left = None if deadline is None else deadline - time.monotonic()
                message = self.channel.receive(left)
                if message is None:
                    return None
                owner = message.pop("s", None)
                mine = None if message.get("op") == "eof" else message
                if owner == self.session:
                    return mine
                if owner in _broker.stash:
                    _broker.stash[owner].append(mine)

    def kill(self) -> None:
        self.channel.send({"s": self.session, "op": "kill"})

    def report(self, error: HarnessError) -> None:
        """The session failed (its own account): the judge counts it too."""
        self.channel.send({"s": self.session, "op": "failed", "error": error.to_json()})

    def close(self) -> str:
        self.channel.send({"s": self.session, "op": "close"})
        return "ended by the playbook's judge"


def under_a_judge() -> bool:
    """Does this process run a ``.py`` playbook for a judge (``check --smoke``, ``run``)?"""
    return _broker.channel is not None
