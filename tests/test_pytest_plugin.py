"""The pytest plugin, exercised by real pytest runs of test files a plugin author would write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

ECHO_TEST = """
from sandboxverify.harness import call, say, when

def setup(api):
    api.register_tool("echo", lambda text: text)

def test_echo(harness):
    t = harness([setup])
    t.run(when("x", [call("echo", {"text": "WORD"}), say("ok")]))
    t.assert_snapshot({"results": [r.text for r in t.events.tool_results]})
"""


@pytest.fixture
def local(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)  # CI runs never write snapshots; locally they do
    monkeypatch.delenv("SANDBOXVERIFY_UPDATE_SNAPSHOTS", raising=False)
    return pytester


def test_harness_fixture_and_snapshots_lifecycle(local: pytest.Pytester) -> None:
    local.makepyfile(test_echo=ECHO_TEST.replace("WORD", "hi"))
    local.runpytest_subprocess().assert_outcomes(passed=1)  # first run writes the snapshot
    [snapshot] = local.path.glob("__snapshots__/test_echo/*/001.json")
    assert json.loads(snapshot.read_text()) == {"results": ["hi"]}
    local.runpytest_subprocess().assert_outcomes(passed=1)  # unchanged: matches

    local.makepyfile(test_echo=ECHO_TEST.replace("WORD", "bye"))
    result = local.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*snapshot_mismatch*", '*-    "hi"*', '*+    "bye"*'])
    assert json.loads(snapshot.read_text()) == {"results": ["hi"]}  # never rewritten silently

    local.runpytest_subprocess("--update-snapshots").assert_outcomes(passed=1)
    assert json.loads(snapshot.read_text()) == {"results": ["bye"]}


def test_in_ci_a_missing_snapshot_fails(
    local: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    local.makepyfile(test_echo=ECHO_TEST.replace("WORD", "hi"))
    monkeypatch.setenv("CI", "true")
    result = local.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*does not exist*CI never writes snapshots*"])
    assert not list(local.path.glob("__snapshots__/**/*.json"))


def test_harness_failures_read_as_test_failures(local: pytest.Pytester) -> None:
    local.makepyfile(
        test_bad="""
from sandboxverify.harness import call, say, when

def test_unknown(harness):
    t = harness([lambda api: api.register_tool("echo", lambda text: text)])
    t.run(when("x", [call("ecko", {"text": "a"}), say("ok")]))
"""
    )
    result = local.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*sandboxverify.harness.HarnessError: [[]unknown_tool] turn 1 ('x'), action 1*(did you mean 'echo'?)*"
        ]
    )


def test_a_failure_points_at_the_line_of_the_call_not_at_run(local: pytest.Pytester) -> None:
    local.makepyfile(
        test_lines="""
from sandboxverify.harness import call, say, when

def test_lines(harness):
    t = harness([lambda api: api.register_tool("echo", lambda text: text)])
    t.run(
        when("x", [
            call("echo", {"text": "a"}),
            call("echo", {"text": "b"}, expect_error=True),
            say("ok"),
        ]),
    )
"""
    )
    result = local.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*[[]unexpected_success] *(call('echo')) [[]test_lines.py:8[]]: *"]
    )


def test_playbook_fixture_runs_a_toml_playbook(
    local: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FIXTURES / "planner"))
    design = FIXTURES / "playbooks" / "planner-design.toml"
    local.makepyfile(
        test_plan=f"""
def test_design(playbook):
    t = playbook({str(design)!r}, plugins=["svfix_planner.plugin:setup"])
    t.assert_called_before("plan_propose", "plan_approve")
    assert t.events.tool_results_for("plan_approve")[0].text.endswith("approved")
"""
    )
    local.runpytest_subprocess().assert_outcomes(passed=1)


def test_the_playbook_fixture_follows_the_llm_mode(
    local: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One switch for the suite: replay (results compared), record again, or live; under CI
    only replay, unless pytest's command line asks."""
    pytest.importorskip("llm_echo", reason="llm-echo (the offline model) needs Python 3.10+")
    user = tmp_path / "llm-user"
    user.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(FIXTURES / "llm-tools"))
    monkeypatch.setenv("LLM_USER_PATH", str(user))
    recording = local.path / "llm-tools-recorded.toml"
    recording.write_text((FIXTURES / "playbooks" / "llm-tools-recorded.toml").read_text())
    local.makepyfile(
        test_recorded="""
def test_recorded(playbook):
    t = playbook("llm-tools-recorded.toml")
    assert t.events.tool_results[0].text == "desserts"
"""
    )
    local.runpytest_subprocess().assert_outcomes(passed=1)  # replay
    local.runpytest_subprocess("--llm-mode", "live").assert_outcomes(passed=1)
    before = recording.read_text()
    recording.write_text(before.replace('result = "desserts"', 'result = "dessert"'))
    local.runpytest_subprocess().assert_outcomes(failed=1)  # the comparison notices
    monkeypatch.setenv("SANDBOXVERIFY_LLM", "record")
    local.runpytest_subprocess().assert_outcomes(passed=1)  # recorded again, then replayed
    assert recording.read_text() == before
    monkeypatch.setenv("CI", "true")
    refused = local.runpytest_subprocess()
    refused.assert_outcomes(errors=1)
    refused.stdout.fnmatch_lines(["*under CI recordings only replay*"])
    local.runpytest_subprocess("--llm-mode", "replay").assert_outcomes(passed=1)


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv")
def test_sandbox_check_fixture(local: pytest.Pytester) -> None:
    target = FIXTURES / "planner"
    smoke = FIXTURES / "playbooks" / "planner-design.toml"
    local.makepyfile(
        test_release=f"""
def test_installs_and_loads(sandbox_check):
    report = sandbox_check({str(target)!r}, installer="uv",
                           expect_tools=["plan_propose", "plan_approve"], smoke={str(smoke)!r})
    assert report.ok, [f.message for f in report.failures]
    assert report.runs[0].smoke.tool_calls == 2

def test_same_check_is_shared(sandbox_check):
    first = sandbox_check({str(target)!r}, installer="uv",
                          expect_tools=["plan_propose", "plan_approve"], smoke={str(smoke)!r})
    assert first is sandbox_check({str(target)!r}, installer="uv",
                                  expect_tools=["plan_propose", "plan_approve"],
                                  smoke={str(smoke)!r})
"""
    )
    local.runpytest_subprocess().assert_outcomes(passed=2)


