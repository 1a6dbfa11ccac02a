"""What ``sandboxverify merge`` does (its options are in ``_commands``): one verdict, one step
summary and one JUnit file from the JSON reports of CI matrix jobs (an operating system and a
Python each). Its reports go out as ``check``'s do, through :class:`Surfaces`: on every exit,
redacted, with the error in them when it stopped early."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._output import check_json_path, check_report_path
from sandboxverify.cli._surfaces import Surfaces
from sandboxverify.report import (
    Merged,
    ReportFormatError,
    Source,
    distributions,
    inert,
    is_survey_results,
    merge,
    problems,
    report_from_json,
)


def merge_reports(
    ctx: click.Context,
    reports: tuple[str, ...],
    *,
    json_out: str | None,
    junit_xml: str | None,
    github: bool | None,
    quiet: bool,
    html: str | None = None,
    allow_mixed: bool = False,
) -> int:
    surfaces = ctx.find_object(Surfaces) or Surfaces()
    surfaces.resolve({"json_out": json_out, "junit_xml": junit_xml, "github": github}, None)
    check_json_path(json_out, reports)
    check_report_path("--junit-xml", junit_xml, reports)
    outputs = {Path(out).absolute() for out in (json_out, junit_xml, html) if out and out != "-"}
    files = _report_files(reports, outputs)
    if any(is_survey_results(path) for path in files):  # a survey's shards, told by content
        from sandboxverify.cli import _survey  # noqa: PLC0415

        values = {"json_out": json_out, "junit_xml": junit_xml, "github": github, "quiet": quiet}
        return _survey.merge_shards(surfaces, _only_surveys(files), {**values, "html": html})
    if html:
        raise UsageError(
            "--html is for survey results; check reports merge to --json and --junit-xml",
            hint="drop --html",
        )
    sources = [_read(path) for path in files]
    if not allow_mixed:
        _one_distribution(sources)
    merged = merge(sources)
    human = surfaces.stream
    human.write(render_merged(merged, quiet=quiet) + "\n")
    human.flush()
    surfaces.write(merged)
    return EXIT_OK if merged.ok else EXIT_CHECK_FAILED


def _one_distribution(sources: Sequence[Source]) -> None:
    """A matrix verifies one distribution: reports of several are a mistake (a stale report in
    the download directory, two projects' artifacts in one), refused unless --allow-mixed."""
    found = distributions(sources)
    if len(found) > 1:
        listed = "; ".join(f"{name}: {', '.join(files)}" for name, files in found.items())
        raise UsageError(
            f"the reports are of different distributions ({listed})",
            hint="merge each distribution's reports apart, or pass --allow-mixed to merge "
            "them all the same",
        )


def _report_files(given: Sequence[str], outputs: set[Path]) -> list[Path]:
    """The report files: those named, and the ``*.json`` files in the directories named (never
    this merge's own output, which a second run would otherwise find there)."""
    files: list[Path] = []
    for raw in given:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*.json*")
                if p.is_file()
                and p.absolute() not in outputs
                and (p.suffix == ".json" or (p.suffix == ".jsonl" and is_survey_results(p)))
            )
            if not found:
                raise UsageError(
                    f"no *.json report (or *.jsonl survey results) in {raw}",
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


def _only_surveys(files: Sequence[Path]) -> list[Path]:
    """Survey results, refusing check reports among them: the two do not merge."""
    reports = [path for path in files if not is_survey_results(path)]
    if reports:
        raise UsageError(
            f"{reports[0]} is not a survey's results, but the other files are",
            hint="merge a survey's shards on their own, and check reports on their own",
        )
    return list(files)


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
    """One line per run, the failures (and the errors of checks that stopped early) with their
    run's label, and the verdict."""
    lines: list[str] = []
    for source, labels in zip(merged.sources, merged.run_labels):
        for run, label in zip(source.report.runs, labels):
            if not quiet or not run.ok:
                # a label shared by several reports already names its report
                named = label.endswith(f"({source.name})")
                where = "" if named else f"  ({source.name})"
                lines.append(f"{'ok  ' if run.ok else 'FAIL'} {label}{where}")
        if not source.report.runs:
            count = len(source.report.failures) + (source.report.error is not None)
            lines.append(f"FAIL {source.name}: no run ({count} failure(s))")
    for problem in problems(merged):
        what = "ERROR" if problem.error else "FAILED"
        message = "\n  ".join(inert(problem.message, lines=True).split("\n"))
        lines.append(f"{what} {inert(problem.code)} [{inert(problem.label)}]: {message}")
        if problem.hint:
            lines.append(f"  hint: {inert(problem.hint)}")
    failed = sum(not source.ok for source in merged.sources)
    reports = len(merged.sources)
    if merged.ok:
        lines.append(f"PASSED: {merged.runs} run(s) from {reports} report(s)")
    else:
        lines.append(
            f"FAILED: {merged.failures} failure(s); {failed} of {reports} report(s) failed "
            f"({merged.runs} run(s))"
        )
    return "\n".join(lines)
