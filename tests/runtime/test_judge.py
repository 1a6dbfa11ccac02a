"""The judge of a smoke run is out of plugin code's reach: ``sandboxverify run`` (the judge is the
command's process, the plugins run in processes of their own) against the attacks of
``fixtures/attack-judge`` and against ``.py`` playbooks that undo their own assertions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import CliResult, fixture, run_cli

ATTACKS = ["outcome_check", "setup_patch", "session_state", "verdict"]
HARNESS = "from sandboxverify.harness import HarnessError, call, create_test_session, say, when\n"


def run_here(tmp_path: Path, playbook: str, text: str, *args: str) -> CliResult:
    path = tmp_path / playbook
    path.write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(fixture("attack-judge")), str(tmp_path)]),
    }
    return run_cli(["run", str(path), "--json", str(tmp_path / "result.json"), *args], env=env)


def error_of(tmp_path: Path, result: CliResult) -> dict[str, Any]:
    assert result.code == 1, result.stdout + result.stderr
    outcome = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert outcome["ok"] is False
    error: dict[str, Any] = outcome["error"]
    return error


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_tool_that_patches_the_harness_cannot_pass_a_toml_run(
    tmp_path: Path, attack: str
) -> None:
    result = run_here(
        tmp_path,
        "smoke.toml",
        f"[[turns]]\nprompt = 'go'\nactions = [{{ call = '{attack}' }}, {{ say = 'done' }}]\n",
        "--plugin",
        f"svfix_attack_judge.plugin:{attack}",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "tool_error"
    assert f"RuntimeError: {attack}: this call failed" in error["message"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_tool_that_patches_the_harness_cannot_pass_a_py_run(tmp_path: Path, attack: str) -> None:
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + f"with create_test_session(['svfix_attack_judge.plugin:{attack}']) as t:\n"
        f"    t.run(when('go', [call({attack!r}), say('done')]))\n",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "tool_error"


SELF_PATCHING = (
    "from sandboxverify.runtime.harness import _assertions, _session\n"
    "_assertions.SessionAssertions._check_outcome = lambda *args, **kwargs: None\n"
    "_session.TestSession.failed = lambda self, error: error\n"
    + HARNESS
    + "with create_test_session(['svfix_attack_judge.plugin:outcome_check']) as t:\n"
    "    t.run(when('go', [call('outcome_check'), say('done')]))\n"
)


def test_a_py_playbook_that_undoes_its_own_checks_cannot_pass_a_tool_error(
    tmp_path: Path,
) -> None:
    error = error_of(tmp_path, run_here(tmp_path, "play.py", SELF_PATCHING))
    assert error["code"] == "tool_error"
    assert error["message"].endswith("(seen by the judge of the playbook)")
    assert "'outcome_check' returned an error: RuntimeError" in error["message"]


def test_a_py_playbook_that_turns_auto_assert_off_still_fails_an_undeclared_error(
    tmp_path: Path,
) -> None:
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "with create_test_session(['svfix_attack_judge.plugin:honest',"
        " 'svfix_attack_judge.plugin:outcome_check'], auto_assert=False) as t:\n"
        "    t.run(when('go', [call('echo', {'text': 'hi'}), call('outcome_check'),"
        " say('done')]))\n",
    )
    error = error_of(tmp_path, result)
    assert (error["code"], error["turn"], error["action"]) == ("tool_error", 1, 2)


def test_a_py_playbook_that_declares_an_error_that_does_not_happen_fails(tmp_path: Path) -> None:
    result = run_here(
        tmp_path,
        "play.py",
        SELF_PATCHING.replace(
            "call('outcome_check')", "call('echo', {'text': 'a'}, expect_error=True)"
        ).replace("plugin:outcome_check", "plugin:honest"),
    )
    assert error_of(tmp_path, result)["code"] == "unexpected_success"


def test_a_py_playbook_whose_calls_are_all_mocked_proves_nothing(tmp_path: Path) -> None:
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "with create_test_session(['svfix_attack_judge.plugin:honest'],"
        " mock_tools={'bash': 'ok'}) as t:\n"
        "    t.run(when('go', [call('bash', {'command': 'ls'}), say('done')]))\n",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "no_plugin_code"


def test_a_toml_run_whose_calls_are_all_mocked_proves_nothing(tmp_path: Path) -> None:
    result = run_here(
        tmp_path,
        "smoke.toml",
        "[mock_tools]\nbash = 'ok'\n[[turns]]\nprompt = 'go'\n"
        "actions = [{ call = 'bash', params = { command = 'ls' } }, { say = 'done' }]\n",
        "--plugin",
        "svfix_attack_judge.plugin:honest",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "no_plugin_code"
    assert "every call was answered by a mock or blocked (bash)" in error["message"]
    assert "call a tool a plugin registers (echo)" in error["message"]


def test_sessions_of_a_py_playbook_start_from_fresh_plugin_modules(tmp_path: Path) -> None:
    """The same session twice in one playbook: the second sees none of the first's state."""
    (tmp_path / "counter.py").write_text(
        "SEEN = []\n\ndef setup(api):\n"
        "    def remember(text: str) -> str:\n"
        "        SEEN.append(text)\n"
        "        return ','.join(SEEN)\n"
        "    api.register_tool('remember', remember)\n"
    )
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "for _ in range(2):\n"
        "    with create_test_session(['counter:setup']) as t:\n"
        "        t.run(when('go', [call('remember', {'text': 'a'}), say('done')]))\n"
        "        assert t.events.tool_results[0].text == 'a', t.events.tool_results[0].text\n",
    )
    assert result.code == 0, result.stdout + result.stderr


