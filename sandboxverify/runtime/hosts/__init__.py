"""Hosts: how a loaded entry point becomes registrations, one module per plugin dialect.

``native`` calls the plugin's ``setup(api)``; ``entrypoints`` treats every entry point as one
tool; ``llm`` registers an llm plugin module with llm's plugin manager; ``mcp`` starts a server
and lists its tools; ``pytest``, ``pluggy``, ``flake8``, ``sphinx`` and ``mkdocs`` load the
plugin in its real application. Every host fills a
:class:`~sandboxverify.runtime._registrations.Registry` or returns its registrations, each with a
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
    from sandboxverify.runtime._registrations import Registry

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


def load_plugin(
    host: str, ref: EntryPointRef, registry: Registry, context: HostContext | None = None
) -> LoadedPlugin:
    """Load one plugin with ``host`` into ``registry``; raises :class:`PluginLoadError`.

    A host's module is imported when a plugin of its own is loaded, not before: a load pays for
    its host alone (and the hosts that drive an application import it only then), so a check of
    a native plugin never pays for importing llm, mcp, pytest or sphinx."""
    from sandboxverify.runtime.hosts._registry import HOSTS  # noqa: PLC0415

    context = context or HostContext()
    spec = HOSTS.get(host)
    if spec is None:
        raise PluginLoadError("validate", ValueError(f"unknown host {host!r}"))
    if host == "mcp" and ref.group == "console_scripts":  # the server starts through the script
        import shlex  # noqa: PLC0415

        ref = EntryPointRef(ref.name, ref.group, shlex.quote(ref.name))
    module, _, function = spec.loader.partition(":")
    loader = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return cast("LoadedPlugin", loader(ref, registry, context))
