"""An llm plugin's tools as registry tools, called the way llm calls them.

What ``register(tool_or_function, name=None)`` in ``llm.get_tools()`` makes of what a plugin's
``register_tools`` hook registers: a function becomes ``llm.Tool.function(fn, name=name)``, an
``llm.Tool`` is used as is, an ``llm.Toolbox`` subclass contributes one tool per method, named
``<Class>_<method>``. Each becomes a
:class:`~sandboxverify.runtime._registrations.ToolSpec` with the tool's own name, description
and input schema.

Calling a tool mirrors llm's ``Response.execute_tool_calls()``: the JSON arguments as keywords, a
coroutine function run with ``asyncio.run``, a ``ToolOutput`` unwrapped, a non-string result sent
as ``json.dumps(result, default=repr)``, and an exception sent as ``"Error: <exception>"`` (an
error result). A Toolbox is created, without arguments, on the first call of one of its tools,
then ``prepare()``-d once; its state lives as long as the registry.

The host imports ``llm`` and passes it in; this module never imports it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import threading
import uuid
from typing import Any, Callable

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import PluginRegistrationError, ToolSpec
from sandboxverify.runtime._results import ToolResult
from sandboxverify.runtime._tracebacks import format_traceback

# -- registering tools -----------------------------------------------------------------------


def tool_specs(llm: Any, ref: EntryPointRef, obj: Any, name: str | None) -> list[ToolSpec]:
    """What ``register(obj, name)`` in ``llm.get_tools()`` makes of ``obj``."""
    if inspect.isclass(obj):
        if not issubclass(obj, llm.Toolbox):
            raise TypeError(
                f"Toolbox classes must inherit from llm.Toolbox, {obj.__name__} does not."
            )
        box: Any = obj  # as llm does: the class is named after its plugin and registration
        box.plugin = ref.name
        box.name = name or box.__name__
        return _toolbox_specs(llm, ref, box)
    if isinstance(obj, llm.Tool):
        tool = obj
        if name:
            tool.name = name
    elif isinstance(obj, llm.Toolbox):
        raise TypeError(
            f"register() takes a Toolbox class, not an instance: "
            f"register({type(obj).__name__}), not register({type(obj).__name__}(...))"
        )
    elif callable(obj):
        tool = llm.Tool.function(obj, name=name)
    else:
        raise TypeError(
            "register() takes a function, an llm.Tool or an llm.Toolbox subclass, "
            f"got {type(obj).__name__} {obj!r}"
        )
    tool.plugin = ref.name
    target = tool.implementation
    return [_spec(ref, tool, _caller(llm, tool.name, lambda: target))]


def _toolbox_specs(llm: Any, ref: EntryPointRef, box: type[Any]) -> list[ToolSpec]:
    """One tool per method, enumerated on the class as llm does; created only when called."""
    instance = _LazyToolbox(box)
    specs: list[ToolSpec] = []
    prefix = f"{box.__name__}_"
    for tool in _method_tools(llm, box):
        if tool.name.startswith(prefix):
            method = tool.name[len(prefix) :]
        else:
            method = tool.implementation.__name__

        def target(method: str = method) -> Callable[..., Any]:
            return getattr(instance.get(), method)  # type: ignore[no-any-return]

        specs.append(_spec(ref, tool, _caller(llm, tool.name, target)))
    return specs


def _method_tools(llm: Any, box: type[Any]) -> list[Any]:
    method_tools = box.method_tools
    if inspect.ismethod(method_tools):  # a classmethod: llm >= 0.27
        return list(method_tools())
    # llm 0.26 enumerates methods on an instance only; the same walk on the class
    tools = []
    for name in dir(box):
        if name.startswith("_") or name in box._blocked:
            continue
        member = getattr(box, name)
        if callable(member):
            tools.append(llm.Tool.function(member, name=f"{box.__name__}_{name}"))
    return tools


def _spec(ref: EntryPointRef, tool: Any, fn: Callable[..., ToolResult]) -> ToolSpec:
    name, schema = tool.name, tool.input_schema
    if not isinstance(name, str) or not name.strip():
        raise PluginRegistrationError(f"tool name must be a non-empty string, got {name!r}")
    if not isinstance(schema, dict):
        raise PluginRegistrationError(
            f"tool {name!r}: input_schema must be a JSON Schema object, got {type(schema).__name__}"
        )
    description = tool.description
    return ToolSpec(
        name=name,
        fn=fn,
        description=description if isinstance(description, str) else None,
        parameters=dict(schema),
        plugin=ref.name,
        wants_ctx=False,
    )


class _ToolboxUnavailable(Exception):
    """The toolbox could not be created or prepared; the message says why."""


class _LazyToolbox:
    """One instance of a Toolbox class, created on the first call and then kept."""

    def __init__(self, box: type[Any]) -> None:
        self._box = box
        self._instance: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._instance is None:
                self._instance = self._create()
            instance = self._instance
            if not getattr(instance, "_prepared", True):  # llm >= 0.27 has prepare()
                name = self._box.__name__
                try:
                    instance.prepare()
                except Exception as exc:
                    raise _ToolboxUnavailable(
                        f"{name}.prepare() raised {type(exc).__name__}: {exc}"
                    ) from exc
                instance._prepared = True
            return instance

    def _create(self) -> Any:
        name = self._box.__name__
        try:
            return self._box()
        except TypeError as exc:
            try:
                takes = f" (it takes {name}{inspect.signature(self._box)})"
            except (TypeError, ValueError):
                takes = ""
            raise _ToolboxUnavailable(
                f"toolbox {name} could not be created without arguments{takes}: {exc}; "
                f"llm users pass them (llm -T '{name}(...)'), a smoke call cannot"
            ) from exc
        except Exception as exc:
            raise _ToolboxUnavailable(
                f"toolbox {name} could not be created: {name}() raised {type(exc).__name__}: {exc}"
            ) from exc


# -- calling tools ---------------------------------------------------------------------------


def _caller(
    llm: Any, tool_name: str, target: Callable[[], Callable[..., Any] | None]
) -> Callable[..., ToolResult]:
    def call(**arguments: Any) -> ToolResult:
        try:
            implementation = target()
        except _ToolboxUnavailable as exc:
            return _error(f"Error: {exc}", exc.__cause__ or exc)
        if implementation is None:
            raise ValueError(f"No implementation available for tool: {tool_name}")
        return _execute(llm, tool_name, implementation, arguments)

    return call


def _execute(
    llm: Any, tool_name: str, implementation: Callable[..., Any], arguments: dict[str, Any]
) -> ToolResult:
    """One call as ``Response.execute_tool_calls()`` makes it, and the text the model gets."""
    pause = getattr(llm, "PauseChain", None)  # newer llm: pauses the chain, is no error
    output_type = getattr(llm, "ToolOutput", None)  # llm >= 0.27
    attachments: list[Any] = []
    try:
        kwargs = dict(arguments)
        if _accepts_tool_call(implementation):
            kwargs["llm_tool_call"] = llm.ToolCall(
                name=tool_name, arguments=dict(arguments), tool_call_id=f"tc_{uuid.uuid4().hex}"
            )
        if inspect.iscoroutinefunction(implementation):
            result = asyncio.run(implementation(**kwargs))
        else:
            result = implementation(**kwargs)
        if output_type is not None and isinstance(result, output_type):
            attachments = list(result.attachments or [])
            result = result.output
        text = result if isinstance(result, str) else json.dumps(result, default=repr)
    except Exception as exc:
        if pause is not None and isinstance(exc, pause):
            raise
        return _error(f"Error: {exc}", exc)
    details: Any = None if isinstance(result, str) else json.loads(text)
    if attachments:
        details = {"output": details, "attachments": [_describe(item) for item in attachments]}
    return ToolResult.from_text(text, details=details)


def _accepts_tool_call(implementation: Callable[..., Any]) -> bool:
    """Newer llm passes the ``ToolCall`` to an implementation with an ``llm_tool_call``
    parameter, and decides that with this function."""
    accepts = getattr(sys.modules.get("llm.models"), "_accepts_llm_tool_call", None)
    return bool(accepts(implementation)) if accepts is not None else False


def _describe(attachment: Any) -> dict[str, Any]:
    fields = {key: getattr(attachment, key, None) for key in ("type", "path", "url")}
    return {key: value for key, value in fields.items() if value is not None}


def _error(text: str, exc: BaseException) -> ToolResult:
    details = {
        "error_type": type(exc).__name__,
        "message": str(exc),
        "traceback": format_traceback(exc),
    }
    return ToolResult.from_text(text, is_error=True, details=details)
