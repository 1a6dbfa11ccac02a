"""The CI surfaces a check (or a merge of checks) was asked for (``--json``, ``--junit-xml``,
``--github`` or ``GITHUB_ACTIONS=true``), written on every exit: a usage error, a bug or a signal
must not leave a CI job without its report, its test results and its annotation.

What was asked is read from the command line before click parses it, leniently (an unknown
option, a bad value or a broken ``[tool.sandboxverify]`` may be the very error to report), and,
for ``check``, from ``[tool.sandboxverify]``. Once the command has its options it says which
surfaces are the real ones, and once it has a report (``merge``: the merged reports) the error is
added to that report instead of an empty one.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
import time
from collections.abc import Sequence
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
from sandboxverify.options import _pyproject as _config
from sandboxverify.report._model import ErrorCode, ReportError, stopped_report
from sandboxverify.report._redact import Redactor

if TYPE_CHECKING:
    from sandboxverify.cli._output import Result

#: the options that say where results go, and their shapes on the command line
_REPORT_OPTIONS = {"--json": "json", "--junit-xml": "junit-xml"}
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

    @classmethod
    def from_argv(cls, argv: Sequence[str], group: click.Group) -> Surfaces:
        """What ``sandboxverify check ...`` (or ``merge ...``) asks for, as far as it can be
        told without judging the rest of the command line; for ``run`` and ``record``, their
        ``--json``; nothing for other commands."""
        args = list(argv)
        at = next((i for i, arg in enumerate(args) if not arg.startswith("-")), None)
        command = group.commands.get(args[at]) if at is not None else None
        if at is None or command is None or command.name is None:
            return cls()
        asked, targets = _lenient(command, args[at + 1 :])
        if command.name in _JSON_ONLY:
            return cls(json_out=asked.get("json"), command=command.name)
        if command.name not in _COMMANDS:
            return cls()
        pyproject: Path | None = None
        configured: dict[str, Any] = {}
        if command.name == "check":
            first = Path(targets[0]) if targets else None
            pyproject = _config.find_pyproject(first if first and first.is_dir() else None)
            configured = _config.report_values(pyproject) if pyproject else {}
        github = asked.get("github", configured.get("github"))
        return cls(
            json_out=asked.get("json", configured.get("json")),
            junit_out=asked.get("junit-xml", configured.get("junit-xml")),
            github=github if isinstance(github, bool) else None,
            targets=tuple(targets),
            pyproject=pyproject,
            command=command.name,
        )

    def resolve(self, values: dict[str, Any], pyproject: Path | None) -> None:
        """The surfaces as the command parsed them (``check``: merged with the configuration)."""
        self.json_out = values.get("json")
        self.junit_out = values.get("junit-xml")
        self.github = values.get("github")
        self.pyproject = pyproject
        self.playbook = values.get("smoke")

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


def _likely(name: str, takes: dict[str, str]) -> str:
    """How an unknown option is taken: like the option it is a typo of (``--expect-tool x``
    takes a value, so ``x`` is not a target), else as a flag."""
    close = difflib.get_close_matches(name, list(takes), n=1) if name.startswith("--") else []
    return takes[close[0]] if close else "flag"


def _lenient(command: click.Command, args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The report options and the positional words of ``args``, parsed as click would parse
    them where they are well-formed, and without a complaint where they are not."""
    takes: dict[str, str] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            kind = "flag" if param.is_flag or param.count else "value"
            takes.update(dict.fromkeys(param.opts, kind))
            takes.update(dict.fromkeys(param.secondary_opts, "flag"))
    takes["--json"] = "optional"  # --json [FILE]: bare, it means stdout
    asked: dict[str, Any] = {}
    positionals: list[str] = []
    pending = list(args)
    index = 0
    while index < len(pending):
        word = pending[index]
        index += 1
        if word == "--":
            positionals.extend(pending[index:])
            break
        if word == "-" or not word.startswith("-"):
            positionals.append(word)
            continue
        name, equals, value = word.partition("=")
        kind = takes.get(name) or _likely(name, takes)
        if kind != "flag" and not equals:
            following = pending[index] if index < len(pending) else None
            if kind == "optional" and (
                following is None or (following.startswith("-") and len(following) > 1)
            ):
                value = "-"
            elif following is not None:
                value = following
                index += 1
            else:
                continue  # a value is missing: the error click reports
        if name in _REPORT_OPTIONS and value:
            asked[_REPORT_OPTIONS[name]] = value
        elif name in ("--github", "--no-github"):
            asked["github"] = name == "--github"
    return asked, positionals
