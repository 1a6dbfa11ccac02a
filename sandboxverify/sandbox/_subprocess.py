"""The one way sandboxverify runs a subprocess.

A :class:`Command` goes in, an :class:`Outcome` comes out. Every command has a timeout; output goes
to a log file (never into memory: plugins may print megabytes), bounded (``_bounds``: the log
keeps the head and the tail, and a command that prints too much is stopped), and the outcome keeps
its tail; every process runs in its own process group so a timeout, Ctrl-C or SIGTERM takes down
whatever it spawned too (terminate, short grace, kill). A command that runs package code starts
through its launcher, with a session keyring of its own. Secrets are redacted from anything shown.
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
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable, Protocol, TypeVar

from sandboxverify._errors import Interrupted
from sandboxverify._frozen import frozen
from sandboxverify.report import redact
from sandboxverify.sandbox._bounds import OutputLog, describe_output_bound
from sandboxverify.sandbox._keyring import ended, in_fresh_keyring
from sandboxverify.sandbox._processes import GRACE_SECONDS, kill_group, stop

#: how long the main thread waits at most before it looks for a signal to handle
SLICE_SECONDS = 0.05
#: how long an interrupted main thread waits for its workers to wind down before it goes on
_WIND_DOWN_SECONDS = 15.0
_TAIL_BYTES = 16_000
#: what is read of a log's beginning where its first lines decide (a script's usage line)
_HEAD_BYTES = 4_000
#: a local copy of a few hundred small files takes milliseconds; far longer is a broken disk
COPY_TIMEOUT = 60.0


@frozen
class Launch:
    """A command ready to start: what is executed, and the descriptors the process inherits
    (a system call filter for bubblewrap to read), ours to :meth:`close` once it started."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class Launcher(Protocol):
    """How a command is started when it runs untrusted code: inside the OS sandbox, or under
    a reaper (see ``_isolation``)."""

    @property
    def signals_as_exit_codes(self) -> bool: ...

    def launch(self, argv: Sequence[str]) -> Launch: ...


