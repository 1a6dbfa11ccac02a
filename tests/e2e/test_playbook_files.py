"""Files beside a ``.py`` playbook that it names (a trace to replay, snapshots, data) travel with
it into the sandbox, read-only, so a playbook that passes with ``sandboxverify run`` passes under
``check --smoke``; there, snapshots are compared and never written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, check
from tests.helpers import fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

SCRIPT = """\
import json
import re
from pathlib import Path

from sandboxverify.harness import call, create_test_session, replay, say, when

PLANNER = ["svfix_planner.plugin:setup"]  # installed in the sandbox, on PYTHONPATH in place
here = Path(__file__).parent
titles = json.loads((here / "data" / "titles.json").read_text())
ids = lambda text: re.sub("PLAN-[0-9a-f]+", "PLAN-x", text)  # noqa: E731
replay("session.jsonl", plugins=PLANNER, normalize=ids).close()
with create_test_session(PLANNER, snapshot_dir=here / "__snapshots__") as t:
    t.run(when("Propose", [call("plan_propose", {"title": titles[0]}), say("ok")]))
    t.assert_snapshot(t.tools, name="tools")
"""


def recorded_trace(path: Path) -> None:
    """A session of the planner from the tree (not installed here), recorded as a trace."""
    sys.path.insert(0, str(fixture("planner")))
    try:
        from sandboxverify.harness import call, create_test_session, say, when  # noqa: PLC0415

        with create_test_session(["svfix_planner.plugin:setup"]) as t:
            t.run(when("Plan", [call("plan_propose", {"title": "Tidy"}), say("ok")]))
            t.write_trace(path)
    finally:
        sys.path.remove(str(fixture("planner")))


@pytest.fixture
def playbook(tmp_path: Path) -> Path:
    folder = tmp_path / "smoke"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "titles.json").write_text(json.dumps(["Cook omelette"]))
    (folder / "__snapshots__" / "session").mkdir(parents=True)
    (folder / "__snapshots__" / "session" / "tools.json").write_text(
        json.dumps(["plan_approve", "plan_list", "plan_propose", "plan_reject"])
    )
    (folder / "unrelated.bin").write_bytes(b"not named by the playbook")
    recorded_trace(folder / "session.jsonl")
    script = folder / "play.py"
    script.write_text(SCRIPT)
    return script


def test_a_py_playbook_finds_its_trace_snapshots_and_data_in_the_sandbox(playbook: Path) -> None:
    report = check(
        CheckOptions(targets=(str(fixture("planner")),), installer="uv", smoke=str(playbook))
    )
    assert report.ok, report.failures
    [run] = report.runs
    assert run.smoke is not None and run.smoke.sessions == 2


def test_the_same_playbook_runs_in_place_from_anywhere(playbook: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(fixture("planner"))}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(["run", str(playbook)], env=env, cwd=elsewhere)
    assert result.code == 0, result.stdout + result.stderr
    assert "PASSED: play.py" in result.stdout


def test_a_snapshot_is_compared_in_the_sandbox_never_written(playbook: Path) -> None:
    (playbook.parent / "__snapshots__" / "session" / "tools.json").unlink()
    report = check(
        CheckOptions(targets=(str(fixture("planner")),), installer="uv", smoke=str(playbook))
    )
    [failure] = report.failures
    assert failure.code == "smoke_failed"
    assert "[snapshot_mismatch] snapshot __snapshots__/session/tools.json does not exist" in (
        failure.message
    )
    assert "a check compares snapshots and never writes them" in failure.message
    assert "Read-only file system" not in failure.message
    assert not (playbook.parent / "__snapshots__" / "session" / "tools.json").exists()


def test_a_toml_playbook_brings_its_plugin_files_along(tmp_path: Path) -> None:
    """A plugin named by file (a stand-in for the application's own) travels with the playbook
    and loads next to the distribution's plugin, named by its entry point."""
    folder = tmp_path / "smoke"
    folder.mkdir()
    (folder / "audit_log.py").write_text(
        "SEEN = []\n\ndef setup(api):\n"
        "    api.on('tool_call', lambda event: SEEN.append(event.tool_name))\n"
        "    api.register_tool('audit_log', lambda: ','.join(SEEN))\n"
    )
    (folder / "smoke.toml").write_text(
        "plugins = ['planner', 'audit_log.py']\n[[turns]]\nprompt = 'p'\nactions = [\n"
        "  { call = 'plan_list' },\n"
        "  { call = 'audit_log', expect = '^plan_list,audit_log$' },\n  { say = 'x' },\n]\n"
    )
    report = check(
        CheckOptions(
            targets=(str(fixture("planner")),), installer="uv", smoke=str(folder / "smoke.toml")
        )
    )
    assert report.ok, report.failures
