"""What a recording adds to a playbook: recorded results compared on request (with normalize
masking ids), host, [recording], params_json, and mocks files for record."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.harness import HarnessError, run_spec, session_from_spec
from sandboxverify.stages.playbook import parse_playbook
from sandboxverify.stages.playbook._replay import load_mocks
from tests.helpers import FIXTURES


@pytest.fixture
def planner() -> Iterator[str]:
    sys.path.insert(0, str(FIXTURES / "planner"))
    yield "svfix_planner.plugin:setup"
    sys.path.remove(str(FIXTURES / "planner"))
    for name in [n for n in sys.modules if n.startswith("svfix_planner")]:
        del sys.modules[name]


RECORDED = """\
{settings}
[[turns]]
prompt = "Propose"
actions = [
  {{ call = "plan_propose", params = {{ title = "T" }}, capture = {{ id = 'PLAN-[0-9a-f]{{8}}' }}, result = "Created plan T as PLAN-1a2b3c4d" }},
  {{ say = "ok" }},
]

[[turns]]
prompt = "Approve"
actions = [
  {{ call = "plan_approve", params = {{ id = "${{id}}" }}, result = "Plan PLAN-1a2b3c4d approved" }},
  {{ say = "ok" }},
]
"""


def test_recorded_results_are_compared_with_ids_normalized(planner: str) -> None:
    spec = parse_playbook(
        RECORDED.format(settings="compare_results = true\nnormalize = ['PLAN-[0-9a-f]{8}']"), "s"
    )
    with session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session:
        run_spec(spec, session)
        assert "PLAN-1a2b3c4d" not in session.events.tool_results[1].text

    # results are compared only when asked
    spec = parse_playbook(RECORDED.format(settings=""), "s")
    with session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session:
        run_spec(spec, session)

    # without normalize, the new id is a different result
    spec = parse_playbook(RECORDED.format(settings="compare_results = true"), "s")
    with (
        session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session,
        pytest.raises(HarnessError) as info,
    ):
        run_spec(spec, session)
    assert info.value.code == "replay_mismatch"
    assert (info.value.turn, info.value.action) == (1, 1)
    assert info.value.message.startswith(
        "turn 1, action 1 (call_1) [turns[0].actions[0]]: the result of 'plan_propose' differs "
        "from the recording (first at line 1, column 2"  # 24, or later if the new id starts alike
    )
    assert "recorded 'Created plan T as PLAN-1a2b3c4d', now 'Created plan T as PLAN-" in str(
        info.value
    )
    assert "mask it with normalize = ['regex', ...]" in info.value.message


def test_compare_results_without_any_recorded_result_is_refused(planner: str) -> None:
    spec = parse_playbook(
        'compare_results = true\n[[turns]]\nprompt = "p"\n'
        'actions = [{ call = "plan_list" }, { say = "ok" }]\n',
        "s.toml",
    )
    with session_from_spec(spec, plugins=[planner]) as session, pytest.raises(HarnessError) as info:
        run_spec(spec, session)
    assert info.value.code == "playbook_invalid"
    assert "no call records a result" in info.value.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('host = "lmm"', "host: must be one of native, llm, mcp, got 'lmm'"),
        ("compare_results = 1", "compare_results: must be true or false"),
        ('normalize = "x"', "normalize: must be an array of regexes"),
        ('normalize = ["("]', "normalize[0]: bad regex"),
        ('[recording]\nmodle = "x"', "recording: unknown key 'modle'"),
        ('[recording]\nmodel = ""', "recording.model: must not be empty"),
    ],
)
def test_keys_a_recording_adds_are_checked(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_playbook(text + '\n[[turns]]\nprompt = "p"\nactions = [{ say = "x" }]\n', "s.toml")
    assert fragment in info.value.message


def test_params_json_holds_null_and_excludes_params() -> None:
    turn = '[[turns]]\nprompt = "p"\nactions = [{{ call = "t", {} }}, {{ say = "x" }}]\n'
    spec = parse_playbook(turn.format("params_json = '{\"a\": null}'"), "s.toml")
    assert spec["turns"][0]["actions"][0]["params"] == {"a": None}
    with pytest.raises(ConfigError, match='has "params" or "params_json", not both'):
        parse_playbook(turn.format("params = {}, params_json = '{}'"), "s.toml")
    with pytest.raises(ConfigError, match="not a JSON object"):
        parse_playbook(turn.format("params_json = '{'"), "s.toml")


def test_a_mocks_file_is_a_playbook_or_just_its_mocks(tmp_path: Path) -> None:
    mocks = tmp_path / "mocks.toml"
    mocks.write_text('[mock_tools]\nbash = ["a", "b"]\n[mock_ui]\nconfirm = false\n')
    assert load_mocks(mocks) == {"mock_tools": {"bash": ["a", "b"]}, "mock_ui": {"confirm": False}}
    assert load_mocks(FIXTURES / "playbooks" / "planner-guard.toml")["mock_ui"]
    mocks.write_text('[turns]\nprompt = "x"\n')
    with pytest.raises(ConfigError, match="has neither"):
        load_mocks(mocks)
    mocks.write_text('[mock_ui]\nconfirm = "yes"\n')
    with pytest.raises(ConfigError, match=r"mock_ui\.confirm: must be true or false"):
        load_mocks(mocks)