@frozen
class Command:
    """What to run, where, with which environment, for how long."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    timeout: float
    log_path: Path
    label: str
    stdin: bytes | None = None
    #: ``None``: a trusted command (an installer), started as it is
    launcher: Launcher | None = None
    #: descriptors the process inherits besides its launcher's; the caller's to close
    inherit: tuple[int, ...] = ()

    def launch(self) -> Launch:
        """What is actually executed: ``argv``, wrapped by the launcher if there is one."""
        return self.launcher.launch(self.argv) if self.launcher else Launch(list(self.argv))


@frozen
class Outcome:
    command: Command
    returncode: int | None
    timed_out: bool
    seconds: float
    tail: str
    #: it printed more than a command may (``_bounds.OUTPUT_BYTES``) and was stopped
    output_exceeded: bool = False

    @property
    def ok(self) -> bool:
        return not self.timed_out and not self.output_exceeded and self.returncode == 0

    @property
    def exit_status(self) -> int | None:
        """The command's own exit code, or minus the signal that killed it, as ``returncode``
        would say had it been started directly."""
        code = self.returncode
        launcher = self.command.launcher
        signals_as_codes = launcher is not None and launcher.signals_as_exit_codes
        # the OS sandbox's init reports a death by signal N as exit code 128 + N
        if code is not None and signals_as_codes and 128 < code < 128 + signal.NSIG:
            return 128 - code
        return code

    def describe(self) -> str:
        """``exited with code 2`` / ``timed out after 5s`` / ``was killed by SIGKILL``."""
        if self.timed_out:
            return f"timed out after {self.command.timeout:g}s (killed)"
        if self.output_exceeded:
            return f"{describe_output_bound()} and was stopped"
        code = self.exit_status
        if code is not None and code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"


class Supervisor:
    """The commands one check is running, so an interrupt can stop them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        #: the supervisors of checks run inside this one's work (a survey's checks)
        self._children: list[Supervisor] = []
        self.shutting_down = False

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)
            late = self.shutting_down
        if late:  # started while an interrupt was being handled: stop it too
            stop(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def adopt(self, child: Supervisor) -> None:
        """A check started inside this one's work: an interrupt stops its commands too."""
        with self._lock:
            self._children.append(child)
            late = self.shutting_down
        if late:
            child.shutdown()

    def disown(self, child: Supervisor) -> None:
        with self._lock:
            self._children.remove(child)

    def shutdown(self) -> None:
        """Stop every running command (those of the checks inside too) and refuse new ones."""
        with self._lock:
            self.shutting_down = True
            procs = list(self._procs)
            children = list(self._children)
        for proc in procs:
            stop(proc)
        for child in children:
            child.shutdown()


_SUPERVISOR: contextvars.ContextVar[Supervisor] = contextvars.ContextVar("supervisor")


@contextlib.contextmanager
def supervised() -> Iterator[Supervisor]:
    """Commands run inside (also in threads started with :func:`parallel_map`) are stopped
    together if anything interrupts the block: Ctrl-C, SIGTERM, a bug."""
    supervisor = Supervisor()
    parent = _SUPERVISOR.get(None)
    if parent is not None:  # a check inside a survey: the survey's interrupt reaches it
        parent.adopt(supervisor)
    token = _SUPERVISOR.set(supervisor)
    try:
        yield supervisor
    except BaseException:
        supervisor.shutdown()
        raise
    finally:
        _SUPERVISOR.reset(token)
        if parent is not None:
            parent.disown(supervisor)


T = TypeVar("T")
R = TypeVar("R")


def parallel_map(fn: Callable[[T], R], items: Sequence[T], max_workers: int) -> list[R]:
    """``map`` over threads that inherit the current supervisor; an interrupt stops them all.

    On the main thread the work always goes to worker threads, even for one item: the main
    thread is where Python runs signal handlers, and it only ever waits in short slices, so
    Ctrl-C or SIGTERM is honoured at once. A blocking wait there (a lock, ``waitpid``) is not
    woken by a signal that arrives just before it starts, and would hold the interrupt until
    the work ends on its own: at ``--timeout``."""
    on_main = threading.current_thread() is threading.main_thread()
    if len(items) <= 1 and not on_main:
        return [fn(item) for item in items]
    if not items:
        return []
    supervisor = _SUPERVISOR.get(None)
    token = _SUPERVISOR.set(Supervisor()) if supervisor is None else None
    pool = ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(items))))
    futures: list[Future[R]] = []
    interrupted = False
    try:
        futures = [pool.submit(contextvars.copy_context().run, fn, item) for item in items]
        if on_main:
            failed = _wait_in_slices(futures)
            if failed is not None:
                failed.result()  # raises its exception here, without waiting for the others
        return [future.result() for future in futures]
    except BaseException:
        _SUPERVISOR.get().shutdown()
        interrupted = on_main
        raise
    finally:
        # Interrupted, the main thread gives the workers a bounded time to wind down (their
        # commands are stopped), and never joins one that does not: the exit must not wait.
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        if interrupted:
            _wind_down(futures, _WIND_DOWN_SECONDS)
        if token is not None:
            _SUPERVISOR.reset(token)


def _wind_down(futures: Sequence[Future[R]], within: float) -> None:
    """Until every future is done, or ``within`` seconds passed, in slices.

    ``done()`` and not ``wait``: a future the pool cancelled before a worker took it is
    ``CANCELLED``, which ``wait`` never counts as done, so waiting on it would always take
    the whole ``within``."""
    pending = [future for future in futures if not future.done()]
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        wait(pending, timeout=SLICE_SECONDS)
        pending = [future for future in pending if not future.done()]


def _wait_in_slices(futures: Sequence[Future[R]]) -> Future[R] | None:
    """Until every future is done or one failed (returned), waking often enough to run signal
    handlers."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=SLICE_SECONDS, return_when=FIRST_EXCEPTION)
        for future in done:
            if not future.cancelled() and future.exception() is not None:
                return future
    return None


def run(command: Command) -> Outcome:
    """Run ``command`` to completion or timeout; never raises for the command's own failure."""
    if threading.current_thread() is threading.main_thread():
        # started and waited for in a worker, so the main thread stays free for signals
        [outcome] = parallel_map(_run, [command], 1)
        return outcome
    return _run(command)


