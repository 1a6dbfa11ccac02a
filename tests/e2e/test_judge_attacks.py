"""``check --smoke`` against plugins that try to turn their own failure into a pass, in each
isolation (the OS sandbox and process isolation).

``fixtures/attack-judge``: every attack's tool fails after trying one way to change the verdict
(silencing the session's outcome check, from a tool or from ``setup()``; rewriting the session
objects; making failures report as nothing; forging the runtime's result with its nonce;
leaving a daemon that rewrites the result once it is written). Each attack is called by a
playbook of its own after a call that works; each run must fail, naming the attack's call. A
``.py`` playbook that undoes its own assertions gets the same verdict from its judge.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify import CheckOptions, check
from sandboxverify.sandbox._bwrap import available
from tests.helpers import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

ATTACKS = ["outcome_check", "setup_patch", "session_state", "verdict", "forged_result", "lingering"]


def playbook(tmp_path: Path, attack: str) -> Path:
    if attack == "self_patching.py":
        path = tmp_path / attack
        path.write_text(
            "from sandboxverify.runtime.harness import _assertions, _session\n"
            "_assertions.SessionAssertions._check_outcome = lambda *args, **kwargs: None\n"
            "_session.TestSession.failed = lambda self, error: error\n"
            "from sandboxverify.harness import call, create_test_session, say, when\n"
            "with create_test_session() as t:\n"
            "    t.run(when('go', [call('echo', {'text': 'hi'}), call('outcome_check'),"
            " say('done')]))\n",
            encoding="utf-8",
        )
        return path
    path = tmp_path / f"{attack}.toml"
    path.write_text(
        "[[turns]]\nprompt = 'go'\n"
        f"actions = [{{ call = 'echo', params = {{ text = 'hi' }} }}, {{ call = '{attack}' }},"
        " { say = 'done' }]\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("isolation", ["strict", "process"])
@pytest.mark.parametrize("attack", [*ATTACKS, "self_patching.py"])
def test_no_plugin_code_turns_its_failure_into_a_pass(
    tmp_path: Path, attack: str, isolation: str
) -> None:
    if isolation == "strict" and available()[0] is None:
        pytest.skip(f"the OS sandbox is unavailable here: {available()[1]}")
    report = check(
        CheckOptions(
            targets=(str(fixture("attack-judge")),),
            installer="uv",
            isolation="strict" if isolation == "strict" else "process",
            smoke=str(playbook(tmp_path, attack)),
        )
    )
    assert not report.ok
    [failure] = report.failures
    assert failure.code == "smoke_failed"
    assert "[tool_error] turn 1 ('go'), action 2" in failure.message, failure.message
    called = "outcome_check" if attack.endswith(".py") else attack
    assert f"RuntimeError: {called}" in failure.message
    [run] = report.runs
    assert run.smoke is not None and run.smoke.ok is False
    assert [call.is_error for call in run.smoke.calls] == [False, True]
