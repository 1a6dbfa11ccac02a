"""Replaying a recorded trace as a regression test.

The playbook is rebuilt from the trace's model steps, environmental tools and UI prompts are
answered with what was recorded (as stateful mocks), the plugins run for real, and the replay fails
unless every real tool result equals the recorded one, the tools ask the user the same questions
in the same order, and every recorded answer is asked for: a session captured once becomes a
deterministic test. Only a passing run that called some tool is a reference worth replaying.
"""

from __future__ import annotations

import difflib
import json
import os
from typing import Any, Callable

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._session import TestSession
from sandboxverify.runtime.harness._trace import Trace
from sandboxverify.runtime.harness._ui import INTERACTIVE


def replay(
    path: str | os.PathLike[str],
    *,
    normalize: Callable[[str], str] | None = None,
    **session_options: Any,
) -> TestSession:
    """Replay a recorded trace against the plugins installed now; fail on any difference.

    ``normalize`` maps result texts before comparing (e.g. to blank out generated ids).
    """
    __tracebackhide__ = True  # pytest shows the test, not the harness
    trace = Trace.load(path)
    _check_reference(trace)
    session_options.setdefault("mock_tools", trace.mock_tools())
    session_options.setdefault("mock_ui", trace.mock_ui())
    session = TestSession(session_options.pop("plugins", None), **session_options)
    try:
        if trace.tools and session.tools != sorted(trace.tools):
            raise HarnessError(
                "replay_mismatch",
                f"{trace.source}: recorded with tools {sorted(trace.tools)}, the plugins now "
                f"register {session.tools}",
            )
        session.run(*trace.turns())
        _compare(trace, session, normalize or (lambda text: text))
        session.assert_mocks_used()  # a recorded answer nobody asked for: a step went missing
    except BaseException:
        session.close()
        raise
    return session


def _check_reference(trace: Trace) -> None:
    """A failed run, or one that called nothing, would replay green while proving nothing."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    completed = trace.events[-1]
    if completed.get("ok") is not True:
        error = completed.get("error") or {}
        raise HarnessError(
            "playbook_invalid",
            f"{trace.source}: the recorded run failed ([{error.get('code')}] "
            f"{error.get('message')}): a failed run is no reference to replay; record one "
            "that passed",
        )
    if not trace.of_type("tool_call"):
        raise HarnessError(
            "playbook_invalid",
            f"{trace.source}: the trace records no tool call: replaying it would prove "
            "nothing; record a run that calls the tools",
        )


def _compare(trace: Trace, session: TestSession, normalize: Callable[[str], str]) -> None:
    __tracebackhide__ = True  # pytest shows the test, not the harness
    recorded = trace.results()
    differences: list[str] = []
    for record in session.events.tool_results:
        if record.mocked:
            continue
        before = recorded.get(record.tool_call_id)
        if before is None or before["tool_name"] != record.tool_name:
            differences.append(f"{record.tool_call_id} ({record.tool_name}): not in the trace")
            continue
        old_text = normalize(
            "\n".join(b.get("text", "") for b in before["content"] if b.get("type") == "text")
        )
        new_text = normalize(record.text)
        if old_text != new_text or bool(before.get("is_error")) != record.is_error:
            differences.append(
                f"{record.tool_call_id} ({record.tool_name}, turn {record.turn}): recorded "
                f"{_state(before.get('is_error'))} {old_text!r}, now "
                f"{_state(record.is_error)} {new_text!r}"
            )
    differences.extend(_ui_differences(trace, session, normalize))
    if differences:
        shown = "; ".join(differences[:5])
        more = f" (and {len(differences) - 5} more)" if len(differences) > 5 else ""
        raise HarnessError(
            "replay_mismatch",
            f"{trace.source}: {len(differences)} difference(s) from the recording: {shown}{more}",
        )


def _state(is_error: Any) -> str:
    return "error" if is_error else "result"


def _ui_differences(
    trace: Trace, session: TestSession, normalize: Callable[[str], str]
) -> list[str]:
    """The questions the tools asked the user, in order, against the recorded ones: an approval
    step removed, added or reworded is a different session."""

    def asked(method: str, args: Any) -> str:
        return f"{method}({normalize(json.dumps(args, ensure_ascii=False, default=repr))[1:-1]})"

    recorded = [
        asked(event["method"], event.get("args") or [])
        for event in trace.of_type("ui_call")
        if event["method"] in INTERACTIVE
    ]
    now = [
        asked(record.method, record.args)
        for record in session.events.ui
        if record.method in INTERACTIVE
    ]
    differences: list[str] = []
    matcher = difflib.SequenceMatcher(a=recorded, b=now, autojunk=False)
    for tag, start, end, new_start, new_end in matcher.get_opcodes():
        before = ", ".join(recorded[start:end])
        after = ", ".join(now[new_start:new_end])
        if tag == "delete":
            differences.append(f"the user is never asked {before} (recorded UI call {start + 1})")
        elif tag == "insert":
            differences.append(f"the user is asked {after}, which was not recorded")
        elif tag == "replace":
            differences.append(f"UI call {start + 1}: recorded {before}, now {after}")
    return differences
