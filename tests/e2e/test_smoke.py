"""Smoke playbooks inside real sandboxes (check --smoke) and in place (sandboxverify run)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, check
from tests.helpers import FIXTURES, fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

PLAYBOOKS = FIXTURES / "playbooks"


@pytest.mark.parametrize("name", ["planner-design.toml", "planner-guard.toml", "planner.py"])
def test_playbooks_pass_inside_the_sandbox(name: str) -> None:
    report = check(
        CheckOptions(
            targets=(str(fixture("planner")),), installer="uv", smoke=str(PLAYBOOKS / name)
        )
    )

    assert report.ok, report.failures
    [run] = report.runs
    assert [(s.name, s.status) for s in run.stages][-1] == ("smoke", "passed")
    assert run.smoke is not None and run.smoke.ok is True
    assert run.smoke.playbook == name


def test_smoke_results_land_in_the_json_report() -> None:
    result = run_cli(
        [
            "check",
            str(fixture("planner")),
            "--smoke",
            str(PLAYBOOKS / "planner-guard.toml"),
            "--json",
        ]
    )

    assert result.code == 0, result.stderr
    smoke = result.json()["runs"][0]["smoke"]
    assert smoke["ok"] is True and smoke["error"] is None
    assert (smoke["turns"], smoke["tool_calls"], smoke["ui_calls"]) == (2, 6, 1)
    calls = [(c["tool"], c["blocked"], c["mocked"], c["is_error"]) for c in smoke["calls"]]
    assert calls[:2] == [("bash", True, False, True), ("bash", False, True, False)]
    assert smoke["calls"][4]["text"].endswith("left pending")


def test_a_failing_playbook_is_smoke_failed_with_the_harness_diagnostic() -> None:
    result = run_cli(
        [
            "check",
            str(fixture("planner")),
            "--smoke",
            str(PLAYBOOKS / "planner-broken.toml"),
            "--json",
        ]
    )

    assert result.code == 1
    report = result.json()
    [failure] = report["failures"]
    assert failure["code"] == "smoke_failed"
    assert failure["message"].startswith(
        "smoke playbook planner-broken.toml: [expect_mismatch] turn 1, action 1 (call_1) "
        "[turns[0].actions[0]]: the result of 'plan_propose' does not match expect "
        "'Plan rejected'"
    )
    assert report["runs"][0]["smoke"]["error"]["code"] == "expect_mismatch"


def test_smoke_is_skipped_when_the_probe_fails() -> None:
    report = check(
        CheckOptions(
            targets=(str(fixture("broken-typo-attr")),),
            installer="uv",
            smoke=str(PLAYBOOKS / "planner-design.toml"),
        )
    )
    assert [f.code for f in report.failures] == ["plugin_load_failed"]
    assert report.runs[0].stages[-1].name == "smoke"
    assert report.runs[0].stages[-1].status == "skipped"


def test_a_py_playbook_that_raises_is_smoke_failed(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text(
        "from sandboxverify.harness import create_test_session, call, say, when\n"
        "with create_test_session() as t:\n"
        "    t.run(when('x', [call('plan_nope'), say('y')]))\n"
    )
    report = check(
        CheckOptions(targets=(str(fixture("planner")),), installer="uv", smoke=str(script))
    )
    [failure] = report.failures
    assert failure.code == "smoke_failed"
    assert "[unknown_tool]" in failure.message
    assert "'plan_nope', which is neither registered nor mocked" in failure.message


def test_a_py_playbook_whose_code_exits_is_smoke_failed_not_passed(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text(
        "import sys\n"
        "from sandboxverify.harness import call, create_test_session, say, when\n"
        "with create_test_session(mock_tools={'bash': lambda p: sys.exit(0)}) as t:\n"
        "    t.run(when('x', [call('plan_list'), call('bash', {'command': 'ls'}), say('y')]))\n"
    )
    report = check(
        CheckOptions(targets=(str(fixture("planner")),), installer="uv", smoke=str(script))
    )
    [failure] = report.failures
    assert failure.code == "smoke_failed"
    assert "[aborted] turn 1 ('x'), action 2 (call('bash'))" in failure.message
    assert "the mock for 'bash' called sys.exit(0)" in failure.message
    assert report.runs[0].smoke is not None
    assert [c.diverged for c in report.runs[0].smoke.calls] == [False]


def test_a_py_playbook_can_name_plugins_by_entry_point(tmp_path: Path) -> None:
    script = tmp_path / "by_name.py"
    script.write_text(
        "from sandboxverify.harness import call, create_test_session, say, when\n"
        "with create_test_session(['planner']) as t:\n"
        "    t.run(when('List', [call('plan_list'), say('ok')]))\n"
        "    assert t.events.tool_results[0].text == 'No plans.'\n"
        "with create_test_session(['plannr']) as t:\n"
        "    pass\n"
    )
    report = check(
        CheckOptions(targets=(str(fixture("planner")),), installer="uv", smoke=str(script))
    )
    [failure] = report.failures  # the first session passed; the misspelled name fails loudly
    assert (
        "no entry point named 'plannr' in group 'sandboxverify.plugins'; installed: planner"
        in failure.message
    )


def malformed(tmp_path: Path, text: str) -> str:
    path = tmp_path / "smoke.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[[turns]\nprompt = 'x'\n", "smoke.toml: invalid TOML"),
        (
            "[[turns]]\nprompt = 'x'\nactions = [{ say = 'y' }]\nextra = 1\n",
            "turns[0]: unknown key 'extra'",
        ),
        (
            "[[turns]]\nprompt = 'x'\nactions = [{ params = {} }]\n",
            'turns[0].actions[0]: an action needs "call", "say" or "parallel"',
        ),
        (
            "[[turns]]\nprompt = 'x'\nactions = [{ call = 't', capture = { a = 'PLAN-[0-9' } }, { say = 'y' }]\n",
            "turns[0].actions[0].capture.a: bad regex 'PLAN-[0-9'",
        ),
    ],
)
def test_malformed_playbooks_are_one_line_usage_errors(
    tmp_path: Path, text: str, fragment: str
) -> None:
    for command in (["check", str(fixture("planner"))], ["run"]):
        path = malformed(tmp_path, text)
        args = [*command, "--smoke", path] if command[0] == "check" else [*command, path]
        result = run_cli(args)
        assert result.code == 2, result.stderr
        assert "Traceback" not in result.stderr
        first = result.stderr.splitlines()[0]
        assert first.startswith("ERROR ") and fragment in first, result.stderr
        assert str(tmp_path) in first


def planner_env() -> dict[str, str]:
    """sandboxverify run works against what is importable here: the planner from the tree."""
    return {**os.environ, "PYTHONPATH": str(fixture("planner"))}


def test_run_plays_a_playbook_in_place_and_writes_a_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = run_cli(
        [
            "run",
            str(PLAYBOOKS / "planner-guard.toml"),
            "--plugin",
            "svfix_planner.plugin:setup",
            "--trace",
            str(trace),
            "--json",
            "-",
        ],
        env=planner_env(),
    )

    assert result.code == 0, result.stderr
    assert result.json()["tool_calls"] == 6
    assert "err  turn 1 call_1 bash (blocked): dangerous command blocked: rm -rf" in result.stderr
    assert "PASSED: planner-guard.toml, 2 turn(s), 6 tool call(s)" in result.stderr
    lines = trace.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "run_started"
    assert json.loads(lines[-1]) == {"type": "run_completed", "ok": True, "error": None}


def test_run_reports_a_divergence_with_exit_1() -> None:
    result = run_cli(
        ["run", str(PLAYBOOKS / "planner-broken.toml"), "--plugin", "svfix_planner.plugin:setup"],
        env=planner_env(),
    )
    assert result.code == 1
    assert "FAILED [expect_mismatch] turn 1, action 1 (call_1)" in result.stdout


def test_run_a_py_playbook_in_place(tmp_path: Path) -> None:
    script = tmp_path / "inline.py"
    script.write_text(
        "from sandboxverify.harness import call, create_test_session, say, when\n"
        "with create_test_session(['svfix_planner.plugin:setup']) as t:\n"
        "    t.run(when('List', [call('plan_list'), say('ok')]))\n"
        "    assert t.events.tool_results[0].text == 'No plans.'\n"
    )
    result = run_cli(["run", str(script)], env=planner_env())
    assert result.code == 0, result.stdout + result.stderr
    assert "PASSED: inline.py" in result.stdout


def test_run_without_the_distribution_installed_says_so() -> None:
    result = run_cli(
        ["run", str(PLAYBOOKS / "planner.py"), "--dist", "svfix-planner"], env=planner_env()
    )
    assert result.code == 1
    assert "FAILED [no_plugins] distribution 'svfix-planner' is not installed here" in result.stdout
