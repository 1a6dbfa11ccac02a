"""A scripted MCP server over stdio for the client's tests (stdlib only).

``python mcp_fake_server.py MODE``; modes:

- ``normal``: a well-behaved server; its tools come in two pages (see ``PAGES``);
- ``garbage``: prints a line that is not JSON to stdout before answering anything;
- ``exit``: writes 12 kB to stderr and exits with code 3 before reading anything;
- ``silent``: reads requests and never answers;
- ``old``: answers ``initialize`` with protocol version 2024-11-05;
- ``future``: answers ``initialize`` with an unknown protocol version;
- ``init-error``: answers ``initialize`` with a JSON-RPC error;
- ``cursor-loop``: ``tools/list`` always points to the same next page;
- ``duplicate``: lists the tool ``add`` twice.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

TOOL_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
PAGES: list[list[dict[str, Any]]] = [
    [
        {"name": "add", "description": "Add two integers", "inputSchema": TOOL_SCHEMA},
        {"name": "echo", "description": "Echo text back"},
        {"name": "fail", "description": "Always fails"},
        {"name": "structured", "description": "Structured content only"},
        {"name": "mixed", "description": "An image, text and structured content"},
    ],
    [
        {"name": "ask", "description": "Asks the client: ping, elicitation, sampling"},
        {"name": "ask_unknown", "description": "Sends the client a request it cannot know"},
        {"name": "handshake", "description": "What the client sent while initializing"},
        {"name": "sleep", "description": "Sleeps"},
        {"name": "garbage", "description": "Prints a non-JSON line"},
        {"name": "die", "description": "Exits while answering"},
    ],
]
PIXEL = "iVBORw0KGgo="


class Server:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        #: what the client sent: initialize params, the initialized notification, the answers
        #: to the last ``ask``
        self.handshake: dict[str, Any] = {"initialize": None, "initialized": False, "asked": None}
        self.pending: list[dict[str, Any]] = []
        self.next_id = 0

    # -- wire ---------------------------------------------------------------------------------
    def write(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def read(self) -> dict[str, Any] | None:
        if self.pending:
            return self.pending.pop(0)
        line = sys.stdin.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        return message

    def ask_client(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send the client a request and read until its answer; other messages wait."""
        self.next_id += 1
        request_id = f"srv-{self.next_id}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)
        while True:
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == request_id and "method" not in answer:
                return answer
            self.pending.append(answer)

    # -- dispatch -----------------------------------------------------------------------------
    def serve(self) -> None:
        if self.mode == "exit":
            sys.stderr.write("noise " * 2000 + "\n")
            sys.stderr.write("fatal: missing configuration FAKE_HOME\n")
            sys.stderr.flush()
            sys.exit(3)
        if self.mode == "garbage":
            print("Starting fake server v1.0 ...", flush=True)
        while True:
            message = self.read()
            if message is None:
                return
            if "method" not in message:
                continue
            if "id" not in message:
                if message["method"] == "notifications/initialized":
                    self.handshake["initialized"] = True
                continue
            if self.mode == "silent":
                continue
            self.respond(message)

    def respond(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = self.handle(message["method"], message.get("params") or {})
        except LookupError as exc:
            reply["error"] = {"code": exc.args[0], "message": exc.args[1]}
        self.write(reply)

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            if self.mode == "init-error":
                raise LookupError(-32602, "Unsupported client")
            self.handshake["initialize"] = params
            version = {"old": "2024-11-05", "future": "2099-01-01"}.get(
                self.mode, params["protocolVersion"]
            )
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1.0"},
            }
        if method == "tools/list":
            return self.list_tools(params.get("cursor"))
        if method == "tools/call":
            return self.call(params["name"], params.get("arguments") or {})
        raise LookupError(-32601, "Method not found")

    def list_tools(self, cursor: str | None) -> dict[str, Any]:
        if self.mode == "cursor-loop":
            return {"tools": [{"name": f"t{cursor}"}], "nextCursor": "again"}
        if self.mode == "duplicate":
            return {"tools": [PAGES[0][0], PAGES[0][0]]}
        if cursor is None:
            return {"tools": PAGES[0], "nextCursor": "page-2"}
        if cursor == "page-2":
            return {"tools": PAGES[1]}
        raise LookupError(-32602, f"Invalid cursor {cursor!r}")

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        def text(value: str, **extra: Any) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": value}], **extra}

        if name == "add":
            return text(str(arguments["a"] + arguments["b"]))
        if name == "echo":
            return {"content": [{"type": "text", "text": arguments.get("text", ""), "x": 1}]}
        if name == "fail":
            return text("the tool failed on purpose", isError=True)
        if name == "structured":
            return {"content": [], "structuredContent": {"total": 3, "items": ["a", "b"]}}
        if name == "mixed":
            image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
            return {"content": [image, {"type": "text", "text": "see"}], "structuredContent": {}}
        if name == "ask":
            self.write({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
            got = {
                "ping": self.ask_client("ping"),
                "elicit": self.ask_client(
                    "elicitation/create",
                    {"message": "Your name?", "requestedSchema": {"type": "object"}},
                ),
                "sample": self.ask_client(
                    "sampling/createMessage",
                    {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
                ),
            }
            self.handshake["asked"] = got
            return text(json.dumps(got))
        if name == "ask_unknown":
            answer = self.ask_client("roots/list")
            return text(json.dumps(answer.get("error")))
        if name == "handshake":
            return text(json.dumps(self.handshake))
        if name == "sleep":
            time.sleep(float(arguments.get("seconds", 30)))
            return text("slept")
        if name == "garbage":
            print("DEBUG: computing ...", flush=True)
            return text("done")
        if name == "die":
            sys.stderr.write("Traceback (most recent call last):\nMemoryError: out of memory\n")
            sys.stderr.flush()
            os._exit(7)
        raise LookupError(-32602, f"Unknown tool: {name}")


if __name__ == "__main__":
    Server(sys.argv[1] if len(sys.argv) > 1 else "normal").serve()
