"""Assertions about the process hold exactly when they should: counts of zero, unknown names,
a tool compared with itself, answers prepared for calls that never came, caught failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandboxverify.harness import HarnessError, call, create_test_session, load_trace, say, when
from sandboxverify.runtime import PluginAPI
from sandboxverify.runtime.harness import run_spec
from sandboxverify.stages.playbook import parse_playbook


def tools(api: PluginAPI) -> None:
    api.register_tool("alpha", lambda: "a")
    api.register_tool("beta", lambda: "b")
    api.register_tool(
        "ask", lambda ctx: f"{ctx.ui.confirm('Sure?')} {ctx.ui.select('Pick', ['x', 'y'])}"
    )


def raised(code: str, run: Any, *args: Any, **kwargs: Any) -> HarnessError:
    with pytest.raises(HarnessError) as info:
        run(*args, **kwargs)
    assert info.value.code == code, info.value
    return info.value


def test_times_zero_holds_for_a_tool_never_called() -> None:
    with create_test_session([tools]) as t:
        t.run(when("x", [call("alpha"), say("y")]))
        t.assert_called("beta", times=0)
        t.assert_called("alpha", times=1)
        error = raised("assertion_failed", t.assert_called, "alpha", times=0)
        assert "expected 'alpha' to be called 0 time(s), it was called 1 time(s)" in error.message
        raised("assertion_failed", t.assert_called, "beta")
        with pytest.raises(TypeError):
            t.assert_called("alpha", times=-1)


def test_names_no_tool_has_are_errors_with_a_did_you_mean() -> None:
    with create_test_session([tools]) as t:
        t.run(when("x", [call("alpha"), say("y")]))
        for check, args in (
            (t.assert_not_called, ("alpah",)),
            (t.assert_called, ("alpah",)),
            (t.assert_called_before, ("alpha", "alpah")),
        ):
            error = raised("unknown_tool", check, *args)
            assert "'alpah' is no tool of this session (did you mean 'alpha'?)" in error.message
        t.assert_not_called("bash")  # environmental tools are known, mocked or not


def test_a_tool_is_never_called_before_itself() -> None:
    with create_test_session([tools]) as t:
        t.run(when("x", [call("alpha"), call("alpha"), say("y")]))
        error = raised("assertion_failed", t.assert_called_before, "alpha", "alpha")
    assert "compares a tool with itself" in error.message


def spec(text: str) -> dict[str, Any]:
    return parse_playbook(text, "smoke.toml")


TURN = "[[turns]]\nprompt = 'x'\nactions = [{ call = 'alpha' }, { say = 'y' }]\n"


@pytest.mark.parametrize(
    ("expect", "place"),
    [
        ("not_called = ['alpah']", "expect.not_called[0]"),
        ("called = ['alpah']", "expect.called[0]"),
        ("called_before = [['alpha', 'bta']]", "expect.called_before[0]"),
    ],
)
def test_expect_names_no_tool_has_fail_before_the_run(expect: str, place: str) -> None:
    with create_test_session([tools]) as t:
        error = raised("unknown_tool", run_spec, spec(f"{TURN}[expect]\n{expect}\n"), t)
        assert t.events.tool_calls == []  # nothing ran
    assert error.message.startswith(f"smoke.toml: {place}: ")
    assert "is no tool of this session (did you mean" in error.message


def test_unused_list_mocks_and_ui_answers_fail_like_unused_sample_answers() -> None:
    with (
        pytest.raises(HarnessError) as tool_mock,
        create_test_session([tools], mock_tools={"bash": ["one", "two"]}) as t,
    ):
        t.run(when("x", [call("bash", {"command": "ls"}), say("y")]))
    assert tool_mock.value.code == "mocks_unused"
    assert "mock_tools 'bash': 1 of 2 entries used" in tool_mock.value.message
    with (
        pytest.raises(HarnessError) as ui,
        create_test_session([tools], mock_ui={"confirm": [True, False]}) as t,
    ):
        t.run(when("x", [call("ask"), say("y")]))
    assert "mock_ui 'confirm': 1 of 2 entries used" in ui.value.message
    with (
        pytest.raises(HarnessError) as never,
        create_test_session([tools], mock_ui={"select": ["x"]}) as t,
    ):
        t.run(when("x", [call("alpha"), say("y")]))
    assert "mock_ui 'select': 0 of 1 entries used" in never.value.message


def test_unused_answers_that_are_allowed() -> None:
    # static values serve any number of calls; an environmental tool never called keeps its
    # mock as a standing answer (the design example's read); auto_assert=False allows leftovers
    with create_test_session([tools], mock_tools={"read": ["a", "b"], "bash": "ok"}) as t:
        t.run(when("x", [call("alpha"), say("y")]))
    with create_test_session([tools], mock_tools={"bash": ["a", "b"]}, auto_assert=False) as t:
        t.run(when("x", [call("bash", {"command": "ls"}), say("y")]))


def test_a_playbook_spec_checks_unused_answers_and_that_something_was_called() -> None:
    with create_test_session([tools]) as t:
        error = raised(
            "nothing_called",
            run_spec,
            spec("[[turns]]\nprompt = 'x'\nactions = [{ say = 'y' }]\n"),
            t,
        )
    assert "called no tool" in error.message
    leftover = spec(f"[mock_ui]\nconfirm = [true, true]\n{TURN.replace('alpha', 'ask')}")
    with create_test_session([tools], mock_ui=leftover["mock_ui"]) as t:
        raised("mocks_unused", run_spec, leftover, t)


def test_a_session_remembers_its_first_failure_even_when_caught() -> None:
    with create_test_session([tools]) as t:
        with pytest.raises(HarnessError):
            t.run(when("x", [call("gamma"), say("y")]))
        first = t.failure
        with pytest.raises(HarnessError):
            t.assert_called("alpha")
    assert first is not None and first.code == "unknown_tool"
    assert t.failure is first


def test_snapshots_of_two_sessions_in_one_test_get_their_own_files(tmp_path: Path) -> None:
    for value in ("first", "second"):
        with create_test_session([tools], snapshot_dir=tmp_path) as t:
            t.assert_snapshot(value)
    files = sorted(path.name for path in tmp_path.rglob("*.json"))
    assert files == ["001.json", "002.json"]


def test_a_value_a_snapshot_cannot_hold_is_a_harness_error(tmp_path: Path) -> None:
    with create_test_session([tools], snapshot_dir=tmp_path) as t:
        error = raised("snapshot_invalid", t.assert_snapshot, {"when": object()})
    assert "cannot snapshot a value of type object" in error.message


def approvals(api: PluginAPI) -> None:
    api.register_tool("refund", lambda ctx: f"refund {ctx.ui.confirm('Issue refund?', '10 EUR')}")
    api.register_tool("delete", lambda ctx: f"delete {ctx.ui.confirm('Delete all?', 'really')}")


def test_assert_approved_holds_only_for_a_confirm_answered_yes() -> None:
    with create_test_session([approvals], mock_ui={"confirm": [True, False]}) as t:
        t.run(when("x", [call("refund"), call("delete"), say("y")]))
        t.assert_approved("Issue refund?")
        t.assert_approved("10 EUR")  # by its message too
        declined = raised("assertion_failed", t.assert_approved, "Delete all?")
        assert "the user was asked, and did not approve it (answered False)" in declined.message
        never = raised("assertion_failed", t.assert_approved, "Issue refunds?")
        assert "never asked about it (did you mean 'Issue refund?'?)" in never.message
        assert "asked: 'Issue refund?', 'Delete all?'" in never.message


def test_expect_approved_in_a_playbook() -> None:
    spec = parse_playbook(
        "[mock_ui]\nconfirm = [true, false]\n[expect]\napproved = ['Issue refund?']\n"
        "[[turns]]\nprompt = 'x'\nactions = [{ call = 'refund' }, { call = 'delete' },"
        " { say = 'y' }]\n",
        "s.toml",
    )
    with create_test_session([approvals], mock_ui=spec["mock_ui"]) as t:
        run_spec(spec, t)
    spec["expect"]["approved"] = ["Delete all?"]
    with create_test_session([approvals], mock_ui=spec["mock_ui"]) as t:
        error = raised("assertion_failed", run_spec, spec, t)
        assert "expected 'Delete all?' to be approved" in error.message


def test_a_recorded_trace_answers_assertions_without_running_again(tmp_path: Path) -> None:
    with create_test_session([approvals, tools], mock_ui={"confirm": [True, False]}) as t:
        t.run(when("x", [call("alpha"), call("refund"), call("delete"), say("y")]))
        path = t.write_trace(tmp_path / "run.jsonl")

    trace = load_trace(path)  # nothing of the plugins runs from here on
    trace.assert_called("refund")
    trace.assert_called("beta", times=0)
    trace.assert_not_called("beta")
    trace.assert_called_before("alpha", "delete")
    trace.assert_approved("Issue refund?")
    assert (
        "did not approve it"
        in raised("assertion_failed", trace.assert_approved, "Delete all?").message
    )
    error = raised("assertion_failed", trace.assert_called_before, "delete", "alpha")
    assert "but 'alpha' came first" in error.message
    unknown = raised("unknown_tool", trace.assert_called, "refnd")
    assert "'refnd' is no tool of this recorded run (did you mean 'refund'?)" in unknown.message
