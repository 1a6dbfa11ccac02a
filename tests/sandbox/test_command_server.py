"""A command asked one request at a time: its answers, and what is not one."""

from __future__ import annotations

import sys
from pathlib import Path

from sandboxverify.sandbox._command_server import CommandServer
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._subprocess import Command, Outcome
from sandboxverify.sandbox._toolchain import choose_toolchain

#: answers each request with what it was asked, doubled; other behaviour by the request
SERVER = r"""
import json, sys, time
print("starting", file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request.get("silent"):
        time.sleep(60)
    if request.get("garbage"):
        print("not json", flush=True)
        continue
    if request.get("exit"):
        sys.exit(request["exit"])
    print(json.dumps({"twice": request["n"] * 2}), flush=True)
"""


class _Told:
    """Keeps how each command server ended, and for which interpreter."""

    def __init__(self) -> None:
        self.ended_for: list[tuple[Outcome, str | None]] = []

    def run(self, command: Command, python: str | None) -> Outcome:
        raise AssertionError("a command server starts its command itself")

    def ended(self, outcome: Outcome, python: str | None) -> None:
        self.ended_for.append((outcome, python))


def context(runner: _Told | None = None) -> RunContext:
    return RunContext(choose_toolchain("pip"), 30, 30, runner=runner or _Told(), python="3.99.0")


def served(
    tmp_path: Path, timeout: float = 30
) -> tuple[CommandServer, list[tuple[Outcome, str | None]]]:
    runner = _Told()
    command = Command(
        argv=[sys.executable, "-c", SERVER],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=timeout,
        log_path=tmp_path / "logs" / "server.log",
        label="server",
    )
    return CommandServer(command, context(runner)), runner.ended_for


def test_each_request_gets_its_answer_then_the_command_ends(tmp_path: Path) -> None:
    talk, seen = served(tmp_path)
    assert talk.ask({"n": 1}) == {"twice": 2}
    assert talk.ask({"n": 21}) == {"twice": 42}

    outcome = talk.close()

    assert outcome.ok and outcome.returncode == 0
    assert seen == [(outcome, "3.99.0")]  # the runner heard of it, as the context's Python's
    assert "starting" in outcome.tail  # its stderr is the log
    assert talk.close() is outcome


def test_a_command_that_ends_without_answering_is_no_answer(tmp_path: Path) -> None:
    talk, _ = served(tmp_path)
    assert talk.ask({"exit": 3}) is None
    assert talk.ask({"n": 1}) is None
    outcome = talk.close()
    assert not outcome.ok and outcome.returncode == 3


def test_what_is_not_json_is_no_answer_and_stops_it(tmp_path: Path) -> None:
    talk, _ = served(tmp_path)
    assert talk.ask({"garbage": True}) is None
    assert talk.ask({"n": 1}) is None
    assert not talk.close().ok


def test_an_answer_that_does_not_come_in_time_stops_it(tmp_path: Path) -> None:
    talk, _ = served(tmp_path, timeout=0.5)
    assert talk.ask({"silent": True}) is None
    outcome = talk.close()
    assert outcome.timed_out and not outcome.ok
    assert "timed out after 0.5s" in outcome.describe()


def test_a_command_that_cannot_start_is_no_answer(tmp_path: Path) -> None:
    command = Command(
        argv=[str(tmp_path / "missing")],
        env={},
        cwd=tmp_path,
        timeout=5,
        log_path=tmp_path / "missing.log",
        label="missing",
    )
    talk = CommandServer(command, context())
    assert talk.ask({"n": 1}) is None
    outcome = talk.close()
    assert outcome.returncode == 127
    assert "cannot start" in outcome.tail
