"""Where results go besides the text: JSON (stdout or a file), JUnit XML, GitHub Actions
annotations and the step summary. A report path is checked before any work is done."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, Union

from sandboxverify._errors import UsageError
from sandboxverify.report import Redactor, Report

if TYPE_CHECKING:
    from sandboxverify.report import Merged

    #: a check's report, or the reports ``merge`` put together
    Result = Union[Report, Merged]

_ARTIFACT_SUFFIXES = (".whl", ".tar.gz", ".zip", ".py", ".toml")
#: imported only when a report asks for them (see :func:`preload`): the writers of each surface,
#: as the report room's face names them
_JUNIT_WRITERS = ("junit_xml",)
_GITHUB_WRITERS = ("merged_summary", "step_summary")


def write_json(document: dict[str, Any], json_out: str | None, secrets: Redactor) -> None:
    """The JSON document to stdout (``-``) or to a file; nothing without ``--json``."""
    if not json_out:
        return
    text = json.dumps(secrets.value(document), indent=2) + "\n"
    if json_out == "-":
        # on the job's log a JSON line never starts with "::", but "##[" (GitHub's older
        # workflow command syntax) counts anywhere: the same JSON, with that '#' escaped
        text = text.replace("##[", "#\\u0023[")
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        _write("--json", json_out, text)


@contextlib.contextmanager
def stdout_to_stderr(active: bool) -> Iterator[None]:
    """While plugin code runs in this process for ``--json -``, what it prints goes to stderr, so
    stdout carries the JSON alone: ``print()`` (sys.stdout) and file descriptor 1 (C code, child
    processes) both, where stdout is a real file."""
    if not active:
        yield
        return
    sys.stdout.flush()
    try:
        out_fd, err_fd = sys.stdout.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # in-memory streams: only Python writes there
        out_fd = err_fd = -1
    saved = os.dup(out_fd) if out_fd >= 0 else -1
    if saved >= 0:
        os.dup2(err_fd, out_fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved >= 0:
            os.dup2(saved, out_fd)
            os.close(saved)


def check_json_path(json_out: str | None, targets: Sequence[str]) -> None:
    if json_out != "-":
        check_report_path("--json", json_out, targets)


def check_report_path(option: str, out: str | None, targets: Sequence[str]) -> None:
    """Before any work: ``--json dist/x.whl`` would take the wheel as the report path (never
    clobber an input), and a report that cannot be written must not be found out at the end.
    The report's directory is created (``reports/junit.xml``), and the file is opened for
    appending and given an empty write, which changes nothing in it: a file that cannot be
    written (``/proc/version``, a read-only one, a pipe nobody reads) fails here."""
    if out is None:
        return
    if not out.strip():
        raise UsageError(
            f"{option} was given an empty path (an unset variable?)",
            hint=f"give the report a file ({option} report-file), or leave the option out",
        )
    path = Path(out)
    if path.is_dir():
        raise UsageError(
            f"{option} {out} is a directory",
            hint=f"give the report a file inside it, e.g. {option} {path / 'report'}",
        )
    if out in targets or (path.exists() and path.name.endswith(_ARTIFACT_SUFFIXES)):
        raise UsageError(
            f"{option} would overwrite {out}",
            hint=f"give the report its own file ({option} report-file), "
            + ("or use --json=- for stdout" if option == "--json" else "or drop the option"),
        )
    parent = path.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        in_the_way = next((p for p in (parent, *parent.parents) if p.exists()), parent)
        why = (
            f"{in_the_way} is a file, not a directory"
            if in_the_way.exists() and not in_the_way.is_dir()
            else str(exc.strerror or exc)
        )
        raise UsageError(
            f"{option} {out}: cannot create the directory {parent}: {why}",
            hint="write the report elsewhere",
        ) from None
    existed = path.exists()
    try:
        # non-blocking: a pipe without a reader is refused here instead of hanging
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
        try:
            os.write(handle, b"")  # changes nothing; refused where no write would be taken
        finally:
            os.close(handle)
    except OSError as exc:
        raise UsageError(
            f"{option} {out} cannot be written: {exc.strerror or exc}",
            hint="write the report to a file you can write, in a directory you can write",
        ) from None
    if not existed:
        path.unlink()  # created only to be sure it can be; the report is written at the end


def preload(*, junit: bool, github: bool) -> None:
    """Import the modules that write the surfaces asked for, before code from the package runs.

    They are imported lazily (most checks need none of them); in process isolation the
    package's code could rewrite one of our files before it is first imported, and so change
    the verdict. Once imported, a module is what it was when the check started."""
    report = importlib.import_module("sandboxverify.report")
    for name in (_JUNIT_WRITERS if junit else ()) + (_GITHUB_WRITERS if github else ()):
        getattr(report, name)
    if github:
        importlib.import_module("sandboxverify.cli._github")


def _write(option: str, out: str, text: str) -> None:
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:  # checked before the work; the file system can still change
        raise UsageError(
            f"cannot write the {option} report to {out}: {exc.strerror or exc}",
            hint="write the report elsewhere",
        ) from None


def write_junit(report: Result, junit_out: str, secrets: Redactor) -> None:
    """The JUnit XML report: one test case per check."""
    if isinstance(report, Report):
        from sandboxverify.report import junit_xml  # noqa: PLC0415 - only when asked

        _write("--junit-xml", junit_out, junit_xml(secrets.value(report)))
    else:
        from sandboxverify.report import merged_junit  # noqa: PLC0415

        _write("--junit-xml", junit_out, merged_junit(secrets.value(report)))


def write_github(
    report: Result,
    stream: TextIO,
    secrets: Redactor,
    *,
    pyproject: Path | None,
    playbook: str | None,
    annotate: bool = True,
) -> None:
    """Annotations on the stream (the runner reads workflow commands from the step's output),
    the Markdown summary appended to ``$GITHUB_STEP_SUMMARY`` when the runner provides one.
    ``annotate=False``: the summary only (the annotations are out already)."""
    report = secrets.value(report)
    from sandboxverify.cli import _github  # noqa: PLC0415

    if annotate:
        if isinstance(report, Report):
            sources = _github.GitHubSources(
                pyproject=pyproject if pyproject is not None and pyproject.is_file() else None,
                playbook=Path(playbook) if playbook else None,
                root=Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()),
            )
            lines = _github.error_annotations(report, sources)
            lines += _github.warning_annotations(report.warnings)
        else:
            lines = _github.merged_annotations(report)
            lines += _github.warning_annotations(
                [w for source in report.sources for w in source.report.warnings]
            )
        for line in lines:
            stream.write(line + "\n")
        stream.flush()
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        if isinstance(report, Report):
            from sandboxverify.report import step_summary  # noqa: PLC0415

            summary = step_summary(report)
        else:
            from sandboxverify.report import merged_summary  # noqa: PLC0415

            summary = merged_summary(report)
        try:
            with open(summary_path, "a", encoding="utf-8") as handle:
                handle.write(summary + "\n")
        except OSError as exc:
            raise UsageError(
                f"cannot append the step summary to GITHUB_STEP_SUMMARY={summary_path}: "
                f"{exc.strerror or exc}",
                hint="point GITHUB_STEP_SUMMARY at a writable file, or pass --no-github",
            ) from None
