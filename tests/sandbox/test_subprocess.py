"""The one subprocess helper: timeouts kill whole groups, output is bounded, secrets are hidden."""

from __future__ import annotations

import _thread
import contextvars
import dataclasses
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future
from concurrent.futures import wait as real_wait
from pathlib import Path

import pytest

from sandboxverify._errors import Interrupted
from sandboxverify.sandbox import _subprocess
from sandboxverify.sandbox._subprocess import (
    Command,
    Launch,
    Outcome,
    parallel_map,
    read_head,
    read_tail,
    run,
    supervised,
)


def command(
    tmp_path: Path, code: str, *, timeout: float = 30, label: str = "t", stdin: bytes | None = None
) -> Command:
    return Command(
        argv=[sys.executable, "-c", code],
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=timeout,
        log_path=tmp_path / f"{label}.log",
        label=label,
        stdin=stdin,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purposes
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def test_success_with_output_tail_and_stdin(tmp_path: Path) -> None:
    outcome = run(command(tmp_path, "import sys; print('hello', sys.stdin.read())", stdin=b"world"))

    assert outcome.ok
    assert outcome.returncode == 0
    assert outcome.tail.strip() == "hello world"
    assert outcome.describe() == "exited with code 0"


def test_timeout_kills_the_process_and_everything_it_spawned(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    started = time.monotonic()
    outcome = run(command(tmp_path, code, timeout=1.5))

    assert outcome.timed_out
    assert not outcome.ok
    assert time.monotonic() - started < 15
    assert "timed out after 1.5s" in outcome.describe()
    grandchild = int(outcome.tail.split()[0])
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_a_background_process_left_behind_is_killed_too(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(child.pid, flush=True)\n"
    )
    outcome = run(command(tmp_path, code))

    assert outcome.ok
    grandchild = int(outcome.tail.split()[0])
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_megabytes_of_output_go_to_the_log_and_only_the_tail_is_kept(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(200000): print('line', i)\nprint('LAST', file=sys.stderr)"
    outcome = run(command(tmp_path, code))

    assert outcome.ok
    assert (tmp_path / "t.log").stat().st_size > 2_000_000
    assert len(outcome.tail) < 20_000
    assert outcome.tail.startswith("[...]\n")
    assert outcome.tail.rstrip().endswith("LAST")


def test_signal_deaths_are_described(tmp_path: Path) -> None:
    outcome = run(command(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))
    assert outcome.describe() == "was killed by SIGKILL"


def test_a_missing_executable_is_an_outcome_not_a_crash(tmp_path: Path) -> None:
    outcome = run(
        Command(
            argv=[str(tmp_path / "nope")],
            env={},
            cwd=tmp_path,
            timeout=5,
            log_path=tmp_path / "x.log",
            label="x",
        )
    )
    assert not outcome.ok
    assert outcome.returncode == 127
    assert "cannot start" in outcome.tail


def test_a_commands_output_tail_hides_secret_variables_and_url_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "s3cr3t-value")
    text = "token=s3cr3t-value url=https://user:hunter2@pypi.example/simple"

    outcome = run(command(tmp_path, f"print({text!r})"))

    assert outcome.tail.strip() == "token=*** url=https://***@pypi.example/simple"


def test_read_tail_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_tail(tmp_path / "none.log") == ""
    assert read_head(tmp_path / "none.log") == ""


def test_read_head_keeps_the_first_whole_lines_and_says_what_it_cut(tmp_path: Path) -> None:
    log = tmp_path / "help.log"
    log.write_text("Usage: tool FILE\n" + "".join(f"--option-{n}\n" for n in range(100)))

    head = read_head(log, limit=40)

    assert head == "Usage: tool FILE\n--option-0\n--option-1\n[...]"
    assert read_head(log) == log.read_text()


def test_supervisor_shutdown_stops_running_commands_and_refuses_new_ones(tmp_path: Path) -> None:
    with supervised() as supervisor:
        results: list[object] = []
        # threads see the supervisor when they run in a copy of the context, as parallel_map does
        worker = threading.Thread(
            target=contextvars.copy_context().run,
            args=(lambda: results.append(run(command(tmp_path, "import time; time.sleep(300)"))),),
        )
        worker.start()
        deadline = time.monotonic() + 10
        while not (tmp_path / "t.log").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        started = time.monotonic()
        supervisor.shutdown()
        worker.join(timeout=10)

        assert not worker.is_alive()
        assert time.monotonic() - started < 5
        [outcome] = results
        assert isinstance(outcome, Outcome) and not outcome.ok
        with pytest.raises(Interrupted):
            run(command(tmp_path, "print(1)", label="late"))


def test_parallel_map_keeps_order_and_propagates_errors() -> None:
    assert parallel_map(lambda x: x * 2, [1, 2, 3], max_workers=3) == [2, 4, 6]

    def boom(x: int) -> int:
        raise ValueError(x)

    with pytest.raises(ValueError, match="1"):
        parallel_map(boom, [1, 2], max_workers=2)


def test_winding_down_counts_a_cancelled_future_as_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure cancels the items no worker took yet; ``concurrent.futures.wait`` never
    counts such a future as done, so winding down must not wait for it (it used to wait out
    the whole wind-down, 15 s, after every failure in a parallel step)."""
    slices: list[int] = []

    def counted_wait(*args: object, **kwargs: object) -> object:
        slices.append(1)
        if len(slices) > 3:
            raise AssertionError("winding down kept waiting on a cancelled future")
        return real_wait(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_subprocess, "wait", counted_wait)
    cancelled: Future[int] = Future()
    assert cancelled.cancel()
    finished: Future[int] = Future()
    finished.set_result(1)
    _subprocess._wind_down([cancelled, finished], within=3600.0)
    assert slices == []


class _Signalled(Exception):
    pass


def test_a_signal_while_the_main_thread_waits_on_a_command_stops_it_at_once(
    tmp_path: Path,
) -> None:
    """The main thread runs the signal handlers (Ctrl-C, SIGTERM): it never blocks where a
    signal cannot wake it, and never starts a process itself, so an interrupt that arrives as
    a command starts stops it instead of waiting for its timeout."""
    assert threading.current_thread() is threading.main_thread()

    def handler(signum: int, frame: object) -> None:
        raise _Signalled

    previous = signal.signal(signal.SIGUSR1, handler)
    pid_file = tmp_path / "pid"
    # written whole, then renamed: the file appears only with the pid in it
    code = (
        f"import os, time; open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid())); "
        f"os.rename({str(pid_file)!r} + '.tmp', {str(pid_file)!r}); time.sleep(300)"
    )

    def send_when_started() -> None:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR1)

    sender = threading.Thread(target=send_when_started)
    try:
        sender.start()
        with pytest.raises(_Signalled), supervised():
            run(command(tmp_path, code, timeout=300))
    finally:
        sender.join()
        signal.signal(signal.SIGUSR1, previous)
    assert not alive(int(pid_file.read_text()))


def test_commands_started_on_the_main_thread_run_in_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    run_here = _subprocess._run

    def run_watched(command: Command) -> Outcome:
        seen.append(threading.current_thread() is threading.main_thread())
        return run_here(command)

    monkeypatch.setattr(_subprocess, "_run", run_watched)
    outcome = run(command(tmp_path, "print('ok')"))
    assert outcome.ok
    assert seen == [False]


_SETSID_CHILD = (
    "import os, subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
    " start_new_session=True)\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(300)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes are found in /proc")
def test_a_timeout_also_ends_what_left_the_process_group_and_waits_for_it(tmp_path: Path) -> None:
    """An OS sandbox runs its processes in a session of their own, out of the group's reach."""
    outcome = run(command(tmp_path, _SETSID_CHILD, timeout=1.5))

    assert outcome.timed_out
    escaped = int(outcome.tail.split()[0])
    assert not alive(escaped)  # at once: stop() waits until it is gone


def test_a_launcher_wraps_the_argv_and_signal_exit_codes_are_read_back(tmp_path: Path) -> None:
    class Init:
        """Like the OS sandbox's init: reports a death by signal N as exit code 128 + N."""

        signals_as_exit_codes = True

        def launch(self, argv: list[str]) -> Launch:
            script = "import subprocess, sys; sys.exit(128 - subprocess.call(sys.argv[1:]))"
            return Launch([sys.executable, "-c", script, *argv])

    plain = command(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    wrapped = Command(**{**plain.__dict__, "launcher": Init()})

    outcome = run(wrapped)

    assert wrapped.launch().argv[-len(plain.argv) :] == list(plain.argv)
    assert outcome.returncode == 128 + signal.SIGKILL
    assert outcome.exit_status == -signal.SIGKILL
    assert outcome.describe() == "was killed by SIGKILL"


def test_an_interrupted_main_thread_does_not_wait_on_a_worker_that_will_not_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C is honoured even when a worker is stuck where stopping its commands cannot reach
    it: the main thread gives it a bounded time, then goes on without joining it."""
    monkeypatch.setattr(_subprocess, "_WIND_DOWN_SECONDS", 0.3)
    release, finished = threading.Event(), threading.Event()

    def stuck(_: int) -> None:
        release.wait(60)
        finished.set()

    threading.Timer(0.2, _thread.interrupt_main).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            parallel_map(stuck, [1], 1)
        assert not finished.is_set()  # it returned without joining the stuck worker
    finally:
        release.set()


_SPAWNS_SESSIONS_NONSTOP = (
    "import os, sys, time\n"
    "while True:\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\n"
    "        time.sleep(120)\n"
    "        os._exit(0)\n"
    "    time.sleep(0.002)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes are found in /proc")
def test_a_process_caught_starting_a_session_leaves_nothing_behind(tmp_path: Path) -> None:
    """The OS sandbox's launcher forks its namespace's init, which leaves the session and only
    later binds its life to the launcher's: a stop whose look at the process tree came before
    that fork, and its signal after, left the sandbox running for good. A stop now holds the
    command still before it looks."""
    spawned = tmp_path / "spawned"
    spawned.mkdir()
    base = command(tmp_path, _SPAWNS_SESSIONS_NONSTOP, timeout=0.4)
    outcome = run(dataclasses.replace(base, argv=[*base.argv, str(spawned)]))

    assert outcome.timed_out
    time.sleep(0.3)  # a survivor has written its pid by now
    pids = [int(path.name) for path in spawned.iterdir()]
    assert pids
    assert [pid for pid in pids if alive(pid) and _runs_with(pid, str(spawned))] == []


def _runs_with(pid: int, argument: str) -> bool:
    """``pid`` is still one of ours, not a number the system handed out again."""
    try:
        return argument.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
