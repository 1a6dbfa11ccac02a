"""Traces: every run as JSONL, and a recorded trace replayed as a deterministic test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.harness import (
    HarnessError,
    call,
    create_test_session,
    load_trace,
    replay,
    say,
    when,
)
from sandboxverify.runtime import PluginAPI

STATE: dict[str, Any] = {"suffix": "!", "ask": "Buy?"}


def shop(api: PluginAPI) -> None:
    @api.tool
    def price(item: str) -> str:
        return f"{item} costs 3{STATE['suffix']}"

    @api.tool
    def buy(item: str, ctx: Any) -> str:
        if STATE["ask"] and not ctx.ui.confirm(STATE["ask"], item):
            return "cancelled"
        where = ctx.ui.select("Ship to", ["home", "office"])
        return f"bought {item} to {where}"


def record(path: Path) -> None:
    with create_test_session(
        [shop], mock_tools={"bash": ["paid"]}, mock_ui={"select": "office"}
    ) as t:
        t.run(
            when("Price?", [call("price", {"item": "tea"}), say("3")]),
            when(
                "Buy", [call("buy", {"item": "tea"}), call("bash", {"command": "pay"}), say("done")]
            ),
        )
        t.write_trace(path)


def test_a_trace_is_jsonl_from_run_started_to_run_completed(tmp_path: Path) -> None:
    path = tmp_path / "shop.jsonl"
    record(path)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    types = [event["type"] for event in events]
    assert types[0] == "run_started" and types[-1] == "run_completed"
    assert events[0]["tools"] == ["buy", "price"]
    assert {"turn_started", "model_step", "tool_call", "tool_result", "ui_call"} <= set(types)
    ui = [event for event in events if event["type"] == "ui_call"]
    assert [(e["method"], e["return_value"], e["tool_call_id"]) for e in ui] == [
        ("confirm", True, "call_2"),
        ("select", "office", "call_2"),
    ]


def test_a_recorded_trace_replays_as_a_regression_test(tmp_path: Path) -> None:
    path = tmp_path / "shop.jsonl"
    record(path)
    trace = load_trace(path)
    assert trace.mock_tools() == {
        "bash": [
            {"content": [{"type": "text", "text": "paid"}], "details": None, "is_error": False}
        ]
    }
    assert trace.mock_ui() == {"confirm": [True], "select": ["office"]}

    with replay(path, plugins=[shop]) as session:
        assert [r.text for r in session.events.tool_results] == [
            "tea costs 3!",
            "bought tea to office",
            "paid",
        ]


def test_replay_fails_when_a_tool_now_answers_differently(tmp_path: Path) -> None:
    path = tmp_path / "shop.jsonl"
    record(path)
    STATE["suffix"] = " euros"
    try:
        with pytest.raises(HarnessError) as info:
            replay(path, plugins=[shop])
    finally:
        STATE["suffix"] = "!"
    assert info.value.code == "replay_mismatch"
    assert (
        "call_1 (price, turn 1): recorded result 'tea costs 3!', now result 'tea costs 3 "
        "euros'" in info.value.message
    )
    with replay(path, plugins=[shop], normalize=lambda text: text.replace(" euros", "!")):
        pass


def test_replay_notices_a_changed_tool_set(tmp_path: Path) -> None:
    path = tmp_path / "shop.jsonl"
    record(path)

    def extra(api: PluginAPI) -> None:
        api.register_tool("refund", lambda: "ok")

    with pytest.raises(HarnessError, match="recorded with tools \\['buy', 'price'\\]"):
        replay(path, plugins=[shop, extra])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "a trace starts with run_started"),
        ('{"type": "run_started", "version": 1}\n', "the trace is incomplete"),
        ('{"type": "run_started", "version": 9}\n{"type": "run_completed"}\n', "version 9"),
        ("not json\n", "not a JSON object"),
    ],
)
def test_broken_traces_are_rejected(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    with pytest.raises(HarnessError, match=message):
        load_trace(path)


def test_a_failed_run_or_one_that_called_nothing_is_no_reference(tmp_path: Path) -> None:
    failed = tmp_path / "failed.jsonl"
    with create_test_session([shop]) as t:
        with pytest.raises(HarnessError):
            t.run(when("Price?", [call("price", {"item": "tea"}, expect_error=True), say("3")]))
        t.write_trace(failed)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(
        '{"type": "run_started", "version": 1, "tools": ["buy", "price"]}\n'
        '{"type": "run_completed", "ok": true, "error": null}\n'
    )
    for path, message in (
        (failed, "the recorded run failed ([unexpected_success] turn 1"),
        (empty, "the trace records no tool call"),
    ):
        with pytest.raises(HarnessError) as info:
            replay(path, plugins=[shop])
        assert info.value.code == "playbook_invalid"
        assert message in info.value.message


@pytest.mark.parametrize(
    ("ask", "difference"),
    [
        (None, 'the user is never asked confirm("Buy?", "tea") (recorded UI call 1)'),
        ("Pay now?", 'UI call 1: recorded confirm("Buy?", "tea"), now confirm("Pay now?", "tea")'),
    ],
)
def test_replay_compares_the_questions_the_user_was_asked(
    tmp_path: Path, ask: str | None, difference: str
) -> None:
    path = tmp_path / "shop.jsonl"
    record(path)
    STATE["ask"] = ask
    try:
        with pytest.raises(HarnessError) as info:
            replay(path, plugins=[shop])
    finally:
        STATE["ask"] = "Buy?"
    assert info.value.code == "replay_mismatch"
    assert difference in info.value.message


def test_calls_sent_without_validation_replay_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    with create_test_session([shop]) as t:
        t.run(
            when("Price?", [call("price", {"item": 3}, validate=False), say("?")]),
        )
        t.write_trace(path)
    with replay(path, plugins=[shop]) as session:  # not invalid_arguments: sent as recorded
        assert session.events.tool_results[0].text == "3 costs 3!"
