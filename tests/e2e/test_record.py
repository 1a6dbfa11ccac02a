"""Record once, replay forever: a real llm model drives the plugins' tools through the real command
line, the session becomes a playbook, the playbook replays (results compared or not) and runs
live against the model again.

The model is llm-echo's ``echo``, a real llm model plugin that runs offline and calls the tools a
JSON prompt names (``{"tool_calls": [...], "raw": "text said along"}``); nothing of llm is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, check
from sandboxverify.harness import load_trace
from sandboxverify.stages.playbook import load_playbook
from tests.helpers import FIXTURES, CliResult, fixture, run_cli

pytest.importorskip("llm_echo", reason="llm-echo (the offline model) needs Python 3.10+")

PLAYBOOKS = FIXTURES / "playbooks"
LLM_TOOLS = ["--host", "llm", "--plugin", "svfix_llm_tools.plugin"]


def prompt(*calls: tuple[str, dict[str, object]], text: str | None = None) -> str:
    """What the echo model turns into one step calling these tools (with ``text`` said along)."""
    scripted: dict[str, object] = {
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls]
    }
    if text is not None:
        scripted["raw"] = text
    return json.dumps(scripted)


REVERSE_AND_DIVIDE = prompt(
    ("reverse_text", {"text": "stressed"}), ("divide", {"a": 1, "b": 0}), text="Both at once."
)
COUNT = prompt(("Counter_increment", {"by": 2}))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The fixtures importable from the tree; llm's user directory (keys) in a temporary one."""
    user = tmp_path / "llm-user"
    user.mkdir()
    paths = [str(fixture("llm-tools")), str(fixture("planner"))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "LLM_USER_PATH": str(user)}


def sv(args: list[str], env: dict[str, str], cwd: Path) -> CliResult:
    return run_cli(args, env=env, cwd=cwd, timeout=300)


def test_a_recorded_session_replays_compares_and_runs_live(
    tmp_path: Path, env: dict[str, str]
) -> None:
    recorded = sv(
        ["record", REVERSE_AND_DIVIDE, COUNT, "--model", "echo", *LLM_TOOLS, "-o", "s.toml"],
        env,
        tmp_path,
    )
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "RECORDED: s.toml and s.jsonl, 2 turn(s), 3 tool call(s)" in recorded.stdout

    spec = load_playbook(tmp_path / "s.toml")
    assert spec["host"] == "llm" and spec["plugins"] == ["svfix_llm_tools.plugin"]
    recording = spec["recording"]
    assert (recording["model"], recording["system"], recording["options"]) == ("echo", None, {})
    assert len(recording["tools_hash"]) == len(recording["settings_hash"]) == 16
    assert all(len(turn["request_hash"]) == 16 for turn in spec["turns"])
    (both, said), (count, _) = (turn["actions"] for turn in spec["turns"])
    assert both["kind"] == "parallel" and both["text"] == "Both at once."
    assert [(c["tool"], c["params"], c["expect_error"], c["result"]) for c in both["calls"]] == [
        ("reverse_text", {"text": "stressed"}, False, "desserts"),
        ("divide", {"a": 1, "b": 0}, True, "Error: cannot divide by zero"),
    ]
    assert said["kind"] == "say" and '"output": "desserts"' in said["text"]  # what echo said
    assert (count["tool"], count["params"], count["result"]) == (
        "Counter_increment",
        {"by": 2},
        "2",
    )
    # the trace beside it is a trace like any other: it rebuilds the same steps
    trace = load_trace(tmp_path / "s.jsonl")
    assert [e["type"] for e in trace.events][:2] == ["run_started", "turn_started"]
    assert [len(turn.actions) for turn in trace.turns()] == [2, 2]

    replayed = sv(["run", "s.toml", "--json", "-"], env, tmp_path)
    assert replayed.code == 0, replayed.stderr
    assert replayed.json()["tool_calls"] == 3
    assert sv(["run", "s.toml", "--no-compare-results"], env, tmp_path).code == 0
    live = sv(["run", "s.toml", "--live"], env, tmp_path)
    assert live.code == 0, live.stdout + live.stderr
    assert "PASSED: s.toml, the live model 'echo' made the recorded calls" in live.stdout

    # the plugin changed: its result is no longer the recorded one
    text = (tmp_path / "s.toml").read_text()
    (tmp_path / "s.toml").write_text(text.replace('result = "desserts"', 'result = "dessert"'))
    mismatch = sv(["run", "s.toml", "--json", "-"], env, tmp_path)  # compared by default
    assert mismatch.code == 1
    error = mismatch.json()["error"]
    assert error["code"] == "replay_mismatch" and (error["turn"], error["action"]) == (1, 1)
    assert "recorded 'dessert', now 'desserts'" in error["message"]
    assert sv(["run", "s.toml", "--no-compare-results"], env, tmp_path).code == 0  # opted out

    # the recording and the model disagree: the contract run says where, call by call
    (tmp_path / "s.toml").write_text(text.replace("by = 2", "by = 3"))
    diverged = sv(["run", "s.toml", "--live", "--model", "echo", "--json", "-"], env, tmp_path)
    assert diverged.code == 1
    assert "DIVERGED turn 2, step 1" in diverged.stderr
    assert 'recorded: call Counter_increment({"by": 3})' in diverged.stderr
    assert 'live:     call Counter_increment({"by": 2})' in diverged.stderr
    assert "FAILED: s.toml, 1 step(s) diverged from the recording" in diverged.stderr
    report = diverged.json()
    assert report["error"]["code"] == "live_diverged"
    assert [(d["turn"], d["step"]) for d in report["divergences"]] == [(2, 1)]


