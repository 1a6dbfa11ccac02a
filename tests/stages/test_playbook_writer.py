"""A recorded session written as a TOML playbook (read back by the same parser), and the ids a
model copied from results made into captures."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sandboxverify.harness import HarnessError, run_spec, session_from_spec
from sandboxverify.stages.playbook import parse_playbook
from sandboxverify.stages.playbook._writer import Unwritable, render_playbook
from tests.helpers import FIXTURES


def call(tool: str, params: dict[str, Any], result: str | None, **more: Any) -> dict[str, Any]:
    return {"kind": "call", "tool": tool, "params": params, "result": result, **more}


def say(text: str) -> dict[str, Any]:
    return {"kind": "say", "text": text}


def test_a_recording_is_written_as_a_playbook_and_read_back_as_recorded() -> None:
    recorded = [
        {
            "prompt": 'Say "hi"\nthen go',
            "actions": [
                {
                    "kind": "parallel",
                    "text": "Two at once.",
                    "calls": [
                        call("a", {"q": "it's", "n": 1.5, "deep": {"list": [1, True]}}, "A\nB"),
                        call("b", {}, "Error: no", is_error=True),
                    ],
                },
                call("bash", {"command": "ls ${HOME}"}, None, mocked=True, text=None),
                call("c", {"maybe": None}, "x\x7fy\x00"),
                say("Done:\n'''quoted'''\n"),
            ],
        },
        {"prompt": "p2", "actions": [say("")]},
    ]

    text = render_playbook(
        recorded,
        header=["Recorded."],
        top={"host": "llm", "plugins": ["mod"], "normalize": None},
        comments=["compare_results = true"],
        tables={"recording": {"model": "echo", "options": {}}, "mock_tools": {"bash": "ok"}},
    )

    assert text.startswith('# Recorded.\n\nhost = "llm"\nplugins = ["mod"]\n# compare_results')
    assert "normalize" not in text and "options" not in text
    spec = parse_playbook(text, "s.toml")
    assert spec["host"] == "llm" and spec["recording"]["model"] == "echo"
    assert spec["mock_tools"] == {"bash": "ok"}
    first, second = spec["turns"]
    assert first["prompt"] == 'Say "hi"\nthen go'
    parallel, bash, null, done = first["actions"]
    assert parallel["text"] == "Two at once."
    assert [
        (c["tool"], c["params"], c.get("result"), c["expect_error"]) for c in parallel["calls"]
    ] == [
        ("a", {"q": "it's", "n": 1.5, "deep": {"list": [1, True]}}, "A\nB", False),
        ("b", {}, "Error: no", True),
    ]
    assert "'''\nA\nB'''" in text  # text with line breaks reads as it was written
    # a ${ the model wrote is literal in the playbook, not a reference to a capture
    assert bash["params"] == {"command": "ls $${HOME}"} and "result" not in bash
    assert null["params"] == {"maybe": None} and "params_json" in text
    assert null["result"] == "x\x7fy\x00"
    assert done["text"] == "Done:\n'''quoted'''\n"
    assert second["actions"] == [{"kind": "say", "where": "turns[1].actions[0]", "text": ""}]


def test_a_value_without_a_toml_form_is_refused() -> None:
    with pytest.raises(Unwritable, match="nan"):
        render_playbook([{"prompt": "p", "actions": [call("a", {"x": float("nan")}, "r")]}])


def test_ids_a_model_copied_from_results_become_captures() -> None:
    recorded = [
        {
            "prompt": "Propose",
            "actions": [
                call("plan_propose", {"title": "T"}, "Created plan T as PLAN-1a2b3c4d"),
                say("ok"),
            ],
        },
        {
            "prompt": "Approve",
            "actions": [
                {
                    "kind": "parallel",
                    "text": None,
                    "calls": [
                        call(
                            "plan_approve", {"id": "PLAN-1a2b3c4d"}, "Plan PLAN-1a2b3c4d approved"
                        ),
                        call("plan_list", {}, "PLAN-1a2b3c4d [approved] T"),
                    ],
                },
                call("plan_reject", {"id": "PLAN-1a2b3c4d", "reason": "no PLAN-ffffffff"}, "r"),
                say("ok"),
            ],
        },
    ]

    text = render_playbook(recorded, normalize=[r"PLAN-[0-9a-f]{8}"])

    spec = parse_playbook(text, "s.toml")
    propose = spec["turns"][0]["actions"][0]
    assert propose["capture"] == {"id_1": "PLAN-[0-9a-f]{8}"}
    approve, listed = spec["turns"][1]["actions"][0]["calls"]
    assert approve["params"] == {"id": "${id_1}"} and listed["capture"] == {}
    reject = spec["turns"][1]["actions"][1]
    assert reject["params"] == {"id": "${id_1}", "reason": "no PLAN-ffffffff"}


@pytest.fixture
def planner() -> Iterator[str]:
    sys.path.insert(0, str(FIXTURES / "planner"))
    yield "svfix_planner.plugin:setup"
    sys.path.remove(str(FIXTURES / "planner"))
    for name in [n for n in sys.modules if n.startswith("svfix_planner")]:
        del sys.modules[name]


def test_a_recording_with_captured_ids_replays_against_new_ids(planner: str) -> None:
    """The recorded ids are gone in a new run: captures and normalize make it replay."""
    recorded: list[dict[str, Any]] = [
        {
            "prompt": "Propose",
            "actions": [call("plan_propose", {"title": "T"}, "Created plan T as PLAN-1a2b3c4d")],
        },
        {
            "prompt": "Approve",
            "actions": [
                call("plan_approve", {"id": "PLAN-1a2b3c4d"}, "Plan PLAN-1a2b3c4d approved")
            ],
        },
    ]
    for turn in recorded:
        turn["actions"].append(say("ok"))
    text = render_playbook(
        recorded,
        top={"compare_results": True, "normalize": ["PLAN-[0-9a-f]{8}"]},
        normalize=["PLAN-[0-9a-f]{8}"],
    )
    spec = parse_playbook(text, "s.toml")

    with session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session:
        run_spec(spec, session)
        assert session.events.tool_results[1].text.endswith("approved")
        assert "PLAN-1a2b3c4d" not in session.events.tool_results[1].text

    # without normalize, the new id is a different result
    del spec["normalize"]
    with (
        session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session,
        pytest.raises(HarnessError) as info,
    ):
        run_spec(spec, session)
    assert info.value.code == "replay_mismatch"
    assert "turn 1, action 1 (call_1) [turns[0].actions[0]]: the result of 'plan_propose'" in str(
        info.value
    )
    # written normalized: the recording says where the id was, not which one it was
    assert "recorded 'Created plan T as <id-1>', now 'Created plan T as PLAN-" in str(info.value)
    assert "PLAN-1a2b3c4d" not in text


def recording(plan_id: str, call_id: str) -> list[dict[str, Any]]:
    return [
        {
            "prompt": "Propose",
            "request_hash": "0123456789abcdef",
            "actions": [
                call("plan_propose", {"title": "T"}, f"Created plan T as {plan_id}"),
                call("plan_list", {}, f"{plan_id} [pending] T and {plan_id} again"),
                say(f'Done: {{"id": "{plan_id}", "tool_call_id": "{call_id}"}}'),
            ],
        }
    ]


def test_the_same_behaviour_recorded_twice_is_the_same_file() -> None:
    """Ids the plugin made (normalize) and ids the model echoed (generated-looking) are written as
    placeholders: a refresh diffs only where behaviour changed."""
    ids = ["PLAN-[0-9a-f]{8}"]
    first = render_playbook(
        recording("PLAN-1a2b3c4d", "tc_01m82n983nh21ecg6t9v8ksg3n"), normalize=ids
    )
    again = render_playbook(
        recording("PLAN-9f8e7d6c", "tc_01m82n9842f7jn7dkw6pjvq9xc"), normalize=ids
    )
    assert first == again
    assert 'result = "Created plan T as <id-1>"' in first
    assert 'result = "<id-1> [pending] T and <id-1> again"' in first  # one id, one placeholder
    assert '"tool_call_id": "<id-2>"' in first
    assert 'request_hash = "0123456789abcdef"' in first
    assert parse_playbook(first, "s.toml")["turns"][0]["request_hash"] == "0123456789abcdef"
    # behaviour that changed still shows
    changed = recording("PLAN-9f8e7d6c", "tc_01m82n9842f7jn7dkw6pjvq9xc")
    changed[0]["actions"][0]["result"] = "Created plan T (draft) as PLAN-9f8e7d6c"
    assert render_playbook(changed, normalize=ids) != first
