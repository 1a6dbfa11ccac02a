"""A survey as Markdown, for the GitHub step summary: the counts, the regressions first (each
with its failure under the candidate), then what could not be checked, the fixes, the breaks,
and the plugins that pass with both."""

from __future__ import annotations

from sandboxverify.report._markdown import code_span, escaped, table_lines, within_budget
from sandboxverify.report._summary import SUMMARY_BUDGET
from sandboxverify.report._survey import PluginResult, SideResult, Survey

_HEADINGS = {
    "regressed": "Regressed: pass with the baseline, fail with the candidate",
    "error": "Could not be checked (not the application's doing)",
    "fixed": "Fixed: fail with the baseline, pass with the candidate",
    "broken": "Broken with both releases",
}


def survey_summary(survey: Survey) -> str:
    old, new = survey.baseline, survey.candidate
    counts = survey.counts
    verdict = "PASSED" if survey.ok else "FAILED"
    lines = [
        f"## sandboxverify survey: {escaped(old.label)} → {escaped(new.version)}",
        "",
        f"**{verdict}** · "
        + " · ".join(f"{counts[name]} {name}" for name in counts if name != "not_checked"),
        "",
        f"{len(survey.results)} plugin(s) checked on Python {escaped(survey.python)}"
        + (f"; **{counts['not_checked']} not checked**" if counts["not_checked"] else "")
        + (
            "; shards missing: " + ", ".join(map(escaped, survey.missing_shards))
            if survey.missing_shards
            else ""
        )
        + (f"; stopped: {escaped(survey.stopped)}" if survey.stopped else ""),
        "",
    ]
    lines += [line for side in survey.releases for e in side.excuses for line in (escaped(e), "")]
    ordered = survey.ordered()
    for name, heading in _HEADINGS.items():
        rows = [_row(result) for result in ordered if result.survey_class == name]
        if rows:
            lines += [f"### {heading}", ""]
            lines += table_lines(["plugin", "baseline", "candidate", "why"], rows)
    passing = [result for result in ordered if result.survey_class == "ok"]
    if passing:
        names = ", ".join(code_span(f"{r.name} {r.version}") for r in passing)
        lines += [f"### Pass with both ({len(passing)})", "", names, ""]
    if survey.not_checked:
        lines += ["### Not checked", "", ", ".join(map(code_span, survey.not_checked)), ""]
    return within_budget("\n".join(lines), SUMMARY_BUDGET)


def _row(result: PluginResult) -> list[str]:
    release = f"{result.name} {result.version}" if result.version else result.requirement
    return [
        code_span(release),
        _side(result.baseline),
        _side(result.candidate),
        escaped(result.reason),
    ]


def _side(side: SideResult | None) -> str:
    if side is None:
        return "—"
    return {"passed": "✅ passed", "failed": "❌ failed", "error": "⚠️ error"}[side.status]
