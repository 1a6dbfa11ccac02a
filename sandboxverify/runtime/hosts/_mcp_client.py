"""An MCP client over stdio: start a server, do the handshake, list its tools, call them.

The client speaks MCP 2025-06-18 (and accepts a server that answers 2025-03-26 or 2024-11-05).
One request is in flight at a time; while it waits, the same thread answers what the server asks
(``ping``, ``elicitation/create``, ``sampling/createMessage``), so responders run on the
caller's thread. Every wait is bounded by the client's timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from sandboxverify._version import __version__
from sandboxverify.runtime.hosts._base import Responder, ServerFailure
from sandboxverify.runtime.hosts._jsonrpc import StdioConnection, describe_exit

if TYPE_CHECKING:
    from sandboxverify.runtime._results import ToolResult

#: protocol revisions this client understands, newest (the one it asks for) first
KNOWN_PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
PROTOCOL_VERSION = KNOWN_PROTOCOL_VERSIONS[0]
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: server notifications kept (logging, progress, list_changed), newest last
MAX_NOTIFICATIONS = 200
_MAX_PAGES = 1000
#: seconds a server gets to exit after its stdin closes, and again after SIGTERM
_GRACE = 2.0
_NO_GRACE = 0.2
FailureCode = Literal["probe_crashed", "timeout"]


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"MCP error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class McpClient:
    """One session with one MCP server started as a subprocess; close it when done."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 60.0,
        elicit: Responder | None = None,
        sample: Responder | None = None,
        label: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.label = label or os.path.basename(self.argv[0])
        self.timeout = timeout
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.notifications: deque[dict[str, Any]] = deque(maxlen=MAX_NOTIFICATIONS)
        self._responders: dict[str, Responder | None] = {
            "elicitation/create": elicit,
            "sampling/createMessage": sample,
        }
        self._connection: StdioConnection | None = None
        self._lock = threading.Lock()
        self._next_id = 0
        self._responder_errors: list[BaseException] = []
        self._broken: ServerFailure | None = None
        self._unresponsive = False

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server process, once started."""
        return self._connection.process if self._connection is not None else None

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the protocol -----------------------------------------------------------------------
    def start(self) -> None:
        """Start the server and do the handshake; raises :class:`ServerFailure`."""
        try:
            self._connection = StdioConnection(self.argv)
        except OSError as exc:
            raise ServerFailure(
                f"could not start MCP server {self.label!r}: {exc}", code="probe_crashed"
            ) from exc
        capabilities: dict[str, Any] = {}
        if self._responders["elicitation/create"] is not None:
            capabilities["elicitation"] = {}
        if self._responders["sampling/createMessage"] is not None:
            capabilities["sampling"] = {}
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "sandboxverify", "version": __version__},
        }
        try:
            result = self.request("initialize", params)
        except RpcError as exc:
            raise self._failure(f"answered initialize with an error: {exc}") from None
        version = result.get("protocolVersion")
        if version not in KNOWN_PROTOCOL_VERSIONS:
            raise self._failure(
                f"answered initialize with protocolVersion {version!r}, which this client does "
                f"not speak (it speaks {', '.join(KNOWN_PROTOCOL_VERSIONS)})"
            )
        self.protocol_version = str(version)
        info, caps = result.get("serverInfo"), result.get("capabilities")
        self.server_info = info if isinstance(info, dict) else {}
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        self.notify("notifications/initialized")

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor`` across pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            try:
                page = self.request("tools/list", {"cursor": cursor} if cursor else {})
            except RpcError as exc:
                hint = "" if "tools" in self.server_capabilities else " (it declares no tools)"
                raise self._failure(f"answered tools/list with an error: {exc}{hint}") from None
            listed = page.get("tools")
            if not isinstance(listed, list):
                raise self._failure(f"answered tools/list without a 'tools' list: {page!r:.200}")
            for tool in listed:
                if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                    raise self._failure(f"listed a tool without a name: {tool!r:.200}")
                tools.append(tool)
            cursor = page.get("nextCursor")
            if cursor is None:
                return tools
            if not isinstance(cursor, str) or cursor in seen:
                raise self._failure(
                    f"answered tools/list with nextCursor {cursor!r} again (a pagination loop)"
                    if cursor in seen
                    else f"answered tools/list with a nextCursor that is not a string: {cursor!r}"
                )
            seen.add(cursor)
        raise self._failure(f"listed tools over more than {_MAX_PAGES} pages")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """``tools/call``; a JSON-RPC error answer is an error result; a dead server or a result
        the protocol does not allow raises :class:`ServerFailure`."""
        # only a call makes a result (loading the server lists its tools and calls none), and
        # _results would bring dataclasses, with inspect, into every MCP load
        from sandboxverify.runtime._results import ToolResult  # noqa: PLC0415

        try:
            result = self.request(
                "tools/call", {"name": name, "arguments": arguments}, what=f"tools/call {name!r}"
            )
        except RpcError as exc:
            details = {"code": exc.code, "message": exc.message, "data": exc.data}
            return ToolResult.from_text(str(exc), is_error=True, details=details)
        try:
            return tool_result(result)
        except ValueError as exc:
            raise self._failure(
                f"answered tools/call {name!r} with a malformed result: {exc}"
            ) from None

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message, method)

    def request(
        self, method: str, params: dict[str, Any], *, what: str | None = None
    ) -> dict[str, Any]:
        """Send one request and wait for its answer, answering the server's own requests
        meanwhile. Raises :class:`RpcError` for an error answer, :class:`ServerFailure` when the
        server dies, speaks something else or stays silent, or what a responder raised."""
        what = what or method
        if not self._lock.acquire(timeout=self.timeout):
            raise self._failure(f"{what}: an earlier request is still waiting", code="timeout")
        try:
            self._next_id += 1
            request_id = self._next_id
            # a server that ended before answering reads alike whether its pipe closed while
            # the request was written or while its answer was awaited: that is a race
            self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                what,
                doing=f"before answering {what}",
            )
            try:
                answer = self._wait(request_id, what)
            except ServerFailure as failure:
                if self._responder_errors:  # keep what a responder raised along the way
                    raise failure from self._take_responder_error()
                raise
            if self._responder_errors:  # the server answered; now what a responder raised
                raise self._take_responder_error()
        finally:
            self._lock.release()
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            code = error.get("code")
            raise RpcError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(error.get("message", "(no message)")),
                error.get("data"),
            )
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    # -- the wait loop ----------------------------------------------------------------------
    def _wait(self, request_id: int, what: str) -> dict[str, Any]:
        connection = self._require_connection()
        deadline = time.monotonic() + self.timeout
        while True:
            item = connection.receive(deadline - time.monotonic())
            if item is None:
                self._unresponsive = True
                raise self._failure(
                    f"did not answer {what} within {self.timeout:g}s", code="timeout"
                )
            if item.kind == "eof":
                raise self._gone(f"before answering {what}")
            if item.kind == "garbage":
                self._broken = self._failure(
                    f"wrote a line to stdout that is not a JSON-RPC message: {item.line[:200]!r}; "
                    "stdout of an MCP stdio server must carry only JSON-RPC messages "
                    "(logs belong on stderr)"
                )
                raise self._broken
            message = item.message or {}
            if "method" in message and "id" in message:
                began = time.monotonic()
                self._answer(message)
                deadline += time.monotonic() - began  # the responder's time is not the server's
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == request_id or (
                message.get("id") is None and "error" in message
            ):
                return message
            # else: a late answer to a request that timed out earlier

    def _answer(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        responder = self._responders.get(method)
        if method == "ping":
            reply["result"] = {}
        elif responder is None:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
        elif not isinstance(params, dict):
            reply["error"] = {"code": INVALID_PARAMS, "message": "params must be an object"}
        else:
            try:
                result = responder(params)
                if not isinstance(result, dict):
                    raise TypeError(f"the {method} responder returned {type(result).__name__}")
                reply["result"] = result
            except Exception as exc:
                self._responder_errors.append(exc)
                reply["error"] = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
        self._send(reply, method)

    # -- plumbing ---------------------------------------------------------------------------
    def _take_responder_error(self) -> BaseException:
        error = self._responder_errors[0]
        self._responder_errors.clear()
        return error

    def _send(self, message: dict[str, Any], what: str, *, doing: str | None = None) -> None:
        connection = self._require_connection()
        try:
            connection.send(message)
        except OSError:
            raise self._gone(doing or f"while sending {what}") from None

    def _require_connection(self) -> StdioConnection:
        if self._broken is not None:
            raise self._broken
        if self._connection is None:
            raise RuntimeError("the MCP client is not started")
        return self._connection

    def _gone(self, doing: str) -> ServerFailure:
        """The server closed stdout or stdin: report how it ended; later requests fail fast."""
        connection = self._require_connection()
        returncode = connection.wait_exit(1.0)
        how = "closed its stdout" if returncode is None else describe_exit(returncode)
        self._broken = self._failure(f"{how} {doing}", settle=1.0)
        return self._broken

    def _failure(
        self, what: str, *, code: FailureCode = "probe_crashed", settle: float = 0.0
    ) -> ServerFailure:
        tail = self._connection.stderr_tail(settle) if self._connection is not None else ""
        return ServerFailure(f"MCP server {self.label!r} {what}", code=code, details=tail)

    def close(self) -> None:
        """End the server (close stdin, terminate, kill); idempotent. A server that stopped
        answering gets no grace: the report (with its stderr) must not wait on it."""
        if self._connection is not None:
            self._connection.close(grace=_NO_GRACE if self._unresponsive else _GRACE)


def tool_result(result: dict[str, Any]) -> ToolResult:
    """A ``tools/call`` result as a :class:`ToolResult`; raises :class:`ValueError` for one the
    protocol does not allow (it must never pass as a result)."""
    from sandboxverify.runtime._results import ToolResult  # noqa: PLC0415 - see call_tool

    content = result.get("content")
    if not isinstance(content, list):
        raise ValueError(f"'content' is not a list: {content!r:.200}")
    blocks: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError(f"a content block without a type: {block!r:.200}")
        if block["type"] == "text":
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
        else:
            blocks.append(dict(block))
    structured = result.get("structuredContent")
    if structured is not None and not any(block["type"] == "text" for block in blocks):
        text = json.dumps(structured, ensure_ascii=False, sort_keys=True)
        blocks.insert(0, {"type": "text", "text": text})
    return ToolResult(
        content=tuple(blocks), details=structured, is_error=result.get("isError") is True
    )
