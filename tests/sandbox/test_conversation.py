"""A command asked one request at a time: its answers, and what is not one."""

from __future__ import annotations

import sys
from pathlib import Path

from sandboxverify.sandbox._conversation import Conversation
from sandboxverify.sandbox._subprocess import Command, Outcome

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


def conversation(tmp_path: Path, timeout: float = 30) -> tuple[Conversation, list[Outcome]]:
    seen: list[Outcome] = []
    command = Command(
        argv=[sys.executable, "-c", SERVER],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=timeout,
        log_path=tmp_path / "logs" / "server.log",
        label="server",
    )
    return Conversation(command, seen.append), seen


def test_each_request_gets_its_answer_then_the_command_ends(tmp_path: Path) -> None:
    talk, seen = conversation(tmp_path)
    assert talk.ask({"n": 1}) == {"twice": 2}
    assert talk.ask({"n": 21}) == {"twice": 42}

    outcome = talk.close()

    assert outcome.ok and outcome.returncode == 0
    assert seen == [outcome]
    assert "starting" in outcome.tail  # its stderr is the log
    assert talk.close() is outcome


def test_a_command_that_ends_without_answering_is_no_answer(tmp_path: Path) -> None:
    talk, _ = conversation(tmp_path)
    assert talk.ask({"exit": 3}) is None
    assert talk.ask({"n": 1}) is None
    outcome = talk.close()
    assert not outcome.ok and outcome.returncode == 3


def test_what_is_not_json_is_no_answer_and_stops_it(tmp_path: Path) -> None:
    talk, _ = conversation(tmp_path)
    assert talk.ask({"garbage": True}) is None
    assert talk.ask({"n": 1}) is None
    assert not talk.close().ok


def test_an_answer_that_does_not_come_in_time_stops_it(tmp_path: Path) -> None:
    talk, _ = conversation(tmp_path, timeout=0.5)
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
    talk = Conversation(command)
    assert talk.ask({"n": 1}) is None
    outcome = talk.close()
    assert outcome.returncode == 127
    assert "cannot start" in outcome.tail
