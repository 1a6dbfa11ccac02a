"""One tool call through the agent loop, exactly as a real host runs it: the judge's side.

resolve the tool -> validate the arguments against its schema -> the plugins' side
(``_plugin_calls``: ``tool_call`` hooks, execution or the mock, ``tool_result`` hooks), in this
process or in the process holding the plugins (``_remote``) -> record. Environmental tools run
only through a mock; a tool a plugin registers always runs for real.

What decides the call's outcome (the schema, the mocks, the records) stays here, with the
session; the plugins' side only reports what happened.
"""

from __future__ import annotations

import difflib
import time
from typing import Any, Callable, Protocol

from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime._results import ToolResult
from sandboxverify.runtime.harness._errors import Step
from sandboxverify.runtime.harness._events import Events, ToolCallRecord, ToolResultRecord
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS, MockTools
from sandboxverify.runtime.harness._plugin_calls import (
    CallSite,
    Judge,
    Outcome,
    PluginCalls,
    ToolCallEvent,
    ToolResultEvent,
    produced,
)
from sandboxverify.runtime.harness._ui import MockUI
from sandboxverify.runtime.harness._validate import describe, validate
from sandboxverify.runtime.harness._worker import CallJob, TimedOut, Worker, contained

__all__ = [
    "AgentLoop",
    "CallSite",
    "LocalPlugins",
    "Plugins",
    "ToolCallEvent",
    "ToolResultEvent",
]


class Plugins(Protocol):
    """Where a session's plugins live and run: this process, or a process of their own."""

    registry: Registry

    def call(self, site: CallSite, job: CallJob, judge: Judge, timeout: float | None) -> Outcome:
        """The plugins' side of one call; raises ``TimedOut`` past ``timeout`` seconds."""

    def close(self) -> None: ...


class LocalPlugins:
    """Plugins loaded into this process; their code runs on a worker thread the caller can give
    up on (Python cannot kill a thread: a call that overruns is abandoned)."""

    def __init__(self, registry: Registry, ui: MockUI, cwd: str, *, has_ui: bool = True) -> None:
        self.registry = registry
        self.calls = PluginCalls(registry, ui, cwd, has_ui=has_ui)
        self._worker = Worker()

    def call(self, site: CallSite, job: CallJob, judge: Judge, timeout: float | None) -> Outcome:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        ok, outcome = bounded_run(self, lambda: self.calls.run(site, job, judge), timeout, job)
        if not ok:
            raise outcome  # the job turned everything else into results or failures
        return outcome  # type: ignore[no-any-return]

    def close(self) -> None:
        self.registry.close()


def bounded_run(
    owner: Any, run: Callable[[], Any], timeout: float | None, job: CallJob
) -> tuple[bool, Any]:
    """``run`` on ``owner``'s worker thread within ``timeout``; a job that overruns is
    abandoned with its thread (``TimedOut``), and ``owner`` gets a fresh worker."""
    try:
        result: tuple[bool, Any] = owner._worker.run(run, timeout)
    except TimedOut:
        job.abandoned = True  # if the stuck code ever returns, nothing after it runs
        owner._worker = Worker()  # the old thread is stuck in the job; abandon it
        raise
    return result


class _CallJudge:
    """What the plugins' side of one call asks of the session: records and mocks."""

    def __init__(self, loop: AgentLoop, site: CallSite) -> None:
        self.loop = loop
        self.site = site

    def called(self, block: tuple[str, str] | None) -> None:
        self.loop._record_call(self.site, block)
        self.loop.ui.located(f"{self.site.at.where}, tool call {self.site.tool_call_id}")

    def mock(self) -> ToolResult:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        site, mocks = self.site, self.loop.mocks
        if site.tool not in mocks:
            raise site.at.error(
                "tool_not_mocked",
                f"the model called the environmental tool {site.tool!r}, which is never executed "
                f"for real; add a mock: mock_tools={{{site.tool!r}: ...}}",
            )
        return produced(
            lambda: mocks.produce(site.tool, site.params, site.at.where),
            site,
            self.loop.ui,
            mock=True,
        )


