"""``sandboxverify merge``: one verdict, one step summary and one JUnit file from the JSON
reports of CI matrix jobs (an operating system and a Python each)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import click

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._github import _escape_data, _escape_property
from sandboxverify.cli._options import json_option
from sandboxverify.cli._output import check_json_path, check_report_path, write_json
from sandboxverify.report._load import ReportFormatError, report_from_json
from sandboxverify.report._merge import (
    Merged,
    Source,
    merge,
    merged_document,
    merged_junit,
    merged_summary,
)

#: GitHub shows 10 error annotations per step; the summary has every failure
_ANNOTATIONS = 10


@click.command("merge")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT...")
@json_option("the merged report")
@click.option(
    "--junit-xml",
    metavar="FILE",
    help="Write one JUnit XML file with the suites of every report, each run labelled.",
)
@click.option(
    "--github/--no-github",
    default=None,
    help="Write GitHub Actions annotations and a step summary. [default: when GITHUB_ACTIONS=true]",
)
@click.option("-q", "--quiet", is_flag=True, help="Only failures and the verdict.")
def merge_reports(
    *,
    reports: tuple[str, ...],
    json_out: str | None,
    junit_xml: str | None,
    github: bool | None,
    quiet: bool,
) -> int:
    """Merge the JSON reports of CI matrix jobs (check --json) into one verdict.

    REPORT is a report file, or a directory searched for *.json reports (as
    actions/download-artifact leaves one directory per artifact). Each run is labelled with
    its Python and the operating system it ran on.

    Exit codes: 0 every report passed, 1 a report failed, 2 no reports or one that cannot be read.
    """
    check_json_path(json_out, reports)
    check_report_path("--junit-xml", junit_xml, reports)
    outputs = {Path(out).absolute() for out in (json_out, junit_xml) if out and out != "-"}
    merged = merge([_read(path) for path in _report_files(reports, outputs)])
    human: TextIO = sys.stderr if json_out == "-" else sys.stdout
    human.write(render_merged(merged, quiet=quiet) + "\n")
    human.flush()
    write_json(merged_document(merged), json_out)
    if junit_xml:
        Path(junit_xml).write_text(merged_junit(merged), encoding="utf-8")
    if github or (github is None and os.environ.get("GITHUB_ACTIONS") == "true"):
        _write_github(merged, human)
    return EXIT_OK if merged.ok else EXIT_CHECK_FAILED


def _report_files(given: Sequence[str], outputs: set[Path]) -> list[Path]:
    """The report files: those named, and the ``*.json`` files in the directories named (never
    this merge's own output, which a second run would otherwise find there)."""
    files: list[Path] = []
    for raw in given:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*.json") if p.is_file() and p.absolute() not in outputs
            )
            if not found:
                raise UsageError(
                    f"no *.json report in {raw}",
                    hint="pass the reports 'check --json FILE' wrote, or the directories "
                    "they were downloaded into",
                )
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(
                f"report not found: {raw}",
                hint="a matrix job that failed before writing its report leaves none: "
                "see that job's log",
            )
    return list(dict.fromkeys(files))


def _read(path: Path) -> Source:
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and isinstance(document.get("reports"), list):
            raise ReportFormatError("it is a merged report; merge the jobs' own reports")
        return Source(str(path), document, report_from_json(document))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path} is not JSON: {exc}",
            hint="pass the files 'sandboxverify check --json FILE' wrote",
        ) from None
    except ReportFormatError as exc:
        raise UsageError(
            f"{path} is not a sandboxverify report: {exc}",
            hint="pass the files 'sandboxverify check --json FILE' wrote",
        ) from None


def render_merged(merged: Merged, *, quiet: bool = False) -> str:
    """One line per run, the failures with their run's label, and the verdict."""
    lines: list[str] = []
    for source, labels in zip(merged.sources, merged.run_labels):
        for run, label in zip(source.report.runs, labels):
            if not quiet or not run.ok:
                lines.append(f"{'ok  ' if run.ok else 'FAIL'} {label}  ({source.name})")
        if not source.report.runs:
            lines.append(f"FAIL {source.name}: no run ({len(source.report.failures)} failure(s))")
    for failure in merged_document(merged)["failures"]:
        lines.append(f"FAILED {failure['code']} [{failure['label']}]: {failure['message']}")
        if failure.get("hint"):
            lines.append(f"  hint: {failure['hint']}")
    failures = sum(len(source.report.failures) for source in merged.sources)
    failed = sum(not source.ok for source in merged.sources)
    reports = len(merged.sources)
    if merged.ok:
        lines.append(f"PASSED: {merged.runs} run(s) from {reports} report(s)")
    else:
        lines.append(
            f"FAILED: {failures} failure(s); {failed} of {reports} report(s) failed "
            f"({merged.runs} run(s))"
        )
    return "\n".join(lines)


def _write_github(merged: Merged, stream: TextIO) -> None:
    """An error annotation per failure (at most GitHub's 10; the summary has them all), and the
    merged summary appended to ``$GITHUB_STEP_SUMMARY``."""
    failures = merged_document(merged)["failures"]
    for failure in failures[:_ANNOTATIONS]:
        title = f"sandboxverify: {failure['code']} [{failure['label']}]"
        message = str(failure["message"]) + (
            f"\nhint: {failure['hint']}" if failure.get("hint") else ""
        )
        stream.write(f"::error title={_escape_property(title)}::{_escape_data(message)}\n")
    stream.flush()
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as handle:
                handle.write(merged_summary(merged) + "\n")
        except OSError as exc:
            raise UsageError(
                f"cannot append the step summary to GITHUB_STEP_SUMMARY={summary_path}: "
                f"{exc.strerror or exc}",
                hint="point GITHUB_STEP_SUMMARY at a writable file, or pass --no-github",
            ) from None