def test_the_checked_in_recording_replays_forever_and_still_agrees_with_the_model(
    tmp_path: Path, env: dict[str, str]
) -> None:
    recording = str(PLAYBOOKS / "llm-tools-recorded.toml")
    compared = sv(["run", recording, "--compare-results"], env, tmp_path)
    assert compared.code == 0, compared.stdout + compared.stderr
    live = sv(["run", recording, "--live"], env, tmp_path)
    assert live.code == 0, live.stdout + live.stderr


NORMALIZE_IDS = ["--normalize", "PLAN-[0-9a-f]{8}"]


def test_ids_the_model_sees_are_normalized_when_results_are_compared(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The planner makes a new id on every run: normalize masks it in the comparison."""
    steps = [prompt(("plan_propose", {"title": "Tea"})), prompt(("plan_list", {}))]
    planner = ["--plugin", "svfix_planner.plugin:setup"]
    plain = sv(["record", *steps, "-m", "echo", *planner, "-o", "plain.toml"], env, tmp_path)
    assert plain.code == 0, plain.stdout + plain.stderr
    masked = sv(
        ["record", *steps, "-m", "echo", *planner, "-o", "masked.toml", *NORMALIZE_IDS],
        env,
        tmp_path,
    )
    assert masked.code == 0, masked.stdout + masked.stderr
    assert load_playbook(tmp_path / "masked.toml")["normalize"] == ["PLAN-[0-9a-f]{8}"]

    differs = sv(["run", "plain.toml", "--compare-results"], env, tmp_path)
    assert differs.code == 1
    assert "[replay_mismatch] turn 1, action 1 (call_1)" in differs.stdout
    assert sv(["run", "masked.toml", "--compare-results"], env, tmp_path).code == 0


def test_environmental_tools_and_ui_are_mocked_and_the_mocks_recorded(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "mocks.toml").write_text(
        '[mock_tools]\nbash = "a.txt"\n[mock_ui]\nconfirm = false\n'
    )
    steps = [
        prompt(("plan_propose", {"title": "Tea"}), ("bash", {"command": "ls"})),
        prompt(("plan_list", {})),
    ]
    planner = ["--plugin", "svfix_planner.plugin:setup", "--mocks", "mocks.toml"]
    recorded = sv(
        ["record", *steps, "-m", "echo", *planner, *NORMALIZE_IDS, "-o", "s.toml"], env, tmp_path
    )
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "turn 1 call_2 bash (mocked): a.txt" in recorded.stdout

    spec = load_playbook(tmp_path / "s.toml")
    assert spec["mock_tools"] == {"bash": "a.txt"} and spec["mock_ui"] == {"confirm": False}
    bash = spec["turns"][0]["actions"][0]["calls"][1]
    assert bash["params"] == {"command": "ls"} and "result" not in bash  # a mock is no result
    assert sv(["run", "s.toml"], env, tmp_path).code == 0
    assert sv(["run", "s.toml", "--live"], env, tmp_path).code == 0


OPTION_AND_JSON = ["--option", "example_bool", "true", "--json", "result.json"]


def test_no_key_or_secret_is_ever_written(tmp_path: Path, env: dict[str, str]) -> None:
    """A key llm stores, a key in the environment, and a model that says its key out loud."""
    user = Path(env["LLM_USER_PATH"])
    (user / "keys.json").write_text(json.dumps({"echo-needs-key": "sk-stored-key-98765"}))
    env = {**env, "MY_SERVICE_TOKEN": "tok-environment-4242"}
    said = prompt(("reverse_text", {"text": "tok-environment-4242"}), text="tok-environment-4242")
    recorded = sv(
        ["record", said, "-m", "echo-needs-key", *LLM_TOOLS, "-o", "s.toml", *OPTION_AND_JSON],
        env,
        tmp_path,
    )
    assert recorded.code == 0, recorded.stdout + recorded.stderr

    for name in ("s.toml", "s.jsonl", "result.json"):
        written = (tmp_path / name).read_text()
        assert "sk-stored-key-98765" not in written and "tok-environment-4242" not in written
        assert "***" in written
    spec = load_playbook(tmp_path / "s.toml")
    assert spec["recording"]["options"] == {"example_bool": "true"}
    assert '"key": "***"' in spec["turns"][0]["actions"][1]["text"]  # echo said its key


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["record", "hi", "-m", "no-such-model", "-o", "s.toml"], 2, "ERROR unknown model"),
        (["record", "hi", "-m", "echo", "-o", "s.txt"], 2, "a recording is a TOML playbook"),
        (["record", "", "-m", "echo", "-o", "s.toml"], 2, "an empty PROMPT"),
        (["record", "hi", "-m", "echo", "-o", "s.toml", "--option", "nope", "1"], 2, "nope"),
        (["run", "fixture", "--model", "echo"], 2, "--model applies to --live runs"),
        (["run", "fixture", "--compare-results"], 2, "records no results"),
        (["run", "fixture", "--live", "--compare-results"], 2, "--live lets the model choose"),
        (["run", "fixture", "--live"], 2, "names no model to run live"),
        (["record", "hi", "-m", "echo", "-o", "s.toml", "--with", "llm-echo"], 2, "--with applies"),
        (["record", "hi", "-m", "echo", "-o", "s.toml", "--sandbox", "--with", "a b"], 2, "--with"),
        (["record", "hi", "-m", "echo", "-o", "s.toml", "--sandbox", "--project", "no"], 2, "no"),
    ],
)
def test_usage_errors_exit_2_before_anything_runs(
    tmp_path: Path, env: dict[str, str], args: list[str], code: int, fragment: str
) -> None:
    shutil.copy(PLAYBOOKS / "llm-tools.toml", tmp_path / "fixture")
    (tmp_path / "fixture").rename(tmp_path / "fixture.toml")
    args = [arg.replace("fixture", "fixture.toml") for arg in args]
    result = sv([*args, *LLM_TOOLS], env, tmp_path)
    assert result.code == code, result.stdout + result.stderr
    assert fragment in result.stderr
    assert not (tmp_path / "s.toml").exists()


def test_a_session_that_fails_writes_no_playbook(tmp_path: Path, env: dict[str, str]) -> None:
    wrong = prompt(("reverse_txt", {"text": "a"}))
    result = sv(["record", wrong, "-m", "echo", *LLM_TOOLS, "-o", "s.toml"], env, tmp_path)
    assert result.code == 1
    assert "FAILED [unknown_tool] turn 1" in result.stdout
    assert "(did you mean 'reverse_text'?)" in result.stdout
    assert "FAILED: nothing recorded (the session's trace: s.jsonl)" in result.stdout
    assert not (tmp_path / "s.toml").exists()

    # a tool call and the answer after it are two steps: one is not enough
    steps = ["--max-steps", "1", "--json", "-"]
    result = sv(["record", COUNT, "-m", "echo", *LLM_TOOLS, "-o", "s.toml", *steps], env, tmp_path)
    assert result.code == 1
    assert result.json()["error"]["code"] == "too_many_steps"
    assert "after 1 step(s) the model 'echo' has not ended the turn" in result.stderr
    assert not (tmp_path / "s.toml").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv")
def test_a_recording_is_a_smoke_playbook_inside_the_sandbox(tmp_path: Path) -> None:
    """``check --smoke`` runs the checked-in recording, results compared, in a fresh sandbox."""
    playbook = tmp_path / "recorded.toml"
    text = (PLAYBOOKS / "llm-tools-recorded.toml").read_text()
    playbook.write_text(text)
    report = check(
        CheckOptions(targets=(str(fixture("llm-tools")),), installer="uv", smoke=str(playbook))
    )
    assert report.ok, report.failures
    [run] = report.runs
    assert run.smoke is not None and run.smoke.tool_calls == 3

    playbook.write_text(text.replace('result = "desserts"', 'result = "dessert"'))
    report = check(
        CheckOptions(targets=(str(fixture("llm-tools")),), installer="uv", smoke=str(playbook))
    )
    [failure] = report.failures
    assert failure.code == "smoke_failed" and "[replay_mismatch]" in failure.message


def test_a_refresh_records_again_from_the_playbook_alone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """No prompt or flag retyped; ids written as placeholders, so the same behaviour recorded
    again is the same file, and a behaviour that changed is a one-line diff."""
    args = ["record", REVERSE_AND_DIVIDE, COUNT, "--model", "echo", *LLM_TOOLS, "-o", "s.toml"]
    assert sv(args, env, tmp_path).code == 0
    first = (tmp_path / "s.toml").read_text()
    assert "tc_" not in first  # the ids echo made up for the calls are placeholders
    refreshed = sv(["record", "--refresh", "s.toml"], env, tmp_path)
    assert refreshed.code == 0, refreshed.stdout + refreshed.stderr
    assert (tmp_path / "s.toml").read_text() == first

    again = sv(["record", "--refresh", "s.toml", "a new prompt"], env, tmp_path)
    assert again.code == 2 and "takes its prompts from the playbook" in again.stderr
    flagged = sv(["record", "--refresh", "s.toml", "--system", "be brief"], env, tmp_path)
    assert flagged.code == 2 and "--system: record --refresh takes it from the playbook" in (
        flagged.stderr
    )


def test_a_changed_prompt_or_tool_is_stale_without_any_model(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert (
        sv(["record", COUNT, "--model", "echo", *LLM_TOOLS, "-o", "s.toml"], env, tmp_path).code
        == 0
    )
    text = (tmp_path / "s.toml").read_text()
    no_model = {**env, "LLM_LOAD_PLUGINS": ""}  # no model plugin at all: a replay needs none
    assert sv(["run", "s.toml"], no_model, tmp_path).code == 0
    (tmp_path / "s.toml").write_text(text.replace('"by": 2', '"by": 5', 1))  # the prompt only
    stale = sv(["run", "s.toml", "--json", "-"], no_model, tmp_path)
    assert stale.code == 1
    error = stale.json()["error"]
    assert (error["code"], error["turn"]) == ("replay_stale", 1)
    assert "the prompt changed since the turn was recorded" in error["message"]


def test_one_switch_moves_run_between_replay_record_and_live(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert (
        sv(["record", COUNT, "--model", "echo", *LLM_TOOLS, "-o", "s.toml"], env, tmp_path).code
        == 0
    )
    live = sv(["run", "s.toml"], {**env, "SANDBOXVERIFY_LLM": "live"}, tmp_path)
    assert live.code == 0 and "the live model 'echo' made the recorded calls" in live.stdout
    recorded = sv(["run", "s.toml"], {**env, "SANDBOXVERIFY_LLM": "record"}, tmp_path)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "RECORDED: s.toml" in recorded.stdout and "PASSED: s.toml" in recorded.stdout

    ci = {**env, "CI": "true", "SANDBOXVERIFY_LLM": "live"}
    refused = sv(["run", "s.toml"], ci, tmp_path)
    assert refused.code == 2
    assert "under CI recordings only replay, unless the command line asks" in refused.stderr
    assert sv(["run", "s.toml", "--live"], ci, tmp_path).code == 0  # asked on the command line
    assert sv(["run", "s.toml"], {**env, "CI": "true"}, tmp_path).code == 0  # replay


def test_a_secret_a_tool_returned_replays_as_recorded(tmp_path: Path, env: dict[str, str]) -> None:
    """One redaction marker: the recording says *** where the secret was, and a replay masks
    the live result the same way before comparing."""
    secret = "tok-environment-4242"
    env = {**env, "MY_SERVICE_TOKEN": secret}
    reverse = prompt(("reverse_text", {"text": secret[::-1]}))
    recorded = sv(["record", reverse, "-m", "echo", *LLM_TOOLS, "-o", "s.toml"], env, tmp_path)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    written = (tmp_path / "s.toml").read_text()
    assert secret not in written and 'result = "***"' in written
    replayed = sv(["run", "s.toml"], env, tmp_path)
    assert replayed.code == 0, replayed.stdout + replayed.stderr
