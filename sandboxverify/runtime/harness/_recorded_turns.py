"""A live model's session as playbook turns: each model step becomes an action.

``live_session(...)`` loads the plugins for a live model (mocks as a playbook gives them);
``recorded_turns(events)`` reads the turns back from the session's events: a step with one tool
call is a call, several are one parallel action, a final text is a say; every real (not mocked)
call keeps the text of its result, every call whether it was an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._events import Event
from sandboxverify.runtime.harness._session import TestSession


def live_session(options: Mapping[str, Any]) -> TestSession:
    """The plugins with the playbook's mocks. The model's choices are its own, so the loop keeps
    tool errors as results (the model sees them and goes on) instead of failing on them; a
    plugin that fails to load still fails the session.

    ``options``: ``plugins``, ``mock_tools``, ``mock_ui``, ``dist``, ``group``, ``host``,
    ``run_timeout``.
    """
    session = TestSession(
        options.get("plugins"),
        mock_tools=options.get("mock_tools") or {},
        mock_ui=options.get("mock_ui") or {},
        dist=options.get("dist"),
        group=options.get("group"),
        host=options.get("host"),
        run_timeout=options.get("run_timeout"),
        auto_assert=False,
        isolate=True,  # a contract run is a verdict: the plugins stay out of the judge's reach
        has_ui=options.get("has_ui", True),
    )
    if session.load_errors:
        session.close()
        first = session.load_errors[0]
        raise HarnessError(
            "plugin_load_failed",
            "; ".join(failure.describe() for failure in session.load_errors),
            details=first.traceback,
        )
    return session


def recorded_turns(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The session's model steps as playbook turns (see the module docstring)."""
    results = {
        event.data["tool_call_id"]: event.data for event in events if event.type == "tool_result"
    }
    turns: list[dict[str, Any]] = []
    for event in events:
        if event.type == "turn_started":
            turns.append({"prompt": event.data["prompt"], "actions": []})
        elif event.type == "model_step" and turns:
            turns[-1]["actions"].append(_action(event.data, results))
    return turns


def _action(step: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    text = step.get("text")
    if step.get("stop"):
        return {"kind": "say", "text": text or ""}
    calls = [_call(tool_call, results.get(tool_call["id"])) for tool_call in step["tool_calls"]]
    if len(calls) == 1:
        return {**calls[0], "text": text}
    return {"kind": "parallel", "text": text, "calls": calls}


def _call(tool_call: Mapping[str, Any], result: Mapping[str, Any] | None) -> dict[str, Any]:
    action: dict[str, Any] = {
        "kind": "call",
        "tool": tool_call["name"],
        "params": dict(tool_call["input"]),
        "is_error": bool(result and result.get("is_error")),
        "mocked": bool(result and result.get("mocked")),
        "result": None,
    }
    if result is not None and not result.get("mocked"):
        action["result"] = "\n".join(
            block.get("text", "") for block in result["content"] if block.get("type") == "text"
        )
    return action
