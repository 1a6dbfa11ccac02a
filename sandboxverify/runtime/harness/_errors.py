"""Harness failures: one exception type, a stable code, and where in the playbook it happened.

Their messages quote the script's and the tools' texts shortened, with :func:`short`.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from sandboxverify.runtime.harness._guards import ABORT_HINT, ending

T = TypeVar("T")

#: Stable codes (add new ones, never rename): each names one way a run diverged from its script.
CODES = (
    "turn_without_say",  # a turn's actions ran out while the agent loop asked for another step
    "playbook_exhausted",  # the whole playbook ran out while the agent loop asked for more
    "actions_left_over",  # say() ended a turn (or the run ended) with actions never taken
    "unknown_tool",  # a call to a tool neither registered nor mocked
    "invalid_arguments",  # arguments that fail the tool's JSON Schema
    "params_failed",  # a late-bound params callable raised or returned a non-dict
    "tool_error",  # a tool raised (or returned an error) and the action did not expect it
    "unexpected_success",  # the action declared expect_error, the result was not an error
    "expect_mismatch",  # the result text does not match the action's expect regex
    "capture_failed",  # a capture regex found nothing in the result text
    "callback_failed",  # an exception inside a .then callback
    "hook_failed",  # a plugin's tool_call/tool_result handler raised or returned nonsense
    "unknown_mock",  # a mock_tools / mock_ui key that names nothing known
    "invalid_mock",  # a mock value of the wrong shape
    "mocks_exhausted",  # a stateful mock used more times than it has entries
    "tool_not_mocked",  # an environmental tool called without a mock
    "ui_invalid",  # a UI mock answer that is not a valid answer (select value not an item...)
    "plugin_load_failed",  # a plugin failed to load into the session
    "no_plugins",  # the session would run with no plugin at all
    "call_timeout",  # one tool call took longer than the per-call timeout
    "run_timeout",  # the whole run took longer than the run timeout
    "assertion_failed",  # a process assertion (assert_called...) did not hold
    "replay_mismatch",  # a replayed trace produced a different result than recorded
    "snapshot_mismatch",  # a snapshot differs from the stored one
    "snapshot_unlocated",  # a snapshot with no place to be stored and compared
    "playbook_invalid",  # a playbook (or trace) that cannot be run as written
    "sampling_unscripted",  # a server asked the model to sample; the call has no answer left
    "sampling_unused",  # a call's sample answers were not all asked for
    "server_failed",  # a tool's server died, broke the protocol or stopped answering mid-call
    "aborted",  # code run for an action called sys.exit/os._exit or raised a BaseException
    "mock_failed",  # a mock callable raised: a broken test, never an expected tool error
    "mocks_unused",  # entries of a list mock or UI answers no call asked for
    "nothing_called",  # a playbook that called no tool at all: it proves nothing
    "snapshot_invalid",  # a value a snapshot cannot hold (not JSON)
    "model_failed",  # a live model could not be used or failed to answer (llm raised)
    "too_many_steps",  # a live model kept calling tools past the steps a turn may take
    "live_diverged",  # a live model chose other steps than the recording it was run against
    "mock_shadows_tool",  # a mock names a tool a plugin registers (the real tool always runs)
    "no_plugin_code",  # a playbook whose calls were all mocked or blocked: no plugin code ran
    "worker_failed",  # the process holding the plugins died or broke the harness's protocol
    "replay_stale",  # a recorded turn's request (prompt, system, tools, options) has changed
)


class HarnessError(AssertionError):
    """A divergence between the script and what happened; never passes silently.

    Subclasses ``AssertionError`` so test runners show it as a test failure, not an error in the
    test's own code.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        turn: int | None = None,
        action: int | None = None,
        details: str | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.turn = turn
        self.action = action
        self.details = details
        super().__init__(f"[{code}] {message}")

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "turn": self.turn,
            "action": self.action,
            "details": self.details,
        }


@dataclass(frozen=True)
class Step:
    """Where in the playbook something happens; every failure message starts with it."""

    turn: int
    action: int
    where: str
    deadline: float | None = None

    def error(self, code: str, message: str, details: str | None = None) -> HarnessError:
        return HarnessError(
            code, f"{self.where}: {message}", turn=self.turn, action=self.action, details=details
        )

    def guard(self, run: Callable[[], T], *, code: str, what: str) -> T:
        """Run code the harness calls back (a params callable, a sample callable): its
        HarnessErrors pass through, any other exception becomes a ``code`` failure naming
        ``what``, with the traceback as details; one that would end the run is ``aborted``."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        try:
            return run()
        except HarnessError:
            raise
        except BaseException as exc:
            raise self.failure(exc, code=code, what=what) from exc

    def failure(self, exc: BaseException, *, code: str, what: str) -> HarnessError:
        """The failure of this step when ``what`` raised ``exc``: ``code`` for an Exception,
        ``aborted`` for anything that would end the run (sys.exit, os._exit, Ctrl-C...)."""
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        if isinstance(exc, Exception):
            return self.error(code, f"{what} raised {type(exc).__name__}: {exc}", details=details)
        return self.error("aborted", f"{what} {ending(exc)}; {ABORT_HINT}", details=details)


def short(text: str, limit: int = 40) -> str:
    """``text`` quoted for a failure message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


# Reported as the public name (``sandboxverify.harness.HarnessError``) in test output.
HarnessError.__module__ = "sandboxverify.harness"
