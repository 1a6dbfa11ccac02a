"""One verdict from the JSON reports of a CI matrix (``sandboxverify merge``): the merged JSON
document, one JUnit file and one Markdown summary, each run labelled with its Python and the
operating system it ran on.

The JUnit file and the summary are the ones ``check`` writes for each report, put together: the
reports' own renderings, relabelled, so a merged view never says less than the jobs did.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion

from sandboxverify._frozen import frozen
from sandboxverify.report._junit import junit_xml
from sandboxverify.report._markdown import code_span, escaped, table_lines, within_budget
from sandboxverify.report._model import (
    REPORT_SCHEMA,
    REPORT_VERSION,
    Failure,
    Report,
    ReportError,
    Run,
    registrations,
    run_of,
    stopped_report,
    wheel_origin,
)
from sandboxverify.report._summary import SUMMARY_BUDGET, error_section, step_summary

#: the numeric attributes of ``<testsuites>`` that add up across reports
_COUNTS = ("tests", "failures", "errors", "skipped", "time")
#: what a run and a failure of a report of an older sandboxverify lack
_OLDER_RUN = {"os": None, "platform": None, "wheel": None, "wheel_built": None}
_OLDER_FAILURE = {"wheel": None, "wheel_built": None}


@frozen
class Source:
    """One matrix job's report: the file as given, the document and the report it describes."""

    name: str
    document: Mapping[str, Any]
    report: Report

    @property
    def ok(self) -> bool:
        return self.document.get("ok") is True and self.report.ok


@frozen
class Merged:
    sources: tuple[Source, ...]
    #: per source: a label for each of its runs (``Python 3.12.1 on Linux``)
    run_labels: tuple[tuple[str, ...], ...]
    #: per source: what it verified (its runs' labels, or its file when no run happened)
    labels: tuple[str, ...]
    #: what stopped the merge itself after it had a verdict (a report it could not write)
    error: ReportError | None = None

    @property
    def ok(self) -> bool:
        return (
            self.error is None and bool(self.sources) and all(source.ok for source in self.sources)
        )

    @property
    def runs(self) -> int:
        return sum(len(labels) for labels in self.run_labels)

    @property
    def failures(self) -> int:
        """The reports' failures, a report's error (its check stopped early) counted as one."""
        return sum(
            len(source.report.failures) + (source.report.error is not None)
            for source in self.sources
        )

    def to_json(self) -> dict[str, Any]:
        return merged_document(self)


def merge(sources: Sequence[Source]) -> Merged:
    """The reports together, each run with a label no other run has."""
    wanted = [
        [run_label(run, source.report.runs) for run in source.report.runs] for source in sources
    ]
    seen = Counter(label for labels in wanted for label in labels)
    run_labels = tuple(
        tuple(f"{label} ({source.name})" if seen[label] > 1 else label for label in labels)
        for source, labels in zip(sources, wanted)
    )
    labels = [", ".join(labels) or source.name for source, labels in zip(sources, run_labels)]
    repeated = Counter(labels)
    return Merged(
        tuple(sources),
        run_labels,
        tuple(
            f"{label} ({source.name})" if repeated[label] > 1 and label != source.name else label
            for source, label in zip(sources, labels)
        ),
    )


def distributions(sources: Sequence[Source]) -> dict[str, list[str]]:
    """The distributions the reports verified (by their artifacts' names, normalized), each
    with the reports of it; a report without artifacts (its check stopped early) is of none."""
    found: dict[str, list[str]] = {}
    for source in sources:
        for name in dict.fromkeys(_distribution(a.filename) for a in source.report.artifacts):
            found.setdefault(name, []).append(source.name)
    return found


def _distribution(filename: str) -> str:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[0]
        return parse_sdist_filename(filename)[0]
    except (InvalidSdistFilename, InvalidWheelFilename, InvalidVersion):
        return canonicalize_name(filename.rsplit("-", 1)[0])


@frozen
class Problem:
    """A report's failure, or the error that stopped its check, with the label of its run."""

    code: str
    message: str
    hint: str | None
    label: str
    report: str
    #: the check stopped before its verdict (``code`` is an error code, not a failure code)
    error: bool = False


def problems(merged: Merged) -> list[Problem]:
    """Every failure of every report, labelled with its run (or its report when no run is
    its), then each report's error."""
    found: list[Problem] = []
    for source, labels, label in zip(merged.sources, merged.run_labels, merged.labels):
        for failure in source.report.failures:
            where = _run_label_of(failure, source, labels) or label
            found.append(Problem(failure.code, failure.message, failure.hint, where, source.name))
        error = source.report.error
        if error is not None:
            found.append(Problem(error.code, error.message, error.hint, label, source.name, True))
    return found


