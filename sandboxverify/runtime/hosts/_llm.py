"""The ``llm`` host: one plugin of Simon Willison's ``llm`` and the tools it registers.

An llm plugin is a module in entry-point group ``llm`` whose functions, marked with
``@llm.hookimpl``, implement llm's pluggy hooks. This host registers the module with llm's plugin
manager under the entry point's name (as llm itself does), fails loudly where llm stays silent (a
misspelled hook name, a hook function without ``@llm.hookimpl``), then calls this plugin's own
``register_tools(register)`` hook, and no other plugin's, with a ``register`` that behaves like
the one in ``llm.get_tools()``: a function becomes ``llm.Tool.function(fn, name=name)``, an
``llm.Tool`` is used as is, an ``llm.Toolbox`` subclass contributes one tool per method, named
``<Class>_<method>``.

Calling a tool mirrors llm's ``Response.execute_tool_calls()``: the JSON arguments as keywords, a
coroutine function run with ``asyncio.run``, a ``ToolOutput`` unwrapped, a non-string result sent
as ``json.dumps(result, default=repr)``, and an exception sent as ``"Error: <exception>"`` (an
error result). A Toolbox is created, without arguments, on the first call of one of its tools,
then ``prepare()``-d once; its state lives as long as the registry.

``llm`` itself is imported at call time only: it is a dependency of the plugin under test, never
of the runtime. Before the import, ``LLM_LOAD_PLUGINS`` is set to ``""`` (unless already set), so
llm registers only its default plugins when asked to load plugins, and never imports every
installed plugin (where one plugin's exception breaks them all); llm 0.10 to 0.17 loads plugins
while ``llm`` is imported, later versions on first use. ``LLM_USER_PATH`` (llm's keys, logs and
settings) points into the temporary directory unless already set, so nothing touches the home.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import inspect
import json
import os
import sys
import tempfile
import threading
import uuid
from typing import Any, Callable

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registry import PluginRegistrationError, Registry, ToolSpec
from sandboxverify.runtime._results import ToolResult
from sandboxverify.runtime._tracebacks import format_traceback
from sandboxverify.runtime.hosts._base import HostContext, LoadedPlugin, PluginLoadError, resolve

#: The first llm release with tools (the ``register_tools`` hook, ``llm.Tool``, ``llm.Toolbox``).
TOOLS_SINCE = "0.26"


def load_llm(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Register the plugin with llm and collect the tools its ``register_tools`` hook registers.

    Raises :class:`PluginLoadError`: ``import`` (llm or the plugin module cannot be imported),
    ``validate`` (a hook llm does not have, a hook signature pluggy rejects, a hook function not
    marked with ``@llm.hookimpl``), ``setup`` (``register_tools`` raised or registered something
    that is not a tool). A plugin without a ``register_tools`` hook loads with no tools; see
    :func:`describe_hooks` for what it implements instead.
    """
    del context  # an llm plugin needs no limits or answers while it registers
    llm = import_llm()
    plugin = resolve(ref)
    pm = importlib.import_module("llm.plugins").pm
    registered = _register(pm, ref, plugin)
    added: list[str] = []
    try:
        _validate(pm, plugin)
        _call_register_tools(pm, plugin, _registerer(llm, ref, registry, added))
    except PluginLoadError:
        for name in added:
            registry.tools.pop(name, None)
        if registered:
            pm.unregister(plugin)
        raise
    tools = [registry.tools[name].describe() for name in added]
    return LoadedPlugin(ref=ref, tools=tools, handlers={})


def describe_hooks(plugin: Any) -> list[str]:
    """The llm hooks a loaded plugin implements, e.g. ``["register_commands"]``.

    ``plugin`` is the plugin object or the entry-point name it was loaded under; an unknown plugin
    (or llm not imported) implements none.
    """
    plugins_module = sys.modules.get("llm.plugins")
    if plugins_module is None:
        return []
    pm = plugins_module.pm
    if isinstance(plugin, str):
        plugin = pm.get_plugin(plugin)
    if plugin is None:
        return []
    return sorted({caller.name for caller in pm.get_hookcallers(plugin) or []})


def import_llm() -> Any:
    """Import ``llm`` with plugin auto-loading off and its user directory in the temp dir."""
    os.environ.setdefault("LLM_USER_PATH", os.path.join(tempfile.gettempdir(), "llm-user"))
    os.environ.setdefault("LLM_LOAD_PLUGINS", "")
    try:
        return importlib.import_module("llm")
    except ModuleNotFoundError as exc:
        if exc.name != "llm":
            raise PluginLoadError("import", exc) from exc
        missing = ModuleNotFoundError(
            "No module named 'llm': an llm plugin's distribution must depend on llm "
            f'(add "llm>={TOOLS_SINCE}" to [project] dependencies); it is not installed here',
            name="llm",
        )
        raise PluginLoadError("import", missing) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("import", exc) from exc


