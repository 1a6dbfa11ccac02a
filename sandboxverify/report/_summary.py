"""The Markdown step summary of a check, for ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sandboxverify.report._model import Failure, Report, ReportError, Run, plugins_registering
from sandboxverify.report._records import ImportsRecord, ScriptRecord, SmokeRecord

#: GitHub rejects a step summary over 1 MiB; leave room for what else the job appends
SUMMARY_BUDGET = 900 * 1024
#: lines of a failure's details shown in the summary (the end: where tracebacks say what broke)
DETAIL_LINES = 40
_DETAIL_WIDTH = 400


def step_summary(report: Report) -> str:
    """The Markdown summary of the check."""
    if report.error is not None and not report.runs and not report.artifacts:
        return _error_section(report.error, heading="##") + "\n"
    pythons = ", ".join(run.python for run in report.runs) or "no interpreter"
    verdict = "passed" if report.ok else f"failed: {len(report.failures)} failure(s)"
    lines = [
        f"## sandboxverify {'passed' if report.ok else 'failed'}",
        "",
        f"**{_text(verdict)}**; {plugins_registering(report.runs)} on Python "
        f"{_text(pythons)} in {report.seconds:.1f}s. Target {_code(report.target)}, "
        f"host {_code(report.host)}, installer {_code(report.installer)}, "
        f"isolation {_code(report.isolation)}"
        + (
            f" (the OS sandbox is unavailable: {_text(report.isolation_fallback)})"
            if report.isolation_fallback
            else ""
        )
        + ".",
        "",
    ]
    if report.artifacts:
        lines += _table(
            ("artifact", "file", "sha256"),
            [(_text(a.kind), _text(a.filename), _code(a.sha256[:12])) for a in report.artifacts],
        )
    if report.error is not None:  # it stopped after the check itself (a report not written)
        lines += [_error_section(report.error, heading="###"), ""]
    for run in report.runs:
        lines += _run_section(run)
    text = _fit("\n".join(lines), SUMMARY_BUDGET // 2)
    if report.failures:
        text += "\n" + _failures_section(report.failures, SUMMARY_BUDGET - len(text.encode()))
    return text.rstrip("\n") + "\n"


def _error_section(error: ReportError, *, heading: str) -> str:
    """Why sandboxverify stopped before (or after) its verdict: a usage error, a bug, a signal."""
    what = error.code.replace("_", " ")
    lines = [
        f"{heading} sandboxverify failed: {what}",
        "",
        f"**ERROR** {_paragraph(error.message)}",
    ]
    if error.hint:
        lines += ["", f"**hint:** {_paragraph(error.hint)}"]
    return "\n".join(lines)


def _run_section(run: Run) -> list[str]:
    lines = [f"### Python {_text(run.python)}", "", _code(run.interpreter), ""]
    lines += _table(
        ("stage", "status", "seconds"),
        [(s.name, s.status, f"{s.seconds:.2f}") for s in run.stages],
        align=("---", "---", "---:"),
    )
    if run.plugins:
        by_plugin: dict[str, list[str]] = {}
        for tool in run.tools:
            by_plugin.setdefault(tool.plugin, []).append(tool.name)
        rows = []
        for plugin in run.plugins:
            if plugin.ok:
                detail = ", ".join(by_plugin.get(plugin.name, [])) or "no tools"
            else:
                error = plugin.error
                detail = _first_line(f"{error.type}: {error.message}") if error else "failed"
            status = "ok" if plugin.ok else "failed"
            rows.append((_text(plugin.name), _code(plugin.value), status, _text(detail)))
        lines += _table(("plugin", "value", "status", "tools"), rows)
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
        parts.append(f"failed: {_text(', '.join(names[:10]))}{more}")
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
    return f"{len(records)} script(s): " + _text(", ".join(shown))


def _smoke_line(smoke: SmokeRecord | None) -> str | None:
    if smoke is None:
        return None
    name = smoke.playbook or smoke.script or "playbook"
    line = (
        f"{_text(name)} {'passed' if smoke.ok else 'failed'}: "
        f"{smoke.turns} turn(s), {smoke.tool_calls} tool call(s)"
    )
    if smoke.error is not None:
        line += "; " + _text(f"[{smoke.error.code}] {_first_line(smoke.error.message)}")
    return line


def _failures_section(failures: Sequence[Failure], budget: int) -> str:
    """Every failure with its hint and the end of its details, within ``budget`` bytes."""
    blocks = ["### Failures", ""]
    used = len("\n".join(blocks).encode())
    for index, failure in enumerate(failures):
        block = _failure_block(failure)
        size = len(block.encode()) + 1
        if used + size > budget - 200:  # room for the note
            left = len(failures) - index
            blocks.append(f"*{left} more failure(s) not shown here: the JSON report has them all.*")
            break
        blocks.append(block)
        used += size
    return "\n".join(blocks)


def _failure_block(failure: Failure) -> str:
    where = f" [{_text(failure.python)}]" if failure.python else ""
    lines = [f"#### {_text(failure.code)}{where}", "", _paragraph(failure.message), ""]
    if failure.hint:
        lines += [f"**hint:** {_paragraph(failure.hint)}", ""]
    if failure.details:
        detail_lines = failure.details.rstrip().splitlines()
        shown = [_cut(line) for line in detail_lines[-DETAIL_LINES:]]
        summary = f"details ({len(detail_lines)} line(s)"
        summary += f", the last {len(shown)} shown)" if len(shown) < len(detail_lines) else ")"
        fence = "`" * max(3, _longest_backticks(shown) + 1)
        lines += [f"<details><summary>{summary}</summary>", "", f"{fence}text", *shown, fence]
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def _table(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, align: Sequence[str] | None = None
) -> list[str]:
    """A GitHub-flavoured table of cells already escaped (``_text``, ``_code``)."""
    lines = [_row(header), _row(align or ["---"] * len(header))]
    return [*lines, *(_row(row) for row in rows), ""]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


#: Markdown and HTML syntax; a backslash makes any of them literal in GitHub-flavoured Markdown
_SYNTAX = re.compile(r"([\\`*_{}\[\]<>#!|~&])")
_BLOCK_START = re.compile(r"^([-+=]|\d+(?=[.)]))")


def _text(text: str) -> str:
    """Plain text on one line, safe inside a line and in a table cell (``|`` escaped too)."""
    return _SYNTAX.sub(r"\\\1", " ".join(str(text).split()))


def _paragraph(text: str) -> str:
    """Plain text over several lines, kept as lines within one paragraph."""
    escaped = "<br>".join(_text(line) for line in str(text).splitlines())
    # a list item or a heading underline when it starts a line: make its marker literal
    return _BLOCK_START.sub(lambda m: m[0] + "\\" if m[0].isdigit() else "\\" + m[0], escaped)


def _code(text: str) -> str:
    """An inline code span that holds any text, also in a table cell."""
    flat = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (_longest_backticks([flat]) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _fit(text: str, budget: int) -> str:
    """At most ``budget`` bytes, cut at a line (only thousands of plugins get here)."""
    if len(text.encode()) <= budget:
        return text
    cut = text.encode()[:budget].decode(errors="ignore").rsplit("\n", 1)[0]
    return cut + "\n\n*The summary is cut short here: the JSON report has everything.*\n"


def _longest_backticks(lines: Iterable[str]) -> int:
    return max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)


def _first_line(text: object) -> str:
    lines = str(text or "").splitlines()
    return lines[0] if lines else ""


def _cut(line: str) -> str:
    return line if len(line) <= _DETAIL_WIDTH else line[: _DETAIL_WIDTH - 1] + "…"
