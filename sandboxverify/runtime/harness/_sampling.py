"""MCP sampling in a session: the scripted model answers a server's ``sampling/createMessage``.

A server may ask the model to sample while one of its tools runs; the answers come from that
call's ``sample=...`` (text, a result dict, or a callable taking the request's params), consumed
in order. A request with no answer left fails the call (``sampling_unscripted``), and so do
answers the server never asked for (``sampling_unused``). Every answer given is an event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sandboxverify.runtime.harness._actions import Call
from sandboxverify.runtime.harness._errors import HarnessError, Step, short
from sandboxverify.runtime.harness._events import Events


class CallSampling:
    """The sampling answers one call may give, consumed in order."""

    def __init__(self, call: Call, step: Step, call_id: str, events: Events) -> None:
        self.call = call
        self.step = step
        self.call_id = call_id
        self.events = events
        self.answers = list(call.sample)
        self.asked = 0
        #: kept in case the server (or the client) swallows the error answer we send it
        self.failure: HarnessError | None = None

    def answer(self, params: dict[str, Any]) -> dict[str, Any]:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        self.asked += 1
        if not self.answers:
            messages = short(json.dumps(params.get("messages"), default=repr), 120)
            error = self.step.error(
                "sampling_unscripted",
                f"{self.call.tool!r} asked the model to sample (request {self.asked}: "
                f"{messages}), but the call has no sample answer left; add sample=... to it",
            )
            self.failure = self.failure or error
            raise error
        answer = self.answers.pop(0)
        if callable(answer):
            produce = answer
            answer = self.step.guard(
                lambda: produce(params), code="callback_failed", what="the sample callable"
            )
        result = sampling_result(answer)
        if result is None:
            error = self.step.error(
                "playbook_invalid",
                f"a sample answer is text or a sampling result dict with 'content', got {answer!r}",
            )
            self.failure = self.failure or error
            raise error
        self.events.emit(
            "sampling",
            turn=self.step.turn,
            action=self.step.action,
            tool_call_id=self.call_id,
            request=params,
            result=result,
        )
        return result

    def settle(self) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if self.failure is not None:
            raise self.failure
        if self.answers:
            raise self.step.error(
                "sampling_unused",
                f"{self.call.tool!r} was given {self.asked + len(self.answers)} sample "
                f"answer(s), but the server asked the model to sample {self.asked} time(s)",
            )


def sampling_result(answer: Any) -> dict[str, Any] | None:
    """Text, or a ``sampling/createMessage`` result, completed with what the spec requires."""
    if isinstance(answer, str):
        answer = {"content": {"type": "text", "text": answer}}
    if not isinstance(answer, Mapping) or not isinstance(answer.get("content"), Mapping):
        return None
    return {
        "role": "assistant",
        "model": "sandboxverify-playbook",
        "stopReason": "endTurn",
        **dict(answer),
    }