#: what the plugin module may add to a pytest process beyond what pytest itself imports: the
#: package root, its version and the plugin module (the harness alone is ~40 modules)
PLUGIN_MODULE_BUDGET = 5


def test_the_plugin_costs_a_pytest_run_that_uses_none_of_its_fixtures_nothing() -> None:
    """Every pytest session where sandboxverify is installed imports the plugin: it may import
    only what registering its option and fixtures needs (counted, not timed: a count is stable)."""
    probe = (
        "import sys, pytest\n"
        "before = set(sys.modules)\n"
        "import sandboxverify.pytest_plugin\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    added = completed.stdout.split()
    assert "sandboxverify.pytest_plugin" in added
    assert len(added) <= PLUGIN_MODULE_BUDGET, added
    heavy = ("sandboxverify.runtime", "sandboxverify.pipeline", "sandboxverify.stages", "packaging")
    assert not [name for name in added if name.startswith(heavy)], added


def test_a_pytest_session_loads_the_plugin_and_not_the_harness(local: pytest.Pytester) -> None:
    local.makepyfile(
        test_plain="""
import sys

def test_nothing_of_sandboxverify_was_imported(pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("sandboxverify")
    loaded = [name for name in sys.modules if name.startswith("sandboxverify.")]
    assert sorted(loaded) == ["sandboxverify._version", "sandboxverify.pytest_plugin"], loaded
"""
    )
    local.runpytest_subprocess().assert_outcomes(passed=1)


def test_the_playbook_fixture_fails_a_playbook_that_calls_nothing(local: pytest.Pytester) -> None:
    chat = local.path / "chat.toml"
    chat.write_text("[[turns]]\nprompt = 'x'\nactions = [{ say = 'just talking' }]\n")
    local.makepyfile(
        test_chat=f"""
def setup(api):
    api.register_tool("echo", lambda text: text)

def test_chat(playbook):
    playbook({str(chat)!r}, plugins=[setup])
"""
    )
    result = local.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*[[]nothing_called] the playbook ran but called no tool*"])


SESSIONS_TEST = """
from sandboxverify.harness import call, create_test_session, say, when

def setup(api):
    api.register_tool("echo", lambda text: text)

def test_two_sessions():
    for word in ("WORD", "other"):
        with create_test_session([setup]) as t:
            t.run(when("x", [call("echo", {"text": word}), say("ok")]))
            t.assert_snapshot(t.events.tool_results[0].text)
"""


def test_update_snapshots_reaches_every_session_and_each_gets_its_own_file(
    local: pytest.Pytester,
) -> None:
    local.makepyfile(test_sessions=SESSIONS_TEST)
    local.runpytest_subprocess().assert_outcomes(passed=1)
    first, second = sorted(local.path.glob("__snapshots__/test_sessions/*/*.json"))
    assert (first.name, second.name) == ("001.json", "002.json")
    assert (json.loads(first.read_text()), json.loads(second.read_text())) == ("WORD", "other")
    local.runpytest_subprocess().assert_outcomes(passed=1)  # each compares with its own

    local.makepyfile(test_sessions=SESSIONS_TEST.replace("WORD", "changed"))
    local.runpytest_subprocess().assert_outcomes(failed=1)
    local.runpytest_subprocess("--update-snapshots").assert_outcomes(passed=1)
    assert json.loads(first.read_text()) == "changed"


def test_harness_sessions_that_left_answers_unused_fail_the_test(local: pytest.Pytester) -> None:
    local.makepyfile(
        test_unused="""
from sandboxverify.harness import call, say, when

def setup(api):
    api.register_tool("echo", lambda text: text)

def test_reads(harness):
    t = harness([setup], mock_tools={"read": ["one", "two"]})
    t.run(when("x", [call("read", {"path": "a"}), say("ok")]))
"""
    )
    result = local.runpytest_subprocess()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*[[]mocks_unused]*mock_tools 'read': 1 of 2 entries used*"])