def test_a_setup_function_of_the_playbook_itself_is_refused_with_a_way_out(tmp_path: Path) -> None:
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "def setup(api):\n    api.register_tool('echo', lambda text: text)\n"
        "with create_test_session([setup]) as t:\n"
        "    t.run(when('go', [call('echo', {'text': 'a'}), say('done')]))\n",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "plugin_load_failed"
    assert "name its file 'path/to/plugin.py:setup'" in error["message"]


def test_a_call_the_playbook_does_not_wait_for_still_fails_the_run(tmp_path: Path) -> None:
    """A script that sends a call past its session and ends before the outcome comes back:
    the judge never saw that call end, so the run cannot pass."""
    (tmp_path / "slow.py").write_text(
        "import time\n\ndef setup(api):\n"
        "    api.register_tool('echo', lambda text: text)\n"
        "    def fails_later() -> str:\n"
        "        time.sleep(2)\n"
        "        raise RuntimeError('fails_later: this call failed')\n"
        "    api.register_tool('fails_later', fails_later)\n"
    )
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "t = create_test_session(['slow:setup'])\n"
        "t.run(when('go', [call('echo', {'text': 'a'}), say('done')]))\n"
        "t._plugin_side.transport.send({'op': 'call', 'tool': 'fails_later', 'params': {},\n"
        "    'tool_call_id': 'c9', 'turn': 2, 'action': 1, 'where': 'turn 2, action 1',\n"
        "    'validate': True, 'expect_error': False})\n",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "aborted"
    assert "ended before the call to 'fails_later' it made came back" in error["message"]


def test_a_playbook_that_sends_calls_on_top_of_each_other_fails_the_run(tmp_path: Path) -> None:
    """A session makes one call at a time: a second call sent before the first came back would
    let one outcome stand for both, and the other go unjudged. The first call never returns, so
    the judge meets the second one while the first is running whatever the timing (a first call
    that came back before the judge read the second would make two calls in turn, each judged)."""
    (tmp_path / "two.py").write_text(
        "import time\n"
        "def setup(api):\n"
        "    api.register_tool('echo', lambda text: text)\n"
        "    api.register_tool('hangs', lambda: time.sleep(600))\n"
        "    def fails() -> str:\n"
        "        raise RuntimeError('fails: this call failed')\n"
        "    api.register_tool('fails', fails)\n"
    )
    request = (
        "{{'op': 'call', 'tool': {tool!r}, 'params': {{}}, 'tool_call_id': {tool!r},"
        " 'turn': 2, 'action': 1, 'where': 'turn 2, action 1', 'validate': True,"
        " 'expect_error': False}}"
    )
    result = run_here(
        tmp_path,
        "play.py",
        HARNESS + "t = create_test_session(['two:setup'])\n"
        "t.run(when('go', [call('echo', {'text': 'a'}), say('done')]))\n"
        "pipe = t._plugin_side.transport\n"
        f"pipe.send({request.format(tool='hangs')})\n"
        f"pipe.send({request.format(tool='fails')})\n",
    )
    error = error_of(tmp_path, result)
    assert error["code"] == "worker_failed", error
    assert "sent a call to 'fails' while its call to 'hangs' was still running" in error["message"]
