"""What a recording adds to a playbook: recorded results compared by default (with normalize
masking ids, opted out of per call or per run), host, [recording], params_json, request digests,
and mocks files for record."""

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

    # a run may opt out of the comparison
    spec = parse_playbook(RECORDED.format(settings="compare_results = false"), "s")
    with session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session:
        run_spec(spec, session)

    # without normalize, the new id is a different result: results are compared by default
    spec = parse_playbook(RECORDED.format(settings=""), "s")
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


def test_a_call_may_opt_out_of_the_comparison(planner: str) -> None:
    text = RECORDED.format(settings="").replace(
        'result = "Created plan T as PLAN-1a2b3c4d" }',
        'result = "Created plan T as PLAN-1a2b3c4d", compare_result = false }',
    )
    spec = parse_playbook(text, "s")
    with (
        session_from_spec(spec, plugins=[planner], mock_ui={"confirm": True}) as session,
        pytest.raises(HarnessError) as info,
    ):
        run_spec(spec, session)
    # the first call is not compared; the second, which names the same new id, is
    assert (info.value.code, info.value.turn) == ("replay_mismatch", 2)


def test_a_secret_a_recording_masked_replays_as_recorded(
    planner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording never holds a secret (it says ***); the live result does, and is masked the
    same way before the two are compared."""
    monkeypatch.setenv("SERVICE_TOKEN", "tok-not-to-be-written-0001")
    text = (
        "normalize = ['PLAN-[0-9a-f]{8}']\n[[turns]]\nprompt = 'p'\nactions = [\n"
        "  { call = 'plan_propose', params = { title = 'tok-not-to-be-written-0001' },"
        " result = 'Created plan *** as <id-1>' },\n  { say = 'ok' },\n]\n"
    )
    spec = parse_playbook(text, "s")
    with session_from_spec(spec, plugins=[planner]) as session:
        run_spec(spec, session)


def echo_tools(api: object) -> None:
    api.register_tool("echo", lambda text: text, description="Says it back")  # type: ignore[attr-defined]


def loud_tools(api: object) -> None:
    api.register_tool("echo", lambda text: text, description="Shouts it back")  # type: ignore[attr-defined]


def recorded_with_digests(prompt: str = "Say hi") -> dict[str, object]:
    """A recording made with echo_tools, the model 'm' and temperature 0."""
    from sandboxverify.runtime.harness import (  # noqa: PLC0415
        create_test_session,
        offered_tools,
        request_hash,
        settings_hash,
        tools_hash,
    )

    with create_test_session([echo_tools]) as session:
        tools = tools_hash(offered_tools(session))
    settings = settings_hash("m", None, {"temperature": "0"})
    text = (
        f"[recording]\nmodel = 'm'\noptions = {{ temperature = '0' }}\n"
        f"tools_hash = '{tools}'\nsettings_hash = '{settings}'\n"
        f"[[turns]]\nprompt = 'Say hi'\nrequest_hash = '{request_hash('Say hi', settings, tools)}'\n"
        "actions = [{ call = 'echo', params = { text = 'hi' }, result = 'hi' }, { say = 'ok' }]\n"
    )
    return parse_playbook(text.replace("prompt = 'Say hi'", f"prompt = '{prompt}'"), "s.toml")


STALE = [
    ("tools", "the tools the plugins offer the model"),
    ("settings", "the model, its system prompt or its options"),
    ("prompt", "the prompt changed"),
]


@pytest.mark.parametrize(("changed", "said"), STALE)
def test_a_turn_whose_request_changed_is_stale_without_any_model(changed: str, said: str) -> None:
    from sandboxverify.harness import create_test_session  # noqa: PLC0415

    spec = recorded_with_digests("Say hello" if changed == "prompt" else "Say hi")
    if changed == "settings":
        spec["recording"]["options"] = {"temperature": "1"}  # type: ignore[index]
    plugins = [loud_tools if changed == "tools" else echo_tools]
    with create_test_session(plugins) as session, pytest.raises(HarnessError) as info:
        run_spec(spec, session)
    assert (info.value.code, info.value.turn) == ("replay_stale", 1)
    assert said in info.value.message
    assert "sandboxverify record --refresh s.toml" in info.value.message
    assert not session.events.tool_calls  # nothing ran: the recording answers another request


def test_an_unchanged_request_replays() -> None:
    from sandboxverify.harness import create_test_session  # noqa: PLC0415

    spec = recorded_with_digests()
    with create_test_session([echo_tools]) as session:
        run_spec(spec, session)
