"""How failures explain themselves, per host: what a plugin is there and how it registers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wording:
    """How failures explain themselves for one host: what a plugin is and how it registers."""

    empty: str
    empty_hint: str
    setup: str
    validate_hint: str
    declare_hint: str
    register_hint: str = "register it in the plugin's setup(api), or fix --expect-tools"


WORDING = {
    "native": Wording(
        empty="registered no tools and no event handlers: it does nothing",
        empty_hint="call api.register_tool(...) (or api.on(...)) in setup(api); "
        "a registration may be missing or behind a condition that is false here",
        setup="the plugin's setup(api) raised: fix its registration code (traceback in details)",
        validate_hint="point the entry point at a callable, e.g. 'package.module:setup'",
        declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
        'name = "package.module:setup", or point --group at the group you use',
    ),
    "entrypoints": Wording(
        empty="provides no tool",
        empty_hint="point the entry point at a callable",
        setup="the entry point raised while loading (traceback in details)",
        validate_hint="point the entry point at a callable, e.g. 'package.module:main'",
        declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
        'name = "package.module:function", or point --group at the group you use',
    ),
    "llm": Wording(
        empty="registered nothing: no tool, model, command, loader or other registration",
        empty_hint="implement one of llm's registration hooks (register_tools, register_models, "
        "register_commands, ...) with @llm.hookimpl in the plugin module",
        setup="one of the plugin's llm hooks raised: fix its registration code "
        "(traceback in details)",
        validate_hint="decorate hook functions with @llm.hookimpl and name them after llm's "
        "hooks (register_tools, register_models, ...) with the documented arguments",
        declare_hint="declare the plugin module in pyproject.toml: [project.entry-points.llm] "
        'name = "package_module"',
        register_hint="register it in the plugin's register_tools hook (a Toolbox method is "
        "named <Class>_<method>), or fix --expect-tools",
    ),
    "pytest": Wording(
        empty="registered nothing with pytest: no fixture, option, ini key, marker or hook",
        empty_hint="define fixtures or pytest_* hooks in the module the pytest11 entry point names",
        setup="pytest refused the plugin while configuring or collecting (its output is in "
        "details): run pytest --collect-only in an empty directory with the plugin installed",
        validate_hint="pytest checks hook implementations against its hookspecs: fix the hook's "
        "name, or drop the argument pytest does not pass to it",
        declare_hint="declare the plugin module in pyproject.toml: [project.entry-points.pytest11] "
        'name = "package.plugin"',
        register_hint="define it in the plugin module (a fixture, option, ini key or marker), "
        "or fix --expect-tools",
    ),
    "pluggy": Wording(
        empty="implements none of the application's hooks",
        empty_hint="implement at least one of the application's hookspecs, marked with its "
        "hookimpl marker",
        setup="the application's plugin manager refused the plugin (traceback in details)",
        validate_hint="hook implementations must match the application's hookspecs: fix the "
        "hook's name, or its arguments (a subset of the spec's, never others)",
        declare_hint="declare the plugin module in pyproject.toml: "
        '[project.entry-points."{group}"] '
        'name = "package.plugin"',
        register_hint="implement that hook in the plugin, or fix --expect-tools",
    ),
    "flake8": Wording(
        empty="registered no error code",
        empty_hint="name the entry point after the plugin's error-code prefix (e.g. 'ABC')",
        setup="flake8 could not run the plugin on a sample file (traceback in details)",
        validate_hint="flake8 takes an entry point name as the plugin's error-code prefix: 1-3 "
        "capital letters and up to 3 digits (e.g. 'ABC1'), pointing at the checker",
        declare_hint='declare it in pyproject.toml: [project.entry-points."flake8.extension"] '
        'ABC = "package.checker:Checker"',
        register_hint="name the entry point after that prefix, or fix --expect-tools",
    ),
    "sphinx": Wording(
        empty="registered nothing with sphinx",
        empty_hint="a sphinx.html_themes entry point names the theme's module",
        setup="sphinx-build failed with the theme or builder enabled (its output is in details)",
        validate_hint="a sphinx.html_themes entry point names a module whose directory holds "
        "theme.toml or theme.conf; a sphinx.builders one names an extension module",
        declare_hint='declare it in pyproject.toml: [project.entry-points."sphinx.html_themes"] '
        'name = "package_theme"',
        register_hint="register it through the entry point, or fix --expect-tools",
    ),
    "mkdocs": Wording(
        empty="registered nothing with mkdocs",
        empty_hint="an mkdocs.plugins entry point names a subclass of mkdocs.plugins.BasePlugin",
        setup="mkdocs build failed with the plugin or theme enabled (its output is in details)",
        validate_hint="an mkdocs.plugins entry point names a subclass of "
        "mkdocs.plugins.BasePlugin; an mkdocs.themes one names the theme's package",
        declare_hint='declare it in pyproject.toml: [project.entry-points."mkdocs.plugins"] '
        'name = "package.plugin:Plugin"',
        register_hint="register it through the entry point, or fix --expect-tools",
    ),
    "mcp": Wording(
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


def wording_for(host: str) -> Wording:
    """The words for ``host``; an unknown one speaks as ``entrypoints``."""
    return WORDING.get(host, WORDING["entrypoints"])
