"""The ``mcp`` host: start an MCP server over stdio, list its tools, call them for real.

The entry point's value is the server command; its first word is found in the sandbox's scripts
directory or else on PATH. Each tool the server lists becomes a registry tool that calls it
through an :class:`~sandboxverify.runtime.hosts._mcp_client.McpClient`, bounded by the host
context's timeout; the server runs until the registry closes.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import TYPE_CHECKING, Any, Callable

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import PluginRegistrationError, Registry, ToolSpec
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    ServerFailure,
)
from sandboxverify.runtime.hosts._mcp_client import McpClient

if TYPE_CHECKING:
    from sandboxverify.runtime._results import ToolResult

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def load_mcp(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Start the server ``ref.value`` names, register its tools; it runs until the registry
    closes. Raises :class:`PluginLoadError`."""
    argv = server_command(ref)
    client = McpClient(
        argv,
        timeout=context.timeout,
        elicit=context.elicit,
        sample=context.sample,
        label=os.path.basename(argv[0]),
    )
    try:
        client.start()
        tools = client.list_tools()
    except ServerFailure as exc:
        client.close()
        raise PluginLoadError("server", exc) from exc
    except Exception as exc:  # a responder raised during the handshake
        client.close()
        raise PluginLoadError("setup", exc) from exc
    specs = [
        ToolSpec(
            name=tool["name"],
            fn=_tool_function(client, tool["name"]),
            description=tool["description"] if isinstance(tool.get("description"), str) else None,
            parameters=tool["inputSchema"]
            if isinstance(tool.get("inputSchema"), dict)
            else dict(_EMPTY_SCHEMA),
            plugin=ref.name,
            wants_ctx=False,
        )
        for tool in tools
    ]
    added: list[str] = []
    try:
        for spec in specs:
            registry.add_tool(spec)
            added.append(spec.name)
    except PluginRegistrationError as exc:
        for name in added:
            del registry.tools[name]
        client.close()
        raise PluginLoadError("setup", exc) from exc
    registry.closers.append(client.close)
    return LoadedPlugin(ref=ref, tools=[spec.describe() for spec in specs], handlers={})


def _tool_function(client: McpClient, name: str) -> Callable[..., ToolResult]:
    def call(**arguments: Any) -> ToolResult:
        return client.call_tool(name, arguments)

    call.__name__ = call.__qualname__ = f"mcp_{name}"
    return call


def server_command(ref: EntryPointRef) -> list[str]:
    """``ref.value`` split into words, the first resolved in the sandbox's scripts directory
    (where ``sys.executable`` lives) or else on PATH."""
    posix = os.name != "nt"
    words = [word if posix else word.strip('"') for word in shlex.split(ref.value, posix=posix)]
    if not words:
        raise PluginLoadError("validate", ValueError(f"{ref.name!r} names no server command"))
    scripts = os.path.dirname(os.path.abspath(sys.executable))
    if os.path.dirname(words[0]):
        found = shutil.which(words[0])
    else:
        found = shutil.which(words[0], path=scripts) or shutil.which(words[0])
    if found is None:
        raise PluginLoadError("validate", FileNotFoundError(_not_found(words[0], scripts)))
    return [found, *words[1:]]


def _not_found(command: str, scripts: str) -> str:
    import difflib  # noqa: PLC0415 - only a missing command needs it

    try:
        entries = os.listdir(scripts)
    except OSError:
        entries = []
    names = sorted(
        {
            name[:-4] if name.lower().endswith(".exe") else name
            for name in entries
            if not name.lower().startswith(("activate", "deactivate", "__"))
            and not name.lower().endswith((".bat", ".ps1"))
        }
    )
    close = difflib.get_close_matches(command, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(names[:40]) + (f", ... ({len(names)} in all)" if len(names) > 40 else "")
    return (
        f"MCP server command {command!r} was not found in {scripts} nor on PATH{hint}; "
        f"{scripts} has: {shown or '(nothing)'}"
    )
