"""The Markdown step summary of a check, for ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from collections.abc import Sequence

from sandboxverify.report._inert import inert, inert_lines
from sandboxverify.report._markdown import (
    code_span,
    escaped,
    escaped_lines,
    longest_backticks,
    table_lines,
    within_budget,
)
from sandboxverify.report._model import (
    Failure,
    Report,
    ReportError,
    Run,
    plugins_registering,
    wheel_origin,
)
from sandboxverify.report._records import ImportsRecord, ScriptRecord, SmokeRecord

#: GitHub rejects a step summary over 1 MiB; leave room for what else the job appends
SUMMARY_BUDGET = 900 * 1024
#: lines of a failure's details shown in the summary (the end: where tracebacks say what broke)
DETAIL_LINES = 40
_DETAIL_WIDTH = 400


def step_summary(report: Report) -> str:
    """The Markdown summary of the check."""
    if report.error is not None and not report.runs and not report.artifacts:
        return error_section(report.error, heading="##") + "\n"
    pythons = ", ".join(dict.fromkeys(run.python for run in report.runs)) or "no interpreter"
    verdict = "passed" if report.ok else f"failed: {len(report.failures)} failure(s)"
    lines = [
        f"## sandboxverify {'passed' if report.ok else 'failed'}",
        "",
        f"**{escaped(verdict)}**; {plugins_registering(report.runs)} on Python "
        f"{escaped(pythons)} in {report.seconds:.1f}s. Target {code_span(report.target)}, "
        f"host {code_span(report.host)}, installer {code_span(report.installer)}, "
        f"isolation {code_span(report.isolation)}"
        + (
            f" (the OS sandbox is unavailable: {escaped(report.isolation_fallback)})"
            if report.isolation_fallback
            else ""
        )
        + ".",
        "",
    ]
    if report.artifacts:
        given_wheel = any(a.kind == "wheel" and not a.built for a in report.artifacts)
        lines += table_lines(
            ("artifact", "file", "sha256"),
            [
                (
                    escaped(a.kind) + (" built from the sdist" if given_wheel and a.built else ""),
                    escaped(a.filename),
                    code_span(a.sha256[:12]),
                )
                for a in report.artifacts
            ],
        )
    if report.error is not None:  # it stopped after the check itself (a report not written)
        lines += [error_section(report.error, heading="###"), ""]
    for run in report.runs:
        lines += _run_section(run, wheel_origin(run.wheel_built, report.runs))
    lines += _warnings_lines(report)
    text = within_budget("\n".join(lines), SUMMARY_BUDGET // 2)
    if report.failures:
        budget = SUMMARY_BUDGET - len(text.encode())
        text += "\n" + _failures_section(report.failures, report.runs, budget)
    return text.rstrip("\n") + "\n"


def error_section(error: ReportError, *, heading: str) -> str:
    """Why sandboxverify stopped before (or after) its verdict: a usage error, a bug, a signal."""
    what = error.code.replace("_", " ")
    lines = [
        f"{heading} sandboxverify failed: {what}",
        "",
        f"**ERROR** {escaped_lines(error.message)}",
    ]
    if error.hint:
        lines += ["", f"**hint:** {escaped_lines(error.hint)}"]
    return "\n".join(lines)


def _run_section(run: Run, origin: str | None = None) -> list[str]:
    """``origin``: which of its interpreter's two runs this is (a wheel and an sdist given)."""
    title = f"### Python {escaped(run.python)}"
    if origin:
        title += f", {origin}: {code_span(str(run.wheel))}"
    lines = [title, "", code_span(run.interpreter), ""]
    lines += table_lines(
        ("stage", "status", "seconds"),
        [(s.name, s.status, f"{s.seconds:.2f}") for s in run.stages],
        align=("---", "---", "---:"),
    )
    if run.plugins:
        rows = []
        for plugin in run.plugins:
            if plugin.ok:
                detail = ", ".join(t.name for t in run.tools if t.of(plugin)) or "no tools"
            else:
                error = plugin.error
                detail = _first_line(f"{error.type}: {error.message}") if error else "failed"
            status = "ok" if plugin.ok else "failed"
            rows.append((escaped(plugin.name), code_span(plugin.value), status, escaped(detail)))
        lines += table_lines(("plugin", "value", "status", "tools"), rows)
    outcomes = [
        ("imports", _imports_line(run.imports)),
        ("scripts", _scripts_line(run.scripts)),
        ("smoke", _smoke_line(run.smoke)),
    ]
    bullets = [f"- **{name}**: {line}" for name, line in outcomes if line]
    return lines + bullets + ([""] if bullets else [])


