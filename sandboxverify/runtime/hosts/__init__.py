"""Hosts: how a loaded entry point becomes registrations, one module per plugin dialect.

``native`` calls the plugin's ``setup(api)``; ``entrypoints`` treats every entry point as one
tool; ``llm`` registers an llm plugin module with llm's plugin manager; ``mcp`` starts a server
and lists its tools; ``pytest``, ``pluggy``, ``flake8``, ``sphinx`` and ``mkdocs`` load the
plugin in its real application. Every host fills a
:class:`~sandboxverify.runtime._registry.Registry` or returns its registrations, each with a
``kind``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    ApplicationMissing,
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    Responder,
    ServerFailure,
    resolve,
)

if TYPE_CHECKING:
    from sandboxverify.runtime._registry import Registry

__all__ = [
    "ApplicationFailed",
    "ApplicationMissing",
    "HostContext",
    "LoadStage",
    "LoadedPlugin",
    "PluginLoadError",
    "Responder",
    "ServerFailure",
    "load_plugin",
    "resolve",
]


# Every host module is imported when a plugin of its own is loaded, not before: a load pays for
# its host alone (and the hosts that drive an application import it only then), so a check of
# a native plugin never pays for importing llm, mcp, pytest or sphinx.
_APPLICATION_HOSTS = {
    "llm": "_llm",
    "mcp": "_mcp",
    "pytest": "_pytest",
    "pluggy": "_pluggy",
    "flake8": "_flake8",
    "sphinx": "_sphinx",
    "mkdocs": "_mkdocs",
}


def load_plugin(
    host: str, ref: EntryPointRef, registry: Registry, context: HostContext | None = None
) -> LoadedPlugin:
    """Load one plugin with ``host`` into ``registry``; raises :class:`PluginLoadError`."""
    context = context or HostContext()
    if host == "native":
        from sandboxverify.runtime.hosts._native import load_native  # noqa: PLC0415

        return load_native(ref, registry)
    if host == "entrypoints":
        from sandboxverify.runtime.hosts._entrypoints import load_entrypoint  # noqa: PLC0415

        return load_entrypoint(ref, context)
    module = _APPLICATION_HOSTS.get(host)
    if module is None:
        raise PluginLoadError("validate", ValueError(f"unknown host {host!r}"))
    if host == "mcp" and ref.group == "console_scripts":  # the server starts through the script
        import shlex  # noqa: PLC0415

        ref = EntryPointRef(ref.name, ref.group, shlex.quote(ref.name))
    loader = getattr(importlib.import_module(f"{__name__}.{module}"), f"load_{host}")
    return cast("LoadedPlugin", loader(ref, registry, context))