def _run(command: Command) -> Outcome:
    started = time.perf_counter()
    log = OutputLog(command.log_path)
    try:
        proc = start(
            command,
            log,
            stdin=subprocess.PIPE if command.stdin is not None else subprocess.DEVNULL,
            stdout=log.write_end,
            stderr=subprocess.STDOUT,
        )
    except OSError as exc:
        log.close(0)
        return Outcome(
            command,
            returncode=127,
            timed_out=False,
            seconds=time.perf_counter() - started,
            tail=f"cannot start: {exc}",
        )
    except BaseException:  # interrupted before it started
        log.close(0)
        raise
    log.started(lambda: stop(proc))
    # A blocking wait plus a watchdog: Popen.wait(timeout) polls and wakes up to 50 ms late.
    expired = threading.Event()

    def expire() -> None:
        if proc.poll() is None:
            expired.set()
            stop(proc)

    watchdog = threading.Timer(command.timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        proc.communicate(command.stdin)
    except BaseException:  # KeyboardInterrupt / SystemExit from a signal handler
        stop(proc)
        raise
    finally:
        watchdog.cancel()
        watchdog.join()  # a timeout's stop() has finished: nothing of the command runs
        release(proc)
        log.close(GRACE_SECONDS)
    return Outcome(
        command,
        returncode=proc.returncode,
        timed_out=expired.is_set(),
        seconds=time.perf_counter() - started,
        tail=redact(read_tail(command.log_path)),
        output_exceeded=log.exceeded,
    )


def start(
    command: Command,
    log: OutputLog,
    *,
    stdin: int,
    stdout: int,
    stderr: int,
) -> subprocess.Popen[bytes]:
    """``command`` started in a process group of its own (stopping it stops everything it
    spawned) and under the check's supervisor; one that runs package code (it has a launcher)
    with a session keyring of its own (``_keyring``). ``OSError`` when it cannot start, also
    said in ``log``. :func:`release` it when it has ended."""
    if shutting_down():
        raise Interrupted("interrupted")
    launch = command.launch()

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            launch.argv,
            cwd=command.cwd,
            env=dict(command.env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(*launch.pass_fds, *command.inherit),
            start_new_session=sys.platform != "win32",
            creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
        )

    try:
        proc = in_fresh_keyring(popen) if command.launcher is not None else popen()
    except OSError as exc:
        log.write(f"cannot start {command.argv[0]}: {exc}\n".encode())
        log.flush()
        raise
    finally:
        launch.close()
    supervisor = _SUPERVISOR.get(None)
    if supervisor is not None:
        supervisor.add(proc)
    return proc


def shutting_down() -> bool:
    """An interrupt is stopping the check this runs in: start nothing, wait for nothing."""
    supervisor = _SUPERVISOR.get(None)
    return supervisor is not None and supervisor.shutting_down


def release(proc: subprocess.Popen[bytes]) -> None:
    """After a command :func:`start` started has ended (or been stopped): nothing it spawned
    outlives it, and an interrupt no longer needs to stop it."""
    supervisor = _SUPERVISOR.get(None)
    if supervisor is not None:
        supervisor.discard(proc)
    kill_group(proc)
    ended(proc)  # the thread that started it in a keyring of its own (``_keyring``)


def query(argv: Sequence[str], timeout: float, cwd: Path | None = None) -> str | None:
    """Standard output of a short, trusted command (an interpreter's version), or ``None``."""
    try:
        completed = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
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


def read_head(path: Path, limit: int = _HEAD_BYTES) -> str:
    """The first ``limit`` bytes of a log, ending at a line boundary: what a command printed
    first (its usage line, above a long help the tail has lost)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit and "\n" in text:
        text = text.rsplit("\n", 1)[0] + "\n[...]"
    return text


def format_argv(argv: Sequence[str]) -> str:
    return redact(" ".join(_quote(arg) for arg in argv))


def _quote(arg: str) -> str:
    return arg if arg and re.fullmatch(r"[\w@%+=:,./-]+", arg) else repr(arg)
