"""The ``entrypoints`` host: every entry point is one registration named after it.

The check is that it loads and is callable (in a group whose application loads modules, such as
``pytest11``, that the module imports).
"""

from __future__ import annotations

import inspect

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import HostContext, LoadedPlugin, require_callable, resolve
from sandboxverify.runtime.hosts._registry import names_module


def load_entrypoint(
    ref: EntryPointRef, registry: Registry | None = None, context: HostContext | None = None
) -> LoadedPlugin:
    """One registration per entry point, named after it; it must load (``EntryPoint.load()``),
    and be callable unless ``context.require_callable`` is false or (left ``None``) the group's
    application loads modules (pytest11, datasette...); anywhere else a module is a missing
    ``:function``."""
    del registry  # each entry point is its own registration: nothing is registered by code
    context = context or HostContext()
    target = resolve(ref)
    wants_callable = context.require_callable
    if wants_callable is None:
        wants_callable = not (names_module(ref.group) and ref.attribute is None)
    if wants_callable:
        require_callable(ref, target, "a callable")
    doc = inspect.getdoc(target)
    description = doc.strip().split("\n\n", 1)[0].replace("\n", " ") if doc else None
    tool = {"name": ref.name, "kind": context.kind, "description": description, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[tool], handlers={})
