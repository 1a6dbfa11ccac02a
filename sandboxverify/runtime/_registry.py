"""What every host fills: the tools and event handlers plugins registered, in one registry.

Hosts put callable tools here whatever their dialect (a native ``setup(api)``, an llm hook, an
MCP server's ``tools/list``), so the harness runs them all the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from sandboxverify.runtime._schema import JsonSchema

Handler = Callable[[Any], Any]


class PluginRegistrationError(Exception):
    """A plugin used the host API wrongly while registering."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a plugin registered it."""

    name: str
    fn: Callable[..., Any]
    description: str | None
    parameters: JsonSchema
    plugin: str
    wants_ctx: bool

    def describe(self) -> dict[str, Any]:
        """The JSON-serialisable part, as reported by the probe."""
        return {
            "name": self.name,
            "kind": "tool",
            "description": self.description,
            "parameters": self.parameters,
        }


@dataclass(frozen=True)
class HandlerSpec:
    event: str
    handler: Handler
    plugin: str


@dataclass
class Registry:
    """Tools and event handlers registered by every plugin loaded into one host."""

    tools: dict[str, ToolSpec] = field(default_factory=dict)
    handlers: list[HandlerSpec] = field(default_factory=list)
    #: what loading left running (an MCP server process): closed, newest first, by close()
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        while self.closers:
            self.closers.pop()()

    def add_tool(self, spec: ToolSpec) -> None:
        existing = self.tools.get(spec.name)
        if existing is not None:
            owner = (
                "this plugin" if existing.plugin == spec.plugin else f"plugin {existing.plugin!r}"
            )
            raise PluginRegistrationError(
                f"tool {spec.name!r} is already registered by {owner}; tool names must be unique"
            )
        self.tools[spec.name] = spec

    def handlers_for(self, event: str) -> list[HandlerSpec]:
        return [spec for spec in self.handlers if spec.event == event]

    def tools_of(self, plugin: str) -> list[ToolSpec]:
        return [spec for spec in self.tools.values() if spec.plugin == plugin]