def _run_label_of(failure: Failure, source: Source, labels: Sequence[str]) -> str | None:
    """The label of the run a failure names (by its Python, and given a wheel and an sdist by
    which of its runs), or ``None`` for a failure of no run."""
    run = run_of(failure, source.report.runs)
    return next((labels[i] for i, r in enumerate(source.report.runs) if r is run), None)


def run_label(run: Run, runs: Sequence[Run] = ()) -> str:
    """``Python 3.12.1 on Linux``; given a wheel and an sdist, which of the interpreter's runs
    (``runs``: the report's) it is too."""
    origin = wheel_origin(run.wheel_built, runs)
    return f"Python {run.python} on {run.os or 'an unknown OS'}" + (f", {origin}" if origin else "")


def merged_document(merged: Merged) -> dict[str, Any]:
    """A report v1 over every run and failure of the matrix, each with its ``label`` and the
    ``report`` it came from; ``reports`` lists the jobs' reports, their verdicts and errors.

    What each job asked for (``host``, ``groups``, ``installer``, ``expect_tools``, ``with``,
    ``notes``) is their union, a value the jobs disagree on joined by spaces as ``target`` is;
    ``seconds`` is the longest job's (they run side by side)."""
    runs: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    artifacts: dict[tuple[str, str, str], dict[str, Any]] = {}
    for source, labels, label in zip(merged.sources, merged.run_labels, merged.labels):
        for run, run_label_ in zip(_items(source.document, "runs"), labels):
            # a report of an older sandboxverify has no os, platform or wheel: null, as documented
            runs.append({**_OLDER_RUN, **run, "label": run_label_, "report": source.name})
        for failure, record in zip(_items(source.document, "failures"), source.report.failures):
            where = _run_label_of(record, source, labels) or label
            failures.append({**_OLDER_FAILURE, **failure, "label": where, "report": source.name})
        for artifact in _items(source.document, "artifacts"):
            key = (
                str(artifact.get("kind")),
                str(artifact.get("filename")),
                str(artifact.get("sha256")),
            )
            # a report of an older sandboxverify has no reused: it had no artifact cache
            artifacts.setdefault(key, {"reused": False, **artifact})
    reports = [source.report for source in merged.sources]
    return {
        "$schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "ok": merged.ok,
        "target": _joined(report.target for report in reports),
        "host": _joined(report.host for report in reports),
        "groups": _union(report.groups for report in reports),
        "installer": _joined(report.installer for report in reports),
        "seconds": round(max((report.seconds for report in reports), default=0.0), 3),
        "workdir": None,
        "expect_tools": _union(report.expect_tools for report in reports),
        "with": _union(report.with_requirements for report in reports),
        "notes": _union(report.notes for report in reports),
        # the weakest isolation any job ran with is the one the merged verdict can promise
        "isolation": (
            "namespaces"
            if reports and all(report.isolation == "namespaces" for report in reports)
            else "process"
        ),
        "isolation_fallback": _joined(report.isolation_fallback or "" for report in reports)
        or None,
        "network": (
            "none" if reports and all(report.network == "none" for report in reports) else "host"
        ),
        "syscall_filter": _joined(report.syscall_filter or "" for report in reports)
        if reports and all(report.syscall_filter for report in reports)
        else None,
        "reports": [
            {
                "report": source.name,
                "label": label,
                "ok": source.ok,
                "target": source.report.target,
                "runs": len(source.report.runs),
                "failures": len(source.report.failures),
                "error": source.report.error.to_json() if source.report.error else None,
            }
            for source, label in zip(merged.sources, merged.labels)
        ],
        "artifacts": list(artifacts.values()),
        "runs": runs,
        "failures": failures,
        # a warning the jobs share (the sdist's, checked on every job) is listed once
        "warnings": list(
            {
                json.dumps(warning.to_json(), sort_keys=True): warning.to_json()
                for report in reports
                for warning in report.warnings
            }.values()
        ),
        "dist_dir": None,
        "error": merged.error.to_json() if merged.error else None,
    }


def _joined(values: Iterable[str]) -> str:
    return " ".join(dict.fromkeys(value for value in values if value))


