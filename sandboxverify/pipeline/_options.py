"""What a check is asked to do: one frozen value, built by the CLI (or by a caller of the API)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sandboxverify.sandbox._isolation import ISOLATION_CHOICES, IsolationChoice
from sandboxverify.sandbox._toolchain import InstallerChoice
from sandboxverify.stages._hosts import default_groups

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


def split_commas(values: Sequence[str]) -> tuple[str, ...]:
    """``--expect-tools a,b --expect-tools c`` (or a list of such strings) as ``(a, b, c)``."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


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
        return self.groups or default_groups(self.host)

    @property
    def hookspecs_by_group(self) -> dict[str, str]:
        return dict(spec.split("=", 1) for spec in self.hookspecs if "=" in spec)
