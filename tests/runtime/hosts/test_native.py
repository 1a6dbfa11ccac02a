"""The native plugin API: what setup(api) can do, and every misuse failing at the call site."""

from __future__ import annotations

from typing import Any

import pytest

from sandboxverify.runtime import PluginAPI, PluginRegistrationError, Registry


def api(plugin: str = "p", registry: Registry | None = None) -> tuple[PluginAPI, Registry]:
    registry = registry if registry is not None else Registry()
    return PluginAPI(plugin, registry), registry


def test_register_tool_derives_schema_and_description() -> None:
    plugin_api, registry = api()

    def greet(name: str, loud: bool = False) -> str:
        """Greet someone.

        Longer text that is not part of the summary."""
        return name

    plugin_api.register_tool("greet", greet)
    spec = registry.tools["greet"]
    assert spec.description == "Greet someone."
    assert spec.parameters == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "loud": {"type": "boolean", "default": False}},
        "required": ["name"],
        "additionalProperties": False,
    }
    assert spec.plugin == "p"
    assert not spec.wants_ctx


def test_explicit_description_and_schema_win() -> None:
    plugin_api, registry = api()
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    plugin_api.register_tool("search", lambda **kw: kw, description="Search", parameters=schema)
    assert registry.tools["search"].describe() == {
        "name": "search",
        "kind": "tool",
        "description": "Search",
        "parameters": schema,
    }


def test_tool_decorator_both_forms_return_the_function() -> None:
    plugin_api, registry = api()

    @plugin_api.tool
    def add(a: int, b: int) -> int:
        return a + b

    @plugin_api.tool(name="mul", description="Multiply")
    def multiply(a: int, b: int, ctx: Any = None) -> int:
        return a * b

    assert add(1, 2) == 3 and multiply(2, 3) == 6
    assert set(registry.tools) == {"add", "mul"}
    assert registry.tools["mul"].wants_ctx
    assert "ctx" not in registry.tools["mul"].parameters["properties"]


def test_on_accepts_known_events_and_counts_handlers() -> None:
    plugin_api, registry = api()
    plugin_api.on("tool_call", lambda event: None)
    plugin_api.on("tool_result", lambda event: None)
    assert [h.event for h in registry.handlers] == ["tool_call", "tool_result"]
    assert len(registry.handlers_for("tool_call")) == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda a: a.on("tool_cal", lambda e: None),
            "unknown event 'tool_cal' (did you mean 'tool_call'?)",
        ),
        (lambda a: a.on("tool_call", "not callable"), "must be callable"),
        (lambda a: a.register_tool("", lambda: 1), "non-empty string"),
        (lambda a: a.register_tool("x", 42), "expected a callable, got int"),
        (lambda a: a.register_tool("x", lambda: 1, description=3), "description must be a string"),
        (lambda a: a.register_tool("x", lambda: 1, parameters=[]), "must be a JSON Schema object"),
        (
            lambda a: a.register_tool("x", lambda: 1, parameters={"type": "string"}),
            "must describe an object",
        ),
        (
            lambda a: a.register_tool("x", lambda: 1, parameters={"default": object()}),
            "not JSON-serialisable",
        ),
    ],
)
def test_misuse_raises_a_registration_error(call: Any, message: str) -> None:
    plugin_api, _ = api()
    with pytest.raises(PluginRegistrationError) as info:
        call(plugin_api)
    assert message in str(info.value)


def test_positional_only_parameters_cannot_be_tools() -> None:
    plugin_api, _ = api()

    def tool(a: int, /) -> int:
        return a

    with pytest.raises(PluginRegistrationError, match="positional-only"):
        plugin_api.register_tool("t", tool)


def test_duplicates_within_and_across_plugins_name_the_owner() -> None:
    first, registry = api("first")
    second, _ = api("second", registry)
    first.register_tool("search", lambda: 1)
    with pytest.raises(PluginRegistrationError, match="already registered by this plugin"):
        first.register_tool("search", lambda: 2)
    with pytest.raises(PluginRegistrationError, match="already registered by plugin 'first'"):
        second.register_tool("search", lambda: 3)
    assert [spec.name for spec in registry.tools_of("first")] == ["search"]
