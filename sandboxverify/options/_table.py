"""Every option of every command, each declared once: its names, the kind of value it takes
(and so how that value is checked), its default, its help, and which commands take it.

The command line's options, ``--help``, ``[tool.sandboxverify]`` and its JSON Schema derive from
this table; ``CheckOptions`` and the README's option table are held to it by tests.
"""

from __future__ import annotations

from sandboxverify.options._kinds import (
    Assignment,
    Choice,
    Count,
    FilePath,
    Flag,
    GroupName,
    Kind,
    Location,
    Names,
    ReportFile,
    ReportPath,
    Requirement,
    Seconds,
    Toggle,
    Whole,
)
from sandboxverify.options._option import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    CommandName,
    Option,
)
from sandboxverify.options._session_options import SESSION_OPTIONS
from sandboxverify.options._survey_options import SURVEY_OPTIONS
from sandboxverify.options._trust import (
    NAMES_AND_VERSIONS,
    NOT_WEAKER_ISOLATION,
    PROJECT_MAX_INSTALL_TIMEOUT,
    PROJECT_MAX_TIMEOUT,
    VERSIONS_ONLY,
    at_most,
)
from sandboxverify.runtime.hosts import HOST_CHOICES, HOSTS
from sandboxverify.sandbox import INSTALLER_CHOICES, ISOLATION_CHOICES


def _auto_help() -> str:
    """``--host``: which host ``auto`` chooses for which group."""
    mapping = [
        f"{host.groups[0].name} → {name}"
        for name, host in HOSTS.items()
        if host.groups and name != "native"
    ]
    return (
        "Who judges the plugins. auto: each plugin by the application that loads its group ("
        + ", ".join(mapping)
        + ", sandboxverify.plugins → native, console scripts of an MCP SDK user → mcp, any other "
        "group → the host its application ships, else EntryPoint.load(), with the application "
        "found and installed); a distribution without plugins is verified as a library."
    )


def _own_groups_text() -> str:
    owned = [f"{host.own_groups[0]} for {name}" for name, host in HOSTS.items() if host.own_groups]
    return (
        "every group the distribution declares with --host auto, else the host's own: "
        + ", ".join(owned)
    )


CHECK: tuple[CommandName, ...] = ("check",)