def _union(values: Iterable[Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(item for items in values for item in items))


def merged_junit(merged: Merged, *, now: datetime | None = None) -> str:
    """Every report's JUnit suites in one document: a run's suite is named by its label, a build
    suite by what it was built for; class names are prefixed per job so none collide."""
    root: ET.Element | None = None
    totals: dict[str, float] = {}
    prefixes = Counter[str]()
    for source, labels, label in zip(merged.sources, merged.run_labels, merged.labels):
        document = ET.fromstring(junit_xml(source.report, now=now))
        if root is None:
            root = ET.Element("testsuites", name="sandboxverify")
        for name in _COUNTS:
            if name in document.attrib:
                totals[name] = totals.get(name, 0.0) + float(document.attrib[name])
        prefix = _slug(label)
        prefixes[prefix] += 1
        if prefixes[prefix] > 1:
            prefix += f"_{prefixes[prefix]}"
        runs = iter(labels)
        for suite in document.findall("testsuite"):
            is_run = any(p.get("name") == "python" for p in suite.iter("property"))
            suite_label = next(runs, None) if is_run else None
            name = suite.get("name", "")
            suite.set("name", suite_label or f"{name} ({label})")
            properties = suite.find("properties")
            if properties is None:
                properties = ET.SubElement(suite, "properties")
            ET.SubElement(properties, "property", name="report", value=source.name)
            for case in suite.iter("testcase"):
                classname = case.get("classname", "sandboxverify")
                case.set(
                    "classname", classname.replace("sandboxverify.", f"sandboxverify.{prefix}.", 1)
                )
            root.append(suite)
    if root is None:
        root = ET.Element("testsuites", name="sandboxverify")
    if merged.error is not None:  # the merge stopped after its verdict: one more failed case
        stopped = ET.fromstring(junit_xml(stopped_report(merged.error, target="")))
        for name in _COUNTS:
            if name in stopped.attrib:
                totals[name] = totals.get(name, 0.0) + float(stopped.attrib[name])
        for suite in stopped.findall("testsuite"):
            suite.set("name", "sandboxverify merge")
            root.append(suite)
    for name, value in totals.items():
        root.set(name, f"{value:.3f}" if name == "time" else str(int(value)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def merged_summary(merged: Merged) -> str:
    """The Markdown step summary: a table of every run, then each report's own summary (those
    that failed first and open, those that passed folded)."""
    failed_runs = sum(
        not run.ok or not source.ok for source in merged.sources for run in source.report.runs
    )
    verdict = (
        f"passed: {merged.runs} run(s) from {len(merged.sources)} report(s)"
        if merged.ok
        else f"failed: {merged.failures} failure(s); {failed_runs} of {merged.runs} run(s) failed"
    )
    lines = [
        f"## sandboxverify merge {'passed' if merged.ok else 'failed'}",
        "",
        f"**{escaped(verdict)}**",
        "",
    ]
    if merged.error is not None:  # it stopped after its verdict (a report it could not write)
        lines += [error_section(merged.error, heading="###"), ""]
    rows = []
    for source, labels in zip(merged.sources, merged.run_labels):
        for run, label in zip(source.report.runs, labels):
            failures = [f for f in source.report.failures if run_of(f, source.report.runs) is run]
            rows.append(
                (
                    escaped(label),
                    "passed" if run.ok and not failures else "failed",
                    f"{len(run.plugins)} plugin(s) {registrations(run.tools)}",
                    str(len(failures)),
                    code_span(source.name),
                )
            )
        if not source.report.runs:
            rows.append(
                (
                    escaped(source.name),
                    "failed",
                    "no run",
                    str(len(source.report.failures) + (source.report.error is not None)),
                    code_span(source.name),
                )
            )
    lines += table_lines(("run", "verdict", "plugins", "failures", "report"), rows)
    head = within_budget("\n".join(lines), SUMMARY_BUDGET // 4)
    ordered = sorted(zip(merged.sources, merged.labels), key=lambda pair: pair[0].ok)
    budget = (SUMMARY_BUDGET - len(head.encode())) // max(1, len(ordered)) - 200
    sections = [head]
    for source, label in ordered:
        body = _demoted(step_summary(source.report))
        title = f"{escaped(label)}: {'passed' if source.ok else 'failed'}"
        if source.ok:
            sections.append(
                f"<details><summary>{title}</summary>\n\n"
                f"{within_budget(body, budget)}\n</details>\n"
            )
        else:
            sections.append(f"### {title}\n\n{within_budget(body, budget)}")
    return "\n".join(sections).rstrip("\n") + "\n"


def _demoted(summary: str) -> str:
    """A report's summary under a merged one: its title dropped, its headings one level down."""
    lines = summary.splitlines()
    if lines and lines[0].startswith("## sandboxverify"):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return "\n".join("#" + line if re.match(r"#{2,5} ", line) else line for line in lines)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower() or "report"


def _items(document: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    value = document.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
