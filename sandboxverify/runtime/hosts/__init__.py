"""Hosts: how a loaded entry point becomes registrations, one module per plugin dialect.

``native`` calls the plugin's ``setup(api)``; ``entrypoints`` treats every entry point as one
tool; ``llm`` registers an llm plugin module with llm's plugin manager; ``mcp`` starts a server
and lists its tools; ``pytest``, ``pluggy``, ``flake8``, ``sphinx`` and ``mkdocs`` load the
plugin in its real application; a host an application ships itself (group
``sandboxverify.hosts``) judges that application's plugins when asked to. Every host fills a
:class:`~sandboxverify.runtime._registrations.Registry` or returns its registrations, each with a
``kind``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, cast

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts._base import (
    DEFAULT_TIMEOUT,
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
from sandboxverify.runtime.hosts._hostspec import NamedModules
from sandboxverify.runtime.hosts._registry import (
    APPLICATION_HOST_WORDING,
    GENERIC_HOST,
    HOST_CHOICES,
    HOST_PLUGIN_GROUP,
    HOST_PLUGIN_PROTOCOL,
    HOSTS,
    KNOWN_GROUPS,
    MCP_SDKS,
    NAMED_MODULES,
    SCRIPT_GROUPS,
    SESSION_HOSTS,
    Group,
    Host,
    Wording,
    names_file,
    names_module,
    names_modules,
    near_miss,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sandboxverify.runtime._registrations import Registry
    from sandboxverify.runtime.hosts._llm import describe_hooks
    from sandboxverify.runtime.hosts._native import EVENTS, PluginAPI

__all__ = [
    "APPLICATION_HOST_WORDING",
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "GENERIC_HOST",
    "HOSTS",
    "HOST_CHOICES",
    "HOST_PLUGIN_GROUP",
    "HOST_PLUGIN_PROTOCOL",
    "KNOWN_GROUPS",
    "MCP_SDKS",
    "NAMED_MODULES",
    "SCRIPT_GROUPS",
    "SESSION_HOSTS",
    "ApplicationFailed",
    "ApplicationMissing",
    "Group",
    "Host",
    "HostContext",
    "LoadStage",
    "LoadedPlugin",
    "NamedModules",
    "PluginAPI",
    "PluginLoadError",
    "Responder",
    "ServerFailure",
    "Wording",
    "describe_hooks",
    "load_plugin",
    "names_file",
    "names_module",
    "names_modules",
    "near_miss",
    "resolve",
]

#: imported on first use: a load pays for its own host's module alone
_LAZY = {"EVENTS": "_native", "PluginAPI": "_native", "describe_hooks": "_llm"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def load_plugin(
    host: str,
    ref: EntryPointRef,
    registry: Registry,
    context: HostContext | None = None,
    *,
    shipped: Mapping[str, str] | None = None,
) -> LoadedPlugin:
    """Load one plugin with ``host`` into ``registry``; raises :class:`PluginLoadError`.
    ``shipped`` (``{"dist", "value"}``): the host the plugin's application ships, which judges
    it instead (``host`` is then only its name).

    A host's module is imported when a plugin of its own is loaded, not before: a load pays for
    its host alone (and the hosts that drive an application import it only then), so a check of
    a native plugin never pays for importing llm, mcp, pytest or sphinx."""
    from sandboxverify.runtime.hosts._registry import HOSTS  # noqa: PLC0415

    context = context or HostContext()
    if shipped is not None:
        from sandboxverify.runtime.hosts._application_host import load_shipped  # noqa: PLC0415

        return load_shipped(ref, context, shipped)
    spec = HOSTS.get(host)
    if spec is None:
        raise PluginLoadError("validate", ValueError(f"unknown host {host!r}"))
    if host == "mcp" and ref.group == "console_scripts":  # the server starts through the script
        import shlex  # noqa: PLC0415

        ref = EntryPointRef(ref.name, ref.group, shlex.quote(ref.name))
    module, _, function = spec.loader.partition(":")
    loader = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return cast("LoadedPlugin", loader(ref, registry, context))
