"""One tool call through the agent loop, exactly as a real host runs it.

resolve the tool -> validate the arguments against its schema -> ``tool_call`` hooks (a block
means the tool never runs and the result is an error carrying the reason) -> execute (the
plugin's function, or the mock; environmental tools only ever through a mock) -> ``tool_result``
hooks (may replace the result) -> record. Hooks fire on mocked calls exactly as on real ones.
"""

from __future__ import annotations

import difflib
import inspect
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from sandboxverify.runtime._registrations import HandlerSpec, Registry, ToolSpec
from sandboxverify.runtime._results import (
    ResultShapeError,
    ToolResult,
    from_full_result,
    from_return_value,
)
from sandboxverify.runtime.harness._errors import HarnessError, Step
from sandboxverify.runtime.harness._events import Events, ToolCallRecord, ToolResultRecord
from sandboxverify.runtime.harness._guards import settle
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS, MockTools
from sandboxverify.runtime.harness._ui import MockUI, ToolContext
from sandboxverify.runtime.harness._validate import describe, validate
from sandboxverify.runtime.harness._worker import CallJob, TimedOut, Worker, contained
from sandboxverify.runtime.hosts import ServerFailure


class ToolCallEvent:
    """What a ``tool_call`` handler receives."""

    def __init__(self, tool_name: str, input: dict[str, Any], tool_call_id: str) -> None:
        self.tool_name = tool_name
        self.input = input
        self.tool_call_id = tool_call_id

    def __getitem__(self, key: str) -> Any:  # handlers written against dict-shaped events
        return getattr(self, key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tool_name!r}, {self.input!r}, {self.tool_call_id!r})"


class ToolResultEvent(ToolCallEvent):
    """What a ``tool_result`` handler receives: the call plus its ``result``."""

    def __init__(
        self, tool_name: str, input: dict[str, Any], tool_call_id: str, result: ToolResult
    ) -> None:
        super().__init__(tool_name, input, tool_call_id)
        self.result = result

    @property
    def is_error(self) -> bool:
        return self.result.is_error


@dataclass(frozen=True)
class CallSite:
    """One tool call and the playbook step it belongs to (for every message about it)."""

    tool: str
    params: dict[str, Any]
    tool_call_id: str
    at: Step
    #: False sends arguments the schema rejects on purpose (to test how the tool handles them)
    validate: bool = True


