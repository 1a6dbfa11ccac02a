"""The ``native`` host: the object a plugin's ``setup(api)`` receives, and loading one plugin.

The protocol is duck-typed: plugins never import ``sandboxverify``. Mistakes a plugin makes while
registering (an unknown event name, a duplicate tool, a non-callable) raise
:class:`PluginRegistrationError` at the call site, so they surface as a load failure of that
plugin instead of a silent no-op.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable, TypeVar, overload

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import (
    Handler,
    HandlerSpec,
    PluginRegistrationError,
    Registry,
    ToolSpec,
)
from sandboxverify.runtime._schema import JsonSchema, schema_from_signature, wants_context
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    require_callable,
    resolve,
)

#: Events a plugin may subscribe to with ``api.on``.
EVENTS = ("tool_call", "tool_result")

F = TypeVar("F", bound=Callable[..., Any])


class PluginAPI:
    """What ``setup(api)`` receives: ``register_tool``, the ``tool`` decorator and ``on``."""

    def __init__(self, plugin: str, registry: Registry) -> None:
        self._plugin = plugin
        self._registry = registry

    def register_tool(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        description: str | None = None,
        parameters: JsonSchema | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise PluginRegistrationError(f"tool name must be a non-empty string, got {name!r}")
        if not callable(fn):
            raise PluginRegistrationError(
                f"tool {name!r}: expected a callable, got {type(fn).__name__}"
            )
        if description is not None and not isinstance(description, str):
            raise PluginRegistrationError(
                f"tool {name!r}: description must be a string, got {type(description).__name__}"
            )
        if parameters is None:
            try:
                parameters = schema_from_signature(fn, tool_name=name)
            except TypeError as exc:
                raise PluginRegistrationError(str(exc)) from None
        else:
            _check_schema(name, parameters)
        self._registry.add_tool(
            ToolSpec(
                name=name,
                fn=fn,
                description=description if description is not None else _docstring_summary(fn),
                parameters=parameters,
                plugin=self._plugin,
                wants_ctx=wants_context(fn),
            )
        )

    @overload
    def tool(self, fn: F) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: JsonSchema | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: JsonSchema | None = None,
    ) -> F | Callable[[F], F]:
        """``@api.tool`` or ``@api.tool(name=..., description=...)``; returns the function."""

        def decorate(func: F) -> F:
            tool_name = name if name is not None else getattr(func, "__name__", None)
            if tool_name is None:
                raise PluginRegistrationError(f"cannot name tool {func!r}: pass name=...")
            self.register_tool(tool_name, func, description=description, parameters=parameters)
            return func

        if fn is not None:
            return decorate(fn)
        return decorate

    def on(self, event: str, handler: Handler) -> None:
        if event not in EVENTS:
            import difflib  # noqa: PLC0415 - only a mistake needs it

            close = difflib.get_close_matches(str(event), EVENTS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PluginRegistrationError(
                f"unknown event {event!r}{hint}; events are: {', '.join(EVENTS)}"
            )
        if not callable(handler):
            raise PluginRegistrationError(
                f"handler for {event!r} must be callable, got {type(handler).__name__}"
            )
        self._registry.handlers.append(
            HandlerSpec(event=event, handler=handler, plugin=self._plugin)
        )


def _check_schema(name: str, parameters: object) -> None:
    if not isinstance(parameters, dict):
        raise PluginRegistrationError(
            f"tool {name!r}: parameters must be a JSON Schema object (a dict), "
            f"got {type(parameters).__name__}"
        )
    try:
        json.dumps(parameters)
    except (TypeError, ValueError) as exc:
        raise PluginRegistrationError(
            f"tool {name!r}: parameters schema is not JSON-serialisable: {exc}"
        ) from None
    declared_type = parameters.get("type", "object")
    if declared_type != "object":
        raise PluginRegistrationError(
            f"tool {name!r}: parameters schema must describe an object (arguments are keywords), "
            f"got type {declared_type!r}"
        )


def _docstring_summary(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


def load_native(
    ref: EntryPointRef, registry: Registry, context: HostContext | None = None
) -> LoadedPlugin:
    """Resolve the entry point and call ``setup(api)``; registration errors name the plugin."""
    del context  # setup(api) is all a native plugin is given
    setup = resolve(ref)
    require_callable(ref, setup, "the plugin's setup function, e.g. 'package.module:setup'")
    api = PluginAPI(ref.name, registry)
    before = len(registry.handlers)
    try:
        returned = setup(api)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("setup", exc) from exc
    if inspect.isawaitable(returned):
        close: Callable[[], Any] | None = getattr(returned, "close", None)
        if close is not None:
            close()
        raise PluginLoadError(
            "setup",
            TypeError(f"{ref.value} returned an awaitable; setup(api) must be a plain function"),
        )
    handlers: dict[str, int] = {}
    for spec in registry.handlers[before:]:
        handlers[spec.event] = handlers.get(spec.event, 0) + 1
    tools = [spec.describe() for spec in registry.tools_of(ref.name)]
    return LoadedPlugin(ref=ref, tools=tools, handlers=handlers)
