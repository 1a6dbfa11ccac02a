"""From what the probe saw to failures: load errors, counts, expected tools, duplicates.

Every message names the plugin and the cause; every hint says what to change.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from dataclasses import replace

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure, PluginRecord, ToolRecord
from sandboxverify.runtime.hosts import (
    APPLICATION_HOST_WORDING,
    GENERIC_HOST,
    HOSTS,
    SCRIPT_GROUPS,
    Wording,
)
from sandboxverify.stages._hosts import PluginPlan, host_for_group
from sandboxverify.stages._load_hints import load_hint
from sandboxverify.stages._probe import Discovery, PluginLoad


@frozen
class Expectations:
    tools: tuple[str, ...] = ()
    exact: bool = False
    plugins: int | None = None
    #: ``--group`` named (or a host other than ``auto``): the user says there are plugins
    plugins_asked_for: bool = False
    #: ``--plugin-allow-fail``: globs of plugin names whose load may fail (a plugin that needs
    #: a service or a program the check cannot give it): noted, not a failure
    allow_fail: tuple[str, ...] = ()


@frozen
class Judgement:
    failures: tuple[Failure, ...] = ()
    #: what the user should know although nothing failed (a library without plugins)
    notes: tuple[str, ...] = ()
    #: the probe stage's one-line summary, when it says more than the counts
    summary: str = ""


def evaluate(
    *,
    python: str,
    plan: PluginPlan,
    discovery: Discovery,
    loads: Sequence[PluginLoad],
    expected: Expectations,
    own_modules: frozenset[str],
    host: str = "auto",
) -> Judgement:
    if not loads:
        return _without_plugins(python, host, plan, discovery, expected)
    failures: list[Failure] = []
    notes: list[str] = []
    judged = [(load, _plugin_failure(python, load, own_modules, host)) for load in loads]
    # an allowance covers some plugins, never all: a check that verified no plugin is no pass
    any_worked = any(failure is None for _, failure in judged)
    for load, failure in judged:
        glob = _allowed(load.record.name, expected.allow_fail) if failure else None
        if failure is not None and glob is not None and any_worked:
            notes.append(f"allowed to fail by --plugin-allow-fail {glob}: {failure.message}")
        elif failure is not None and glob is not None:
            failures.append(
                replace(
                    failure,
                    hint=f"no plugin loaded, so --plugin-allow-fail {glob} cannot excuse this one: "
                    "nothing would be verified; fix the plugin, or check where what it needs is "
                    f"there. {failure.hint or ''}".rstrip(),
                )
            )
        elif failure is not None:
            failures.append(failure)
    notes += [
        f"plugin {load.record.name!r} ({load.record.value}) registers nothing here: {load.skipped}"
        for load in loads
        if load.skipped and load.failure is None and load.record.ok
    ]
    notes += _unmatched_allowances(expected.allow_fail, [load.record.name for load in loads])
    notes += [
        f"{tool.kind} {tool.name!r} of plugin {tool.plugin!r} was not exercised: "
        f"{tool.exercise_note}"
        for load in loads
        for tool in load.tools
        if tool.exercise == "unavailable"
    ]
    if plan.near_misses:
        failures.append(_near_miss(python, plan, discovery))
    tools = [tool for load in loads for tool in load.tools]
    failures += _duplicates(python, loads)
    if expected.plugins is not None and expected.plugins != len(loads):
        names = ", ".join(load.record.name for load in loads)
        failures.append(
            Failure(
                "plugin_count_mismatch",
                f"expected {expected.plugins} plugin(s) in {_groups(plan.groups)}, "
                f"found {len(loads)}: {names}",
                python=python,
                hint="add or remove entry points in pyproject.toml, or fix --expect-plugins",
            )
        )
    hosts = {load.record.host or host for load in loads}
    wording = wording_of(hosts.pop() if len(hosts) == 1 else host)
    failures += _tool_expectations(
        python, tools, [load.record for load in loads], expected, wording
    )
    return Judgement(tuple(failures), tuple(notes))


def _plugin_failure(
    python: str, load: PluginLoad, own_modules: frozenset[str], host: str
) -> Failure | None:
    """Why one plugin failed (it crashed, its application refused it, it registers nothing)."""
    wording = wording_of(load.record.host or host)
    if load.failure is not None:
        return load.failure
    if not load.record.ok:
        return _load_failure(python, load.record, own_modules, wording)
    if not load.tools and not load.record.handlers and not load.skipped:
        return _empty(python, load, wording)
    return None


def _unmatched_allowances(globs: Sequence[str], names: Sequence[str]) -> list[str]:
    """A ``--plugin-allow-fail`` glob matching no plugin is said: a stale allowance must not
    hide in a configuration file."""
    return [
        f"--plugin-allow-fail {glob} matches no plugin (there are: {', '.join(names)})"
        for glob in globs
        if not any(fnmatch.fnmatchcase(name, glob) for name in names)
    ]


def _allowed(name: str, globs: Sequence[str]) -> str | None:
    """The first ``--plugin-allow-fail`` glob matching the plugin's entry-point name."""
    return next((glob for glob in globs if fnmatch.fnmatchcase(name, glob)), None)


