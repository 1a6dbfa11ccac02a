"""GitHub Actions: error annotations at the file and line a failure comes from (the Markdown
step summary is ``_summary``).

An annotation names a file and line only when they are certain: an entry point's line is the one
whose value is the plugin's, a playbook action's line is the one the TOML parser agrees is that
action. When in doubt the line (or the file) is left out, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.cli._tomllines import Key, Toml
from sandboxverify.options import split_commas
from sandboxverify.report import (
    Failure,
    Merged,
    Report,
    ReportError,
    ReportWarning,
    Run,
    Survey,
    inert,
    problems,
    run_of,
    wheel_origin,
)

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)
_WHERE = re.compile(r"\[turns\[(\d+)\]\.actions\[(\d+)\]\.parallel\[(\d+)\]")
_SCRIPT_TABLES = {"console_scripts": "scripts", "gui_scripts": "gui-scripts"}


@frozen
class GitHubSources:
    """Files failures can point at; paths in annotations are relative to ``root``."""

    pyproject: Path | None
    playbook: Path | None
    root: Path


@frozen
class _Place:
    file: Path
    line: int | None = None


def error_annotations(report: Report, sources: GitHubSources) -> list[str]:
    """One ``::error ...::message`` workflow command per failure."""
    locator = _Locator(report, sources)
    commands = []
    for failure in report.failures:
        origin = wheel_origin(failure.wheel_built, report.runs)
        where = f"{failure.python}, {origin}" if origin else failure.python
        title = f"sandboxverify: {failure.code}" + (f" [{where}]" if where else "")
        properties: list[tuple[str, str]] = []
        place = locator.place(failure)
        relative = _relative(place.file, sources.root) if place else None
        if place is not None and relative is not None:
            properties.append(("file", relative))
            if place.line is not None:
                properties.append(("line", str(place.line)))
        properties.append(("title", title))
        props = ",".join(f"{name}={_escape_property(value)}" for name, value in properties)
        commands.append(f"::error {props}::{_message(failure.message, failure.hint)}")
    if report.error is not None:  # a usage error, a bug or a signal: annotated like a failure
        commands.append(error_annotation(report.error))
    return commands


def warning_annotations(warnings: Sequence[ReportWarning]) -> list[str]:
    """One ``::warning ...::message`` workflow command per warning (hygiene, no OS sandbox)."""
    commands = []
    for warning in warnings:
        title = _escape_property(f"sandboxverify: {warning.code}")
        commands.append(f"::warning title={title}::{_message(warning.message, warning.hint)}")
    return commands


def error_annotation(error: ReportError) -> str:
    """The ``::error`` workflow command for what stopped the check before its verdict."""
    title = _escape_property(f"sandboxverify: {error.code}")
    return f"::error title={title}::{_message(error.message, error.hint)}"


def merged_annotations(merged: Merged) -> list[str]:
    """``sandboxverify merge``: one ``::error`` per failure of the jobs' reports (and per job
    whose check stopped early), titled with the run it failed on."""
    commands = []
    for problem in problems(merged):
        title = _escape_property(f"sandboxverify: {problem.code} [{problem.label}]")
        commands.append(f"::error title={title}::{_message(problem.message, problem.hint)}")
    if merged.error is not None:
        commands.append(error_annotation(merged.error))
    return commands


def survey_annotations(survey: Survey) -> list[str]:
    """``sandboxverify survey``: an ``::error`` per plugin the candidate breaks, a ``::warning``
    per plugin that could not be checked."""
    commands = []
    for result in survey.ordered():
        level = {"regressed": "error", "error": "warning"}.get(result.survey_class)
        if level is not None:
            title = _escape_property(f"sandboxverify survey: {result.survey_class} {result.name}")
            commands.append(f"::{level} title={title}::{_escape_data(result.reason)}")
    return commands


def _message(message: str, hint: str | None) -> str:
    """An annotation's message: the message, then its hint on a line of its own."""
    return _escape_data(message + (f"\nhint: {hint}" if hint else ""))


