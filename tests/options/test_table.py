"""The options table is the one declaration of every option: click's options, CheckOptions, the
configuration's keys and the README's table agree with it, and one kind of value is checked alike
by every command that takes it."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields
from typing import get_args

import click
import pytest

from sandboxverify._errors import UsageError
from sandboxverify.cli._main import cli
from sandboxverify.options import OPTIONS, CheckOptions, HostName, options_of
from sandboxverify.options._kinds import Seconds
from sandboxverify.options._pyproject import config_options
from sandboxverify.runtime.hosts._registry import HOST_CHOICES
from tests.helpers import ROOT

#: check's options that say where results go and how the text looks: not CheckOptions fields
SURFACES = {"json_out", "junit_xml", "github", "verbose", "quiet"}
#: CheckOptions fields no option sets directly
DERIVED = {"targets", "callable_groups"}


def test_every_check_option_is_a_field_of_check_options_with_its_default() -> None:
    by_dest = {option.dest: option for option in options_of("check")}
    declared = {field.name: field for field in fields(CheckOptions)}
    assert set(by_dest) - SURFACES == set(declared) - DERIVED
    for name, field in declared.items():
        if name in DERIVED:
            continue
        default = field.default if field.default is not MISSING else None
        assert by_dest[name].default == default, name


def test_the_host_names_are_the_registry_s() -> None:
    assert get_args(HostName) == HOST_CHOICES


def test_every_check_option_is_a_configuration_key() -> None:
    assert {option.name for option in options_of("check")} == set(config_options())


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_each_command_takes_exactly_its_options_from_the_table(command: str) -> None:
    params = [p for p in cli.commands[command].params if isinstance(p, click.Option)]
    declared = [p.opts[0] for p in params if p.opts[0] not in ("-h", "--help")]
    expected = [option.flag for option in options_of(command)]  # type: ignore[arg-type]
    assert sorted(declared) == sorted(expected)
    helps = {p.opts[0]: p.help or "" for p in params}
    for option in options_of(command):  # type: ignore[arg-type]
        shown = option.shown_default
        assert (f"[default: {shown}]" in helps[option.flag]) == bool(shown), option.flag


_SECONDS = [
    (command, option.flag)
    for option in OPTIONS
    if isinstance(option.kind, Seconds)
    for command in option.commands
]
_REQUIRED = {
    "check": [],
    "run": ["smoke.toml"],
    "record": ["hi", "--model", "echo", "--output", "s.toml"],
}


@pytest.mark.parametrize(("command", "flag"), _SECONDS)
@pytest.mark.parametrize("value", ["inf", "nan", "0", "86401"])
def test_every_timeout_of_every_command_refuses_what_disables_the_watchdog(
    command: str, flag: str, value: str
) -> None:
    args = [command, *_REQUIRED[command], flag, value]
    with pytest.raises(UsageError, match=re.escape(flag)):
        cli.main(args=args, prog_name="sandboxverify", standalone_mode=False)


def test_the_readme_option_table_lists_every_check_option() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("| option | meaning |", 1)[1].split("\n\n", 1)[0]
    first_cells = [
        re.split(r"(?<!\\)\|", row)[1] for row in table.splitlines() if row.startswith("| `")
    ]
    listed = {
        re.sub(r"^-(\w)\1+$", r"-\1", found)
        for cell in first_cells
        for found in re.findall(r"`(--?[a-z-]+)[^`]*`", cell)
    }
    names = {
        name
        for option in options_of("check")
        for name in (option.flag, option.short, f"--no-{option.name}")
        if name
    }
    for option in options_of("check"):
        spellings = {option.flag, option.short, f"--no-{option.name}"}
        assert spellings & listed, f"the README's table does not list {option.flag}"
    assert listed <= names, f"the README lists options check does not take: {listed - names}"
