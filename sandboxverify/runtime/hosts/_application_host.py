"""Plugins judged by the host their application ships (group ``sandboxverify.hosts``).

An application's maintainers own its verification contract: an entry point named after the
group it judges names an object with ``protocol = 1``, ``groups`` (the groups it judges) and
``load(entry_point, context)``, which loads one plugin the way the application does and returns
what it registered, ``{"name", "kind", "description"}`` each. What it raises is the plugin's
failure, with the host's message. A host that returns anything but such a list, or cannot be
used at all, fails the plugin too: a host that misbehaves can fail a plugin, never pass it.

The ``host-protocol`` host is the application's own check of the host it ships: that the object
speaks the protocol for the group its entry point is named after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    resolve,
)
from sandboxverify.runtime.hosts._registry import HOST_PLUGIN_GROUP, HOST_PLUGIN_PROTOCOL

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

    from sandboxverify.runtime._registrations import Registry


class HostUnusable(Exception):
    """The host an application ships cannot judge plugins: it does not import, speaks another
    protocol, does not claim the group, or returned what is not a list of registrations."""


class ApplicationHostContext:
    """What an application's host is given besides the entry point (protocol 1)."""

    protocol: Final = HOST_PLUGIN_PROTOCOL

    def __init__(self, timeout: float, group: str, application: str) -> None:
        #: seconds the whole load may take before the process is stopped
        self.timeout: Final = timeout
        #: the group the plugin is declared in
        self.group: Final = group
        #: the distribution that ships the host
        self.application: Final = application


def load_shipped(
    ref: EntryPointRef, context: HostContext, shipped: Mapping[str, str]
) -> LoadedPlugin:
    """Load the plugin ``ref`` with the host ``shipped`` (``{"dist", "value"}``) names."""
    dist, value = str(shipped["dist"]), str(shipped["value"])
    about = f"the host {dist} ships ({HOST_PLUGIN_GROUP} {ref.group!r} = {value!r})"
    try:
        host = resolve(EntryPointRef(ref.group, HOST_PLUGIN_GROUP, value))
    except PluginLoadError as exc:
        raise _unusable(f"{about} does not import: {exc.message}") from exc.cause
    load = _checked(host, ref.group, about)
    from importlib.metadata import EntryPoint  # noqa: PLC0415 - only this host hands one over

    entry_point = EntryPoint(name=ref.name, value=ref.value, group=ref.group)
    try:
        returned = load(entry_point, ApplicationHostContext(context.timeout, ref.group, dist))
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc) from exc
    return LoadedPlugin(ref=ref, tools=_registrations(returned, about), handlers={})


def load_host_protocol(
    ref: EntryPointRef, registry: Registry | None = None, context: HostContext | None = None
) -> LoadedPlugin:
    """The ``host-protocol`` host: an application's own check, of the host it ships. The entry
    point names the group it judges and an object that speaks the protocol for it."""
    del registry, context  # nothing is registered by code, and nothing waited for
    host = resolve(ref)
    about = f"the host {ref.name!r} = {ref.value!r}"
    _checked(host, ref.name.strip(), about, stage="validate")
    from sandboxverify.runtime.hosts._base import summary  # noqa: PLC0415

    described = summary(type(host)) or summary(host)
    tool = {"name": ref.name.strip(), "kind": "host", "description": described, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[tool], handlers={})


def _checked(host: Any, group: str, about: str, *, stage: LoadStage = "application") -> Any:
    """The host's ``load``, once the host is seen to speak our protocol for ``group``: a host
    that does not is the application's failure (``stage``)."""
    try:
        protocol = getattr(host, "protocol", None)
        groups = getattr(host, "groups", None)
        load = getattr(host, "load", None)
        if type(protocol) is not int or protocol != HOST_PLUGIN_PROTOCOL:
            raise _unusable(
                f"{about} speaks protocol {protocol!r}; this sandboxverify speaks "
                f"{HOST_PLUGIN_PROTOCOL}",
                stage,
            )
        if isinstance(groups, str) or not isinstance(groups, (list, tuple, set, frozenset)):
            raise _unusable(
                f"{about} has no list of the groups it judges (groups = {groups!r})", stage
            )
        if group not in [g for g in groups if type(g) is str]:
            raise _unusable(
                f"{about} does not judge group {group!r} (its groups: {groups!r})", stage
            )
        if not callable(load):
            raise _unusable(f"{about} has no load(entry_point, context) to call", stage)
    except PluginLoadError:
        raise
    except (Exception, SystemExit) as exc:  # a property of the host raised
        raise _unusable(f"{about} could not be asked what it judges: {exc!r}", stage) from exc
    return load


def _registrations(returned: Any, about: str) -> list[dict[str, Any]]:
    """What the host returned, as registrations; anything else is the host's failure. Only plain
    lists, dicts and strings count: nothing the host returns runs code here."""
    if type(returned) not in (list, tuple):
        raise _unusable(
            f"{about} returned {type(returned).__name__}, not a list of registrations "
            '({"name", "kind", "description"} each)'
        )
    tools: list[dict[str, Any]] = []
    for index, item in enumerate(returned):
        if type(item) is not dict:
            raise _unusable(f"{about} returned {type(item).__name__} as registration {index}")
        name, kind, description = item.get("name"), item.get("kind"), item.get("description")
        if type(name) is not str or not name.strip() or type(kind) is not str or not kind.strip():
            raise _unusable(
                f"{about} returned registration {index} without a name and a kind (strings)"
            )
        if description is not None and type(description) is not str:
            raise _unusable(f"{about} returned a description that is not a string for {name!r}")
        tools.append({"name": name, "kind": kind, "description": description, "parameters": None})
    return tools


def _unusable(message: str, stage: LoadStage = "application") -> PluginLoadError:
    return PluginLoadError(stage, HostUnusable(message))
