"""What the judge of a ``.py`` playbook concludes from the messages it relays.

A ``.py`` playbook is plugin-adjacent code: it runs in a process of its own and may import the
package, so its own sessions' judgement is only as good as that process. The judge therefore
keeps an account of its own from every message between the playbook's sessions and their
plugins' processes: each call the playbook made (with what its action declared about errors),
what the plugins answered, every question a tool asked the user and how it was answered.
From that account alone, whatever the playbook's process says:

- a plugin that failed to load, or a mock that names a registered tool, fails the run;
- an error result the action did not declare (``expect_error``) is ``tool_error``, a declared
  one that did not happen ``unexpected_success``, one that does not match ``expect_mismatch``
  (``auto_assert=False`` does not change that here);
- a failure the plugins' side reported (a hook, an exit, a mock or UI answer that failed) fails
  the run, and so does a plugins' process that died or broke the protocol mid-call;
- a call the playbook sent on top of another, or did not wait for before it ended, breaks the
  protocol: one outcome would stand for two calls, or none for one;
- a run that called nothing, or in which no plugin code ran, proves nothing.

What the playbook declares (its calls, ``expect_error``) is taken as declared: a playbook that
rewrites its own declarations is beyond what any judge can see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sandboxverify.runtime._results import excerpt

_SHOWN_TEXT = 2000


@dataclass
class _Session:
    mocks: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    #: the call the playbook's session is waiting for, as it asked for it
    pending: dict[str, Any] | None = None
    mocked: bool = False
    given_up: bool = False


class Audit:
    """The judge's own account of a playbook's sessions."""

    def __init__(self) -> None:
        self.sessions: dict[int, _Session] = {}
        #: what the judge found wrong, in order
        self.failures: list[dict[str, Any]] = []
        #: failures the playbook's own sessions reported
        self.reported: list[Any] = []
        self.calls: list[dict[str, Any]] = []
        self.requested = 0
        self.ui_calls = 0
        self.plugin_ran = False

    # -- the playbook's side ---------------------------------------------------------------
    def opened(self, session: int, options: Any) -> None:
        options = options if isinstance(options, dict) else {}
        self.sessions[session] = _Session(mocks={str(m) for m in options.get("mock_tools") or ()})

    def from_playbook(self, session: int, message: dict[str, Any]) -> None:
        state = self.sessions.get(session)
        op = message.get("op")
        if state is None:
            return
        if op == "call":
            self.requested += 1
            if state.pending is not None and not state.given_up:
                self._overlapping(state, state.pending, message)
            state.pending, state.mocked = message, False
        elif op in ("ui_failure", "mock_failure"):
            self.failed(message.get("error"), state)
        elif op == "kill" and state.pending is not None:
            state.given_up = True
            self.failed(
                {
                    "code": "call_timeout",
                    "message": f"{_where(state.pending)}: the playbook's "
                    f"session gave up on the call to {state.pending.get('tool')!r}: it did not "
                    "return in time",
                },
                state,
            )

    # -- the plugins' side -----------------------------------------------------------------
    def from_plugins(self, session: int, message: dict[str, Any]) -> None:
        state = self.sessions.get(session)
        if state is None:
            return
        op = message.get("op")
        if op == "loaded":
            self._loaded(state, message)
        elif op == "failure":
            self.failed(message.get("error"), state)
            state.pending = None
        elif op == "mock":
            state.mocked = True
        elif op == "ui":
            self.ui_calls += 1
        elif op == "outcome" and state.pending is not None:
            self._outcome(state, state.pending, message)
            state.pending = None

    def ended(self, session: int, status: str) -> None:
        """The plugins' process of ``session`` ended (or was ended)."""
        state = self.sessions.get(session)
        if state is None or state.pending is None or state.given_up:
            return
        pending, state.pending = state.pending, None
        self.failed(
            {
                "code": "aborted",
                "message": f"{_where(pending)}: the process holding the plugins ended during "
                f"the call to {pending.get('tool')!r} ({status}); code run during a session "
                "must never end the interpreter",
            },
            state,
        )

    def _overlapping(
        self, state: _Session, pending: dict[str, Any], message: dict[str, Any]
    ) -> None:
        """A session calls one tool at a time: a call sent on top of another would let one
        outcome stand for both and leave the other unjudged."""
        self.failed(
            {
                "code": "worker_failed",
                "message": f"{_where(message)}: the playbook's process broke the harness's "
                f"protocol: it sent a call to {str(message.get('tool'))[:200]!r} while its call "
                f"to {str(pending.get('tool'))[:200]!r} was still running",
            },
            state,
        )

    def finished(self) -> None:
        """The playbook's process has ended: a call it sent and did not wait for was never
        judged, and a run with a call nobody saw end proves nothing about that call."""
        for state in self.sessions.values():
            pending, state.pending = state.pending, None
            if pending is not None and not state.given_up:
                self.failed(
                    {
                        "code": "aborted",
                        "message": f"{_where(pending)}: the playbook ended before the call to "
                        f"{str(pending.get('tool'))[:200]!r} it made came back; a call must be "
                        "waited for (run it through a session)",
                    },
                    state,
                )

    def _loaded(self, state: _Session, message: dict[str, Any]) -> None:
        tools = message.get("tools")
        tools = tools if isinstance(tools, list) else []
        state.tools = {str(tool.get("name")) for tool in tools if isinstance(tool, dict)}
        errors = message.get("load_errors") or []
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            self.failed(
                {
                    "code": "plugin_load_failed",
                    "message": f"plugin {first.get('plugin')!r} failed to load "
                    f"({first.get('stage')}): {first.get('error_type')}: {first.get('message')}",
                    "details": first.get("traceback"),
                },
                state,
            )
        shadowing = sorted(state.mocks & state.tools)
        if shadowing:
            self.failed(
                {
                    "code": "mock_shadows_tool",
                    "message": f"mock_tools has {', '.join(map(repr, shadowing))}, which a "
                    "plugin registers: the tool under test always runs for real",
                },
                state,
            )

    def _outcome(self, state: _Session, call: dict[str, Any], outcome: dict[str, Any]) -> None:
        result = outcome.get("result")
        result = result if isinstance(result, dict) else {}
        text = "\n".join(
            str(block.get("text", ""))
            for block in result.get("content") or ()
            if isinstance(block, dict) and block.get("type") == "text"
        )
        is_error = result.get("is_error") is True
        mocked = state.mocked and call.get("tool") not in state.tools
        blocked = bool(outcome.get("block"))
        self.plugin_ran = self.plugin_ran or outcome.get("plugin_ran") is True
        self.calls.append(
            {
                "tool": str(call.get("tool"))[:200],
                "tool_call_id": str(call.get("tool_call_id"))[:200],
                "turn": _number(call.get("turn")),
                "action": _number(call.get("action")),
                "is_error": is_error,
                "mocked": mocked,
                "blocked": blocked,
                "text": excerpt(text, _SHOWN_TEXT),
                "text_length": len(text),
            }
        )
        problem = _against_declared(call, text, is_error=is_error, blocked=blocked)
        if problem is not None:
            self.failed(problem, state)

    def failed(self, error: Any, state: _Session | None = None) -> None:
        del state
        error = error if isinstance(error, dict) else {}
        self.failures.append(
            {
                "code": str(error.get("code") or "worker_failed"),
                "message": str(error.get("message") or "a failure without a reason"),
                "turn": error.get("turn") if isinstance(error.get("turn"), int) else None,
                "action": error.get("action") if isinstance(error.get("action"), int) else None,
                "details": error.get("details") if isinstance(error.get("details"), str) else None,
            }
        )


