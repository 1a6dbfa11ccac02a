"""The CI surfaces a check (or a merge of checks) was asked for (``--json``, ``--junit-xml``,
``--github`` or ``GITHUB_ACTIONS=true``), written on every exit: a usage error, a bug or a signal
must not leave a CI job without its report, its test results and its annotation.

A command says which surfaces it was asked for as soon as click has its options (``check`` adds
what ``[tool.sandboxverify]`` says, read leniently: a broken file may be the very error to
report). When it stops before that (an unknown option, a bad value), click reads the command line
again, leniently: what it cannot take is set aside, and the rest still says where the reports go.
Once the command has a report (``merge``: the merged reports) the error is added to that report
instead of an empty one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TextIO

import click

from sandboxverify._errors import UsageError
from sandboxverify.cli._output import (
    check_report_path,
    write_github,
    write_json,
    write_junit,
)
from sandboxverify.options import find_pyproject, report_values
from sandboxverify.report import ErrorCode, Redactor, ReportError, stopped_report

if TYPE_CHECKING:
    from sandboxverify.cli._output import Result

#: the commands that write these surfaces
_COMMANDS = ("check", "merge")
#: the commands whose one surface is their result as JSON
_JSON_ONLY = ("run", "record")


@dataclass
class Surfaces:
    json_out: str | None = None
    junit_out: str | None = None
    #: ``--github``/``--no-github``; None: on when ``GITHUB_ACTIONS=true``
    github: bool | None = None
    targets: tuple[str, ...] = ()
    pyproject: Path | None = None
    playbook: str | None = None
    #: the command asked for; ``run`` and ``record`` have one surface, their ``--json``
    command: str = "check"
    #: the command's report, once it has one
    report: Result | None = None
    started: float = field(default_factory=time.perf_counter)
    #: every output goes through it: the caller's secrets never leave in a report
    secrets: Redactor = field(default_factory=Redactor)
    _written: set[str] = field(default_factory=set)
    #: the command has said which surfaces it was asked for
    known: bool = False

    @classmethod
    def from_command_line(cls, group: click.Group, argv: Sequence[str]) -> Surfaces:
        """What ``sandboxverify check ...`` (or ``merge ...``) asks for, as far as click can tell
        without judging the rest of the command line; for ``run`` and ``record``, their
        ``--json``; nothing for other commands."""
        args = list(argv)
        at = next((i for i, arg in enumerate(args) if not arg.startswith("-")), None)
        command = group.commands.get(args[at]) if at is not None else None
        surfaces = cls()
        if at is not None and command is not None and command.name is not None:
            values, positionals = _read_leniently(command, args[at + 1 :])
            surfaces.asked(command.name, positionals, values)
        return surfaces

    def asked(self, command: str, positionals: Sequence[str], values: Mapping[str, Any]) -> None:
        """What ``command`` was asked for on the command line (its options by keyword), and,
        for ``check``, in the project's ``[tool.sandboxverify]``."""
        self.command = command
        self.targets = tuple(positionals)
        if command in _JSON_ONLY:
            self.json_out = values.get("json_out")
            return
        if command not in _COMMANDS:
            return
        configured: dict[str, Any] = {}
        if command == "check":
            first = Path(self.targets[0]) if self.targets else None
            self.pyproject = find_pyproject(first if first and first.is_dir() else None)
            configured = report_values(self.pyproject)
        given = {key: value for key, value in values.items() if value is not None}
        merged = {**configured, **given}
        self.resolve(merged, self.pyproject)

    def resolve(self, values: Mapping[str, Any], pyproject: Path | None) -> None:
        """The surfaces as the command parsed them (``check``: merged with the configuration),
        by each option's keyword."""
        self.json_out = values.get("json_out")
        self.junit_out = values.get("junit_xml")
        github = values.get("github")
        self.github = github if isinstance(github, bool) else None
        self.pyproject = pyproject
        self.playbook = values.get("smoke")
        self.known = True

    @property
    def annotate(self) -> bool:
        if self.github is not None:
            return self.github
        return os.environ.get("GITHUB_ACTIONS") == "true"

    @property
    def stream(self) -> TextIO:
        """Where text and annotations go: stdout, unless the JSON report goes there."""
        return self.secrets.stream(sys.stderr if self.json_out == "-" else sys.stdout)

    def write(self, report: Result) -> None:
        """The command's report on every surface asked for; a UsageError if the step summary
        cannot be appended (the error boundary then adds the error to what was written)."""
        self.report = report
        if self.json_out:
            write_json(report.to_json(), self.json_out, self.secrets)
            self._written.add("json")
        if self.junit_out:
            write_junit(report, self.junit_out, self.secrets)
        if self.annotate:
            self._written.add("annotations")
            write_github(
                report,
                self.stream,
                self.secrets,
                pyproject=self.pyproject,
                playbook=self.playbook,
            )

    def stopped(self, code: ErrorCode, message: str, hint: str | None) -> None:
        """The error on every surface asked for, added to the report if there is one. Never
        raises: a surface that cannot take it (a path that is the error itself) is skipped."""
        error = ReportError(code, message, hint)
        if self.command in _JSON_ONLY:
            if self.json_out:  # the result a run or a recording would have written
                seconds = round(time.perf_counter() - self.started, 3)
                document = {"ok": False, "error": error.to_json(), "seconds": seconds}
                out = self.json_out
                self._attempt("--json", out, lambda: write_json(document, out, self.secrets))
            return
        report: Result
        if self.report is not None:
            report = replace(self.report, error=error)
        else:
            report = stopped_report(
                error,
                target=" ".join(self.targets) or ".",
                seconds=time.perf_counter() - self.started,
            )
        if self.json_out and not (self.json_out == "-" and "json" in self._written):
            out = self.json_out
            self._attempt("--json", out, lambda: write_json(report.to_json(), out, self.secrets))
        if self.junit_out:
            out = self.junit_out
            self._attempt("--junit-xml", out, lambda: write_junit(report, out, self.secrets))
        if self.annotate:
            annotate = "annotations" not in self._written
            if not annotate:  # the failures are annotated already: the error on its own
                from sandboxverify.cli._github import error_annotation  # noqa: PLC0415

                self.stream.write(error_annotation(self.secrets.value(error)) + "\n")
                self.stream.flush()
            # an unwritable step summary may be the very error being reported
            with contextlib.suppress(UsageError):
                write_github(
                    report,
                    self.stream,
                    self.secrets,
                    pyproject=self.pyproject,
                    playbook=self.playbook,
                    annotate=annotate,
                )

    def _attempt(self, option: str, out: str, write: Callable[[], None]) -> None:
        """Write a report the error goes into, unless its path is refused (an input, a
        directory: maybe the very error being reported); a failed write is said, not raised."""
        if out != "-":
            try:
                check_report_path(option, out, self.targets)
            except UsageError:
                return
        try:
            write()
        except UsageError as exc:
            sys.stderr.write(f"  (not written: {self.secrets.text(exc.message)})\n")


