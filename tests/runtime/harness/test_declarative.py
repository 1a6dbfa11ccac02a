"""Declarative playbooks in-process: the DESIGN example as written, captures, expectations."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.harness import HarnessError, run_spec, session_from_spec
from sandboxverify.stages.playbook import load_playbook, parse_playbook
from tests.helpers import FIXTURES

PLANNER = "svfix_planner.plugin:setup"


@pytest.fixture(autouse=True)
def planner_importable() -> Iterator[None]:
    """The planner fixture's module, importable straight from the tree, with fresh state."""
    sys.path.insert(0, str(FIXTURES / "planner"))
    yield
    sys.path.remove(str(FIXTURES / "planner"))
    for name in [n for n in sys.modules if n.startswith("svfix_planner")]:
        del sys.modules[name]


SESSIONS: list[Any] = []


@pytest.fixture(autouse=True)
def close_sessions() -> Iterator[None]:
    yield
    while SESSIONS:
        SESSIONS.pop().close()


def run(spec: dict[str, Any], **options: Any) -> Any:
    session = session_from_spec(spec, plugins=[PLANNER], **options)
    SESSIONS.append(session)
    run_spec(spec, session)
    return session


def test_the_design_example_runs_as_written() -> None:
    spec = load_playbook(FIXTURES / "playbooks" / "planner-design.toml")
    session = run(spec)
    propose, approve = session.events.tool_results
    plan_id = propose.text.split()[-1]
    assert approve.text == f"Plan {plan_id} approved"
    assert session.events.tool_calls_for("plan_approve")[0].input == {"id": plan_id}
    assert session.events.ui_calls_for("confirm")[0].return_value is True


def test_the_guard_playbook_blocks_declines_and_runs_in_parallel() -> None:
    session = run(load_playbook(FIXTURES / "playbooks" / "planner-guard.toml"))
    [blocked] = session.events.blocked_calls()
    assert blocked.input == {"command": "rm -rf /"}
    assert [r.text for r in session.events.tool_results_for("bash")] == [
        "dangerous command blocked: rm -rf",
        "total 0",
    ]
    assert session.events.tool_results_for("plan_approve")[0].text.endswith("left pending")


def playbook(text: str) -> dict[str, Any]:
    return parse_playbook(text, "inline.toml")


def test_a_failed_expect_names_turn_action_and_place() -> None:
    spec = playbook("""
[[turns]]
prompt = "Propose"
actions = [{ call = "plan_propose", params = { title = "T" }, expect = "^Rejected" }, { say = "ok" }]
""")
    with pytest.raises(HarnessError) as info:
        run(spec)
    assert info.value.code == "expect_mismatch"
    assert info.value.message.startswith(
        "turn 1, action 1 (call_1) [turns[0].actions[0]]: the result of 'plan_propose' does not "
        "match expect '^Rejected': 'Created plan T as PLAN-"
    )


def test_a_capture_that_finds_nothing() -> None:
    spec = playbook("""
[[turns]]
prompt = "Propose"
actions = [{ call = "plan_propose", params = { title = "T" }, capture = { id = "TICKET-\\\\d+" } }, { say = "ok" }]
""")
    with pytest.raises(HarnessError) as info:
        run(spec)
    assert info.value.code == "capture_failed"
    assert "[turns[0].actions[0].capture.id]: 'TICKET-\\\\d+' found nothing" in info.value.message


def test_captures_substitute_into_nested_params_and_escapes_stay_literal() -> None:
    spec = playbook("""
[[turns]]
prompt = "Propose"
actions = [
  { call = "plan_propose", params = { title = "First" }, capture = { id = "(PLAN-[0-9a-f]+)" } },
  { call = "plan_propose", params = { title = "About ${id}", steps = ["check ${id}", "keep $${id}"] } },
  { say = "ok" },
]
""")
    session = run(spec)
    first_id = session.events.tool_results[0].text.split()[-1]
    second = session.events.tool_calls[1].input
    assert second == {"title": f"About {first_id}", "steps": [f"check {first_id}", "keep ${id}"]}


def test_expect_section_assertions_fail_loudly() -> None:
    spec = playbook("""
[[turns]]
prompt = "List"
actions = [{ call = "plan_list" }, { say = "ok" }]

[expect]
called = ["plan_propose"]
""")
    with pytest.raises(HarnessError, match="expected 'plan_propose' to be called at least once"):
        run(spec)


def test_mocks_and_ui_come_from_the_playbook(tmp_path: Path) -> None:
    spec = playbook("""
[mock_tools]
read = ["one", "two"]

[[turns]]
prompt = "Read"
actions = [{ call = "read", params = { path = "a" } }, { call = "read", params = { path = "b" } },
           { call = "read", params = { path = "c" } }, { say = "ok" }]
""")
    with pytest.raises(HarnessError) as info:
        run(spec)
    assert info.value.code == "mocks_exhausted"
    assert "turn 1 ('Read'), action 3 (call('read')) [turns[0].actions[2]]" in info.value.message


def polite(api: Any) -> None:
    """Asks the user only when someone is there."""

    def approve(ctx: Any) -> str:
        if not ctx.has_ui:
            return "left pending: nobody to ask"
        return "approved" if ctx.ui.confirm("Approve?") else "declined"

    api.register_tool("approve", approve)
    api.register_tool("ask_anyway", lambda ctx: str(ctx.ui.confirm("Approve?")))


POLITE = "tests.runtime.harness.test_declarative:polite"


def test_a_playbook_without_a_ui_runs_its_tools_headless() -> None:
    text = "has_ui = false\n[[turns]]\nprompt = 'p'\nactions = [{ call = 'approve', expect = 'pending' }, { say = 'x' }]\n"
    spec = parse_playbook(text, "s.toml")
    assert spec["has_ui"] is False
    with session_from_spec(spec, plugins=[POLITE]) as session:
        run_spec(spec, session)
        assert not session.events.ui
    asking = parse_playbook(text.replace("'approve', expect = 'pending'", "'ask_anyway'"), "s.toml")
    with (
        session_from_spec(asking, plugins=[POLITE]) as session,
        pytest.raises(HarnessError) as info,
    ):
        run_spec(asking, session)
    assert info.value.code == "ui_invalid"
    assert "the session has no UI (ctx.has_ui is False)" in info.value.message
