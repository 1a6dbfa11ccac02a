"""The options of a command: ``--json`` as both commands take it, and the values ``check`` runs
with, the command line's over ``[tool.sandboxverify]``'s, made into :class:`CheckOptions`."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import click
from click.core import ParameterSource

from sandboxverify.pipeline._options import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    CheckOptions,
    split_commas,
)

F = TypeVar("F", bound=Callable[..., Any])


def json_option(what: str) -> Callable[[F], F]:
    """``--json [FILE]``: an optional value, ``-`` (stdout) when given bare."""
    return click.option(
        "--json",
        "json_out",
        is_flag=False,
        flag_value="-",
        metavar="[FILE]",
        help=f"Write {what} to FILE, or to stdout with '-' or no value "
        "(then the text output goes to stderr).",
    )


_CLI_NAMES = {
    "group": "group",
    "expect_tools": "expect-tools",
    "expect_plugins": "expect-plugins",
    "index_url": "index-url",
    "find_links": "find-links",
    "install_timeout": "install-timeout",
    "pass_env": "pass-env",
    "server_command": "server-command",
    "import_all": "import-all",
    "import_skip": "import-skip",
    "import_allow_fail": "import-allow-fail",
    "expect_files": "expect-files",
    "skip_script_help": "skip-script-help",
    "with_requirements": "with",
    "junit_xml": "junit-xml",
    "json_out": "json",
}


def merge(
    ctx: click.Context, cli_values: dict[str, Any], file_values: dict[str, Any]
) -> dict[str, Any]:
    """Configuration file values, overridden by whatever the command line gave explicitly."""
    merged = dict(file_values)
    for name, value in cli_values.items():
        source = ctx.get_parameter_source(name)
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            merged[_CLI_NAMES.get(name, name)] = value
    return merged


def check_options(targets: tuple[str, ...], values: dict[str, Any]) -> CheckOptions:
    """What ``check`` is asked to do, from the merged values; the defaults for what none gave."""
    return CheckOptions(
        targets=targets or (".",),
        host=values.get("host", "auto"),
        groups=tuple(values.get("group", ())),
        hookspecs=tuple(values.get("hookspecs", ())),
        expect_tools=split_commas(values.get("expect-tools", ())),
        exact=bool(values.get("exact", False)),
        expect_plugins=values.get("expect-plugins"),
        python=tuple(values.get("python", ())),
        installer=values.get("installer", "auto"),
        index_url=values.get("index-url"),
        find_links=tuple(values.get("find-links", ())),
        timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
        install_timeout=float(values.get("install-timeout", DEFAULT_INSTALL_TIMEOUT)),
        keep=bool(values.get("keep", False)),
        pass_env=tuple(values.get("pass-env", ())),
        smoke=values.get("smoke"),
        server_command=values.get("server-command"),
        import_all=bool(values.get("import-all", True)),
        import_skip=tuple(values.get("import-skip", ())),
        import_allow_fail=tuple(values.get("import-allow-fail", ())),
        expect_files=tuple(values.get("expect-files", ())),
        skip_script_help=tuple(values.get("skip-script-help", ())),
        with_requirements=tuple(values.get("with", ())),
        isolation=values.get("isolation", "auto"),
    )