class AgentLoop:
    def __init__(
        self,
        *,
        registry: Registry,
        mocks: MockTools,
        ui: MockUI,
        events: Events,
        cwd: str,
        call_timeout: float | None,
    ) -> None:
        self.registry = registry
        self.mocks = mocks
        self.ui = ui
        self.events = events
        self.cwd = cwd
        self.call_timeout = call_timeout
        self._next_id = 0
        self._worker = Worker()
        self._signatures: dict[str, inspect.Signature | None] = {}

    def available(self) -> list[str]:
        return sorted(set(self.registry.tools) | set(ENVIRONMENTAL_TOOLS) | set(self.mocks.names))

    def new_call_id(self) -> str:
        self._next_id += 1
        return f"call_{self._next_id}"

    def execute(self, site: CallSite) -> ToolResultRecord:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        tool = site.tool
        spec = self.registry.tools.get(tool)
        mocked = tool in self.mocks
        schema = spec.parameters if spec else ENVIRONMENTAL_TOOLS.get(tool)
        if spec is None and schema is None and not mocked:
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
        # hooks, execution and result hooks run as one job, within the call's time
        ok, outcome = self._limited(
            lambda: self._through_the_loop(site, spec, mocked, job), site.at, job
        )
        if not ok:
            raise outcome  # the job turned everything else into results or failures
        block, result, mocked, seconds = outcome
        record = ToolResultRecord(
            tool_name=tool,
            tool_call_id=site.tool_call_id,
            result=result,
            mocked=mocked,
            blocked=block is not None,
            turn=site.at.turn,
            action=site.at.action,
            seconds=seconds,
        )
        self.events.tool_results.append(record)
        self.events.emit(
            "tool_result",
            turn=site.at.turn,
            action=site.at.action,
            tool_call_id=site.tool_call_id,
            tool_name=tool,
            mocked=mocked,
            blocked=block is not None,
            **result.to_json(),
        )
        return record

    def _through_the_loop(
        self, site: CallSite, spec: ToolSpec | None, mocked: bool, job: CallJob
    ) -> tuple[tuple[str, str] | None, ToolResult, bool, float]:
        """``tool_call`` hooks, execution, ``tool_result`` hooks: what a host does with a call
        once its arguments are valid. Returns the block (if any), the result, whether a mock
        produced it and how long execution took."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        tool = site.tool
        block = self._tool_call_hooks(site, job)
        job.step(repr(tool))
        self._record_call(site, block)
        self.ui.located(f"{site.at.where}, tool call {site.tool_call_id}")
        started = time.perf_counter()
        if block is not None:
            result, mocked = ToolResult.from_text(block[1], is_error=True), False
        elif mocked:
            result = self._produce(
                lambda: self.mocks.produce(tool, site.params, site.at.where), site, mock=True
            )
        elif spec is None:
            raise site.at.error(
                "tool_not_mocked",
                f"the model called the environmental tool {tool!r}, which is never executed for "
                f"real; add a mock: mock_tools={{{tool!r}: ...}}",
            )
        else:
            kwargs = dict(site.params)
            if spec.wants_ctx:
                kwargs["ctx"] = ToolContext(self.ui, self.cwd, site.tool_call_id)
            result = self._produce(lambda: self._call_tool(spec, kwargs, site), site)
        seconds = time.perf_counter() - started
        return block, self._tool_result_hooks(site, result, job), mocked, seconds

    # -- hooks ----------------------------------------------------------------------------
    def _tool_call_hooks(self, site: CallSite, job: CallJob) -> tuple[str, str] | None:
        """``(plugin, reason)`` of the first handler that blocks, else None."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        for handler in self.registry.handlers_for("tool_call"):
            event = ToolCallEvent(site.tool, dict(site.params), site.tool_call_id)
            verdict = self._call_handler(handler, event, site, job)
            if verdict is None:
                continue
            if isinstance(verdict, Mapping) and set(verdict) <= {"block", "reason"}:
                if "reason" in verdict and "block" not in verdict:
                    # a reason alone reads as a block that did not happen: say so, never guess
                    raise site.at.error(
                        "hook_failed",
                        f"the tool_call handler of plugin {handler.plugin!r} returned "
                        f"{verdict!r}, a reason without 'block': it blocks nothing; return "
                        "{'block': True, 'reason': '...'} to block the call, or None to let it run",
                    )
                if verdict.get("block") is True:
                    reason = verdict.get("reason") or f"blocked by plugin {handler.plugin!r}"
                    return handler.plugin, str(reason)
                if verdict.get("block") in (False, None):
                    continue
            raise site.at.error(
                "hook_failed",
                f"the tool_call handler of plugin {handler.plugin!r} returned {verdict!r}; "
                "return None or {'block': True, 'reason': '...'}",
            )
        return None

    def _tool_result_hooks(self, site: CallSite, result: ToolResult, job: CallJob) -> ToolResult:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        for handler in self.registry.handlers_for("tool_result"):
            event = ToolResultEvent(site.tool, dict(site.params), site.tool_call_id, result)
            replaced = self._call_handler(handler, event, site, job)
            if replaced is None:
                continue
            try:
                if isinstance(replaced, ToolResult):
                    result = replaced
                elif isinstance(replaced, str):
                    result = ToolResult.from_text(replaced)
                elif isinstance(replaced, Mapping):
                    result = from_full_result(replaced)
                else:
                    raise ResultShapeError(f"a {type(replaced).__name__} is not a result")
            except ResultShapeError as exc:
                raise site.at.error(
                    "hook_failed",
                    f"the tool_result handler of plugin {handler.plugin!r} returned "
                    f"{replaced!r}: {exc}; return None, a string or a full result",
                ) from None
        return result

    def _call_handler(
        self, handler: HandlerSpec, event: ToolCallEvent, site: CallSite, job: CallJob
    ) -> Any:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        what = f"the {handler.event} handler of plugin {handler.plugin!r}"
        job.step(what)
        return contained(lambda: handler.handler(event), site.at, code="hook_failed", what=what)

    # -- execution ------------------------------------------------------------------------
    def bounded(self, run: Callable[[], Any], at: Step, *, code: str, what: str) -> Any:
        """Run code the harness calls for an action (a ``.then`` callback) within the call's
        time, awaiting it if it is async: an exception is a ``code`` failure naming ``what``;
        ending the run (sys.exit, os._exit, KeyboardInterrupt) is ``aborted``."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        ok, value = self._limited(
            lambda: contained(run, at, code=code, what=what), at, CallJob(what)
        )
        if ok:
            return value
        raise value

    def _call_tool(self, spec: ToolSpec, kwargs: dict[str, Any], site: CallSite) -> ToolResult:
        """The tool's function with the arguments. A TypeError because it cannot take them is
        the harness's call going wrong, not the tool's answer: ``expect_error`` never absorbs
        it (the tool's schema and its signature disagree)."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        try:
            returned = spec.fn(**kwargs)
        except TypeError:
            mismatch = self._signature_mismatch(spec, kwargs)
            if mismatch is None:
                raise  # raised inside the tool: its answer
            raise site.at.error(
                "invalid_arguments",
                f"the function of {spec.name!r} cannot take the arguments {site.params!r}: "
                f"{mismatch} (its signature and its parameter schema disagree)",
            ) from None
        return from_return_value(settle(returned))

    def _signature_mismatch(self, spec: ToolSpec, kwargs: dict[str, Any]) -> str | None:
        """Why the function cannot take ``kwargs``, or None: asked only after a TypeError, so a
        call that works pays nothing for the check."""
        if spec.name not in self._signatures:
            try:
                self._signatures[spec.name] = inspect.signature(spec.fn)
            except (TypeError, ValueError):  # a builtin without one: cannot tell
                self._signatures[spec.name] = None
        signature = self._signatures[spec.name]
        if signature is None:
            return None
        try:
            signature.bind(**kwargs)
        except TypeError as exc:
            return str(exc)
        return None

    def _produce(
        self, produce: Callable[[], ToolResult], site: CallSite, *, mock: bool = False
    ) -> ToolResult:
        """Run tool (or mock) code: a tool's exception becomes an error result; UI misuse and
        harness failures stay failures even if the plugin code swallowed them; a mock that
        raises and code that would end the run are failures of the action."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        try:
            result = produce()
        except HarnessError:
            raise
        except BaseException as exc:  # judged below, after the UI's failures
            error: BaseException | None = exc
        else:
            error = None
        failure = self.ui.take_failure()
        if failure is not None:
            raise failure
        if error is None:
            return result
        if isinstance(error, ServerFailure):  # not the tool's answer: never an expected error
            raise site.at.error(
                "server_failed", f"{site.tool!r}: {error}", details=error.details
            ) from None
        if mock or not isinstance(error, Exception):  # a broken mock, or code ending the run
            source = f"the mock for {site.tool!r}" if mock else f"the tool {site.tool!r}"
            raise site.at.failure(error, code="mock_failed", what=source) from error
        if isinstance(error, ResultShapeError):
            return _error_result(error, f"{site.tool} {error}")
        return _error_result(error, f"{type(error).__name__}: {error}")

    def _limited(self, job: Callable[[], Any], at: Step, doing: CallJob) -> tuple[bool, Any]:
        """``(True, value)`` or ``(False, exception)`` of ``job``, run within the per-call
        timeout or what is left of the run's; running out of time is a failure naming what
        ``doing`` was at. A Ctrl-C while waiting for the job is the user's and propagates."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        timeout, code = self.call_timeout, "call_timeout"
        if at.deadline is not None:
            left = at.deadline - time.monotonic()
            if timeout is None or left < timeout:
                timeout, code = left, "run_timeout"
        try:
            return self._worker.run(job, timeout)
        except TimedOut:
            doing.abandoned = True  # if the stuck code ever returns, nothing after it runs
            self._worker = Worker()  # the old thread is stuck in the job; abandon it
            limit = "the run's time" if code == "run_timeout" else f"{timeout:.3g}s"
            raise at.error(code, f"{doing.what} did not return within {limit}") from None

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


def _error_result(exc: BaseException, text: str) -> ToolResult:
    """An exception in tool code as an error result; the traceback goes into details."""
    return ToolResult(
        content=({"type": "text", "text": text},),
        details={
            "error_type": type(exc).__name__,
            "message": str(exc),
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        },
        is_error=True,
    )
