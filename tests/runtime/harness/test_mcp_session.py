"""Harness sessions hosting an MCP server: real calls, elicitation from mock_ui, sampling from
the playbook's call, and the failures when the script and the server disagree."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from sandboxverify.harness import HarnessError, TestSession, call, create_test_session, say, when
from tests.runtime.hosts.test_mcp import SERVER

COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(SERVER)} normal"


def session(**options: object) -> TestSession:
    return create_test_session([COMMAND], host="mcp", call_timeout=10, **options)


def fail(code: str, t: TestSession, *turns: object) -> HarnessError:
    with pytest.raises(HarnessError) as info:
        t.run(*turns)  # type: ignore[arg-type]
    assert info.value.code == code, info.value
    return info.value


def test_real_calls_with_elicitation_and_sampling_answered_by_the_playbook() -> None:
    with session(mock_ui={"elicit": {"name": "Ada"}}) as t:
        assert "add" in t.tools and "ask" in t.tools
        t.run(
            when(
                "go",
                [
                    call("add", {"a": 2, "b": 3}),
                    call("ask", sample="A summary."),
                    say("done"),
                ],
            )
        )
        added, asked = t.events.tool_results
        assert added.text == "5"
        got = json.loads(asked.text)
        assert got["ping"]["result"] == {}
        assert got["elicit"]["result"] == {"action": "accept", "content": {"name": "Ada"}}
        sampled = got["sample"]["result"]
        assert sampled["content"] == {"type": "text", "text": "A summary."}
        assert sampled["role"] == "assistant" and sampled["stopReason"] == "endTurn"
        assert [(u.method, u.args[0]) for u in t.events.ui] == [("elicit", "Your name?")]
        assert [e.type for e in t.events.all].count("sampling") == 1
        process = t.registry.closers  # the server runs until the session closes
        assert process
    assert not t.registry.closers


def test_sampling_the_playbook_did_not_script_fails_the_call() -> None:
    with session() as t:
        error = fail("sampling_unscripted", t, when("go", [call("ask"), say("done")]))
    assert "'ask' asked the model to sample (request 1:" in error.message
    assert "add sample=... to it" in error.message


def test_sample_answers_the_server_never_asked_for_fail() -> None:
    with session() as t:
        error = fail("sampling_unused", t, when("go", [call("add", {"a": 1, "b": 1}, sample="x")]))
    assert "was given 1 sample answer(s), but the server asked the model to sample 0 time(s)" in (
        error.message
    )


def test_a_bad_elicit_answer_fails_the_run_although_the_server_got_an_error_answer() -> None:
    with session(mock_ui={"elicit": lambda message, schema: "maybe"}) as t:
        error = fail("ui_invalid", t, when("go", [call("ask", sample="s"), say("done")]))
    assert "elicit must answer 'accept', 'decline', 'cancel'" in error.message


def test_an_error_result_from_the_server_is_a_tool_error_unless_expected() -> None:
    with session() as t:
        error = fail("tool_error", t, when("go", [call("fail"), say("done")]))
    assert "the tool failed on purpose" in error.message
    with session() as t:
        t.run(when("go", [call("fail", expect_error="on purpose"), say("done")]))


def test_arguments_are_validated_against_the_servers_input_schema() -> None:
    with session() as t:
        error = fail("invalid_arguments", t, when("go", [call("add", {"a": "two"}), say("x")]))
    assert "do not fit the schema of 'add'" in error.message


def test_a_server_that_cannot_start_is_a_load_failure_of_the_session() -> None:
    broken = f"{shlex.quote(sys.executable)} {shlex.quote(SERVER)} exit"
    with pytest.raises(HarnessError) as info:
        create_test_session([broken], host="mcp")
    assert info.value.code == "plugin_load_failed"
    assert "exited with code 3" in info.value.message


def test_a_server_dying_mid_call_fails_the_run_even_where_an_error_is_expected() -> None:
    with session() as t:
        error = fail("server_failed", t, when("go", [call("die", expect_error=True), say("x")]))
    assert "'die': MCP server" in error.message and "exited with code 7" in error.message
    assert error.details is not None and "MemoryError: out of memory" in error.details
