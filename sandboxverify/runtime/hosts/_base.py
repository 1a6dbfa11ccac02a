"""Hosts: how a loaded entry point becomes tools.

``native`` calls the plugin's ``setup(api)`` and collects what it registers. ``entrypoints``
treats every entry point as one tool named after it: the check is that it loads and is callable
(in pytest11, where the application loads modules, that an entry point's module imports).
``llm`` registers one ``llm`` plugin module with llm's plugin manager and collects the tools its
``register_tools`` hook registers (``_llm``); ``mcp`` starts a server command and lists its tools
over the Model Context Protocol (``_mcp``). Every host puts callable tools into a
:class:`Registry`, so the harness runs them all the same way.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Literal

from sandboxverify.runtime._protocol import MODULE_GROUPS, EntryPointRef
from sandboxverify.runtime.hosts._native import PluginAPI, Registry

#: Where loading a plugin went wrong: importing it, validating what the entry point names,
#: the plugin's own registration code, or (``mcp``) the server process it runs.
LoadStage = Literal["import", "validate", "setup", "server"]


class PluginLoadError(Exception):
    """Loading one plugin failed; ``cause`` is what the plugin's code (or the import) raised."""

    def __init__(self, stage: LoadStage, cause: BaseException) -> None:
        super().__init__(f"{stage}: {cause}")
        self.stage = stage
        self.cause = cause


class ServerFailure(Exception):
    """A server process misbehaved: it died, spoke no protocol, or never answered.

    Reported with its own failure code (not ``plugin_load_failed``) and the tail of the
    server's stderr as details.
    """

    def __init__(
        self, message: str, *, code: Literal["probe_crashed", "timeout"], details: str = ""
    ) -> None:
        super().__init__(message)
        self.code = code
        self.details = details


@dataclass(frozen=True)
class LoadedPlugin:
    ref: EntryPointRef
    tools: list[dict[str, Any]]
    handlers: dict[str, int]


#: A server-to-client request answered on behalf of the user or the model: takes the request's
#: params, returns the result (``elicitation/create`` -> mock UI, ``sampling/createMessage`` ->
#: the playbook's next ``sample`` action).
Responder = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class HostContext:
    """What a host may need besides the entry point: limits and answers to give."""

    #: seconds a server may take to start and to answer one request
    timeout: float = 60.0
    elicit: Responder | None = None
    sample: Responder | None = None


def load_plugin(
    host: str, ref: EntryPointRef, registry: Registry, context: HostContext | None = None
) -> LoadedPlugin:
    """Load one plugin with ``host`` into ``registry``; raises :class:`PluginLoadError`."""
    context = context or HostContext()
    if host == "native":
        return load_native(ref, registry)
    if host == "entrypoints":
        return load_entrypoint(ref)
    if host == "llm":
        from sandboxverify.runtime.hosts._llm import load_llm  # noqa: PLC0415 - only llm loads pay

        return load_llm(ref, registry, context)
    if host == "mcp":
        from sandboxverify.runtime.hosts._mcp import load_mcp  # noqa: PLC0415 - only mcp loads pay

        if ref.group == "console_scripts":  # the server starts through the script, by name
            ref = EntryPointRef(ref.name, ref.group, shlex.quote(ref.name))
        return load_mcp(ref, registry, context)
    raise PluginLoadError("validate", ValueError(f"unknown host {host!r}"))


def resolve(ref: EntryPointRef) -> Any:
    """Import the entry point's module and walk its attribute path, with a helpful miss."""
    try:
        target: Any = importlib.import_module(ref.module)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("import", exc) from exc
    if ref.attribute is None:
        return target
    walked = ref.module
    for part in ref.attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            names = [name for name in dir(target) if not name.startswith("__")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            kind = "module" if inspect.ismodule(target) else type(target).__name__
            error = AttributeError(f"{kind} {walked!r} has no attribute {part!r}{hint}")
            raise PluginLoadError("import", error) from exc
        except (Exception, SystemExit) as exc:  # a lazy module __getattr__ may raise anything
            raise PluginLoadError("import", exc) from exc
        walked = f"{walked}.{part}"
    return target


def load_native(ref: EntryPointRef, registry: Registry) -> LoadedPlugin:
    """Resolve the entry point and call ``setup(api)``; registration errors name the plugin."""
    setup = resolve(ref)
    _require_callable(ref, setup, "the plugin's setup function, e.g. 'package.module:setup'")
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


def load_entrypoint(ref: EntryPointRef) -> LoadedPlugin:
    """One tool per entry point, named after it; it must load and be callable. In a group whose
    application loads modules (pytest11), an entry point naming a bare module need only import.
    Anywhere else a module is a missing ``:function``."""
    target = resolve(ref)
    module_group = ref.group in MODULE_GROUPS and ref.attribute is None
    if not (module_group and inspect.ismodule(target)):
        _require_callable(ref, target, "a callable")
    doc = inspect.getdoc(target)
    description = doc.strip().split("\n\n", 1)[0].replace("\n", " ") if doc else None
    tool = {"name": ref.name, "description": description, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[tool], handlers={})


def _require_callable(ref: EntryPointRef, target: Any, wanted: str) -> None:
    if callable(target) and not inspect.ismodule(target):
        return
    type_name = "module" if inspect.ismodule(target) else type(target).__name__
    kind = ("an " if type_name[:1].lower() in "aeiou" else "a ") + type_name
    raise PluginLoadError(
        "validate",
        TypeError(f"entry point {ref.name!r} = {ref.value!r} resolved to {kind}, not {wanted}"),
    )
