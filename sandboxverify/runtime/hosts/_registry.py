"""The one registry of hosts: each host declared once, with the groups it judges, the application
that loads each group, the function that loads a plugin its way, what it registers, and how its
failures explain themselves. Everything else derives from it: ``--host`` and its help, the
default groups, the host ``--host auto`` chooses per group, hints, the configuration schema and
the README's table (a test holds the README to it).

Shared by both sides, so it is plain data: the host side plans and words its failures from it,
every plugin-load process finds its loader here. What declares a host (``Host``, ``Group``,
``Wording``) is in ``_hostspec``.
"""

from __future__ import annotations

from sandboxverify.runtime.hosts._hostspec import Group, Host, NamedModules, Wording
from sandboxverify.runtime.hosts._registry_apps import APPLICATION_HOSTS

#: what declares a host is read through the registry too
__all__ = [
    "GENERIC_HOST",
    "HOSTS",
    "HOST_CHOICES",
    "KNOWN_GROUPS",
    "MCP_SDKS",
    "SCRIPT_GROUPS",
    "SESSION_HOSTS",
    "Group",
    "Host",
    "Wording",
    "host_named",
    "names_file",
    "names_module",
    "near_miss",
]


def _pluggy(name: str, application: str, hookspecs: str) -> Group:
    return Group(name, application=application, hookspecs=hookspecs, names_module=True)


_SETUP_REGISTER = "register it in the plugin's setup(api), or fix --expect-tools"

#: where an application ships its own host: an entry point named after the group it judges,
#: naming an object that speaks :data:`HOST_PLUGIN_PROTOCOL` (see the README, "Hosts as plugins")
HOST_PLUGIN_GROUP = "sandboxverify.hosts"
#: the version of that protocol: ``protocol``, ``groups`` and ``load(entry_point, context)``
HOST_PLUGIN_PROTOCOL = 1
#: how the failures of a plugin judged by a host its application ships explain themselves
APPLICATION_HOST_WORDING = Wording(
    empty="registered nothing with its application's own host",
    empty_hint="the application's host reports what a plugin provides: check with the "
    "application's documentation what its plugins must offer",
    setup="the application's own host refused the plugin (its message is above, its traceback "
    "in details): fix what it names, as the application's documentation says",
    validate_hint="the application's own host could not judge the plugin: a host shipped through "
    "the 'sandboxverify.hosts' group must speak protocol 1 (see the README)",
    declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
    'name = "package.module:object"',
    register_hint="provide it as the application's host reports it, or fix --expect-tools",
)
#: a distribution depending on one of these ships MCP servers as console scripts
#: the host of a group no application is known for: ``EntryPoint.load()`` must succeed
GENERIC_HOST = "entrypoints"
MCP_SDKS = frozenset({"mcp", "fastmcp"})


