"""The process that holds a session's plugins: it loads them, and runs calls when asked.

Started by the judge of a session (``_remote``) with two pipe ends of its own, it reads
requests and answers them, one at a time: ``load`` (the plugins, into a fresh registry: every
session starts from fresh plugin modules), ``call`` (hooks, execution, result hooks, as
``_plugin_calls`` runs them), ``close``. Whatever a tool needs from the session (a mock's
result, a UI answer, a sampling answer) it asks the judge, which keeps the record. Nothing the
verdict depends on is here: code that patches this process only changes what it reports about
its own calls, and the judge decides from that.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime._results import ResultShapeError, ToolResult, from_full_result
from sandboxverify.runtime.harness._channel import Channel, ChannelBroken
from sandboxverify.runtime.harness._errors import HarnessError, Step
from sandboxverify.runtime.harness._guards import watching_exits
from sandboxverify.runtime.harness._plugin_calls import CallSite, Outcome, PluginCalls
from sandboxverify.runtime.harness._plugins import load_plugins
from sandboxverify.runtime.harness._worker import CallJob
from sandboxverify.runtime.hosts import HostContext


class _Stopped(Exception):
    """The judge asked this process to end, or went away, while a call was running."""


class _Link:
    """Asking the judge something in the middle of a call, and reading its answer."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.channel.send(message)
        answer = self.channel.receive()
        if answer is None or answer.get("op") == "close":
            raise _Stopped
        return answer

    def tell(self, message: dict[str, Any]) -> None:
        self.channel.send(message)


class RemoteUI:
    """``ctx.ui`` here: every question goes to the judge, whose mocks answer and record it."""

    def __init__(self, link: _Link) -> None:
        self._link = link
        self.failure: HarnessError | None = None

    def located(self, where: str) -> None:
        del where  # the judge knows where the call is

    def take_failure(self) -> HarnessError | None:
        failure, self.failure = self.failure, None
        return failure

    def _ask(self, method: str, *args: Any) -> Any:
        answer = self._link.ask({"op": "ui", "method": method, "args": list(args)})
        if answer.get("op") == "ui_failure":
            error = _error(answer.get("error"))
            self.failure = self.failure or error
            raise error
        return answer.get("answer")

    def confirm(self, title: str, message: str = "") -> bool:
        return bool(self._ask("confirm", title, message))

    def select(self, title: str, items: Any) -> str | None:
        answer = self._ask("select", title, list(items))
        return None if answer is None else str(answer)

    def input(self, title: str, placeholder: str | None = None) -> str | None:
        answer = self._ask("input", title, placeholder)
        return None if answer is None else str(answer)

    def editor(self, title: str, prefilled: str | None = None) -> str | None:
        answer = self._ask("editor", title, prefilled)
        return None if answer is None else str(answer)

    def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        return dict(self._ask("elicit", params))

    def notify(self, message: str, level: str = "info") -> None:
        self._ask("notify", message, level)

    def set_status(self, key: str, value: Any) -> None:
        self._ask("set_status", key, value)

    def set_widget(self, key: str, lines: Any) -> None:
        self._ask("set_widget", key, lines)


class _AskingJudge:
    """The judge of one call, asked over the channel (see ``_plugin_calls.Judge``)."""

    def __init__(self, link: _Link) -> None:
        self._link = link

    def called(self, block: tuple[str, str] | None) -> None:
        self._link.tell({"op": "called", "block": list(block) if block else None})

    def mock(self) -> ToolResult:
        answer = self._link.ask({"op": "mock"})
        if answer.get("op") != "mock_result":
            raise _error(answer.get("error"))
        try:
            return from_full_result(answer.get("result") or {})
        except ResultShapeError as exc:
            raise HarnessError("worker_failed", f"the judge sent a malformed mock: {exc}") from None


class _ReportingJob(CallJob):
    """A call's job that tells the judge what it is at, for the message if it never ends."""

    def __init__(self, what: str, link: _Link) -> None:
        super().__init__(what)
        self._link = link

    def step(self, what: str) -> None:
        super().step(what)
        self._link.tell({"op": "step", "what": what})


def _error(data: Any) -> HarnessError:
    """A harness failure the judge sent (it decided it; this side only carries it)."""
    data = data if isinstance(data, dict) else {}
    return HarnessError(
        str(data.get("code") or "worker_failed"),
        str(data.get("message") or "the judge refused without a reason"),
        turn=data.get("turn"),
        action=data.get("action"),
        details=data.get("details"),
    )


def main(argv: list[str]) -> None:
    """``argv``: the pipe ends to read requests from and to write answers to."""
    channel = Channel.over_fds(int(argv[0]), int(argv[1]), name="plugins")
    link = _Link(channel)
    try:
        with watching_exits():  # os._exit in plugin code fails its call, not this process
            _serve(link)
    except (_Stopped, ChannelBroken):
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    # plugin code may leave threads or atexit hooks behind: the judge has its answers
    os._exit(0)


def _serve(link: _Link) -> None:
    request = link.channel.receive()
    if request is None or request.get("op") != "load":
        return
    ui = RemoteUI(link)
    registry = Registry()
    try:
        loaded = _load(request, registry, ui, link)
        link.tell(loaded)
        if loaded["op"] != "loaded":
            return
        calls = PluginCalls(
            registry, ui, str(request.get("cwd") or os.getcwd()), has_ui=bool(request["has_ui"])
        )
        while True:
            request = link.channel.receive()
            if request is None or request.get("op") != "call":
                break
            link.tell(_call(calls, request, link))
    finally:
        registry.close()
    link.tell({"op": "closed"})


def _load(request: dict[str, Any], registry: Registry, ui: RemoteUI, link: _Link) -> dict[str, Any]:
    sys.path[:] = [str(entry) for entry in request["sys_path"]]

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        answer = link.ask({"op": "sample", "params": params})
        if answer.get("op") != "answer":
            raise _error(answer.get("error"))
        return dict(answer.get("value") or {})

    try:
        plugins, failures = load_plugins(
            request["plugins"],
            dist=request.get("dist"),
            group=request["group"],
            registry=registry,
            host=request["host"],
            context=HostContext(timeout=float(request["timeout"]), elicit=ui.elicit, sample=sample),
            names=request.get("names") or {},
        )
    except HarnessError as exc:
        return {"op": "failure", "error": exc.to_json()}
    return {
        "op": "loaded",
        "plugins": plugins,
        "load_errors": [vars(failure) for failure in failures],
        "tools": [
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
                "plugin": spec.plugin,
                "wants_ctx": spec.wants_ctx,
            }
            for spec in registry.tools.values()
        ],
        "handlers": [[handler.event, handler.plugin] for handler in registry.handlers],
    }


def _call(calls: PluginCalls, request: dict[str, Any], link: _Link) -> dict[str, Any]:
    at = Step(int(request["turn"]), int(request["action"]), str(request["where"]))
    site = CallSite(
        str(request["tool"]),
        dict(request["params"]),
        str(request["tool_call_id"]),
        at,
        validate=bool(request.get("validate", True)),
    )
    started = time.perf_counter()
    try:
        outcome: Outcome = calls.run(site, _ReportingJob(repr(site.tool), link), _AskingJudge(link))
    except HarnessError as exc:
        return {"op": "failure", "error": exc.to_json()}
    return {
        "op": "outcome",
        "block": list(outcome.block) if outcome.block else None,
        "result": outcome.result.to_json(),
        "mocked": outcome.mocked,
        "seconds": outcome.seconds or time.perf_counter() - started,
        "plugin_ran": outcome.plugin_ran,
    }