def _without_plugins(
    python: str, host: str, plan: PluginPlan, discovery: Discovery, expected: Expectations
) -> Judgement:
    """Library mode: a distribution that declares no plugin passes on its build, install,
    imports and scripts, unless plugins were expected or a declared group looks like a known
    one misspelled."""
    if plan.near_misses:
        return Judgement((_near_miss(python, plan, discovery),))
    wanted = (
        bool(expected.tools)
        or (expected.plugins or 0) > 0
        or expected.plugins_asked_for
        or host != "auto"
    )
    if expected.plugins == 0 or not wanted:
        declared = ", ".join(discovery.declared_groups) or "no entry points"
        return Judgement(
            notes=(
                f"{discovery.dist} {discovery.version} declares no plugins ({declared}): "
                "verified as a library (build, install, imports, console scripts)",
            ),
            summary="no plugins: verified as a library",
        )
    return Judgement((_no_plugins(python, host, plan.groups, discovery),))


def _no_plugins(python: str, host: str, groups: Sequence[str], discovery: Discovery) -> Failure:
    declared = ", ".join(discovery.declared_groups) or "no entry points at all"
    looked_for = (
        "no console script to start as an MCP server (looked in group 'console_scripts')"
        if host == "mcp" and list(groups) == ["console_scripts"]
        else f"no entry points in {_groups(groups)}"
        if groups
        else "no plugins in any group"
    )
    message = f"{discovery.dist} {discovery.version} declares {looked_for}; it declares: {declared}"
    if discovery.others:
        providers = sorted({other["dist"] for other in discovery.others})
        message += f" (other installed distributions do: {', '.join(providers)}; they are ignored)"
    return Failure(
        "no_plugins", message, python=python, hint=_no_plugins_hint(host, groups, discovery)
    )


def _no_plugins_hint(host: str, groups: Sequence[str], discovery: Discovery) -> str:
    """A next step that works: the host that judges the groups the distribution declares."""
    first = groups[0] if groups else "GROUP"
    judged = {
        group: chosen
        for group in discovery.declared_groups
        if (chosen := host_for_group(group)) is not None
    }
    if judged:
        listed = ", ".join(f"{group!r} (host {chosen})" for group, chosen in judged.items())
        return (
            f"it declares {listed}: drop --host and --group so --host auto judges each plugin "
            f"by its group, or run --host {next(iter(judged.values()))}"
        ) + ("" if host == "auto" else "; or " + wording_of(host).declare_hint.format(group=first))
    others = [g for g in discovery.declared_groups if g not in SCRIPT_GROUPS]
    if others:
        return (
            f"it declares {', '.join(map(repr, others))}: check that group with --group "
            f"{others[0]} (--host auto loads it as its application would), or declare a plugin "
            "in the group you expected"
        )
    return wording_of(host).declare_hint.format(group=first) + (
        "; or drop --expect-tools/--expect-plugins/--host/--group to verify it as a library"
    )


def _near_miss(python: str, plan: PluginPlan, discovery: Discovery) -> Failure:
    group, meant = next(iter(plan.near_misses.items()))
    return Failure(
        "no_plugins",
        f"{discovery.dist} {discovery.version} declares entry points in {group!r}, which no "
        f"application loads: did you mean {meant!r}?",
        python=python,
        hint=f"rename [project.entry-points.{group!r}] to [project.entry-points.{meant!r}] in "
        "pyproject.toml (or the entry_points of setup.cfg/setup.py)",
    )


