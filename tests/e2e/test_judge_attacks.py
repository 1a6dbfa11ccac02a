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


REQUEST = (
    "{{'op': 'call', 'tool': {tool!r}, 'params': {params!r}, 'tool_call_id': {tool!r},"
    " 'turn': 2, 'action': 1, 'where': 'turn 2, action 1', 'validate': True,"
    " 'expect_error': False}}"
)
OPENING = (
    "from sandboxverify.harness import call, create_test_session, say, when\n"
    "t = create_test_session()\n"
    "t.run(when('go', [call('echo', {'text': 'hi'}), say('done')]))\n"
    "pipe = t._plugin_side.transport\n"
)
#: .py playbooks that go past their session to the judge's pipe: a call they end without
#: waiting for, and a call sent on top of another so that one answer would stand for both
PAST_THE_SESSION = {
    "unwaited.py": (
        OPENING + f"pipe.send({REQUEST.format(tool='slow_failure', params={})})\n",
        "[aborted] turn 2, action 1: the playbook ended before the call to 'slow_failure'",
    ),
    "overlapping.py": (
        OPENING
        + f"pipe.send({REQUEST.format(tool='echo', params={'text': 'again'})})\n"
        + f"pipe.send({REQUEST.format(tool='outcome_check', params={})})\n"
        + "answered = 0\n"
        "while answered < 2:\n"
        "    message = pipe.receive(30)\n"
        "    if message is None:\n"
        "        break\n"
        "    answered += message.get('op') in ('outcome', 'failure')\n",
        # the judge reads both sides through one queue: when the first answer is read before
        # the second call, the calls are judged one after the other, each on its own result
        # (the second one's tool fails); either way no answer stands for another call
        (
            "[worker_failed] turn 2, action 1: the playbook's process broke the harness's protocol",
            "[tool_error] turn 2, action 1: 'outcome_check' returned an error",
        ),
    ),
}


@pytest.mark.parametrize("isolation", ["strict", "process"])
@pytest.mark.parametrize("script", sorted(PAST_THE_SESSION))
def test_no_playbook_gets_a_call_past_its_judge(
    tmp_path: Path, script: str, isolation: str
) -> None:
    if isolation == "strict" and available()[0] is None:
        pytest.skip(f"the OS sandbox is unavailable here: {available()[1]}")
    text, said = PAST_THE_SESSION[script]
    path = tmp_path / script
    path.write_text(text, encoding="utf-8")
    report = check(
        CheckOptions(
            targets=(str(fixture("attack-judge")),),
            installer="uv",
            isolation="strict" if isolation == "strict" else "process",
            smoke=str(path),
        )
    )
    assert not report.ok
    [failure] = report.failures
    assert failure.code == "smoke_failed"
    alternatives = (said,) if isinstance(said, str) else said
    assert any(text in failure.message for text in alternatives), failure.message