HOSTS: dict[str, Host] = {
    host.name: host
    for host in (
        Host(
            "native",
            loader="_native:load_native",
            groups=[Group("sandboxverify.plugins")],
            drives_sessions=True,
            loading="`setup(api)` is called ([below](#writing-a-native-plugin))",
            kinds=["tool"],
            wording=Wording(
                empty="registered no tools and no event handlers: it does nothing",
                empty_hint="call api.register_tool(...) (or api.on(...)) in setup(api); "
                "a registration may be missing or behind a condition that is false here",
                setup="the plugin's setup(api) raised: fix its registration code "
                "(traceback in details)",
                validate_hint="point the entry point at a callable, e.g. 'package.module:setup'",
                declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
                'name = "package.module:setup", or point --group at the group you use',
                register_hint=_SETUP_REGISTER,
            ),
        ),
        Host(
            GENERIC_HOST,
            loader="_entrypoints:load_entrypoint",
            loading="`EntryPoint.load()` must succeed; a module is fine, unless `--group "
            "NAME:callable` says the application calls what it names",
            kinds=["entry_point"],
            wording=Wording(
                empty="provides no tool",
                empty_hint="point the entry point at a callable",
                setup="the entry point raised while loading (traceback in details)",
                validate_hint="point the entry point at a callable, e.g. 'package.module:main'",
                declare_hint='declare one in pyproject.toml: [project.entry-points."{group}"] '
                'name = "package.module:function", or point --group at the group you use',
            ),
        ),
        Host(
            "llm",
            loader="_llm:load_llm",
            groups=[Group("llm", application="llm", names_module=True)],
            drives_sessions=True,
            loading="registered with llm's plugin manager, every registration hook called",
            kinds=[
                "tool",
                "model",
                "embedding_model",
                "command",
                "template_loader",
                "fragment_loader",
            ],
            wording=Wording(
                empty="registered nothing: no tool, model, command, loader or other registration",
                empty_hint="implement one of llm's registration hooks (register_tools, "
                "register_models, register_commands, ...) with @llm.hookimpl in the plugin module",
                setup="one of the plugin's llm hooks raised: fix its registration code "
                "(traceback in details)",
                validate_hint="decorate hook functions with @llm.hookimpl and name them after "
                "llm's hooks (register_tools, register_models, ...) with the documented arguments",
                declare_hint="declare the plugin module in pyproject.toml: "
                '[project.entry-points.llm] name = "package_module"',
                register_hint="register it in the plugin's register_tools hook (a Toolbox method "
                "is named <Class>_<method>), or fix --expect-tools",
            ),
        ),
        Host(
            "mcp",
            loader="_mcp:load_mcp",
            # an MCP server is started through the distribution's console script
            default_group="console_scripts",
            drives_sessions=True,
            loading="started as an MCP server over stdio: `initialize`, `tools/list`",
            kinds=["tool"],
            wording=Wording(
                empty="is an MCP server that lists no tools",
                empty_hint="register at least one tool with the server (tools/list must return it)",
                setup="the server's tools could not be registered (traceback in details)",
                validate_hint="the server command must name a program installed in the sandbox: "
                "a console script of the distribution, or fix --server-command",
                declare_hint="declare a console script that starts the server over stdio: "
                '[project.scripts] name = "package.server:main", or pass --server-command',
                register_hint="the server must list it in tools/list, or fix --expect-tools",
            ),
        ),
        Host(
            "pytest",
            loader="_pytest:load_pytest",
            groups=[Group("pytest11", application="pytest", names_module=True)],
            loading="`pytest --collect-only` in an empty directory with the plugin active, "
            "through pytest's own plugin manager (hook implementations checked against pytest's "
            "hookspecs), then a generated test module: a plain test, a parametrized one and one "
            "per fixture the plugin defines must pass (a fixture that needs an unreachable "
            "service is noted), and again with each switch the plugin adds turned on alone",
            kinds=["fixture", "option", "ini", "marker", "hook"],
            wording=Wording(
                empty="registered nothing with pytest: no fixture, option, ini key, marker or hook",
                empty_hint="define fixtures or pytest_* hooks in the module the pytest11 entry "
                "point names",
                setup="pytest refused the plugin while configuring or collecting (its output is "
                "in details): run pytest --collect-only in an empty directory with the plugin "
                "installed",
                validate_hint="pytest checks hook implementations against its hookspecs: fix the "
                "hook's name, or drop the argument pytest does not pass to it",
                declare_hint="declare the plugin module in pyproject.toml: "
                '[project.entry-points.pytest11] name = "package.plugin"',
                register_hint="define it in the plugin module (a fixture, option, ini key or "
                "marker), or fix --expect-tools",
                exercise_hint="pytest, running tests with the plugin active, failed as shown: "
                "run a test using the fixture (or any parametrized test) with the plugin "
                "installed, and fix what the traceback in details points at",
            ),
        ),
        Host(
            "pluggy",
            loader="_pluggy:load_pluggy",
            # applications built on pluggy: their hookspecs validate a plugin's hook
            # implementations
            groups=[
                _pluggy("datasette", "datasette", "datasette.hookspecs"),
                _pluggy("sqlite_utils", "sqlite-utils", "sqlite_utils.hookspecs"),
                _pluggy("tox", "tox", "tox.plugin.spec"),
                Group(
                    "hatch",
                    application="hatchling",
                    hookspecs="hatchling.plugin.specs",
                    more_hookspecs=["hatch.plugin.specs"],
                ),
                _pluggy("devpi_server", "devpi-server", "devpi_server.hookspecs"),
                Group("devpi_client", application="devpi-client", hookspecs="devpi.hookspecs"),
            ],
            loading="registered with a plugin manager holding the application's real hookspecs "
            "(a misspelled hook or an argument the spec lacks fails), then the application runs "
            "with it, offline: datasette serves pages, tox lists and runs an environment, "
            "sqlite-utils runs its command line, hatchling builds a project configured to use it "
            "(devpi is not started); a hook that raises fails",
            kinds=["hook"],
            wording=Wording(
                empty="implements none of the application's hooks",
                empty_hint="implement at least one of the application's hookspecs, marked with "
                "its hookimpl marker",
                setup="the application's plugin manager refused the plugin (traceback in details)",
                validate_hint="hook implementations must match the application's hookspecs: fix "
                "the hook's name, or its arguments (a subset of the spec's, never others)",
                declare_hint="declare the plugin module in pyproject.toml: "
                '[project.entry-points."{group}"] name = "package.plugin"',
                register_hint="implement that hook in the plugin, or fix --expect-tools",
                exercise_hint="the application called the plugin's hook and it raised (the "
                "application may have shown it as a 500 page or an exit status): fix the hook; "
                "the traceback is in details",
            ),
        ),
        Host(
            "flake8",
            loader="_flake8:load_flake8",
            groups=[
                Group("flake8.extension", application="flake8"),
                Group("flake8.report", application="flake8"),
            ],
            loading="found and classified by flake8's own plugin finder (its rules for code "
            "prefixes), then run once on a small file",
            kinds=["code", "formatter"],
            wording=Wording(
                empty="registered no error code",
                empty_hint="name the entry point after the plugin's error-code prefix (e.g. 'ABC')",
                setup="flake8 could not run the plugin on a sample file (traceback in details)",
                validate_hint="flake8 takes an entry point name as the plugin's error-code "
                "prefix: 1-3 capital letters and up to 3 digits (e.g. 'ABC1'), pointing at the "
                "checker",
                declare_hint="declare it in pyproject.toml: "
                '[project.entry-points."flake8.extension"] ABC = "package.checker:Checker"',
                register_hint="name the entry point after that prefix, or fix --expect-tools",
            ),
        ),
        Host(
            "sphinx",
            loader="_sphinx:load_sphinx",
            groups=[
                Group("sphinx.html_themes", application="sphinx"),
                Group("sphinx.builders", application="sphinx", names_module=True),
            ],
            loading="a one-page `sphinx-build` with the theme or builder; an extension named "
            "in `conf.py`, with no entry point, is built with `extensions = [module]`",
            kinds=["theme", "builder", "extension"],
            named=NamedModules(
                "sphinx:extensions",
                application="sphinx",
                function="setup",
                arguments=1,
                named_in="`extensions = [...]` in conf.py",
            ),
            wording=Wording(
                empty="registered nothing with sphinx",
                empty_hint="a sphinx.html_themes entry point names the theme's module",
                setup="sphinx-build failed with the theme, builder or extension enabled (its "
                "output is in details)",
                validate_hint="a sphinx.html_themes entry point names a module whose directory "
                "holds theme.toml or theme.conf; a sphinx.builders one names an extension module",
                declare_hint="declare it in pyproject.toml: "
                '[project.entry-points."sphinx.html_themes"] name = "package_theme"',
                register_hint="register it through the entry point, or fix --expect-tools",
            ),
        ),
        Host(
            "mkdocs",
            loader="_mkdocs:load_mkdocs",
            groups=[
                Group("mkdocs.plugins", application="mkdocs"),
                Group("mkdocs.themes", application="mkdocs"),
            ],
            loading="a one-page `mkdocs build` with the plugin or theme",
            kinds=["plugin", "theme"],
            wording=Wording(
                empty="registered nothing with mkdocs",
                empty_hint="an mkdocs.plugins entry point names a subclass of "
                "mkdocs.plugins.BasePlugin",
                setup="mkdocs build failed with the plugin or theme enabled (its output is in "
                "in details)",
                validate_hint="an mkdocs.plugins entry point names a subclass of "
                "mkdocs.plugins.BasePlugin; an mkdocs.themes one names the theme's package",
                declare_hint="declare it in pyproject.toml: "
                '[project.entry-points."mkdocs.plugins"] name = "package.plugin:Plugin"',
                register_hint="register it through the entry point, or fix --expect-tools",
            ),
        ),
        Host(
            "host-protocol",
            loader="_application_host:load_host_protocol",
            groups=[Group(HOST_PLUGIN_GROUP)],
            loading="the host an application ships must speak protocol 1: `protocol`, `groups` "
            "(holding the group its entry point is named after) and `load(entry_point, context)` "
            "([below](#hosts-as-plugins-an-application-ships-its-own))",
            kinds=["host"],
            wording=Wording(
                empty="judges nothing",
                empty_hint="name the entry point after the group the host judges",
                setup="the host could not be asked what it judges (traceback in details)",
                validate_hint="a host in group 'sandboxverify.hosts' is an object with protocol = "
                "1, groups (a list holding the group its entry point is named after) and "
                "load(entry_point, context): see the README, 'Hosts as plugins'",
                declare_hint='declare it in pyproject.toml: [project.entry-points."{group}"] '
                '"myapp.plugins" = "myapp.verify:host"',
                register_hint="name the host's entry point after that group, or fix --expect-tools",
            ),
        ),
        *APPLICATION_HOSTS,
    )
}

