"""From what the probe saw to failures: load errors, counts, expected tools, duplicates.

Every message names the plugin and the cause; every hint says what to change.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sandboxverify.report._model import Failure, PluginRecord, ToolRecord
from sandboxverify.stages._probe import Discovery, PluginLoad

_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


@dataclass(frozen=True)
class Expectations:
    tools: tuple[str, ...] = ()
    exact: bool = False
    plugins: int | None = None


@dataclass(frozen=True)
class _Wording:
    """How failures explain themselves for one host: what a plugin is and how it registers."""

    empty: str
    empty_hint: str
    setup: str
    validate_hint: str
    declare_hint: str
    register_hint: str = "register it in the plugin's setup(api), or fix --expect-tools"


_WORDING = {
    "native": _Wording(
        empty="registered no tools and no event handlers: it does nothing",
        empty_hint="call api.register_tool(...) (or api.on(...)) in setup(api); "
        "a registration may be missing or behind a condition that is false here",
        setup="the plugin's setup(api) raised: fix its registration code (traceback in details)",
        validate_hint="point the entry point at a callable, e.g. 'package.module:setup'",
        declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
        'name = "package.module:setup", or point --group at the group you use',
    ),
    "entrypoints": _Wording(
        empty="provides no tool",
        empty_hint="point the entry point at a callable",
        setup="the entry point raised while loading (traceback in details)",
        validate_hint="point the entry point at a callable, e.g. 'package.module:main'",
        declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
        'name = "package.module:function", or point --group at the group you use',
    ),
    "llm": _Wording(
        empty="registered no tools: its register_tools hook registers nothing, or it has none",
        empty_hint="implement @llm.hookimpl def register_tools(register): register(fn) in the "
        "plugin module; --host llm checks tool plugins",
        setup="the plugin's register_tools hook raised: fix its registration code "
        "(traceback in details)",
        validate_hint="decorate hook functions with @llm.hookimpl and name them after llm's "
        "hooks (register_tools, register_models, ...) with the documented arguments",
        declare_hint="declare the plugin module in pyproject.toml: [project.entry-points.llm] "
        'name = "package_module"',
        register_hint="register it in the plugin's register_tools hook (a Toolbox method is "
        "named <Class>_<method>), or fix --expect-tools",
    ),
    "mcp": _Wording(
        empty="is an MCP server that lists no tools",
        empty_hint="register at least one tool with the server (tools/list must return it)",
        setup="the server's tools could not be registered (traceback in details)",
        validate_hint="the server command must name a program installed in the sandbox: a "
        "console script of the distribution, or fix --server-command",
        declare_hint="declare a console script that starts the server over stdio: "
        '[project.scripts] name = "package.server:main", or pass --server-command',
        register_hint="the server must list it in tools/list, or fix --expect-tools",
    ),
}


def evaluate(
    *,
    python: str,
    groups: Sequence[str],
    discovery: Discovery,
    loads: Sequence[PluginLoad],
    expected: Expectations,
    own_modules: frozenset[str],
    host: str = "native",
) -> list[Failure]:
    wording = _WORDING[host]
    if not loads:
        return [_no_plugins(python, host, groups, discovery, wording)]
    failures: list[Failure] = []
    for load in loads:
        if load.failure is not None:
            failures.append(load.failure)
        elif not load.record.ok:
            failures.append(_load_failure(python, load.record, own_modules, wording))
        elif not load.tools and not load.record.handlers:
            failures.append(_empty(python, load, wording))
    tools = [tool for load in loads for tool in load.tools]
    failures += _duplicates(python, tools)
    if expected.plugins is not None and expected.plugins != len(loads):
        names = ", ".join(load.record.name for load in loads)
        failures.append(
            Failure(
                "plugin_count_mismatch",
                f"expected {expected.plugins} plugin(s) in {_groups(groups)}, "
                f"found {len(loads)}: {names}",
                python=python,
                hint="add or remove entry points in pyproject.toml, or fix --expect-plugins",
            )
        )
    failures += _tool_expectations(
        python, tools, [load.record for load in loads], expected, wording
    )
    return failures


def _no_plugins(
    python: str, host: str, groups: Sequence[str], discovery: Discovery, wording: _Wording
) -> Failure:
    declared = ", ".join(discovery.declared_groups) or "no entry points at all"
    looked_for = (
        "no console script to start as an MCP server (looked in group 'console_scripts')"
        if host == "mcp" and list(groups) == ["console_scripts"]
        else f"no entry points in {_groups(groups)}"
    )
    message = f"{discovery.dist} {discovery.version} declares {looked_for}; it declares: {declared}"
    if discovery.others:
        providers = sorted({other["dist"] for other in discovery.others})
        message += f" (other installed distributions do: {', '.join(providers)}; they are ignored)"
    first = groups[0] if groups else "GROUP"
    return Failure(
        "no_plugins", message, python=python, hint=wording.declare_hint.format(group=first)
    )


def _load_failure(
    python: str, record: PluginRecord, own_modules: frozenset[str], wording: _Wording
) -> Failure:
    error = record.error
    assert error is not None
    cause = f"{error.type}: {error.message}" if error.message else error.type
    if error.stage == "setup":
        message = f"plugin {record.name!r} ({record.value}) raised while registering: {cause}"
    elif error.stage == "validate":
        message = f"plugin {record.name!r} ({record.value}) is not a valid plugin: {cause}"
    else:
        message = f"plugin {record.name!r} ({record.value}) failed to load: {cause}"
    return Failure(
        "plugin_load_failed",
        message,
        python=python,
        plugin=record.name,
        hint=_load_hint(record, own_modules, python, wording),
        details=error.traceback or None,
    )


def _empty(python: str, load: PluginLoad, wording: _Wording) -> Failure:
    record = load.record
    empty = wording.empty
    if load.hooks and "register_tools" not in load.hooks:
        empty = f"implements no register_tools hook (it implements {', '.join(load.hooks)})"
    elif load.hooks:
        empty = "registered no tools: its register_tools hook registered nothing"
    return Failure(
        "plugin_empty",
        f"plugin {record.name!r} ({record.value}) loaded but {empty}",
        python=python,
        plugin=record.name,
        hint=wording.empty_hint,
    )


def _load_hint(
    record: PluginRecord, own_modules: frozenset[str], python: str, wording: _Wording
) -> str:
    error = record.error
    assert error is not None
    if error.stage == "setup":
        return wording.setup
    if error.stage == "validate":
        return wording.validate_hint
    missing = _MISSING_MODULE.search(error.message)
    if error.type == "ModuleNotFoundError" and missing:
        module = missing.group(1)
        top = module.split(".", 1)[0]
        if top in own_modules:
            return (
                f"{module} belongs to this project but is not in the installed wheel: "
                "it is left out of the sdist or the wheel (check the build's include/exclude "
                "settings, MANIFEST.in, packages=...), or the entry point names a module that "
                "was renamed or never existed"
            )
        return (
            f"{top!r} is imported but not installed: declare it in [project] dependencies "
            "(only declared dependencies are installed in the sandbox), or, if it is the "
            f"application that loads the plugin, install it with --with {top}"
        )
    if error.type == "AttributeError" and "has no attribute" in error.message:
        return (
            f"the entry point names an attribute the module does not define: fix "
            f"{record.value!r} in [project.entry-points] of pyproject.toml"
        )
    if error.type in ("FileNotFoundError", "IsADirectoryError", "NotADirectoryError"):
        return (
            "a file read at import is not in the installed package: declare it as package "
            "data so the wheel ships it"
        )
    if error.type == "SyntaxError":
        return (
            f"the module does not compile on Python {python}: use syntax this Python "
            "understands, or raise requires-python"
        )
    return "the plugin's module raised at import (traceback in details)"


def _duplicates(python: str, tools: Sequence[ToolRecord]) -> list[Failure]:
    owners: dict[str, list[str]] = {}
    for tool in tools:
        owners.setdefault(tool.name, []).append(tool.plugin)
    return [
        Failure(
            "tool_duplicate",
            f"tool {name!r} is registered by {len(plugins)} plugins: "
            + ", ".join(repr(p) for p in plugins),
            python=python,
            plugin=plugins[-1],
            tool=name,
            hint="tool names must be unique across a distribution's plugins: rename one",
        )
        for name, plugins in owners.items()
        if len(plugins) > 1
    ]


def _tool_expectations(
    python: str,
    tools: Sequence[ToolRecord],
    plugins: Sequence[PluginRecord],
    expected: Expectations,
    wording: _Wording,
) -> list[Failure]:
    registered = sorted({tool.name for tool in tools})
    failed = [p.name for p in plugins if not p.ok]
    failures: list[Failure] = []
    for name in expected.tools:
        if name in registered:
            continue
        close = difflib.get_close_matches(name, registered, n=1)
        message = f"expected tool {name!r} is not registered"
        message += (
            f" (registered: {', '.join(registered)})" if registered else " (no tools registered)"
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
        owner = {tool.name: tool.plugin for tool in tools}
        failures.extend(
            Failure(
                "tool_unexpected",
                f"tool {name!r} is registered by plugin {owner[name]!r} but not expected (--exact)",
                python=python,
                plugin=owner[name],
                tool=name,
                hint="add it to --expect-tools, or stop registering it",
            )
            for name in registered
            if name not in expected.tools
        )
    return failures


def _groups(groups: Sequence[str]) -> str:
    if len(groups) == 1:
        return f"group {groups[0]!r}"
    return "groups " + ", ".join(repr(g) for g in groups)