OPTIONS: tuple[Option, ...] = (
    # -- check: what is verified, and how plugins are judged --------------------------------
    Option("host", Choice(choices=HOST_CHOICES), _auto_help(), CHECK, default="auto"),
    Option(
        "group",
        GroupName(example="myapp.plugins"),
        "Entry-point group to verify (repeatable); NAME:callable when its entry points must "
        "name callables.",
        CHECK,
        dest="groups",
        multiple=True,
        default=(),
        default_text=_own_groups_text(),
        metavar="NAME[:callable]",
    ),
    Option(
        "hookspecs",
        Assignment(
            hint="e.g. --hookspecs myapp=myapp.hookspecs (the module that defines the "
            "application's pluggy hookspecs)"
        ),
        "The hookspecs module of a pluggy application sandboxverify does not know: its "
        "plugins' hook implementations are validated against it (repeatable).",
        CHECK,
        multiple=True,
        default=(),
        metavar="GROUP=MODULE",
    ),
    Option(
        "application-host",
        Kind(example="myapp.plugins"),
        "Judge GROUP's plugins with the host their application ships (its entry point in group "
        "sandboxverify.hosts) even where sandboxverify has a host for GROUP (repeatable); for "
        "any other group an application's own host is used unasked.",
        CHECK,
        dest="application_hosts",
        multiple=True,
        default=(),
        metavar="GROUP",
    ),
    Option(
        "server-command",
        Kind(example="'my-server --stdio'"),
        "With --host mcp: the command that starts the MCP server over stdio, e.g. "
        "'my-server --stdio' (its first word is looked up in the sandbox's bin/).",
        CHECK,
        default_text="each console script of the distribution",
        metavar="COMMAND",
    ),
    Option(
        "expect-tools",
        Names(example="add,greet"),
        "Tools that must be registered (repeatable, comma-separated).",
        CHECK,
        multiple=True,
        default=(),
        metavar="A,B,C",
    ),
    Option(
        "exact",
        Flag(),
        "Fail on tools that are registered but not expected.",
        CHECK,
        default=False,
    ),
    Option(
        "expect-plugins",
        Whole(minimum=0),
        "How many plugins the distribution must declare in the group(s).",
        CHECK,
        metavar="N",
    ),
    # -- check: where it runs -------------------------------------------------------------------
    Option(
        "python",
        Kind(example="3.12, --python min or --python /usr/bin/python3"),
        "Interpreter to verify on: a version (3.12), a path, 'min' (the lowest one here that "
        "requires-python allows) or 'all' (every one it allows); repeatable, runs in parallel.",
        CHECK,
        multiple=True,
        default=(),
        default_text="the one running sandboxverify",
        metavar="SPEC",
        project=VERSIONS_ONLY,
    ),
    Option(
        "installer",
        Choice(choices=INSTALLER_CHOICES),
        "Make build environments and sandboxes and install with uv or with "
        "virtualenv+pip; auto picks uv when it is installed.",
        ("check", "survey"),
        default="auto",
    ),
    Option(
        "isolation",
        Choice(choices=ISOLATION_CHOICES),
        "How code from the package (build backend, plugins, scripts, smoke) runs. "
        "auto: in the OS sandbox (Linux namespaces with bubblewrap) when it works here, else "
        "process isolation with a warning; strict: refuse to run without the OS sandbox "
        "(exit 2); process: never use it.",
        ("check", "survey"),
        default="auto",
        project=NOT_WEAKER_ISOLATION,
    ),
    Option(
        "network",
        Flag(),
        "Let code from the package (build backend, plugins, scripts, smoke, MCP servers) reach "
        "the host's network and its local services. Without it, in the OS sandbox it has a "
        "network of its own with only loopback; process isolation has no network of its own. "
        "The project's own [tool.sandboxverify] cannot set it.",
        CHECK,
        default=False,
        project=False,
    ),
    Option(
        "index-url",
        Kind(),
        {
            "check": "Package index for dependencies and build requirements.",
            "survey": "Package index the plugins, the application, their dependencies and "
            "build requirements come from.",
        },
        ("check", "survey"),
        metavar="URL",
        project=False,
    ),
    Option(
        "find-links",
        Location(),
        "Extra place to find packages (repeatable).",
        ("check", "survey"),
        multiple=True,
        default=(),
        metavar="PATH|URL",
        project=False,
    ),
    Option(
        "timeout",
        Seconds(),
        "How long each plugin may take to load.",
        CHECK,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        project=at_most(PROJECT_MAX_TIMEOUT),
    ),
    Option(
        "install-timeout",
        Seconds(),
        "How long each build, sandbox or install step may take.",
        CHECK,
        default=DEFAULT_INSTALL_TIMEOUT,
        metavar="SECONDS",
        project=at_most(PROJECT_MAX_INSTALL_TIMEOUT),
    ),
    Option(
        "pass-env",
        Kind(),
        "Environment variable (glob) passed to builds and plugin code (repeatable); "
        "nothing else from your environment reaches plugin code. A credential-like name "
        "(*TOKEN*, *SECRET*, *PASSWORD*, *KEY*, TWINE_*, UV_PUBLISH_*) must be named "
        "exactly.",
        CHECK,
        multiple=True,
        default=(),
        metavar="NAME",
        project=False,
    ),
    # -- check: what else is verified -----------------------------------------------------------
    Option(
        "smoke",
        FilePath(example="smoke.toml"),
        "A .toml or .py playbook to run in every sandbox after the probe: a scripted model "
        "calls the plugins' tools for real.",
        CHECK,
        metavar="FILE",
    ),
    Option(
        "expect-files",
        Kind(),
        "A path glob inside the wheel that must match at least one file, e.g. "
        "'mypkg/data/*.json' (repeatable).",
        CHECK,
        multiple=True,
        default=(),
        metavar="GLOB",
    ),
    Option(
        "import-all",
        Toggle(),
        "Import every module the wheel ships, in the sandbox.",
        CHECK,
        default=True,
    ),
    Option(
        "import-skip",
        Kind(),
        "Module glob the import-all check never imports, e.g. 'mypkg.windows' (a package's "
        "submodules are skipped with it; repeatable; *.__main__ is always skipped).",
        CHECK,
        multiple=True,
        default=(),
        metavar="GLOB",
    ),
    Option(
        "import-allow-fail",
        Kind(),
        "Module glob that may fail to import (e.g. it needs an optional extra): reported, "
        "not a failure (repeatable).",
        CHECK,
        multiple=True,
        default=(),
        metavar="GLOB",
    ),
    Option(
        "plugin-allow-fail",
        Kind(),
        "Plugin (entry-point name glob) whose load may fail, e.g. one that needs a service or "
        "a program this machine lacks: noted in the report, not a failure (repeatable).",
        CHECK,
        multiple=True,
        default=(),
        metavar="GLOB",
    ),
    Option(
        "skip-script-help",
        Kind(),
        "Console script (glob) not run with --help; it must still be installed "
        "(repeatable; '*' for all).",
        CHECK,
        multiple=True,
        default=(),
        metavar="NAME",
    ),
    Option(
        "with",
        Requirement(example="pytest"),
        "Also install this requirement next to the wheel (repeatable): the "
        "application that loads the plugins, when the distribution does not depend on it, "
        "e.g. --with pytest.",
        CHECK,
        dest="with_requirements",
        multiple=True,
        default=(),
        metavar="REQUIREMENT",
        project=NAMES_AND_VERSIONS,
    ),
    *SESSION_OPTIONS,
    *SURVEY_OPTIONS,
    # -- where results go -----------------------------------------------------------------------
    Option(
        "json",
        ReportPath(),
        {
            "check": "Write the JSON report to FILE, or to stdout with '-' or no value (then the "
            "text output goes to stderr).",
            "merge": "Write the merged report to FILE, or to stdout with '-' or no value (then "
            "the text output goes to stderr).",
            "run": "Write the result as JSON to FILE, or to stdout with '-' or no value (then the "
            "text output goes to stderr).",
            "record": "Write the result as JSON to FILE, or to stdout with '-' or no value (then "
            "the text output goes to stderr).",
            "survey": "Write the survey (every plugin's class and why, the counts) as JSON to "
            "FILE, or to stdout with '-' or no value (then the text output goes to stderr).",
        },
        ("check", "merge", "run", "record", "survey"),
        dest="json_out",
        metavar="[FILE]",
        project=False,
    ),
    Option(
        "junit-xml",
        ReportFile(),
        {
            "check": "Write a JUnit XML report (one test case per check) to FILE.",
            "merge": "Write one JUnit XML report (every report's suites, each run labelled) to "
            "FILE.",
        },
        ("check", "merge"),
        metavar="FILE",
        project=False,
    ),
    Option(
        "github",
        Toggle(),
        "Write GitHub Actions annotations and a step summary.",
        ("check", "merge", "survey"),
        default_text="when GITHUB_ACTIONS=true",
    ),
    Option(
        "fail-on-warning",
        Names(example="junk-files,wheel-bytecode"),
        "Warning codes that fail the check (repeatable, comma-separated; all for every one): "
        "hygiene the static checks find (junk files, bytecode, a README without a content "
        "type) is a warning otherwise.",
        CHECK,
        multiple=True,
        default=(),
        default_text="none",
        metavar="CODES",
    ),
    Option(
        "dist-dir",
        FilePath(example="dist"),
        "Once the check passes, write the verified sdist and wheel(s) to DIR byte for byte "
        "(the report gives each one's sha256): publish exactly these.",
        CHECK,
        metavar="DIR",
        project=False,
    ),
    Option(
        "keep",
        Flag(),
        "Keep the sandboxes and print where they are.",
        CHECK,
        default=False,
        project=False,
    ),
    Option(
        "follow-external-links",
        Flag(),
        "Copy what symbolic links that lead out of the project point at into the copy it is "
        "built from, instead of failing on them (never anything under /proc, /sys or /dev); "
        "command line only.",
        CHECK,
        default=False,
        project=False,
    ),
    Option(
        "cache",
        Toggle(),
        "Reuse the sdist and wheel of an earlier check when not one file of the project, its "
        "build requirements or sandboxverify changed (the sandbox is always new); the cache is "
        "in $SANDBOXVERIFY_CACHE_DIR or the user cache directory.",
        CHECK,
        default=True,
    ),
    Option(
        "verbose",
        Count(minimum=0),
        {
            "check": "Show commands and their output (-vv: all output).",
            "run": "Show full tracebacks of failures.",
            "record": "Show full tracebacks of failures.",
        },
        ("check", "run", "record"),
        short="-v",
        default=0,
    ),
    Option(
        "allow-mixed",
        Flag(),
        "Merge reports of different distributions (refused otherwise: a matrix verifies one).",
        ("merge",),
        default=False,
    ),
    Option(
        "quiet",
        Flag(),
        {
            "check": "Only failures and the verdict.",
            "merge": "Only failures and the verdict.",
            "survey": "Only regressions, errors and the counts.",
        },
        ("check", "merge", "survey"),
        short="-q",
        default=False,
    ),
)


def options_of(command: CommandName) -> tuple[Option, ...]:
    """The options ``command`` takes, in the order ``--help`` lists them."""
    return tuple(option for option in OPTIONS if command in option.commands)
