"""What every host fills: the tools and event handlers plugins registered, in one registry.

Hosts put callable tools here whatever their dialect (a native ``setup(api)``, an llm hook, an
MCP server's ``tools/list``), so the harness runs them all the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from typing import Final

    from sandboxverify.runtime._schema import JsonSchema

Handler = Callable[[Any], Any]

# Plain classes, not dataclasses: every plugin load fills a registry, and ``dataclasses`` (which
# imports ``inspect``) costs a load's start-up more than these few lines.


class PluginRegistrationError(Exception):
    """A plugin used the host API wrongly while registering."""


class ToolSpec:
    """A tool as a plugin registered it."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        description: str | None,
        parameters: JsonSchema,
        *,
        plugin: str,
        wants_ctx: bool,
    ) -> None:
        self.name: Final = name
        self.fn: Final = fn
        self.description: Final = description
        self.parameters: Final = parameters
        self.plugin: Final = plugin
        self.wants_ctx: Final = wants_ctx

    def describe(self) -> dict[str, Any]:
        """The JSON-serialisable part, as reported by the probe."""
        return {
            "name": self.name,
            "kind": "tool",
            "description": self.description,
            "parameters": self.parameters,
        }


class HandlerSpec:
    def __init__(self, event: str, handler: Handler, plugin: str) -> None:
        self.event: Final = event
        self.handler: Final = handler
        self.plugin: Final = plugin


class Registry:
    """Tools and event handlers registered by every plugin loaded into one host."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolSpec] = {}
        self.handlers: list[HandlerSpec] = []
        #: what loading left running (an MCP server process): closed, newest first, by close()
        self.closers: list[Callable[[], None]] = []

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
