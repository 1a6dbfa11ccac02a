"""What a check is asked to do: one frozen value, built by the command line from its options and
``[tool.sandboxverify]``, or by a caller of the library."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Literal

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.options._kinds import split_commas
from sandboxverify.options._option import DEFAULT_INSTALL_TIMEOUT, DEFAULT_TIMEOUT, Option
from sandboxverify.options._table import options_of
from sandboxverify.sandbox import InstallerChoice, IsolationChoice

#: ``--host``: the registry's hosts and ``auto`` (a test holds the two to each other)
HostName = Literal[
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
    "host-protocol",
    "pygments",
    "keyring",
    "fsspec",
    "sqlalchemy",
    "setuptools",
    "markdown",
    "pylint",
    "ipython",
    "mypy",
    "napari",
    "matplotlib",
    "pyinstaller",
    "opentelemetry",
]


@frozen
class CheckOptions:
    """Options of ``sandboxverify check``; see ``sandboxverify check --help`` for each one (the
    options table, ``options/_table.py``, declares them; a test holds the fields to it)."""

    targets: tuple[str, ...] = (".",)
    #: ``auto``: the groups the distribution declares choose a host per plugin
    host: HostName = "auto"
    groups: tuple[str, ...] = ()
    #: groups whose entry points must name a callable (``--group NAME:callable``)
    callable_groups: tuple[str, ...] = ()
    #: ``GROUP=MODULE``: the hookspecs module of a pluggy application not in the known table
    hookspecs: tuple[str, ...] = ()
    #: groups judged by the host their application ships even where sandboxverify has one
    application_hosts: tuple[str, ...] = ()
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
    #: copy what links out of the project point at, instead of refusing them (command line only)
    follow_external_links: bool = False
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
    #: warning codes (``_findings.RULES``, ``all``) that fail the check
    fail_on_warning: tuple[str, ...] = ()
    #: where the verified artifacts are written once the check passes (command line only)
    dist_dir: str | None = None
    #: the OS sandbox: ``auto`` (when available, else process isolation with a warning),
    #: ``strict`` (refuse to run without it), ``process`` (never)
    isolation: IsolationChoice = "auto"
    #: package code reaches the host's network (``--network``); in the OS sandbox it otherwise
    #: has a network of its own, loopback only
    network: bool = False

    @classmethod
    def from_values(cls, targets: tuple[str, ...], values: Mapping[str, Any]) -> CheckOptions:
        """The options from ``check``'s values by their keyword (the command line's over the
        configuration's); the defaults for what none gave; checked as :func:`validate` checks."""
        given = {
            option.dest: values[option.dest]
            for option in CHECK_FIELDS
            if values.get(option.dest) is not None
        }
        if "expect_tools" in given:  # a comma list, checked whole before it is split
            _check(CHECK_FIELDS_BY_DEST["expect_tools"], given["expect_tools"])
            given["expect_tools"] = split_commas(given["expect_tools"])
        if "fail_on_warning" in given:  # comma lists, as expect_tools
            _check(CHECK_FIELDS_BY_DEST["fail_on_warning"], given["fail_on_warning"])
            given["fail_on_warning"] = split_commas(given["fail_on_warning"])
        options = cls(targets=targets or (".",), **given)
        validate(options)
        return options

    @property
    def effective_groups(self) -> tuple[str, ...]:
        """The groups looked in: ``--group``, else the named host's own; ``auto`` without
        ``--group`` looks in every group the distribution declares."""
        # the hosts' table pulls in the runtime's hosts: not for the command line's start-up
        from sandboxverify.stages import default_groups  # noqa: PLC0415

        return self.groups or default_groups(self.host)

    @property
    def hookspecs_by_group(self) -> dict[str, str]:
        return dict(spec.split("=", 1) for spec in self.hookspecs if "=" in spec)


#: ``check``'s options that are fields of CheckOptions (the rest say where results go)
CHECK_FIELDS: tuple[Option, ...] = tuple(
    option
    for option in options_of("check")
    if option.dest in {field.name for field in fields(CheckOptions)}
)
CHECK_FIELDS_BY_DEST = {option.dest: option for option in CHECK_FIELDS}


def validate(options: CheckOptions) -> None:
    """Bad values are usage errors before any work, whoever built ``options``: every value is
    checked by the kind of its option, as the command line and the configuration check it."""
    for option in CHECK_FIELDS:
        _check(option, getattr(options, option.dest))


def _check(option: Option, value: Any) -> None:
    for item in value if isinstance(value, tuple) else (value,):
        if item is None:
            continue
        problem = option.kind.problem(option.flag, item)
        if problem is not None:
            raise UsageError(problem.message, hint=problem.hint)