#: ``--host``: a host by name, or ``auto`` (each plugin by the application of its group)
HOST_CHOICES: tuple[str, ...] = ("auto", *HOSTS)
#: the hosts an in-process harness session (``sandboxverify run``, ``create_test_session``)
#: loads plugins with
SESSION_HOSTS: tuple[str, ...] = tuple(name for name, host in HOSTS.items() if host.drives_sessions)
#: every group a known application loads, with the host that judges it
KNOWN_GROUPS: dict[str, tuple[Host, Group]] = {
    group.name: (host, group) for host in HOSTS.values() for group in host.groups
}
#: the modules applications load by the name users give them (no entry point), by the name
#: reports give their kind, with the host that judges them
NAMED_MODULES: dict[str, tuple[Host, NamedModules]] = {
    host.named.group: (host, host.named) for host in HOSTS.values() if host.named is not None
}
#: groups no application loads as plugins: commands, not plugins
SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


def host_named(name: str) -> Host:
    """The host called ``name``; a ``KeyError`` for one the registry does not hold (a bug: names
    come from ``--host``'s choices or from this registry)."""
    return HOSTS[name]


def names_module(group: str) -> bool:
    """Does the application of ``group`` load a module rather than call an object?"""
    known = KNOWN_GROUPS.get(group)
    return known is not None and known[1].names_module


def names_modules(host: str) -> bool:
    """Does ``host``'s application load modules its users name in its configuration (``--host
    pylint``: those modules are its plugins)?"""
    return any(named_by.name == host for named_by, _ in NAMED_MODULES.values())


def names_file(group: str) -> bool:
    """Does an entry point of ``group`` name a file in a package, which its application reads
    without importing the package?"""
    known = KNOWN_GROUPS.get(group)
    return known is not None and known[1].names_file


def near_miss(group: str) -> str | None:
    """The known group ``group`` was probably meant to be (``pytest_11`` -> ``pytest11``)."""
    import difflib  # noqa: PLC0415 - the host side asks, the runtime's hosts never do

    if group in KNOWN_GROUPS:
        return None
    squashed = {_squash(known): known for known in KNOWN_GROUPS}
    if _squash(group) in squashed:
        return squashed[_squash(group)]
    close = difflib.get_close_matches(group, list(KNOWN_GROUPS), n=1, cutoff=0.85)
    return close[0] if close else None


def _squash(group: str) -> str:
    return "".join(c for c in group.lower() if c.isalnum())
