"""The one way sandboxverify runs a subprocess.

A :class:`Command` goes in, an :class:`Outcome` comes out. Every command has a timeout; output goes
to a log file (never into memory: plugins may print megabytes) and the outcome keeps its tail;
every process runs in its own process group so a timeout, Ctrl-C or SIGTERM takes down whatever
it spawned too (terminate, short grace, kill). Secrets are redacted from anything shown.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from sandboxverify._errors import Interrupted
from sandboxverify.report._redact import redact

_GRACE_SECONDS = 2.0
_TAIL_BYTES = 16_000


@dataclass(frozen=True)
class Command:
    """What to run, where, with which environment, for how long."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    timeout: float
    log_path: Path
    label: str
    stdin: bytes | None = None


@dataclass(frozen=True)
class Outcome:
    command: Command
    returncode: int | None
    timed_out: bool
    seconds: float
    tail: str

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0

    def describe(self) -> str:
        """``exited with code 2`` / ``timed out after 5s`` / ``was killed by SIGKILL``."""
        if self.timed_out:
            return f"timed out after {self.command.timeout:g}s (killed)"
        code = self.returncode
        if code is not None and code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"


Observer = Callable[[Outcome], None]


class Supervisor:
    """The commands one check is running, so an interrupt can stop them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self.shutting_down = False

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)
            late = self.shutting_down
        if late:  # started while an interrupt was being handled: stop it too
            _stop(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def shutdown(self) -> None:
        """Stop every running command and refuse new ones."""
        with self._lock:
            self.shutting_down = True
            procs = list(self._procs)
        for proc in procs:
            _stop(proc)


_SUPERVISOR: contextvars.ContextVar[Supervisor] = contextvars.ContextVar("supervisor")


@contextlib.contextmanager
def supervised() -> Iterator[Supervisor]:
    """Commands run inside (also in threads started with :func:`parallel_map`) are stopped
    together if anything interrupts the block: Ctrl-C, SIGTERM, a bug."""
    supervisor = Supervisor()
    token = _SUPERVISOR.set(supervisor)
    try:
        yield supervisor
    except BaseException:
        supervisor.shutdown()
        raise
    finally:
        _SUPERVISOR.reset(token)


T = TypeVar("T")
R = TypeVar("R")


def parallel_map(fn: Callable[[T], R], items: Sequence[T], max_workers: int) -> list[R]:
    """``map`` over threads that inherit the current supervisor; an interrupt stops them all."""
    if len(items) <= 1:
        return [fn(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(items))))
    try:
        futures = [pool.submit(contextvars.copy_context().run, fn, item) for item in items]
        return [future.result() for future in futures]
    except BaseException:
        supervisor = _SUPERVISOR.get(None)
        if supervisor is not None:
            supervisor.shutdown()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run(command: Command, observer: Observer | None = None) -> Outcome:
    """Run ``command`` to completion or timeout; never raises for the command's own failure."""
    supervisor = _SUPERVISOR.get(None)
    if supervisor is not None and supervisor.shutting_down:
        raise Interrupted("interrupted")
    command.log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with command.log_path.open("wb") as log:
        try:
            proc = subprocess.Popen(
                list(command.argv),
                cwd=command.cwd,
                env=dict(command.env),
                stdin=subprocess.PIPE if command.stdin is not None else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # a group of its own, so stopping it stops everything it spawned
                start_new_session=sys.platform != "win32",
                creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
            )
        except OSError as exc:
            log.write(f"cannot start {command.argv[0]}: {exc}\n".encode())
            log.flush()
            outcome = Outcome(
                command,
                returncode=127,
                timed_out=False,
                seconds=time.perf_counter() - started,
                tail=f"cannot start: {exc}",
            )
            if observer:
                observer(outcome)
            return outcome
        if supervisor is not None:
            supervisor.add(proc)
        # A blocking wait plus a watchdog: Popen.wait(timeout) polls and wakes up to 50 ms late.
        expired = threading.Event()

        def expire() -> None:
            if proc.poll() is None:
                expired.set()
                _stop(proc)

        watchdog = threading.Timer(command.timeout, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            proc.communicate(command.stdin)
        except BaseException:  # KeyboardInterrupt / SystemExit from a signal handler
            _stop(proc)
            raise
        finally:
            watchdog.cancel()
            if supervisor is not None:
                supervisor.discard(proc)
            _kill_leftovers(proc)
    outcome = Outcome(
        command,
        returncode=proc.returncode,
        timed_out=expired.is_set(),
        seconds=time.perf_counter() - started,
        tail=redact(read_tail(command.log_path)),
    )
    if observer:
        observer(outcome)
    return outcome


def query(argv: Sequence[str], timeout: float) -> str | None:
    """Standard output of a short, trusted command (an interpreter's version), or ``None``."""
    try:
        completed = subprocess.run(
            list(argv), capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", errors="replace")


def read_tail(path: Path, limit: int = _TAIL_BYTES) -> str:
    """The last ``limit`` bytes of a log, starting at a line boundary."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if size > limit and "\n" in text:
        text = "[...]\n" + text.split("\n", 1)[1]
    return text


def format_argv(argv: Sequence[str]) -> str:
    return redact(" ".join(_quote(arg) for arg in argv))


def _quote(arg: str) -> str:
    return arg if arg and re.fullmatch(r"[\w@%+=:,./-]+", arg) else repr(arg)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the whole process group, give it a moment, then kill it."""
    if proc.poll() is not None:
        return
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM)
        proc.wait()


def _kill_leftovers(proc: subprocess.Popen[bytes]) -> None:
    """Nothing a command spawned may outlive it (a plugin's stray background process)."""
    if sys.platform != "win32":
        _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if sys.platform == "win32":  # pragma: no cover
            proc.send_signal(sig)
        else:
            os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
