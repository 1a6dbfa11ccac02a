"""The options table (``options``) as click options: each command's options, their help with the
default, and each value checked by the kind of its option as it is parsed; then ``check``'s
values, the command line's over ``[tool.sandboxverify]``'s, made into :class:`CheckOptions`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, TypeVar

import click
from click.core import ParameterSource

from sandboxverify._errors import UsageError
from sandboxverify.options import CheckOptions, CommandName, Option, options_of

F = TypeVar("F", bound=Callable[..., Any])
#: what the command line's word becomes before its kind checks it
_CLICK_TYPES: Mapping[type, click.ParamType[Any]] = {
    str: click.STRING,
    float: click.FLOAT,
    int: click.INT,
    bool: click.BOOL,
}


def click_options(command: CommandName) -> Callable[[F], F]:
    """Decorate ``command``'s function with its options from the table, in the table's order."""

    def decorate(function: F) -> F:
        for option in reversed(options_of(command)):
            function = click_option(option, command)(function)
        return function

    return decorate


def click_option(option: Option, command: CommandName) -> Callable[[F], F]:
    """``option`` as ``command`` takes it."""
    declarations = [option.flag, *([option.short] if option.short else []), option.dest]
    settings: dict[str, Any] = {
        "help": option.help_for(command),
        "metavar": option.metavar,
        "required": command in option.required,
        "callback": _checked(option),
    }
    shape = option.kind.shape
    if shape == "flag":
        settings.update(is_flag=True, default=False)
    elif shape == "toggle":
        declarations[0] = f"{option.flag}/--no-{option.name}"
        settings.update(default=None)
    elif shape == "count":
        settings.update(count=True, default=0)
    elif shape == "optional":  # --json [FILE]: bare, it means stdout
        settings.update(is_flag=False, flag_value="-", default=None)
    elif shape == "pair":
        settings.update(nargs=2, multiple=option.multiple, default=option.default or None)
    else:
        choices = getattr(option.kind, "choices", None)
        settings.update(
            type=click.Choice(choices) if choices else _CLICK_TYPES[option.kind.scalar],
            multiple=option.multiple,
            default=option.default if option.multiple or option.default is not None else None,
        )
    return click.option(*declarations, **settings)


def _checked(option: Option) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """The callback that checks each value of ``option`` by its kind: a usage error, in the
    same words as a bad value of a ``CheckOptions`` built by hand."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if ctx.resilient_parsing or value is None:
            return value
        items = value if isinstance(value, tuple) and option.multiple else (value,)
        for item in items:
            problem = option.kind.problem(option.flag, item)
            if problem is not None:
                raise UsageError(problem.message, hint=problem.hint)
        return value

    return check


def reject_empty_targets(targets: tuple[str, ...]) -> None:
    """An empty TARGET (an unset variable, quoted) would mean the current directory: refused."""
    if any(not value.strip() for value in targets):
        raise UsageError(
            "an empty TARGET was given (an unset variable?)",
            hint="pass a project directory or built artifacts; '.' means the current directory",
        )


def merge(
    ctx: click.Context, cli_values: dict[str, Any], file_values: dict[str, Any]
) -> dict[str, Any]:
    """Configuration file values, overridden by whatever the command line gave explicitly."""
    merged = dict(file_values)
    for name, value in cli_values.items():
        source = ctx.get_parameter_source(name)
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            merged[name] = value
    return merged


def check_options(targets: tuple[str, ...], values: dict[str, Any]) -> CheckOptions:
    """What ``check`` is asked to do, from the merged values; the defaults for what none gave."""
    return CheckOptions.from_values(targets, values)