def _load_failure(
    python: str, record: PluginRecord, own_modules: frozenset[str], wording: Wording
) -> Failure:
    error = record.error
    assert error is not None
    cause = f"{error.type}: {error.message}" if error.message else error.type
    if error.type == "MissingPrerequisite":
        message = f"plugin {record.name!r} ({record.value}) {error.message}"
    elif error.stage == "setup":
        message = f"plugin {record.name!r} ({record.value}) raised while registering: {cause}"
    elif error.stage == "exercise":
        message = (
            f"plugin {record.name!r} ({record.value}) broke when its application used it: {cause}"
        )
    elif error.stage == "application" and error.type == "ApplicationMissing":
        message = f"plugin {record.name!r} ({record.value}) cannot be loaded: {error.message}"
    elif error.stage == "application":
        message = f"plugin {record.name!r} ({record.value}) was refused by its application: {cause}"
    elif error.stage == "validate":
        message = f"plugin {record.name!r} ({record.value}) is not a valid plugin: {cause}"
    else:
        message = f"plugin {record.name!r} ({record.value}) failed to load: {cause}"
    return Failure(
        "plugin_load_failed",
        message,
        python=python,
        plugin=record.name,
        hint=load_hint(record, own_modules, python, wording),
        details=error.traceback or None,
    )


def _empty(python: str, load: PluginLoad, wording: Wording) -> Failure:
    record = load.record
    empty = wording.empty
    if load.hooks:
        empty = f"registered nothing through its hooks ({', '.join(load.hooks)})"
    return Failure(
        "plugin_empty",
        f"plugin {record.name!r} ({record.value}) loaded but {empty}",
        python=python,
        plugin=record.name,
        hint=wording.empty_hint,
    )


def _duplicates(python: str, loads: Sequence[PluginLoad]) -> list[Failure]:
    """Two plugins of one group registering the same tool (or fixture, model...) under one
    name: the application keeps one of them. Hooks are meant to be implemented by many, and
    plugins of different groups go to different registries (Mako's ``mako`` lexer and ``mako``
    extractor)."""
    owners: dict[tuple[str, str, str], list[str]] = {}
    for load in loads:
        for tool in load.tools:
            if tool.kind != "hook":
                key = (load.record.group, tool.kind, tool.name)
                owners.setdefault(key, []).append(tool.plugin)
    return [
        Failure(
            "tool_duplicate",
            f"{kind} {name!r} is registered by {len(plugins)} plugins: "
            + ", ".join(repr(p) for p in plugins),
            python=python,
            plugin=plugins[-1],
            tool=name,
            hint=f"{kind} names must be unique across a distribution's plugins: rename one",
        )
        for (_, kind, name), plugins in owners.items()
        if len(plugins) > 1
    ]


def _tool_expectations(
    python: str,
    tools: Sequence[ToolRecord],
    plugins: Sequence[PluginRecord],
    expected: Expectations,
    wording: Wording,
) -> list[Failure]:
    registered = sorted({_label(tool) for tool in tools})
    # a bare name matches a registration of any kind; ``kind:name`` only that kind
    matchable = {tool.name for tool in tools} | {f"{tool.kind}:{tool.name}" for tool in tools}
    failed = [p.name for p in plugins if not p.ok]
    failures: list[Failure] = []
    for name in expected.tools:
        if name in matchable:
            continue
        close = difflib.get_close_matches(name, sorted(matchable), n=1)
        message = f"expected tool {name!r} is not registered"
        message += (
            f" (registered: {', '.join(registered)})" if registered else " (nothing registered)"
        )
        if failed:
            hint = (
                f"plugin(s) {', '.join(map(repr, failed))} failed to load and may be the "
                "one that provides it: fix that first"
            )
        elif close:
            hint = f"did you mean {close[0]!r}? fix the tool's name or --expect-tools"
        else:
            hint = wording.register_hint
        failures.append(Failure("tool_missing", message, python=python, tool=name, hint=hint))
    if expected.exact:
        wanted = set(expected.tools)
        failures.extend(
            Failure(
                "tool_unexpected",
                f"{tool.kind} {tool.name!r} is registered by plugin {tool.plugin!r} but not "
                "expected (--exact)",
                python=python,
                plugin=tool.plugin,
                tool=tool.name,
                hint="add it to --expect-tools, or stop registering it",
            )
            for tool in sorted(tools, key=_label)
            if tool.kind != "hook" and not {tool.name, f"{tool.kind}:{tool.name}"} & wanted
        )
    return failures


def _label(tool: ToolRecord) -> str:
    return tool.name if tool.kind == "tool" else f"{tool.kind}:{tool.name}"


def _groups(groups: Sequence[str]) -> str:
    if len(groups) == 1:
        return f"group {groups[0]!r}"
    return "groups " + ", ".join(repr(g) for g in groups)


def wording_of(host: str) -> Wording:
    """The words of ``host``'s failures; ``auto`` (no plugin yet, or plugins of several hosts)
    speaks of any group, as the ``entrypoints`` host does; a host no registry entry names is one
    an application ships."""
    known = HOSTS.get(GENERIC_HOST if host == "auto" else host)
    return known.wording if known is not None else APPLICATION_HOST_WORDING
