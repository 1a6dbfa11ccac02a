"""What a check is asked to do: one frozen value, built by the CLI (or by a caller of the API)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

from sandboxverify._errors import UsageError
from sandboxverify.sandbox._isolation import ISOLATION_CHOICES, IsolationChoice
from sandboxverify.sandbox._toolchain import InstallerChoice

HostName = Literal[
    "auto", "native", "entrypoints", "llm", "mcp", "pytest", "pluggy", "flake8", "sphinx", "mkdocs"
]
HOSTS: tuple[HostName, ...] = (
    "auto",
    "native",
    "entrypoints",
    "llm",
    "mcp",
    "pytest",
    "pluggy",
    "flake8",
    "sphinx",
    "mkdocs",
)
INSTALLERS: tuple[InstallerChoice, ...] = ("auto", "pip", "uv")
ISOLATIONS: tuple[IsolationChoice, ...] = ISOLATION_CHOICES

DEFAULT_TIMEOUT = 60.0
DEFAULT_INSTALL_TIMEOUT = 900.0
#: the longest any timeout may be: a day (longer, or infinite, would disable the watchdog)
MAX_TIMEOUT = 86_400.0


def split_commas(values: Sequence[str]) -> tuple[str, ...]:
    """``--expect-tools a,b --expect-tools c`` (or a list of such strings) as ``(a, b, c)``."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def timeout_problem(seconds: float) -> str | None:
    """Why a timeout is not usable, if it is not: the watchdog needs a finite, positive,
    sane number of seconds."""
    if not math.isfinite(seconds):
        return "is not a finite number of seconds"
    if seconds <= 0:
        return "must be more than 0 seconds"
    if seconds > MAX_TIMEOUT:
        return f"is more than a day ({MAX_TIMEOUT:g} seconds)"
    return None


def split_tool_names(values: Sequence[str]) -> tuple[str, ...]:
    """``--expect-tools`` values as names; an empty name (``''``, ``',,'``, ``'a,'``: an unset
    variable, most likely) is a usage error, never a silently smaller expectation."""
    for value in values:
        if any(not item.strip() for item in value.split(",")):
            raise UsageError(
                f"--expect-tools {value!r} has an empty tool name (an unset variable?)",
                hint="give comma-separated tool names, e.g. --expect-tools add,greet; "
                "leave the option out to expect none",
            )
    return split_commas(values)


#: the command-line option of each CheckOptions field a bad value is reported under
_OPTION_NAMES = {
    "groups": "--group",
    "hookspecs": "--hookspecs",
    "python": "--python",
    "expect_tools": "--expect-tools",
    "find_links": "--find-links",
    "index_url": "--index-url",
    "pass_env": "--pass-env",
    "smoke": "--smoke",
    "import_skip": "--import-skip",
    "import_allow_fail": "--import-allow-fail",
    "plugin_allow_fail": "--plugin-allow-fail",
    "expect_files": "--expect-files",
    "skip_script_help": "--skip-script-help",
    "with_requirements": "--with",
}
_EXAMPLES = {
    "--group": "--group myapp.plugins",
    "--python": "--python 3.12, --python min or --python /usr/bin/python3",
    "--expect-tools": "--expect-tools add,greet",
    "--smoke": "--smoke smoke.toml",
}


def validate(options: CheckOptions) -> None:
    """Bad values are usage errors before any work: timeouts the watchdog cannot use, and
    empty strings (an unset variable, most likely) where a name, a spec or a path belongs."""
    for name, seconds in (
        ("--timeout", options.timeout),
        ("--install-timeout", options.install_timeout),
    ):
        problem = timeout_problem(seconds)
        if problem is not None:
            raise UsageError(
                f"{name} {seconds:g} {problem}",
                hint=f"give seconds between 0 and {MAX_TIMEOUT:g}, e.g. {name} 120",
            )
    for field in fields(options):
        option = _OPTION_NAMES.get(field.name)
        value = getattr(options, field.name)
        values = value if isinstance(value, tuple) else (value,)
        if option is not None and any(isinstance(v, str) and not v.strip() for v in values):
            example = _EXAMPLES.get(option)
            raise UsageError(
                f"{option} was given an empty value (an unset variable?)",
                hint=f"e.g. {example}, or leave the option out"
                if example
                else f"give a value, or leave {option} out",
            )


@dataclass(frozen=True)
class CheckOptions:
    """Options of ``sandboxverify check``; see ``sandboxverify check --help`` for each one."""

    targets: tuple[str, ...] = (".",)
    #: ``auto``: the groups the distribution declares choose a host per plugin
    host: HostName = "auto"
    groups: tuple[str, ...] = ()
    #: groups whose entry points must name a callable (``--group NAME:callable``)
    callable_groups: tuple[str, ...] = ()
    #: ``GROUP=MODULE``: the hookspecs module of a pluggy application not in the known table
    hookspecs: tuple[str, ...] = ()
    expect_tools: tuple[str, ...] = ()
    exact: bool = False
    expect_plugins: int | None = None
    python: tuple[str, ...] = ()
    installer: InstallerChoice = "auto"
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    #: seconds plugin code may take: each plugin's load, the smoke run
    timeout: float = DEFAULT_TIMEOUT
    #: seconds each build, sandbox creation and install step may take
    install_timeout: float = DEFAULT_INSTALL_TIMEOUT
    keep: bool = False
    #: reuse the sdist and wheel of an earlier check of the very same tree (``--no-cache``)
    cache: bool = True
    pass_env: tuple[str, ...] = ()
    #: a .toml or .py playbook run in every sandbox after the probe
    smoke: str | None = None
    #: ``--host mcp``: the command that starts the server (first word from the sandbox's bin/),
    #: instead of the distribution's console scripts
    server_command: str | None = None
    #: import every module the wheel ships (stage ``imports``)
    import_all: bool = True
    #: module globs never imported by ``import_all`` (``pkg.windows_*``)
    import_skip: tuple[str, ...] = ()
    #: module globs whose import may fail (optional extras): reported, not a failure
    import_allow_fail: tuple[str, ...] = ()
    #: plugin-name globs whose load may fail (needs a service or program the check lacks):
    #: noted, not a failure
    plugin_allow_fail: tuple[str, ...] = ()
    #: path globs inside the wheel that must match at least one file each
    expect_files: tuple[str, ...] = ()
    #: console-script name globs whose ``--help`` is not run (they must still exist)
    skip_script_help: tuple[str, ...] = ()
    #: requirements installed next to the wheel: the application that loads the plugins, when
    #: the distribution does not depend on it (a pytest plugin, say)
    with_requirements: tuple[str, ...] = ()
    #: the OS sandbox: ``auto`` (when available, else process isolation with a warning),
    #: ``strict`` (refuse to run without it), ``process`` (never)
    isolation: IsolationChoice = "auto"

    @property
    def effective_groups(self) -> tuple[str, ...]:
        """The groups looked in: ``--group``, else the named host's own; ``auto`` without
        ``--group`` looks in every group the distribution declares."""
        # the hosts' table pulls in the runtime's hosts: not for the command line's start-up
        from sandboxverify.stages._hosts import default_groups  # noqa: PLC0415

        return self.groups or default_groups(self.host)

    @property
    def hookspecs_by_group(self) -> dict[str, str]:
        return dict(spec.split("=", 1) for spec in self.hookspecs if "=" in spec)