def _read_leniently(
    command: click.Command, args: list[str]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``args`` as click reads them for ``command`` where they are well-formed: an option click
    does not know is set aside (with the value the option it is a typo of would take, so that
    value is not taken for a target), one missing its value is dropped, and a value click cannot
    take is left out. The values by keyword, and the positional arguments."""
    for _ in range(len(args) + 1):
        try:
            command.make_parser(click.Context(command, info_name=command.name)).parse_args(
                list(args)
            )
            break
        except click.NoSuchOption as exc:
            args = _set_aside(command, args, exc.option_name, exc.possibilities)
        except click.BadOptionUsage as exc:  # its value is missing: the error click reports
            args = [arg for arg in args if arg != exc.option_name]
        except click.ClickException:
            break
    context = command.make_context(command.name, list(args), resilient_parsing=True)
    values = dict(context.params)
    positionals: list[str] = []
    for param in command.params:
        if isinstance(param, click.Argument) and param.name is not None:
            found = values.pop(param.name, None)
            positionals.extend([found] if isinstance(found, str) else found or ())
    return values, tuple(positionals)


def _set_aside(
    command: click.Command, args: list[str], name: str, possibilities: Sequence[str] | None
) -> list[str]:
    """``args`` without the unknown option ``name``, and without the word after it when the
    option it is most likely a typo of (click's first suggestion) takes a value."""
    at = next((i for i, arg in enumerate(args) if arg == name or arg.startswith(f"{name}=")), None)
    if at is None:  # inside a cluster of short options: that word goes whole
        at = next(i for i, arg in enumerate(args) if arg.startswith("-") and name[1:] in arg)
    meant = next(
        (
            param
            for param in command.params
            if isinstance(param, click.Option) and possibilities and possibilities[0] in param.opts
        ),
        None,
    )
    takes_value = meant is not None and not (meant.is_flag or meant.count)
    skip = 2 if takes_value and "=" not in args[at] and at + 1 < len(args) else 1
    return args[:at] + args[at + skip :]
