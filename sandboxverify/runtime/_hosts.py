"""Hosts: how a loaded entry point becomes tools.

``native`` calls the plugin's ``setup(api)`` and collects what it registers. ``entrypoints``
treats every entry point as one tool named after it: the check is that it loads and is callable.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Literal

from sandboxverify.runtime._native import PluginAPI, Registry
from sandboxverify.runtime._protocol import EntryPointRef

#: Where loading a plugin went wrong: importing it, validating what the entry point names,
#: or the plugin's own registration code.
LoadStage = Literal["import", "validate", "setup"]


class PluginLoadError(Exception):
    """Loading one plugin failed; ``cause`` is what the plugin's code (or the import) raised."""

    def __init__(self, stage: LoadStage, cause: BaseException) -> None:
        super().__init__(f"{stage}: {cause}")
        self.stage = stage
        self.cause = cause


@dataclass(frozen=True)
class LoadedPlugin:
    ref: EntryPointRef
    tools: list[dict[str, Any]]
    handlers: dict[str, int]


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
    """One tool per entry point, named after it; it must load and be callable."""
    target = resolve(ref)
    _require_callable(ref, target, "a callable")
    doc = inspect.getdoc(target)
    description = doc.strip().split("\n\n", 1)[0].replace("\n", " ") if doc else None
    tool = {"name": ref.name, "description": description, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[tool], handlers={})


def _require_callable(ref: EntryPointRef, target: Any, wanted: str) -> None:
    if callable(target) and not inspect.ismodule(target):
        return
    kind = "a module" if inspect.ismodule(target) else f"a {type(target).__name__}"
    raise PluginLoadError(
        "validate",
        TypeError(f"entry point {ref.name!r} = {ref.value!r} resolved to {kind}, not {wanted}"),
    )
