"""A session's plugins in a process of their own (``_plugin_process``), seen from the judge.

The judge (the session: the playbook, the mocks, the records, the outcome of every call) never
runs plugin code: it sends each call over a pipe it owns and decides from what it observes
there, a result, a failure, a timeout or the process dying. Whatever plugin code does to its
own interpreter (replacing the harness's checks, exiting) can only change what that process
reports about its own calls.

How the judge reaches that process (started here, or by the judge of a ``.py`` playbook) is
``_transport``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

from sandboxverify.runtime._registrations import HandlerSpec, Registry, ToolSpec
from sandboxverify.runtime._results import ResultShapeError, ToolResult
from sandboxverify.runtime.harness._channel import ChannelBroken, ChannelTimeout
from sandboxverify.runtime.harness._errors import HarnessError, Step
from sandboxverify.runtime.harness._plugin_calls import CallSite, Judge, Outcome
from sandboxverify.runtime.harness._plugin_files import absolute_file_spec
from sandboxverify.runtime.harness._plugins import LoadFailure
from sandboxverify.runtime.harness._transport import Transport, absolute
from sandboxverify.runtime.harness._ui import MockUI
from sandboxverify.runtime.harness._worker import CallJob, TimedOut


def _elsewhere(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("plugin code runs in the plugins' own process, never in the judge's")


def _error(data: Any, fallback: str) -> HarnessError:
    """A failure the plugin process reported for what it ran: a failure whatever it says."""
    data = data if isinstance(data, dict) else {}
    code = data.get("code")
    return HarnessError(
        code if isinstance(code, str) and code and code != "ok" else fallback,
        str(data.get("message") or "the plugins' process reported a failure without a reason"),
        turn=data.get("turn") if isinstance(data.get("turn"), int) else None,
        action=data.get("action") if isinstance(data.get("action"), int) else None,
        details=data.get("details") if isinstance(data.get("details"), str) else None,
    )


def _result(data: Any) -> ToolResult:
    """A result as the plugin process reported it; a malformed one breaks the protocol."""
    if not isinstance(data, dict) or not isinstance(data.get("is_error"), bool):
        raise ResultShapeError("a result needs content and is_error")
    content = data.get("content")
    if not isinstance(content, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
    ):
        raise ResultShapeError("a result's content is a list of blocks with a type")
    return ToolResult(tuple(content), data.get("details"), bool(data["is_error"]))


def plugin_reference(spec: Any, base: str) -> tuple[str, str]:
    """A plugin spec the plugins' process can load, and the name the plugin is known by:
    strings as they are (a plugin file's path made absolute against ``base``); a setup function
    by where it lives (``module:qualname``), which only works for one defined at the top of an
    importable module."""
    if isinstance(spec, str):
        return absolute_file_spec(spec, base), spec
    module = getattr(spec, "__module__", None)
    qualname = getattr(spec, "__qualname__", None)
    if (
        callable(spec)
        and isinstance(module, str)
        and isinstance(qualname, str)
        and module != "__main__"
        and "<" not in qualname
    ):
        return f"{module}:{qualname}", qualname
    raise HarnessError(
        "plugin_load_failed",
        f"{getattr(spec, '__name__', spec)!r} is a setup function defined in the playbook (or in "
        "a function): the plugins run in a process of their own, which cannot reach it; put it "
        "at the top of a module and name it 'pkg.mod:setup', or name its file "
        "'path/to/plugin.py:setup'",
    )


class RemotePlugins:
    """``_loop.Plugins`` for plugins held by another process: the judge's side of the pipe."""

    def __init__(self, transport: Transport, *, ui: MockUI, sample: Any) -> None:
        self.transport = transport
        self.ui = ui
        self.sample = sample
        self.registry = Registry()
        self.ended: str | None = None

    # -- loading ---------------------------------------------------------------------------
    def load(
        self, request: dict[str, Any], timeout: float | None
    ) -> tuple[list[str], list[LoadFailure]]:
        """Load the plugins there (``request``: plugins, dist, group, host, timeout, cwd,
        has_ui); the tools they registered are mirrored into :attr:`registry`."""
        try:
            self.transport.send({"op": "load", "sys_path": absolute(sys.path), **request})
            message = self.transport.receive(timeout)
        except ChannelTimeout:
            self._end()
            raise HarnessError(
                "plugin_load_failed", f"loading the plugins did not finish within {timeout:g}s"
            ) from None
        except ChannelBroken as exc:
            raise self._broken(f"while loading the plugins: {exc}") from None
        if message is None:
            status = self._end()
            raise HarnessError(
                "plugin_load_failed",
                f"the process loading the plugins ended ({status}): a plugin's import or setup "
                "ended it",
            )
        if message.get("op") == "failure":
            raise _error(message.get("error"), "plugin_load_failed")
        try:
            return self._mirror(message)
        except (KeyError, TypeError, ValueError) as exc:
            raise self._broken(f"its account of the plugins is malformed ({exc})") from None

    def _mirror(self, message: dict[str, Any]) -> tuple[list[str], list[LoadFailure]]:
        if message.get("op") != "loaded":
            raise ValueError(f"unexpected {message.get('op')!r}")
        for tool in message["tools"]:
            self.registry.add_tool(
                ToolSpec(
                    str(tool["name"]),
                    _elsewhere,
                    tool["description"] if isinstance(tool["description"], str) else None,
                    dict(tool["parameters"]),
                    plugin=str(tool["plugin"]),
                    wants_ctx=bool(tool["wants_ctx"]),
                )
            )
        for event, plugin in message["handlers"]:
            self.registry.handlers.append(HandlerSpec(str(event), _elsewhere, str(plugin)))
        failures = [
            LoadFailure(**{key: str(value) for key, value in failure.items()})
            for failure in message["load_errors"]
        ]
        return [str(name) for name in message["plugins"]], failures

    # -- calls -----------------------------------------------------------------------------
    def call(self, site: CallSite, job: CallJob, judge: Judge, timeout: float | None) -> Outcome:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if self.ended is not None:
            raise site.at.error(
                "worker_failed",
                f"the process holding the plugins has ended ({self.ended}); the session cannot "
                "call tools any more",
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        self._send(site, _call_request(site))
        state = _CallState()
        while True:
            message = self._next(site, job, deadline)
            reply = state.take(message, judge, self, site)
            if reply is not None:
                return reply

    def _next(self, site: CallSite, job: CallJob, deadline: float | None) -> dict[str, Any]:
        """The next message about the call; the steps it reports are kept for the message if
        it never ends."""
        __tracebackhide__ = True  # pytest shows the test, not the harness
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            try:
                message = self.transport.receive(left)
            except ChannelTimeout:
                self._end("killed after the call's time ran out")
                raise TimedOut from None
            except ChannelBroken as exc:
                raise self._broken(str(exc), site.at) from None
            if message is None:
                status = self._end()
                raise site.at.error(
                    "aborted",
                    f"{job.what} ended the process holding the plugins ({status}); code run "
                    "during a session must never end the interpreter",
                )
            if message.get("op") != "step":
                return message
            job.what = str(message.get("what"))[:200]

    def _send(self, site: CallSite, message: dict[str, Any]) -> None:
        try:
            self.transport.send(message)
        except ChannelBroken as exc:
            raise self._broken(str(exc), site.at) from None

    def _broken(self, why: str, at: Step | None = None) -> HarnessError:
        status = self._end()
        message = f"the process holding the plugins broke the harness's protocol: {why} ({status})"
        return at.error("worker_failed", message) if at else HarnessError("worker_failed", message)

    def _end(self, how: str | None = None) -> str:
        if self.ended is None:
            self.transport.kill()
            self.ended = how or self.transport.close()
        return self.ended

    def close(self) -> None:
        if self.ended is None:
            self.ended = self.transport.close()
        self.registry.close()

    def report(self, error: HarnessError) -> None:
        """Tell the judge of a .py playbook that the session failed, if there is one."""
        report = getattr(self.transport, "report", None)
        if report is not None:
            report(error)


def _call_request(site: CallSite) -> dict[str, Any]:
    return {
        "op": "call",
        "tool": site.tool,
        "params": site.params,
        "tool_call_id": site.tool_call_id,
        "turn": site.at.turn,
        "action": site.at.action,
        "where": site.at.where,
        "validate": site.validate,
        "expect_error": site.expect_error,
    }


class _CallState:
    """What the judge saw of one call so far: whether it was recorded, what it decided."""

    def __init__(self) -> None:
        self.recorded = False
        #: a failure decided here while the call ran (a mock's): it stands, whatever comes back
        self.failure: HarnessError | None = None

    def take(
        self, message: dict[str, Any], judge: Judge, plugins: RemotePlugins, site: CallSite
    ) -> Outcome | None:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        op = message.get("op")
        if op == "called":
            if not self.recorded:
                self.recorded = True
                judge.called(_block(message.get("block"), plugins, site))
        elif op == "mock":
            self._mock(judge, plugins, site)
        elif op == "ui":
            plugins._send(site, _answer_ui(plugins.ui, message))
        elif op == "sample":
            plugins._send(site, _answer_sample(plugins.sample, message))
        elif op in ("outcome", "failure"):
            return self._end(message, judge, plugins, site)
        else:
            raise plugins._broken(f"unexpected message {str(op)[:40]!r}", site.at)
        return None

    def _mock(self, judge: Judge, plugins: RemotePlugins, site: CallSite) -> None:
        try:
            result = judge.mock()
        except HarnessError as exc:
            self.failure = self.failure or exc
            plugins._send(site, {"op": "mock_failure", "error": exc.to_json()})
        else:
            plugins._send(site, {"op": "mock_result", "result": result.to_json()})

    def _end(
        self, message: dict[str, Any], judge: Judge, plugins: RemotePlugins, site: CallSite
    ) -> Outcome:
        __tracebackhide__ = True  # pytest shows the test, not the harness
        if self.failure is not None:
            raise self.failure
        if message["op"] == "failure":
            raise _error(message.get("error"), "worker_failed")
        try:
            outcome = Outcome(
                _block(message.get("block"), plugins, site),
                _result(message.get("result")),
                bool(message.get("mocked")),
                float(message.get("seconds") or 0.0),
                bool(message.get("plugin_ran")),
            )
        except (ResultShapeError, TypeError, ValueError, IndexError) as exc:
            raise plugins._broken(f"a malformed outcome ({exc})", site.at) from None
        if not self.recorded:
            self.recorded = True
            judge.called(outcome.block)
        return outcome


def _block(value: Any, plugins: RemotePlugins, site: CallSite) -> tuple[str, str] | None:
    """Who blocked the call and why, as reported; anything but a pair breaks the protocol."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    if not value:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise plugins._broken(f"a malformed block {str(value)[:80]!r}", site.at)
    return str(value[0]), str(value[1])


def _answer_ui(ui: MockUI, message: dict[str, Any]) -> dict[str, Any]:
    """The session's mocked user answers a question a tool asked, and records it."""
    method, args = message.get("method"), message.get("args")
    if method not in _UI_METHODS or not isinstance(args, list):
        return {"op": "ui_failure", "error": {"code": "worker_failed", "message": "bad UI call"}}
    try:
        answer = getattr(ui, str(method))(*args)
    except HarnessError as exc:
        return {"op": "ui_failure", "error": exc.to_json()}
    except TypeError as exc:
        return {"op": "ui_failure", "error": {"code": "ui_invalid", "message": str(exc)}}
    return {"op": "ui_answer", "answer": answer}


_UI_METHODS: Sequence[str] = (
    "confirm",
    "select",
    "input",
    "editor",
    "elicit",
    "notify",
    "set_status",
    "set_widget",
)


def _answer_sample(sample: Any, message: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"op": "answer", "value": sample(dict(message.get("params") or {}))}
    except HarnessError as exc:
        return {"op": "refused", "error": exc.to_json()}
