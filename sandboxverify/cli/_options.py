"""The options of a command: ``--json``, ``--junit-xml`` and ``--github`` as the commands take
them, and the values ``check`` runs with, the command line's over ``[tool.sandboxverify]``'s,
made into :class:`CheckOptions`."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import click
from click.core import ParameterSource

from sandboxverify._errors import UsageError
from sandboxverify.options._check_options import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    CheckOptions,
    split_tool_names,
    timeout_problem,
    validate,
)

F = TypeVar("F", bound=Callable[..., Any])


def reject_empty(values: dict[str, str | tuple[str, ...] | None]) -> None:
    """Options given an empty string (an unset variable, most likely) are usage errors."""
    for option, value in values.items():
        given = value if isinstance(value, tuple) else () if value is None else (value,)
        if any(not item.strip() for item in given):
            raise UsageError(
                f"{option} was given an empty value (an unset variable?)",
                hint=f"give a value, or leave {option} out",
            )


def reject_empty_targets(targets: tuple[str, ...]) -> None:
    """An empty TARGET (an unset variable, quoted) would mean the current directory: refused."""
    if any(not value.strip() for value in targets):
        raise UsageError(
            "an empty TARGET was given (an unset variable?)",
            hint="pass a project directory or built artifacts; '.' means the current directory",
        )


def seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A timeout option's value: a finite number of seconds, more than 0 and at most a day
    (``inf``, ``nan`` or ``1e999`` would disable the watchdog)."""
    if value is None:
        return None
    problem = timeout_problem(value)
    if problem is not None:
        option = param.opts[0] if param.opts else "the timeout"
        raise UsageError(
            f"{option} {value:g} {problem}",
            hint=f"give seconds between 0 and {MAX_TIMEOUT:g}, e.g. {option} 120",
        )
    return value


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


def junit_option(what: str) -> Callable[[F], F]:
    """``--junit-xml FILE``."""
    return click.option("--junit-xml", metavar="FILE", help=f"Write {what} to FILE.")


def dist_option(function: F) -> F:
    """``--dist``: whose plugins ``run`` and ``record`` load when none are named."""
    return click.option(
        "--dist",
        metavar="NAME",
        help="The installed distribution whose plugins load by default "
        "[default: [project] name of ./pyproject.toml]",
    )(function)


def github_option(function: F) -> F:
    """``--github/--no-github``: annotations and the step summary (default: on a runner)."""
    return click.option(
        "--github/--no-github",
        default=None,
        help="Write GitHub Actions annotations and a step summary. "
        "[default: when GITHUB_ACTIONS=true]",
    )(function)


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
    "plugin_allow_fail": "plugin-allow-fail",
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
    options = CheckOptions(
        targets=targets or (".",),
        host=values.get("host", "auto"),
        groups=tuple(values.get("group", ())),
        hookspecs=tuple(values.get("hookspecs", ())),
        expect_tools=split_tool_names(values.get("expect-tools", ())),
        exact=bool(values.get("exact", False)),
        expect_plugins=values.get("expect-plugins"),
        python=tuple(values.get("python", ())),
        installer=values.get("installer", "auto"),
        index_url=values.get("index-url"),
        find_links=tuple(values.get("find-links", ())),
        timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
        install_timeout=float(values.get("install-timeout", DEFAULT_INSTALL_TIMEOUT)),
        keep=bool(values.get("keep", False)),
        cache=bool(values.get("cache", True)),
        pass_env=tuple(values.get("pass-env", ())),
        smoke=values.get("smoke"),
        server_command=values.get("server-command"),
        import_all=bool(values.get("import-all", True)),
        import_skip=tuple(values.get("import-skip", ())),
        import_allow_fail=tuple(values.get("import-allow-fail", ())),
        plugin_allow_fail=tuple(values.get("plugin-allow-fail", ())),
        expect_files=tuple(values.get("expect-files", ())),
        skip_script_help=tuple(values.get("skip-script-help", ())),
        with_requirements=tuple(values.get("with", ())),
        isolation=values.get("isolation", "auto"),
    )
    validate(options)
    return options


DEFAULT_MAX_STEPS = 10


def model_options(function: F) -> F:
    """``--option NAME VALUE`` and ``--max-steps``: how the live model is prompted."""
    function = click.option(
        "--max-steps",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_STEPS,
        show_default=True,
        help="Model steps one turn may take before the run fails (too_many_steps).",
    )(function)
    return click.option(
        "--option",
        "model_options",
        nargs=2,
        multiple=True,
        metavar="NAME VALUE",
        help="An option of the model, as llm's -o takes it (repeatable), e.g. "
        "--option temperature 0. Options named like secrets are used, never written.",
    )(function)


def replay_options(function: F) -> F:
    """The options ``run`` gains for recordings."""
    function = model_options(function)
    function = click.option(
        "--model",
        "-m",
        "model",
        metavar="MODEL",
        help="With --live: the llm model to run against the recording "
        "[default: the model in the playbook's [recording]]",
    )(function)
    function = click.option(
        "--live",
        is_flag=True,
        help="The contract run: a live model chooses again from the same prompts (mocks as "
        "in the playbook); every step where it leaves the recording is reported; exit 1 if any.",
    )(function)
    return click.option(
        "--compare-results",
        is_flag=True,
        help="Fail (replay_mismatch) when a tool's result differs from the recorded result; "
        "normalize = ['regex', ...] in the playbook masks ids and times.",
    )(function)