def _against_declared(
    call: dict[str, Any], text: str, *, is_error: bool, blocked: bool
) -> dict[str, Any] | None:
    """What is wrong with a result, given what the call's action declared about errors."""
    expected = call.get("expect_error", False)
    where = _where(call)
    located = {"turn": _number(call.get("turn")), "action": _number(call.get("action"))}
    if is_error and expected is False:
        cause = "was blocked" if blocked else "returned an error"
        return {
            **located,
            "code": "tool_error",
            "message": f"{where}: {call.get('tool')!r} {cause}: {excerpt(text, 300)}; declare "
            "expect_error=True if the error is what you test",
        }
    if is_error and isinstance(expected, str):
        try:
            matches = re.search(expected, text) is not None
        except re.error as exc:
            return {**located, "code": "playbook_invalid", "message": f"{where}: {exc}"}
        if not matches:
            return {
                **located,
                "code": "expect_mismatch",
                "message": f"{where}: expected an error matching {expected!r}, got: "
                f"{excerpt(text, 300)!r}",
            }
    if not is_error and expected is not False:
        return {
            **located,
            "code": "unexpected_success",
            "message": f"{where}: expected an error, but {call.get('tool')!r} succeeded with: "
            f"{excerpt(text, 200)!r}",
        }
    return None


def _number(value: Any) -> int:
    """A turn or action number as the playbook's process gave it (a report needs a number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _where(call: dict[str, Any]) -> str:
    return str(call.get("where") or f"turn {call.get('turn')}, action {call.get('action')}")
