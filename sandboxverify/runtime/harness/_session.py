"""``create_test_session``: plugins loaded for real, a scripted model, a real agent loop.

Each turn sends the user's prompt; the playbook then plays the model one step at a time: tool
calls go through the agent loop (hooks, schema, real or mocked execution), ``say`` ends the turn.
Every divergence between the script and what happened raises :class:`HarnessError` naming the
turn and action, what was expected and what happened.

This module owns the session (setup, lifecycle, traces) and the scripted model, turn by turn;
one tool call through the agent loop is ``_loop``. Checking each result against its action and
the assertions tests make are ``_assertions`` (mixed into :class:`TestSession`); answering an MCP
server's sampling requests from the running call is ``_sampling``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Callable

from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.harness import _trace
from sandboxverify.runtime.harness._actions import Call, Parallel, Say, Turn
from sandboxverify.runtime.harness._assertions import SessionAssertions
from sandboxverify.runtime.harness._errors import HarnessError, Step, short
from sandboxverify.runtime.harness._events import Events, Message, ToolResultRecord, UICallRecord
from sandboxverify.runtime.harness._guards import deferred, watching_exits
from sandboxverify.runtime.harness._loop import AgentLoop, CallSite, Plugins
from sandboxverify.runtime.harness._mocks import MockTools
from sandboxverify.runtime.harness._plugin_side import DEFAULT_CALL_TIMEOUT, load_plugin_side
from sandboxverify.runtime.harness._plugins import (
    LoadFailure,
    PluginSpec,
    isolation_wanted,
    session_host,
)
from sandboxverify.runtime.harness._remote import RemotePlugins
from sandboxverify.runtime.harness._sampling import CallSampling
from sandboxverify.runtime.harness._ui import MockUI
from sandboxverify.runtime.harness._worker import contained

#: Called with every new session; a smoke run uses it to see the sessions a .py playbook creates.
SESSION_OBSERVERS: list[Callable[[TestSession], None]] = []


def _refuse_no_plugins(plugins: Sequence[PluginSpec] | None) -> None:
    """``plugins=[]`` is a mistake, not a session without plugins."""
    if plugins is not None and not isinstance(plugins, str) and len(plugins) == 0:
        raise HarnessError(
            "no_plugins",
            "plugins=[] loads no plugin: a session needs at least one; name them, or "
            "leave plugins out to load the distribution's",
        )


@dataclass(frozen=True)
class PlaybookState:
    consumed: int
    remaining: int


class TestSession(SessionAssertions):
    """A harness session; use it as a context manager (it removes its temporary directory)."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        plugins: Sequence[PluginSpec] | None = None,
        *,
        mock_tools: Mapping[str, Any] | None = None,
        mock_ui: Mapping[str, Any] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        auto_assert: bool = True,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        run_timeout: float | None = None,
        dist: str | None = None,
        group: str | None = None,
        host: str | None = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        update_snapshots: bool | None = None,
        isolate: bool | None = None,
        has_ui: bool = True,
    ) -> None:
        self.auto_assert = auto_assert
        self.run_timeout = run_timeout
        self.has_ui = has_ui
        self._make_cwd(cwd)
        self._start_state(snapshot_dir, update_snapshots)
        self._plugin_side: Plugins | None = None
        #: the plugins loaded (their names), and the ones that failed to load
        self.plugins: list[str] = []
        self.load_errors: list[LoadFailure] = []
        try:
            _refuse_no_plugins(plugins)
            self.mocks = MockTools(mock_tools)
            self.ui = MockUI(mock_ui, self._record_ui, has_ui=has_ui)
            self.host = session_host(host)
            self._plugin_side = load_plugin_side(
                self,
                plugins,
                dist=dist,
                group=group,
                call_timeout=call_timeout,
                isolate=isolation_wanted(isolate),
            )
            self.mocks.check_names(self.registry.tools)
        except BaseException:
            self.close()
            raise
        self.loop = AgentLoop(
            plugins=self._plugin_side,
            mocks=self.mocks,
            ui=self.ui,
            events=self.events,
            call_timeout=call_timeout,
        )
        self._announce(mock_ui)

    # -- setting up ------------------------------------------------------------------------
    def _make_cwd(self, cwd: str | os.PathLike[str] | None) -> None:
        """The tools' working directory: the one given, or a temporary one the session owns."""
        self._owns_cwd = cwd is None
        self.cwd = (
            str(cwd) if cwd is not None else tempfile.mkdtemp(prefix="sandboxverify-session-")
        )
        # the temporary directory goes even if close() is never called (at collection or exit)
        self._cleanup = (
            weakref.finalize(self, shutil.rmtree, self.cwd, ignore_errors=True)
            if self._owns_cwd
            else None
        )

    def _start_state(
        self, snapshot_dir: str | os.PathLike[str] | None, update_snapshots: bool | None
    ) -> None:
        """What the session records and where the playbook stands, before anything loads."""
        self.events = Events()
        self.registry = Registry()
        self._snapshot_dir = Path(snapshot_dir) if snapshot_dir is not None else None
        self._update_snapshots = update_snapshots
        self._consumed = 0
        self._remaining = 0
        self._turns_run = 0
        self._location: tuple[int | None, int | None, str | None] = (None, None, None)
        self._sampling: CallSampling | None = None
        #: the first failure of this session's runs and assertions, even if the caller caught it
        self.failure: HarnessError | None = None

    def _announce(self, mock_ui: Mapping[str, Any] | None) -> None:
        """Tell the observers (a smoke run's) about the session, and start its trace."""
        for observe in SESSION_OBSERVERS:
            observe(self)
        self.events.emit(
            "run_started",
            version=_trace.TRACE_VERSION,
            plugins=list(self.plugins),
            tools=sorted(self.registry.tools),
            mock_tools=sorted(self.mocks.names),
            mock_ui=sorted(dict(mock_ui or {})),
        )

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> TestSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        try:
            if exc_type is None and self.failure is None and self.auto_assert:
                self.assert_mocks_used()
        finally:
            self.close()

    def close(self) -> None:
        if self._plugin_side is not None:
            self._plugin_side.close()
        else:
            self.registry.close()
        if self._cleanup is not None:
            self._cleanup()

    def failed(self, error: HarnessError) -> HarnessError:
        """Remember ``error`` as the session's failure (the first one stays) and return it; the
        judge of a .py playbook hears of it too."""
        if self.failure is None and isinstance(self._plugin_side, RemotePlugins):
            self._plugin_side.report(error)
        return super().failed(error)

    # -- what is there ---------------------------------------------------------------------
    @property
    def tools(self) -> list[str]:
        return sorted(self.registry.tools)

    @property
    def playbook(self) -> PlaybookState:
        return PlaybookState(self._consumed, self._remaining)

    # -- running ---------------------------------------------------------------------------
    def run(self, *turns: Turn) -> None:
        """Play the turns; raises :class:`HarnessError` at the first divergence."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        for index, turn in enumerate(turns, start=1):
            if not isinstance(turn, Turn):
                raise TypeError(
                    f"run() takes when(...) turns; argument {index} is a {type(turn).__name__}"
                )
        if not turns:
            raise self.failed(
                HarnessError(
                    "playbook_invalid",
                    "run() got no turns: a run that plays nothing proves nothing; pass "
                    "when(prompt, [...]) turns",
                )
            )
        self._remaining = sum(len(turn.actions) for turn in turns)
        self._consumed = 0
        deadline = time.monotonic() + self.run_timeout if self.run_timeout is not None else None
        try:
            with watching_exits():  # os._exit in plugin code must fail the action, not the process
                for position, turn in enumerate(turns):
                    self._turns_run += 1
                    self._play_turn(
                        turn, self._turns_run, last=position == len(turns) - 1, deadline=deadline
                    )
        except HarnessError as exc:
            self.events.emit("run_completed", ok=False, error=exc.to_json())
            self.failed(exc)
            raise
        self.events.emit("run_completed", ok=True, error=None)

    def _play_turn(self, turn: Turn, number: int, *, last: bool, deadline: float | None) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        self.events.emit("turn_started", turn=number, prompt=turn.prompt)
        self.events.messages.append(Message("user", turn.prompt, number))
        label = f"turn {number} ({short(turn.prompt)})"
        step = 0
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise HarnessError(
                    "run_timeout",
                    f"{label}: the run took longer than {self.run_timeout:g}s",
                    turn=number,
                )
            if step >= len(turn.actions):
                self._ran_out(turn, number, label, last=last)
            action = turn.actions[step]
            step += 1
            self._consumed += 1
            self._remaining -= 1
            where = f"{label}, action {step} ({action.describe()})"
            if action.where:
                where += f" [{action.where}]"
            if isinstance(action, Say):
                self._say(action, number, step)
                if step < len(turn.actions) and self.auto_assert:
                    left = ", ".join(a.describe() for a in turn.actions[step:])
                    raise HarnessError(
                        "actions_left_over",
                        f"{where} ended the turn, but {len(turn.actions) - step} action(s) "
                        f"after it never ran: {left}",
                        turn=number,
                        action=step,
                    )
                break
            calls = (action,) if isinstance(action, Call) else action.calls
            self._model_calls(calls, action, Step(number, step, where, deadline))
        self.events.emit("turn_completed", turn=number)

    def _ran_out(self, turn: Turn, number: int, label: str, *, last: bool) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        done = (
            f"after action {len(turn.actions)} ({turn.actions[-1].describe()})"
            if turn.actions
            else "before any action (the turn has none)"
        )
        if last:
            raise HarnessError(
                "playbook_exhausted",
                f"{label}: the agent loop asked the model for another step {done}, but the "
                "playbook has nothing left; end the turn with say(...)",
                turn=number,
            )
        raise HarnessError(
            "turn_without_say",
            f"{label}: the turn ended without say(): the agent loop asked the model for "
            f"another step {done}; end every turn with say(...)",
            turn=number,
        )

    def _say(self, action: Say, turn: int, step: int) -> None:
        self.events.emit(
            "model_step", turn=turn, action=step, text=action.text, tool_calls=[], stop=True
        )
        self.events.messages.append(Message("assistant", action.text, turn))

    def _model_calls(self, calls: Sequence[Call], action: Call | Parallel, step: Step) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        resolved = [(call, self._params(call, step)) for call in calls]
        ids = [self.loop.new_call_id() for _ in resolved]
        tool_calls = [
            # validate: False is recorded so a replay sends the same unchecked arguments
            {"id": call_id, "name": call.tool, "input": params, **_unvalidated(call)}
            for call_id, (call, params) in zip(ids, resolved)
        ]
        self.events.emit(
            "model_step",
            turn=step.turn,
            action=step.action,
            text=action.text,
            tool_calls=tool_calls,
            stop=False,
        )
        self.events.messages.append(Message("assistant", action.text, step.turn, tuple(tool_calls)))
        for call_id, (call, params) in zip(ids, resolved):
            self._location = (step.turn, step.action, call_id)
            self._sampling = CallSampling(call, step, call_id, self.events)
            try:
                record = self.loop.execute(
                    CallSite(
                        call.tool,
                        params,
                        call_id,
                        step,
                        validate=call.validate,
                        expect_error=call.expect_error,
                    )
                )
            finally:
                sampling, self._sampling = self._sampling, None
            sampling.settle()
            self._location = (step.turn, step.action, None)
            self.events.messages.append(
                Message(
                    "tool",
                    record.text,
                    step.turn,
                    tool_call_id=call_id,
                    tool_name=call.tool,
                    is_error=record.is_error,
                )
            )
            self._check_outcome(call, record, step)
            for callback in call.callbacks:
                self._callback(callback, record, step)

    def _params(self, call: Call, step: Step) -> dict[str, Any]:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        params = call.params
        if callable(params):
            params = step.guard(params, code="params_failed", what="the params callable")
        if params is None:
            return {}
        if not isinstance(params, Mapping):
            raise step.error("params_failed", f"params must be a dict, got {type(params).__name__}")
        return dict(params)

    def _callback(self, callback: Any, record: ToolResultRecord, step: Step) -> None:
        """A ``.then`` callback runs within the call's time; an ``async def`` one is awaited, and
        returning False fails the check as an assertion would (None and True pass), as does
        returning work that never ran (a generator, an unawaited coroutine: ``deferred``)."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        what = f"the .then() callback {_name(callback)}"
        if getattr(callback, "harness_check", False):  # a declarative expect or capture
            returned = contained(lambda: callback(record), step, code="callback_failed", what=what)
        else:
            returned = self.loop.bounded(
                lambda: callback(record), step, code="callback_failed", what=what
            )
        if returned is False:
            raise step.error(
                "callback_failed",
                f"{what} returned False for the result of {record.tool_name!r}: "
                f"{short(record.text, 200)}; a callback that returns False fails the check",
            )
        unfinished = deferred(returned)
        if unfinished is not None:
            raise step.error(
                "callback_failed",
                f"{what} returned {unfinished}, so it checked nothing; a callback must do its "
                "work when called: remove the yield, await what it starts, or consume the "
                "iterator (return None, True or False)",
            )

    def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """A server's ``sampling/createMessage``: the scripted model answers from the call."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if self._sampling is None:
            raise HarnessError(
                "sampling_unscripted",
                "a server asked the model to sample outside any tool call; the playbook can "
                "only answer sampling requests made while a call runs",
            )
        return self._sampling.answer(params)

    def _record_ui(self, method: str, args: list[Any], answer: Any) -> None:
        turn, action, call_id = self._location
        self.events.ui.append(UICallRecord(method, list(args), answer, call_id, turn, action))
        self.events.emit(
            "ui_call",
            turn=turn,
            action=action,
            tool_call_id=call_id,
            method=method,
            args=list(args),
            return_value=answer,
        )

    # -- traces ----------------------------------------------------------------------------
    def trace(self) -> list[dict[str, Any]]:
        return [event.to_json() for event in self.events.all]

    def write_trace(self, path: str | os.PathLike[str]) -> Path:
        return _trace.write_trace(self.trace(), Path(path))


def _unvalidated(call: Call) -> dict[str, Any]:
    return {} if call.validate else {"validate": False}


def _name(callback: Any) -> str:
    name = getattr(callback, "__name__", None) or type(callback).__name__
    return "(a lambda)" if name == "<lambda>" else repr(name)


def create_test_session(plugins: Sequence[PluginSpec] | None = None, **options: Any) -> TestSession:
    """A :class:`TestSession`; see its constructor for the options."""
    return TestSession(plugins, **options)


__all__ = ["LoadFailure", "PlaybookState", "TestSession", "create_test_session"]
