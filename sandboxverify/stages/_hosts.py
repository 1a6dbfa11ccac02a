"""Which host judges each plugin, and why.

With ``--host auto`` (the default) the groups a distribution declares decide, one plugin at a
time: the application that loads a group is the one that judges its plugins. A named host judges
every plugin of its groups, as it always has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify.report import ApplicationRecord, Failure
from sandboxverify.runtime import EntryPointRef
from sandboxverify.runtime.hosts import (
    GENERIC_HOST,
    HOST_PLUGIN_GROUP,
    HOSTS,
    KNOWN_GROUPS,
    MCP_SDKS,
    NAMED_MODULES,
    SCRIPT_GROUPS,
    SESSION_HOSTS,
    near_miss,
)
from sandboxverify.stages._applications import Found, ShippedHost


@frozen
class PlannedPlugin:
    ref: EntryPointRef
    host: str
    #: why this host: shown in the text and the report
    reason: str
    #: the application that loads the plugin, when one must be installed (``--with`` hint)
    application: str | None = None
    #: ``entrypoints``: must the entry point name a callable (``None``: the group decides)
    require_callable: bool | None = None
    #: ``entrypoints``: the kind its registration is reported as
    kind: str = "tool"
    #: ``pluggy``: the hookspecs module named by ``--hookspecs``
    hookspecs: str | None = None
    #: the application of its group is looked for (``--host auto``): the registry's, or by name
    finds_application: bool = False
    #: the application of its group, as it was looked for
    found: ApplicationRecord | None = None
    #: the host its application ships, which judges it instead of ours
    shipped: ShippedHost | None = None
    #: a module users name in the application's configuration (no entry point: discovery
    #: does not list it; ``_named_modules``)
    named: bool = False

    def load_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "callable": self.require_callable,
            "kind": self.kind,
            "hookspecs": self.hookspecs,
        }
        if self.shipped is not None:
            options["shipped"] = self.shipped.to_json()
        return options


@frozen
class PluginPlan:
    #: the groups discovery looks in (and the installed metadata must agree on)
    groups: tuple[str, ...]
    plugins: tuple[PlannedPlugin, ...]
    #: groups the distribution declares that look like a known group misspelled
    near_misses: dict[str, str]
    #: what the plan left out, said in the notes (extensions beyond those loaded)
    notes: tuple[str, ...] = ()

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(plugin.host for plugin in self.plugins))

    def application_searches(self) -> dict[str, str | None]:
        """The groups whose application is looked for, each with the application the registry
        names for it (``None``: found by the literal and the name rule)."""
        return {
            plugin.ref.group: _registry_application(plugin.ref.group)
            for plugin in self.plugins
            if plugin.finds_application
        }


def default_groups(host: str) -> tuple[str, ...]:
    """The groups a named host looks in when no ``--group`` is given."""
    return () if host == "auto" else HOSTS[host].own_groups


def plan_plugins(
    entry_points: Sequence[EntryPointRef],
    dependencies: frozenset[str],
    *,
    host: str,
    groups: Sequence[str],
    callable_groups: Sequence[str] = (),
    hookspecs: Mapping[str, str] | None = None,
) -> PluginPlan:
    """Each entry point of the wheel in the checked groups, with the host that judges it."""
    hookspecs = dict(hookspecs or {})
    declared = list(dict.fromkeys(ref.group for ref in entry_points))
    # A group the user names is meant as written; any other near miss of a known group is a
    # plugin its application will never find, so it is reported, not loaded.
    near_misses = {
        group: miss
        for group in declared
        if group not in groups and (miss := near_miss(group)) is not None
    }
    sdks = sorted(MCP_SDKS & dependencies)
    if host != "auto":
        chosen = tuple(groups) or default_groups(host)
    elif groups:
        chosen = tuple(groups)
    else:
        chosen = tuple(
            group
            for group in declared
            if group not in near_misses
            and (group not in SCRIPT_GROUPS or (group == "console_scripts" and sdks))
        )
    plugins = tuple(
        _planned(ref, host, sdks, ref.group in callable_groups, hookspecs)
        for ref in entry_points
        if ref.group in chosen
    )
    return PluginPlan(chosen, plugins, near_misses)


def _planned(
    ref: EntryPointRef,
    host: str,
    sdks: Sequence[str],
    wants_callable: bool,
    hookspecs: Mapping[str, str],
) -> PlannedPlugin:
    group = ref.group
    judge, known = KNOWN_GROUPS.get(group, (None, None))
    if host != "auto":
        return PlannedPlugin(
            ref,
            host,
            f"--host {host}",
            application=known.application if known else None,
            require_callable=True if wants_callable else None,
            hookspecs=hookspecs.get(group),
        )
    if group in hookspecs:
        return PlannedPlugin(
            ref,
            "pluggy",
            f"--hookspecs {group}={hookspecs[group]}",
            application=known.application if known else None,
            hookspecs=hookspecs[group],
            finds_application=known is None or known.application is not None,
        )
    if judge is not None and known is not None:
        reason = (
            "sandboxverify's plugin protocol"
            if known.application is None
            else f"loaded by {known.application}"
        )
        return PlannedPlugin(
            ref,
            judge.name,
            f"group {group!r} is {reason}",
            application=known.application,
            finds_application=known.application is not None,
        )
    if group == "console_scripts" and sdks:
        return PlannedPlugin(
            ref,
            "mcp",
            f"a console script of a distribution that depends on {sdks[0]}: started as an "
            "MCP server over stdio",
        )
    wanted = "a callable, as --group asks" if wants_callable else "a module or any object"
    return PlannedPlugin(
        ref,
        GENERIC_HOST,
        f"group {group!r} belongs to no application sandboxverify has a host for: loaded as "
        f"EntryPoint.load() does ({wanted})",
        require_callable=wants_callable,
        kind="entry_point",
        finds_application=group not in SCRIPT_GROUPS,  # scripts are run, not loaded
    )


def _registry_application(group: str) -> str | None:
    known = KNOWN_GROUPS.get(group)
    if known is None and group in NAMED_MODULES:  # extensions users name in a configuration
        return NAMED_MODULES[group][1].application
    return known[1].application if known is not None else None


def with_applications(
    plan: PluginPlan, found: Mapping[str, Found], application_hosts: Sequence[str] = ()
) -> PluginPlan:
    """The plan once each group's application was looked for: every plugin says what was found,
    and the host an application ships judges its plugins where no host of ours does (or where
    ``--application-host`` asks for it over ours)."""
    plugins = tuple(
        _judged(plugin, found[plugin.ref.group], application_hosts)
        if plugin.finds_application and plugin.ref.group in found
        else plugin
        for plugin in plan.plugins
    )
    return replace(plan, plugins=plugins)


def _judged(plugin: PlannedPlugin, found: Found, application_hosts: Sequence[str]) -> PlannedPlugin:
    group, record, shipped = plugin.ref.group, found.record, found.host
    planned = replace(plugin, found=record)
    if record.name is None:
        return replace(planned, reason=f"{plugin.reason}; its application was not found")
    if shipped is not None and plugin.hookspecs is None:
        if group in application_hosts or group not in KNOWN_GROUPS:
            return replace(
                planned,
                host=shipped.dist,
                reason=f"its application {record.name} ships its own host for {group!r}: "
                f"{HOST_PLUGIN_GROUP} entry point {shipped.value}",
                shipped=shipped,
            )
        return replace(
            planned,
            reason=f"{plugin.reason}; {record.name} ships a host of its own for it, used with "
            f"--application-host {group}",
        )
    if group in KNOWN_GROUPS:
        added = ", installed by sandboxverify" if record.installed else ""
        return replace(planned, reason=f"{plugin.reason}{added}")
    return replace(planned, reason=f"{plugin.reason}, in its application {record.name}")


def host_for_group(group: str) -> str | None:
    """The host ``--host auto`` chooses for ``group``, if a known application loads it."""
    known = KNOWN_GROUPS.get(group)
    return known[0].name if known else None


def smoke_driver(plugins: Sequence[PlannedPlugin], host: str) -> PlannedPlugin | None:
    """The plugin whose host a smoke run drives a model through: a named host's first plugin,
    else the first plugin whose host exposes tools to a model."""
    for plugin in plugins:
        if plugin.shipped is not None:  # an application's host exposes no tools to a model
            continue
        if plugin.host in SESSION_HOSTS or (host != "auto" and plugin.host == host):
            return plugin
    return None


def no_smoke_driver(python: str, plugins: Sequence[PlannedPlugin]) -> Failure:
    hosts = ", ".join(sorted({plugin.host for plugin in plugins})) or "none"
    return Failure(
        "smoke_failed",
        "--smoke needs plugins whose tools a model can call (hosts native, llm or mcp); "
        f"this distribution's plugins are judged by: {hosts}",
        python=python,
        hint="drop --smoke for this distribution, or name the group of its tool plugins with "
        "--group",
    )
