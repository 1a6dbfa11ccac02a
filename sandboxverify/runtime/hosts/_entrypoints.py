"""The ``entrypoints`` host: every entry point is one tool named after it.

The check is that it loads and is callable (in a group whose application loads modules, such as
``pytest11``, that the module imports).
"""

from __future__ import annotations

import inspect

from sandboxverify.runtime._protocol import MODULE_GROUPS, EntryPointRef
from sandboxverify.runtime.hosts._base import LoadedPlugin, require_callable, resolve


def load_entrypoint(ref: EntryPointRef) -> LoadedPlugin:
    """One tool per entry point, named after it; it must load and be callable. In a group whose
    application loads modules (pytest11), an entry point naming a bare module need only import.
    Anywhere else a module is a missing ``:function``."""
    target = resolve(ref)
    module_group = ref.group in MODULE_GROUPS and ref.attribute is None
    if not (module_group and inspect.ismodule(target)):
        require_callable(ref, target, "a callable")
    doc = inspect.getdoc(target)
    description = doc.strip().split("\n\n", 1)[0].replace("\n", " ") if doc else None
    tool = {"name": ref.name, "description": description, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[tool], handlers={})
