"""The plugins' side of one tool call: what runs plugin code, wherever the plugins live.

``tool_call`` hooks (a block means the tool never runs and the result is an error carrying the
reason) -> execute (the plugin's function, or, for a tool no plugin registers, the answer the
judge gives: its mock) -> ``tool_result`` hooks (may replace the result). Hooks fire on mocked
calls exactly as on real ones; a registered tool always runs for real.

The same code runs in the session's own process (in-process sessions) and in the process that
holds a session's plugins (``_plugin_process``); what it needs from the judge of the session
(recording the call, a mock's result) goes through :class:`Judge`.
"""

from __future__ import annotations

import inspect
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from sandboxverify.runtime._registrations import HandlerSpec, Registry, ToolSpec
from sandboxverify.runtime._results import (
    ResultShapeError,
    ToolResult,
    from_full_result,
    from_return_value,
)
from sandboxverify.runtime.harness._errors import HarnessError, Step
from sandboxverify.runtime.harness._guards import settle
from sandboxverify.runtime.harness._worker import CallJob, contained
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
    #: what the action declared about an error result (the judge of a .py playbook checks it)
    expect_error: bool | str = False


@dataclass(frozen=True)
class Outcome:
    """What became of one call on the plugins' side."""

    #: ``(plugin, reason)`` of the ``tool_call`` handler that blocked it
    block: tuple[str, str] | None
    result: ToolResult
    #: the result came from the judge's mock, not from a plugin's tool
    mocked: bool
    seconds: float
    #: code of a plugin ran for this call: its tool, or one of its handlers
    plugin_ran: bool


class UserInterface(Protocol):
    """The ``ctx.ui`` a tool gets, and what is left of a failure it may have swallowed."""

    def located(self, where: str) -> None: ...

    def take_failure(self) -> HarnessError | None: ...


class Judge(Protocol):
    """What the plugins' side of a call asks of the session's judge."""

    def called(self, block: tuple[str, str] | None) -> None:
        """The ``tool_call`` hooks are done: the call is recorded (blocked or not)."""

    def mock(self) -> ToolResult:
        """The result of a call to a tool no plugin registers (its mock); raises the failure."""


class ToolContext:
    """What a tool declaring a ``ctx`` parameter receives."""

    def __init__(self, ui: Any, cwd: str, tool_call_id: str, *, has_ui: bool = True) -> None:
        self.ui = ui
        self.cwd = cwd
        self.tool_call_id = tool_call_id
        #: whether a user is there to answer ``ui`` questions (a headless host has none)
        self.has_ui = has_ui

    def __repr__(self) -> str:
        return f"ToolContext(cwd={self.cwd!r}, tool_call_id={self.tool_call_id!r})"


class PluginCalls:
    """Runs calls against the plugins loaded into ``registry``."""

    def __init__(
        self, registry: Registry, ui: UserInterface, cwd: str, *, has_ui: bool = True
    ) -> None:
        self.registry = registry
        self.ui = ui
        self.cwd = cwd
        self.has_ui = has_ui
        self._signatures: dict[str, inspect.Signature | None] = {}

    def run(self, site: CallSite, job: CallJob, judge: Judge) -> Outcome:
        """Hooks, execution, result hooks: what a host does with a call once its arguments are
        valid."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        tool = site.tool
        spec = self.registry.tools.get(tool)
        handlers = self.registry.handlers_for("tool_call") + self.registry.handlers_for(
            "tool_result"
        )
        block = self._tool_call_hooks(site, job)
        job.step(repr(tool))
        judge.called(block)
        self.ui.located(f"{site.at.where}, tool call {site.tool_call_id}")
        started = time.perf_counter()
        mocked = False
        if block is not None:
            result = ToolResult.from_text(block[1], is_error=True)
        elif spec is None:
            result, mocked = judge.mock(), True
        else:
            kwargs = dict(site.params)
            if spec.wants_ctx:
                kwargs["ctx"] = ToolContext(
                    self.ui, self.cwd, site.tool_call_id, has_ui=self.has_ui
                )
            result = produced(lambda: self._call_tool(spec, kwargs, site), site, self.ui)
        seconds = time.perf_counter() - started
        result = self._tool_result_hooks(site, result, job)
        ran = bool(handlers) or (block is None and spec is not None)
        return Outcome(block, result, mocked, seconds, ran)

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


def produced(
    produce: Callable[[], ToolResult], site: CallSite, ui: UserInterface, *, mock: bool = False
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
    failure = ui.take_failure()
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