def _escape_data(text: str) -> str:
    """A workflow command's data: the package's text inert (its lines kept: they end up as
    ``%0A``, never as lines of the log), then escaped as the runner reads it."""
    return inert(text, lines=True).replace("%", "%25").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _relative(path: Path, root: Path) -> str | None:
    """``path`` relative to the workspace, or None: a path outside it links to nothing."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return None


class _Locator:
    """Where in the project's files a failure comes from."""

    def __init__(self, report: Report, sources: GitHubSources) -> None:
        self.report = report
        self.sources = sources
        self._documents: dict[Path, Toml | None] = {}

    def place(self, failure: Failure) -> _Place | None:
        run = run_of(failure, self.report.runs)
        code = failure.code
        if code == "script_failed" and failure.plugin:
            return self._entry_point(failure.plugin, run, scripts_only=True)
        if code in ("plugin_load_failed", "plugin_empty", "timeout", "probe_crashed"):
            return self._entry_point(failure.plugin, run) if failure.plugin else None
        if code == "tool_duplicate" and failure.plugin:
            return self._entry_point(failure.plugin, run)
        if code == "import_failed" and failure.module:
            return self._module(failure.module, failure.details)
        if code == "smoke_failed":
            return self._smoke(failure, run)
        if code in ("tool_missing", "tool_unexpected"):
            return self._expect_tools(failure)
        return None

    def _toml(self, path: Path | None) -> Toml | None:
        if path is None:
            return None
        if path not in self._documents:
            self._documents[path] = Toml.read(path)
        return self._documents[path]

    def _entry_point(
        self, name: str, run: Run | None, *, scripts_only: bool = False
    ) -> _Place | None:
        """The entry point's line in ``[project.entry-points."group"]`` or ``[project.scripts]``,
        if the value written there is the one that was installed."""
        doc = self._toml(self.sources.pyproject)
        if doc is None:
            return None
        records = [p for p in (run.plugins if run else ()) if p.name == name]
        scripts = (run.scripts or ()) if run else ()
        records_by_group = {p.group: p.value for p in records}
        records_by_group.update({s.group: s.value for s in scripts if s.name == name})
        keys = [
            (group, key)
            for group, key in _entry_point_keys(doc, name)
            if not scripts_only or group in _SCRIPT_TABLES
        ]
        if records_by_group:  # the group it was installed from, not a namesake in another
            keys = [(g, k) for g, k in keys if g in records_by_group]
        if len(keys) != 1:
            return None  # not declared in pyproject.toml (setup.py, dynamic), or ambiguous
        group, key = keys[0]
        expected = records_by_group.get(group)
        if expected is not None and _squeeze(doc.value(key)) != _squeeze(expected):
            return None
        return _Place(doc.path, doc.line(key))

    def _module(self, module: str, details: str | None) -> _Place | None:
        """The module's source in the project and the line of the traceback's last frame in it."""
        if self.sources.pyproject is None:
            return None
        base = self.sources.pyproject.parent
        parts = module.split(".")
        for relative in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
            for prefix in ("", "src/"):
                source = base / (prefix + relative)
                if source.is_file():
                    return _Place(source, _frame_line(details, source, "/" + relative) or 1)
        return _Place(self.sources.pyproject)

    def _smoke(self, failure: Failure, run: Run | None) -> _Place | None:
        playbook = self.sources.playbook
        if playbook is None or not playbook.is_file():
            return None
        error = run.smoke.error if run and run.smoke else None
        if playbook.suffix == ".py":
            details = (error.details if error else None) or failure.details
            return _Place(playbook, _frame_line(details, playbook, "/" + playbook.name) or 1)
        doc = self._toml(playbook)
        turn, action = (error.turn, error.action) if error else (None, None)
        if doc is None or not isinstance(turn, int) or turn < 1:
            return _Place(playbook, 1)
        line = None
        if isinstance(action, int) and action >= 1:
            key: Key = ("turns", turn - 1, "actions", action - 1)
            # an inner call of a parallel action: the message's place says which one
            inner = _WHERE.search((error.message if error else "") or failure.message)
            if inner and (int(inner[1]), int(inner[2])) == (turn - 1, action - 1):
                line = doc.line((*key, "parallel", int(inner[3])))
            line = line or doc.line(key)
        return _Place(playbook, line or doc.line(("turns", turn - 1)) or 1)

    def _expect_tools(self, failure: Failure) -> _Place | None:
        """The ``expect-tools`` line of ``[tool.sandboxverify]``, if that is what was asked."""
        doc = self._toml(self.sources.pyproject)
        if doc is None:
            return None
        for spelling in ("expect-tools", "expect_tools"):
            key: Key = ("tool", "sandboxverify", spelling)
            value = doc.value(key)
            if value is None:
                continue
            items = value if isinstance(value, list) else [value]
            configured = split_commas([str(item) for item in items])
            asked = self.report.expect_tools
            if (asked and configured != asked) or (
                failure.code == "tool_missing" and failure.tool not in configured
            ):
                return None  # the command line asked for other tools
            for index, item in enumerate(items):
                if failure.tool in split_commas([str(item)]):
                    return _Place(doc.path, doc.line((*key, index)) or doc.line(key))
            return _Place(doc.path, doc.line(key))
        return None


def _entry_point_keys(doc: Toml, name: str) -> list[tuple[str, Key]]:
    """Every ``(group, key)`` declaring an entry point called ``name`` in pyproject.toml."""
    project = doc.data.get("project")
    if not isinstance(project, dict):
        return []
    found: list[tuple[str, Key]] = []
    for group, table in _SCRIPT_TABLES.items():
        if isinstance(project.get(table), dict) and name in project[table]:
            found.append((group, ("project", table, name)))
    groups = project.get("entry-points")
    for group, entries in groups.items() if isinstance(groups, dict) else ():
        if isinstance(entries, dict) and name in entries:
            found.append((group, ("project", "entry-points", group, name)))
    return found


def _frame_line(details: str | None, source: Path, suffix: str) -> int | None:
    """The line of the last traceback frame in a file ending with ``suffix``, if ``source`` has
    that many lines (the traceback comes from the installed copy of the same file)."""
    lines = [
        int(match["line"])
        for match in _FRAME.finditer(details or "")
        if match["file"].replace("\\", "/").endswith(suffix)
    ]
    if not lines:
        return None
    try:
        length = len(source.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None
    return lines[-1] if 1 <= lines[-1] <= length else None


def _squeeze(value: object) -> str:
    return "".join(str(value).split())
