"""Replaying a recorded trace as a regression test.

The playbook is rebuilt from the trace's model steps, environmental tools and UI prompts are
answered with what was recorded (as stateful mocks), the plugins run for real, and the replay fails
unless every real tool result equals the recorded one: a session captured once becomes a
deterministic test.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._session import TestSession
from sandboxverify.runtime.harness._trace import Trace


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
    except BaseException:
        session.close()
        raise
    return session


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
    if differences:
        shown = "; ".join(differences[:5])
        more = f" (and {len(differences) - 5} more)" if len(differences) > 5 else ""
        raise HarnessError(
            "replay_mismatch", f"{trace.source}: {len(differences)} result(s) differ: {shown}{more}"
        )


def _state(is_error: Any) -> str:
    return "error" if is_error else "result"