# -- registering and validating --------------------------------------------------------------


def _register(pm: Any, ref: EntryPointRef, plugin: Any) -> bool:
    """Register like llm does (under the entry point's name); False if it already was."""
    current = pm.get_plugin(ref.name)
    if current is plugin:
        return False
    if current is not None:
        raise PluginLoadError(
            "validate",
            ValueError(
                f"another llm plugin is already registered as {ref.name!r} ({current!r}); "
                "llm loads only the first plugin of a name"
            ),
        )
    if pm.is_registered(plugin):
        raise PluginLoadError(
            "validate",
            ValueError(
                f"{ref.value!r} is already registered as llm plugin {pm.get_name(plugin)!r}; "
                "llm refuses a second entry point for the same object"
            ),
        )
    try:
        pm.register(plugin, name=ref.name)
    except Exception as exc:  # pluggy's PluginValidationError: a hook signature it rejects
        if pm.get_plugin(ref.name) is plugin:  # pluggy < 1.6 registers before it validates
            pm.unregister(plugin)
        raise PluginLoadError("validate", exc) from exc
    return True


def _validate(pm: Any, plugin: Any) -> None:
    """What llm silently ignores: hookimpls of hooks it does not have, unmarked hook functions."""
    specs = _hook_names(pm)
    implemented: set[str] = set()
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.has_spec():
            implemented.add(caller.name)
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and not getattr(impl, "optionalhook", False):
                raise PluginLoadError("validate", _unknown_hook(plugin, caller.name, impl, specs))
    for name in specs:
        if name in implemented:
            continue
        attr = inspect.getattr_static(plugin, name, None)
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if inspect.isroutine(attr) and pm.parse_hookimpl_opts(plugin, name) is None:
            raise PluginLoadError(
                "validate",
                _validation_error(
                    plugin,
                    f"{name}() is not marked with @llm.hookimpl, so llm never calls it: "
                    f"decorate it with @llm.hookimpl",
                ),
            )


def _hook_names(pm: Any) -> list[str]:
    return sorted(
        name
        for name, caller in vars(pm.hook).items()
        if not name.startswith("_") and caller.has_spec()
    )


def _unknown_hook(plugin: Any, hook: str, impl: Any, specs: list[str]) -> Exception:
    function = getattr(impl.function, "__name__", hook)
    if hook == "register_tools":
        return _validation_error(
            plugin,
            f"llm {_llm_version()} has no register_tools hook: tools need llm>={TOOLS_SINCE}; "
            f'require "llm>={TOOLS_SINCE}" in the distribution\'s dependencies',
        )
    close = difflib.get_close_matches(hook, specs, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    what = f"{function}()" if function == hook else f"{function}() (specname={hook!r})"
    return _validation_error(
        plugin,
        f"{what} is marked with @llm.hookimpl, but llm has no hook {hook!r}{hint}, "
        f"so llm never calls it; llm's hooks are: {', '.join(specs)}",
    )


def _validation_error(plugin: Any, message: str) -> Exception:
    error: Exception = importlib.import_module("pluggy").PluginValidationError(plugin, message)
    return error


def _llm_version() -> str:
    from importlib import metadata  # noqa: PLC0415 - only this error message needs it

    try:
        return metadata.version("llm")
    except metadata.PackageNotFoundError:
        return "(unknown version)"


# -- collecting tools ------------------------------------------------------------------------


def _call_register_tools(pm: Any, plugin: Any, register: Callable[..., None]) -> None:
    """Call this plugin's ``register_tools`` hookimpls only, the way ``llm.get_tools()`` does."""
    caller = getattr(pm.hook, "register_tools", None)
    if caller is None:
        return
    for impl in [impl for impl in caller.get_hookimpls() if impl.plugin is plugin]:
        try:
            impl.function(register=register)
        except (Exception, SystemExit) as exc:
            raise PluginLoadError("setup", exc) from exc


def _registerer(
    llm: Any, ref: EntryPointRef, registry: Registry, added: list[str]
) -> Callable[..., None]:
    """The ``register(tool_or_function, name=None)`` a ``register_tools`` hook receives."""

    def register(tool_or_function: Any, name: str | None = None) -> None:
        for spec in _tool_specs(llm, ref, tool_or_function, name):
            registry.add_tool(spec)
            added.append(spec.name)

    return register


def _tool_specs(llm: Any, ref: EntryPointRef, obj: Any, name: str | None) -> list[ToolSpec]:
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
