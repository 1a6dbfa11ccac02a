"""Which host judges each plugin, and why.

With ``--host auto`` (the default) the groups a distribution declares decide, one plugin at a
time: the application that loads a group is the one that judges its plugins. A named host judges
every plugin of its groups, as it always has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sandboxverify.report import Failure
from sandboxverify.runtime import EntryPointRef
from sandboxverify.runtime.hosts import (
    HOSTS,
    KNOWN_GROUPS,
    MCP_SDKS,
    SCRIPT_GROUPS,
    SESSION_HOSTS,
    near_miss,
)


@dataclass(frozen=True)
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

    def load_options(self) -> dict[str, Any]:
        return {"callable": self.require_callable, "kind": self.kind, "hookspecs": self.hookspecs}


@dataclass(frozen=True)
class PluginPlan:
    #: the groups discovery looks in (and the installed metadata must agree on)
    groups: tuple[str, ...]
    plugins: tuple[PlannedPlugin, ...]
    #: groups the distribution declares that look like a known group misspelled
    near_misses: dict[str, str]

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(plugin.host for plugin in self.plugins))


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
        )
    if judge is not None and known is not None:
        reason = (
            "sandboxverify's plugin protocol"
            if known.application is None
            else f"loaded by {known.application}"
        )
        return PlannedPlugin(
            ref, judge.name, f"group {group!r} is {reason}", application=known.application
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
        "entrypoints",
        f"group {group!r} belongs to no application sandboxverify knows: loaded as "
        f"EntryPoint.load() does ({wanted})",
        require_callable=wants_callable,
        kind="entry_point",
    )


def host_for_group(group: str) -> str | None:
    """The host ``--host auto`` chooses for ``group``, if a known application loads it."""
    known = KNOWN_GROUPS.get(group)
    return known[0].name if known else None


def smoke_driver(plugins: Sequence[PlannedPlugin], host: str) -> PlannedPlugin | None:
    """The plugin whose host a smoke run drives a model through: a named host's first plugin,
    else the first plugin whose host exposes tools to a model."""
    for plugin in plugins:
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
