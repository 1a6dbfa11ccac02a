"""Bounds on what a process makes sandboxverify keep or read: its output (the log keeps its head
and tail; too much and it is stopped) and the files it leaves (size, nesting, what they are)."""

from __future__ import annotations

import errno
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from sandboxverify.sandbox import _bounds
from sandboxverify.sandbox._bounds import (
    BoundExceeded,
    loads_bounded,
    read_bounded,
    read_json,
)
from sandboxverify.sandbox._command_server import CommandServer
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._subprocess import Command, Outcome, run
from sandboxverify.sandbox._toolchain import choose_toolchain

_KIB = 1024

#: prints a first line, ``sys.argv[1]`` bytes of filler, then a last line
_PRINT = (
    "import os, sys\n"
    "os.write(1, b'first line\\n')\n"
    "left = int(sys.argv[1])\n"
    "while left > 0:\n"
    "    left -= os.write(1, b'.' * min(left, 65536))\n"
    "os.write(2, b'\\nlast line\\n')\n"
)


def printing(tmp_path: Path, filler: int) -> Command:
    return Command(
        argv=[sys.executable, "-c", _PRINT, str(filler)],
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=120,
        log_path=tmp_path / "logs" / "noisy.log",
        label="noisy",
    )


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds at a size a test can pass quickly: 64 KiB of each end, 1 MiB printed."""
    monkeypatch.setattr(_bounds, "LOG_END_BYTES", 64 * _KIB)
    monkeypatch.setattr(_bounds, "OUTPUT_BYTES", 1024 * _KIB)


def test_a_short_output_is_kept_whole(tmp_path: Path) -> None:
    outcome = run(printing(tmp_path, 100))
    assert outcome.ok and not outcome.output_exceeded
    log = (tmp_path / "logs" / "noisy.log").read_bytes()
    assert log == b"first line\n" + b"." * 100 + b"\nlast line\n"


@pytest.mark.usefixtures("small_bounds")
def test_a_long_output_keeps_its_head_and_tail_and_says_what_is_left_out(tmp_path: Path) -> None:
    outcome = run(printing(tmp_path, 512 * _KIB))

    assert outcome.ok and not outcome.output_exceeded
    log = (tmp_path / "logs" / "noisy.log").read_bytes()
    assert log.startswith(b"first line\n") and log.endswith(b"\nlast line\n")
    assert len(log) < 2 * 64 * _KIB + 200
    printed = len("first line\n") + 512 * _KIB + len("\nlast line\n")
    left_out = printed - 2 * 64 * _KIB
    assert f"[... {left_out} bytes of output not kept".encode() in log
    assert "last line" in outcome.tail


@pytest.mark.usefixtures("small_bounds")
def test_a_command_that_prints_past_the_bound_is_stopped_and_says_so(tmp_path: Path) -> None:
    outcome = run(printing(tmp_path, 64 * 1024 * _KIB))  # 64 MiB, against a bound of 1 MiB

    assert outcome.output_exceeded and not outcome.ok and not outcome.timed_out
    assert outcome.describe() == (
        "printed more than 1 MiB (the bound on a command's output) and was stopped"
    )
    assert (tmp_path / "logs" / "noisy.log").stat().st_size < 2 * 64 * _KIB + 200


def test_a_daemon_holding_the_output_pipe_does_not_hold_the_command(tmp_path: Path) -> None:
    """A process that left the command's process group keeps the pipe's write end: the log
    is closed a moment after the command ended all the same."""
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
        "print('parent done', flush=True)\n"
    )
    command = Command(
        argv=[sys.executable, "-c", daemon],
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=60,
        log_path=tmp_path / "daemon.log",
        label="daemon",
    )
    outcomes: list[Outcome] = []
    worker = threading.Thread(target=lambda: outcomes.append(run(command)), daemon=True)
    worker.start()
    worker.join(60)  # a hang detector: the daemon sleeps for 120 s
    assert outcomes and outcomes[0].ok
    assert "parent done" in outcomes[0].tail


def test_a_result_is_read_within_its_bounds(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    nested = {"a": [[{"b": [1]}]]}
    path.write_text(json.dumps(nested))
    assert read_json(path) == nested
    deepest = "[" * _bounds.RESULT_DEPTH + "]" * _bounds.RESULT_DEPTH
    assert loads_bounded(deepest.encode()) is not None
    with pytest.raises(BoundExceeded, match="nests deeper than 100 levels"):
        loads_bounded(("[" + deepest + "]").encode())


def test_a_deeply_nested_result_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(BoundExceeded, match="nests deeper than 100 levels"):
        read_json(path)


def test_a_huge_result_is_refused_without_reading_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bounds, "RESULT_BYTES", 1024 * _KIB)
    path = tmp_path / "result.json"
    path.write_bytes(b'"' + b"x" * (2 * 1024 * _KIB) + b'"')
    with pytest.raises(BoundExceeded, match="larger than 1 MiB"):
        read_bounded(path, _bounds.RESULT_BYTES)


def test_a_result_that_is_a_link_or_a_fifo_is_never_followed_nor_waited_on(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"secret": true}')
    link = tmp_path / "link.json"
    link.symlink_to(secret)
    with pytest.raises(OSError, match="Too many levels of symbolic links") as raised:
        read_json(link)
    assert raised.value.errno == errno.ELOOP
    fifo = tmp_path / "fifo"  # not *.json: the suite reads every report a test leaves
    os.mkfifo(fifo)
    with pytest.raises(BoundExceeded, match="not a regular file"):  # and no writer to wait for
        read_json(fifo)


def test_a_command_servers_answer_nested_too_deep_is_no_answer(tmp_path: Path) -> None:
    """The build's hook runner answers in JSON lines: a hostile backend's answer nested past
    the bound is taken for none (the hooks failed), never a RecursionError."""
    answer = "[" * 50_000 + "]" * 50_000
    server_code = f"import sys\nsys.stdin.readline()\nprint({answer!r}, flush=True)\n"
    command = Command(
        argv=[sys.executable, "-c", server_code],
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=60,
        log_path=tmp_path / "server.log",
        label="server",
    )
    ctx = RunContext(toolchain=choose_toolchain("pip"), plugin_timeout=60, install_timeout=60)
    server = CommandServer(command, ctx)
    try:
        assert server.ask({"hook": "build_wheel"}) is None
    finally:
        server.close()
