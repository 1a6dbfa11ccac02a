"""The ``mcp`` host: a stdio MCP client against a scripted server (``mcp_fake_server.py``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sandboxverify._version import __version__
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry, ToolSpec
from sandboxverify.runtime._results import ToolResult
from sandboxverify.runtime.hosts import HostContext, PluginLoadError, ServerFailure, load_plugin
from sandboxverify.runtime.hosts._jsonrpc import STDERR_TAIL, parse_line
from sandboxverify.runtime.hosts._mcp import load_mcp, server_command
from sandboxverify.runtime.hosts._mcp_client import McpClient, tool_result

SERVER = os.path.join(os.path.dirname(__file__), "mcp_fake_server.py")
PAGE_ONE = ["add", "echo", "fail", "structured", "mixed"]
PAGE_TWO = ["ask", "ask_unknown", "handshake", "sleep", "garbage", "die"]


def ref(mode: str, name: str = "fake") -> EntryPointRef:
    value = " ".join(shlex.quote(word) for word in (sys.executable, SERVER, mode))
    return EntryPointRef(name=name, group="mcp", value=value)


def client_of(registry: Registry) -> McpClient:
    client = registry.closers[-1].__self__  # type: ignore[attr-defined]
    assert isinstance(client, McpClient)
    return client


@pytest.fixture
def registry() -> Iterator[Registry]:
    registry = Registry()
    yield registry
    registry.close()


@pytest.fixture
def client() -> Iterator[McpClient]:
    with McpClient([sys.executable, SERVER, "normal"], timeout=3) as client:
        client.start()
        yield client


def call(registry: Registry, tool: str, **arguments: Any) -> ToolResult:
    result = registry.tools[tool].fn(**arguments)
    assert isinstance(result, ToolResult)
    return result


def load_failure(mode: str, timeout: float = 3) -> ServerFailure:
    registry = Registry()
    with pytest.raises(PluginLoadError) as info:
        load_mcp(ref(mode), registry, HostContext(timeout=timeout))
    assert info.value.stage == "server"
    assert isinstance(info.value.cause, ServerFailure)
    assert registry.tools == {}
    assert registry.closers == []
    return info.value.cause


# -- loading --------------------------------------------------------------------------------
def test_load_registers_every_tool_across_pages_in_order(registry: Registry) -> None:
    loaded = load_plugin("mcp", ref("normal"), registry, HostContext(timeout=3))
    assert [tool["name"] for tool in loaded.tools] == PAGE_ONE + PAGE_TWO
    assert list(registry.tools) == PAGE_ONE + PAGE_TWO
    assert loaded.tools[0] == {
        "name": "add",
        "kind": "tool",
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    }
    assert loaded.tools[1]["parameters"] == {"type": "object", "properties": {}}
    assert loaded.handlers == {}
    spec = registry.tools["echo"]
    assert (spec.plugin, spec.wants_ctx) == ("fake", False)
    assert call(registry, "add", a=2, b=3) == ToolResult.from_text("5")
    assert client_of(registry).protocol_version == "2025-06-18"


def test_the_handshake_declares_only_the_capabilities_it_can_answer(registry: Registry) -> None:
    load_mcp(ref("normal"), registry, HostContext(timeout=3))
    sent = json.loads(call(registry, "handshake").text)
    assert sent["initialized"] is True
    assert sent["initialize"] == {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "sandboxverify", "version": __version__},
    }
    with McpClient(
        [sys.executable, SERVER], timeout=3, elicit=lambda p: {}, sample=lambda p: {}
    ) as client:
        client.start()
        sent = json.loads(client.call_tool("handshake", {}).text)
    assert sent["initialize"]["capabilities"] == {"elicitation": {}, "sampling": {}}


def test_registry_close_ends_the_server(registry: Registry) -> None:
    load_mcp(ref("normal"), registry, HostContext(timeout=3))
    process = client_of(registry).process
    assert process is not None
    assert process.poll() is None
    registry.close()
    assert process.poll() is not None
    assert registry.closers == []


def test_close_is_idempotent_and_ends_a_busy_server() -> None:
    client = McpClient([sys.executable, SERVER], timeout=0.5)
    client.start()
    with pytest.raises(ServerFailure, match="tools/call 'sleep'"):
        client.call_tool("sleep", {"seconds": 60})  # busy: it does not read stdin
    started = time.monotonic()
    client.close()
    client.close()
    assert client.process is not None
    assert client.process.poll() is not None
    assert time.monotonic() - started < 8


def test_an_older_protocol_version_is_accepted(registry: Registry) -> None:
    load_mcp(ref("old"), registry, HostContext(timeout=3))
    assert client_of(registry).protocol_version == "2024-11-05"
    assert call(registry, "add", a=1, b=1).text == "2"


def test_a_tool_name_taken_by_another_plugin_fails_setup(registry: Registry) -> None:
    registry.add_tool(ToolSpec("add", lambda: "", None, {}, plugin="native", wants_ctx=False))
    with pytest.raises(PluginLoadError) as info:
        load_mcp(ref("normal"), registry, HostContext(timeout=3))
    assert info.value.stage == "setup"
    assert "tool 'add' is already registered by plugin 'native'" in str(info.value.cause)
    assert list(registry.tools) == ["add"]
    assert registry.tools["add"].plugin == "native"
    assert registry.closers == []


def test_a_server_listing_a_tool_twice_fails_setup(registry: Registry) -> None:
    with pytest.raises(PluginLoadError) as info:
        load_mcp(ref("duplicate"), registry, HostContext(timeout=3))
    assert info.value.stage == "setup"
    assert "already registered by this plugin" in str(info.value.cause)
    assert registry.tools == {}


# -- the command ----------------------------------------------------------------------------
def test_a_bare_command_runs_from_the_sandbox_scripts_directory() -> None:
    scripts = os.path.dirname(sys.executable)
    name = os.path.basename(sys.executable)
    argv = server_command(EntryPointRef("srv", "console_scripts", f"{name} --flag 'a b'"))
    assert argv == [os.path.join(scripts, name), "--flag", "a b"]


def test_a_missing_command_lists_the_scripts_directory() -> None:
    missing = EntryPointRef("srv", "console_scripts", "pytset --stdio")
    with pytest.raises(PluginLoadError) as info:
        load_mcp(missing, Registry(), HostContext(timeout=3))
    assert info.value.stage == "validate"
    assert isinstance(info.value.cause, FileNotFoundError)
    message = str(info.value.cause)
    assert message.startswith(
        f"MCP server command 'pytset' was not found in {os.path.dirname(sys.executable)} nor on "
        "PATH (did you mean 'pytest'?); "
    )
    listed = message.split("has: ", 1)[1].split(", ")
    # the first 40 scripts, in order, then how many there are in all
    named = [name for name in listed if not name.startswith("...")]
    assert named == sorted(named)
    assert "pytest" in named or (len(named) == 40 and listed[-1].endswith(" in all)"))


def test_an_empty_command_is_a_validation_error() -> None:
    with pytest.raises(PluginLoadError) as info:
        load_mcp(EntryPointRef("srv", "console_scripts", "  "), Registry(), HostContext())
    assert info.value.stage == "validate"


# -- results --------------------------------------------------------------------------------
def test_result_mapping(client: McpClient) -> None:
    assert client.call_tool("echo", {"text": "hi"}) == ToolResult(
        content=({"type": "text", "text": "hi"},)
    )
    failed = client.call_tool("fail", {})
    assert failed.is_error
    assert failed.text == "the tool failed on purpose"
    structured = client.call_tool("structured", {})
    assert structured.details == {"total": 3, "items": ["a", "b"]}
    assert json.loads(structured.text) == {"total": 3, "items": ["a", "b"]}
    assert not structured.is_error
    mixed = client.call_tool("mixed", {})
    assert mixed.content == (
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "text", "text": "see"},
    )
    assert mixed.details == {}
    assert client.call_tool("add", {"a": 1, "b": 2}).details is None


def test_a_jsonrpc_error_from_tools_call_is_an_error_result(client: McpClient) -> None:
    result = client.call_tool("nope", {})
    assert result.is_error
    assert result.text == "MCP error -32602: Unknown tool: nope"
    assert result.details == {"code": -32602, "message": "Unknown tool: nope", "data": None}
    assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"  # the session goes on


def test_malformed_results_are_never_results() -> None:
    with pytest.raises(ValueError, match="'content' is not a list: 'text'"):
        tool_result({"content": "text"})
    with pytest.raises(ValueError, match="a content block without a type"):
        tool_result({"content": [{"text": "untyped"}]})
    with pytest.raises(ValueError, match="'content' is not a list: None"):
        tool_result({})
    assert tool_result({"content": []}) == ToolResult()


# -- the server asks ------------------------------------------------------------------------
def test_server_requests_are_answered_on_the_calling_thread() -> None:
    seen: list[tuple[str, dict[str, Any], threading.Thread]] = []

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(("elicit", params, threading.current_thread()))
        return {"action": "accept", "content": {"name": "Ada"}}

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(("sample", params, threading.current_thread()))
        reply = {"type": "text", "text": "Hello"}
        return {"role": "assistant", "content": reply, "model": "scripted"}

    with McpClient([sys.executable, SERVER], timeout=3, elicit=elicit, sample=sample) as client:
        client.start()
        got = json.loads(client.call_tool("ask", {}).text)
        assert [entry[0] for entry in seen] == ["elicit", "sample"]
        assert seen[0][1] == {"message": "Your name?", "requestedSchema": {"type": "object"}}
        assert all(entry[2] is threading.current_thread() for entry in seen)
        assert got["ping"]["result"] == {}
        assert got["elicit"]["result"] == {"action": "accept", "content": {"name": "Ada"}}
        assert got["sample"]["result"]["content"] == {"type": "text", "text": "Hello"}
        assert [n["method"] for n in client.notifications] == ["notifications/message"]


def test_without_responders_the_server_gets_method_not_found(client: McpClient) -> None:
    got = json.loads(client.call_tool("ask", {}).text)
    assert got["ping"]["result"] == {}
    assert got["elicit"]["error"] == {"code": -32601, "message": "Method not found"}
    assert got["sample"]["error"] == {"code": -32601, "message": "Method not found"}
    unknown = json.loads(client.call_tool("ask_unknown", {}).text)
    assert unknown == {"code": -32601, "message": "Method not found"}


def test_a_responder_that_raises_is_reraised_after_the_call() -> None:
    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        raise LookupError("no mock answer for elicitation")

    with McpClient([sys.executable, SERVER], timeout=3, elicit=elicit) as client:
        client.start()
        with pytest.raises(LookupError, match="no mock answer"):
            client.call_tool("ask", {})
        handshake = json.loads(client.call_tool("handshake", {}).text)  # the call had completed
        assert handshake["asked"]["elicit"]["error"] == {
            "code": -32603,
            "message": "LookupError: no mock answer for elicitation",
        }


# -- failing servers ------------------------------------------------------------------------
def test_a_server_that_exits_at_start() -> None:
    failure = load_failure("exit")
    assert failure.code == "probe_crashed"
    # the request may reach the pipe before the server is gone, or find it closed: one message
    assert re.search(
        r"^MCP server '[^']+' exited with code 3 before answering initialize$", str(failure)
    )
    assert failure.details.endswith("fatal: missing configuration FAKE_HOME\n")
    assert len(failure.details) == STDERR_TAIL


def test_a_server_that_prints_to_stdout_at_start() -> None:
    failure = load_failure("garbage")
    assert failure.code == "probe_crashed"
    assert "'Starting fake server v1.0 ...'" in str(failure)
    assert "must carry only JSON-RPC messages (logs belong on stderr)" in str(failure)


def test_a_server_that_never_answers_times_out() -> None:
    started = time.monotonic()
    failure = load_failure("silent", timeout=1)
    assert failure.code == "timeout"
    assert str(failure).endswith("did not answer initialize within 1s")
    assert time.monotonic() - started < 8


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("future", "answered initialize with protocolVersion '2099-01-01', which this client"),
        ("init-error", "answered initialize with an error: MCP error -32602: Unsupported client"),
        ("cursor-loop", "answered tools/list with nextCursor 'again' again (a pagination loop)"),
    ],
)
def test_protocol_failures_at_load(mode: str, message: str) -> None:
    failure = load_failure(mode)
    assert failure.code == "probe_crashed"
    assert message in str(failure)


def test_a_server_that_dies_during_a_call(registry: Registry) -> None:
    load_mcp(ref("normal"), registry, HostContext(timeout=3))
    with pytest.raises(ServerFailure) as info:
        call(registry, "die")
    assert info.value.code == "probe_crashed"
    assert str(info.value).endswith("exited with code 7 before answering tools/call 'die'")
    assert "MemoryError: out of memory" in info.value.details
    with pytest.raises(ServerFailure, match="exited with code 7"):
        call(registry, "add", a=1, b=2)  # later calls fail fast


def test_a_server_that_prints_to_stdout_during_a_call(registry: Registry) -> None:
    load_mcp(ref("normal"), registry, HostContext(timeout=3))
    with pytest.raises(ServerFailure, match=re.escape("'DEBUG: computing ...'")) as info:
        call(registry, "garbage")
    assert info.value.code == "probe_crashed"


def test_a_slow_call_times_out_and_later_answers_are_not_mixed_up() -> None:
    with McpClient([sys.executable, SERVER], timeout=1) as client:
        client.start()
        with pytest.raises(ServerFailure) as info:
            client.call_tool("sleep", {"seconds": 1.5})
        assert info.value.code == "timeout"
        assert str(info.value).endswith("did not answer tools/call 'sleep' within 1s")
        assert client.call_tool("add", {"a": 4, "b": 4}).text == "8"


# -- the wire -------------------------------------------------------------------------------
def test_parse_line() -> None:
    ok = b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n'
    assert [item.kind for item in parse_line(ok)] == ["message"]
    batch = b'[{"jsonrpc": "2.0", "method": "a"}, {"jsonrpc": "2.0", "method": "b"}]'
    assert [item.message for item in parse_line(batch)] == [
        {"jsonrpc": "2.0", "method": "a"},
        {"jsonrpc": "2.0", "method": "b"},
    ]
    assert parse_line(b"  \n") == []
    for bad in (b"hello", b'{"id": 1, "result": {}}', b'{"jsonrpc": "2.0"}', b"[]", b"3"):
        assert [item.kind for item in parse_line(bad)] == ["garbage"], bad
