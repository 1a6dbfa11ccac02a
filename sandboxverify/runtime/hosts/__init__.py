"""Hosts: how a loaded entry point becomes registrations, one module per plugin dialect.

``native`` calls the plugin's ``setup(api)``; ``entrypoints`` treats every entry point as one
tool; ``llm`` registers an llm plugin module with llm's plugin manager; ``mcp`` starts a server
and lists its tools; ``pytest``, ``pluggy``, ``flake8``, ``sphinx`` and ``mkdocs`` load the
plugin in its real application. Every host fills a
:class:`~sandboxverify.runtime._registry.Registry` or returns its registrations, each with a
``kind``.
"""

from __future__ import annotations

import shlex

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registry import Registry
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
from sandboxverify.runtime.hosts._entrypoints import load_entrypoint
from sandboxverify.runtime.hosts._native import load_native

__all__ = [
    "ApplicationFailed",
    "ApplicationMissing",
    "HostContext",
    "LoadStage",
    "LoadedPlugin",
    "PluginLoadError",
    "Responder",
    "ServerFailure",
    "load_entrypoint",
    "load_native",
    "load_plugin",
    "resolve",
]


def load_plugin(
    host: str, ref: EntryPointRef, registry: Registry, context: HostContext | None = None
) -> LoadedPlugin:
    """Load one plugin with ``host`` into ``registry``; raises :class:`PluginLoadError`."""
    context = context or HostContext()
    if host == "native":
        return load_native(ref, registry)
    if host == "entrypoints":
        return load_entrypoint(ref, context)
    if host == "llm":
        from sandboxverify.runtime.hosts._llm import load_llm  # noqa: PLC0415 - only llm loads pay

        return load_llm(ref, registry, context)
    if host == "mcp":
        from sandboxverify.runtime.hosts._mcp import load_mcp  # noqa: PLC0415 - only mcp loads pay

        if ref.group == "console_scripts":  # the server starts through the script, by name
            ref = EntryPointRef(ref.name, ref.group, shlex.quote(ref.name))
        return load_mcp(ref, registry, context)
    if host == "pytest":
        from sandboxverify.runtime.hosts._pytest import load_pytest  # noqa: PLC0415

        return load_pytest(ref, registry, context)
    if host == "pluggy":
        from sandboxverify.runtime.hosts._pluggy import load_pluggy  # noqa: PLC0415

        return load_pluggy(ref, registry, context)
    if host == "flake8":
        from sandboxverify.runtime.hosts._flake8 import load_flake8  # noqa: PLC0415

        return load_flake8(ref, registry, context)
    if host == "sphinx":
        from sandboxverify.runtime.hosts._sphinx import load_sphinx  # noqa: PLC0415

        return load_sphinx(ref, registry, context)
    if host == "mkdocs":
        from sandboxverify.runtime.hosts._mkdocs import load_mkdocs  # noqa: PLC0415

        return load_mkdocs(ref, registry, context)
    raise PluginLoadError("validate", ValueError(f"unknown host {host!r}"))