def _imports_line(record: ImportsRecord | None) -> str | None:
    if record is None:
        return None
    parts = [f"{len(record.imported)} of {record.modules} module(s) imported"]
    if record.failed:
        names = [failure.module for failure in record.failed]
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        parts.append(f"failed: {escaped(', '.join(names[:10]))}{more}")
    for reason, label in (
        ("extra", "need an extra"),
        ("platform", "for another platform"),
        ("test", "test code"),
        ("unbuilt", "not verified: an extra needs an sdist built"),
        ("release", "for an older release of a requirement"),
    ):
        excused = [e.module for e in record.excused if e.reason == reason]
        if excused:
            shown = ", ".join(excused[:5]) + (
                f" and {len(excused) - 5} more" if len(excused) > 5 else ""
            )
            parts.append(f"{len(excused)} {label} ({escaped(shown)})")
    for items, label in (
        (record.allowed_failures, "allowed to fail"),
        (record.skipped, "skipped"),
        (record.outside, "imported from outside the sandbox"),
    ):
        if items:
            parts.append(f"{len(items)} {label}")
    return "; ".join(parts)


def _scripts_line(records: Sequence[ScriptRecord] | None) -> str | None:
    if records is None:
        return None
    if not records:
        return "no console scripts"
    shown = [
        f"{r.name} ({'not installed' if not r.exists else f'--help {r.help}'})" for r in records
    ]
    return f"{len(records)} script(s): " + escaped(", ".join(shown))


def _smoke_line(smoke: SmokeRecord | None) -> str | None:
    if smoke is None:
        return None
    name = smoke.playbook or smoke.script or "playbook"
    line = (
        f"{escaped(name)} {'passed' if smoke.ok else 'failed'}: "
        f"{smoke.turns} turn(s), {smoke.tool_calls} tool call(s)"
    )
    if smoke.error is not None:
        line += "; " + escaped(f"[{smoke.error.code}] {_first_line(smoke.error.message)}")
    return line


def _warnings_lines(report: Report) -> list[str]:
    """What fails nothing but is worth fixing (hygiene, an upload refusal in a given file)."""
    if not report.warnings:
        return []
    said = [f"- {code_span(w.code)} {escaped(w.message)}" for w in report.warnings]
    return ["### Warnings", "", *said, ""]


def _failures_section(failures: Sequence[Failure], runs: Sequence[Run], budget: int) -> str:
    """Every failure with its hint and the end of its details, within ``budget`` bytes."""
    blocks = ["### Failures", ""]
    used = len("\n".join(blocks).encode())
    for index, failure in enumerate(failures):
        block = _failure_block(failure, wheel_origin(failure.wheel_built, runs))
        size = len(block.encode()) + 1
        if used + size > budget - 200:  # room for the note
            left = len(failures) - index
            blocks.append(f"*{left} more failure(s) not shown here: the JSON report has them all.*")
            break
        blocks.append(block)
        used += size
    return "\n".join(blocks)


def _failure_block(failure: Failure, origin: str | None = None) -> str:
    where = f"{failure.python}, {origin}" if origin else failure.python
    where = f" [{escaped(where)}]" if where else ""
    lines = [f"#### {escaped(failure.code)}{where}", "", escaped_lines(failure.message), ""]
    if failure.hint:
        lines += [f"**hint:** {escaped_lines(failure.hint)}", ""]
    if failure.details:
        detail_lines = inert_lines(failure.details.rstrip())
        shown = [_cut(line) for line in detail_lines[-DETAIL_LINES:]]
        summary = f"details ({len(detail_lines)} line(s)"
        summary += f", the last {len(shown)} shown)" if len(shown) < len(detail_lines) else ")"
        fence = "`" * max(3, longest_backticks(shown) + 1)
        lines += [f"<details><summary>{summary}</summary>", "", f"{fence}text", *shown, fence]
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def _first_line(text: object) -> str:
    return inert_lines(text or "")[0]


def _cut(line: str) -> str:
    """A line of details in a code block: inert, and at most ``_DETAIL_WIDTH`` long."""
    line = inert(line)
    return line if len(line) <= _DETAIL_WIDTH else line[: _DETAIL_WIDTH - 1] + "…"