class AgentLoop:
    def __init__(
        self,
        *,
        plugins: Plugins,
        mocks: MockTools,
        ui: MockUI,
        events: Events,
        call_timeout: float | None,
    ) -> None:
        self.plugins = plugins
        self.registry = plugins.registry
        self.mocks = mocks
        self.ui = ui
        self.events = events
        self.call_timeout = call_timeout
        self._next_id = 0
        self._worker = Worker()
        #: some call ran plugin code (a tool, a handler): a run where none did proves nothing
        self.plugin_ran = False

    def available(self) -> list[str]:
        return sorted(set(self.registry.tools) | set(ENVIRONMENTAL_TOOLS) | set(self.mocks.names))

    def new_call_id(self) -> str:
        self._next_id += 1
        return f"call_{self._next_id}"

    def execute(self, site: CallSite) -> ToolResultRecord:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        tool = site.tool
        spec = self.registry.tools.get(tool)
        schema = spec.parameters if spec else ENVIRONMENTAL_TOOLS.get(tool)
        if spec is None and schema is None and tool not in self.mocks:
            self._unknown(site)
        if schema is not None and site.validate:
            violations = validate(site.params, schema)
            if violations:
                self._record_call(site)
                raise site.at.error(
                    "invalid_arguments",
                    f"arguments {site.params!r} do not fit the schema of {tool!r}: "
                    f"{describe(violations)}",
                )
        job = CallJob(repr(tool))
        timeout, code = self._time_left(site.at)
        try:
            # hooks, execution and result hooks run as one job, within the call's time
            outcome = self.plugins.call(site, job, _CallJudge(self, site), timeout)
        except TimedOut:
            limit = "the run's time" if code == "run_timeout" else f"{timeout:.3g}s"
            raise site.at.error(code, f"{job.what} did not return within {limit}") from None
        failure = self.ui.take_failure()  # the judge's own account, whatever the plugins said
        if failure is not None:
            raise failure
        self.plugin_ran = self.plugin_ran or outcome.plugin_ran
        return self._record_result(site, outcome)

    def _unknown(self, site: CallSite) -> None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        tool = site.tool
        self._record_call(site)
        callable_now = sorted(set(self.registry.tools) | set(self.mocks.names))
        close = difflib.get_close_matches(tool, callable_now, n=1) or difflib.get_close_matches(
            tool, self.available(), n=1
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        unmocked = sorted(set(ENVIRONMENTAL_TOOLS) - set(callable_now))
        raise site.at.error(
            "unknown_tool",
            f"the model called {tool!r}, which is neither registered nor mocked{hint}; "
            f"available tools: {', '.join(callable_now) or 'none'}"
            + (f" (with a mock also: {', '.join(unmocked)})" if unmocked else ""),
        )

    def _record_result(self, site: CallSite, outcome: Outcome) -> ToolResultRecord:
        record = ToolResultRecord(
            tool_name=site.tool,
            tool_call_id=site.tool_call_id,
            result=outcome.result,
            mocked=outcome.mocked,
            blocked=outcome.block is not None,
            turn=site.at.turn,
            action=site.at.action,
            seconds=outcome.seconds,
        )
        self.events.tool_results.append(record)
        self.events.emit(
            "tool_result",
            turn=site.at.turn,
            action=site.at.action,
            tool_call_id=site.tool_call_id,
            tool_name=site.tool,
            mocked=outcome.mocked,
            blocked=outcome.block is not None,
            **outcome.result.to_json(),
        )
        return record

    # -- code the harness runs for an action ----------------------------------------------
    def bounded(self, run: Callable[[], Any], at: Step, *, code: str, what: str) -> Any:
        """Run code the harness calls for an action (a ``.then`` callback) within the call's
        time, awaiting it if it is async: an exception is a ``code`` failure naming ``what``;
        ending the run (sys.exit, os._exit, KeyboardInterrupt) is ``aborted``."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        job = CallJob(what)
        timeout, limit_code = self._time_left(at)
        try:
            ok, value = bounded_run(
                self, lambda: contained(run, at, code=code, what=what), timeout, job
            )
        except TimedOut:
            limit = "the run's time" if limit_code == "run_timeout" else f"{timeout:.3g}s"
            raise at.error(limit_code, f"{what} did not return within {limit}") from None
        if ok:
            return value
        raise value

    def _time_left(self, at: Step) -> tuple[float | None, str]:
        """The per-call timeout, or what is left of the run's if that is sooner, and the code
        of running out of it. A Ctrl-C while waiting is the user's and propagates."""
        timeout, code = self.call_timeout, "call_timeout"
        if at.deadline is not None:
            left = at.deadline - time.monotonic()
            if timeout is None or left < timeout:
                timeout, code = left, "run_timeout"
        return timeout, code

    def _record_call(self, site: CallSite, block: tuple[str, str] | None = None) -> None:
        record = ToolCallRecord(
            tool_name=site.tool,
            input=dict(site.params),
            tool_call_id=site.tool_call_id,
            turn=site.at.turn,
            action=site.at.action,
            blocked=block is not None,
            block_reason=block[1] if block else None,
            blocked_by=block[0] if block else None,
        )
        self.events.tool_calls.append(record)
        self.events.emit(
            "tool_call",
            turn=site.at.turn,
            action=site.at.action,
            tool_call_id=site.tool_call_id,
            tool_name=site.tool,
            input=dict(site.params),
            blocked=record.blocked,
            block_reason=record.block_reason,
            blocked_by=record.blocked_by,
        )
