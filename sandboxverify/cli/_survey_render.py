"""A survey as text: a line per plugin as its checks end, then the counts with the regressions
first (each with its failure and the candidate's version), what could not be checked and why,
the fixes, the breaks, and the verdict."""

from __future__ import annotations

from typing import TextIO

from sandboxverify.pipeline import PluginSurveyed, SurveyEvent, SurveyStarted
from sandboxverify.report import CLASSES, PluginResult, Survey, inert

_WIDTH = max(map(len, CLASSES))


class SurveyProgress:
    """Writes each event of a survey as a line (the library never prints)."""

    def __init__(self, stream: TextIO, *, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet

    def __call__(self, event: SurveyEvent) -> None:
        if isinstance(event, SurveyStarted):
            header = event.header
            earlier = event.total - event.todo
            shard = f", shard {header.shard[0]}/{header.shard[1]}" if header.shard else ""
            self._line(
                f"survey of {event.total} plugin(s){shard}: {inert(header.baseline.label)} -> "
                f"{inert(header.candidate.version)}, {event.workers} at a time"
                + (f" ({earlier} done earlier, kept)" if earlier else "")
            )
        elif isinstance(event, PluginSurveyed):
            result = event.result
            if self.quiet and result.survey_class not in ("regressed", "error"):
                return
            self._line(
                f"[{event.done}/{event.todo}] {result.survey_class:<{_WIDTH}}  {_release(result)}"
                f"  {result.seconds:.1f}s"
                + (f"  {inert(result.reason)}" if result.survey_class != "ok" else "")
            )

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


def render_survey(survey: Survey, *, quiet: bool = False) -> str:
    """The survey's report: counts, then each class that needs reading, regressions first."""
    counts = survey.counts
    lines = [
        f"survey: {inert(survey.baseline.label)} -> {inert(survey.candidate.version)} "
        f"on Python {inert(survey.python)}",
        "  "
        + ", ".join(f"{counts[name]} {name}" for name in CLASSES)
        + (f", {counts['not_checked']} not checked" if counts["not_checked"] else ""),
    ]
    lines += [f"  {inert(excuse)}" for side in survey.releases for excuse in side.excuses]
    ordered = survey.ordered()
    shown = ("regressed", "error") if quiet else ("regressed", "error", "fixed", "broken")
    for name in shown:
        for result in (r for r in ordered if r.survey_class == name):
            lines.append(f"{name.upper():<{_WIDTH}} {_release(result)}: {inert(result.reason)}")
            hint = _hint(result)
            if hint and name in ("regressed", "broken", "fixed"):
                lines.append(f"  hint: {inert(hint)}")
    if survey.missing_shards:
        lines.append("MISSING shard(s): " + ", ".join(survey.missing_shards))
    if survey.not_checked:
        shown_names = ", ".join(map(inert, survey.not_checked[:10]))
        more = f" and {len(survey.not_checked) - 10} more" if len(survey.not_checked) > 10 else ""
        lines.append(f"NOT CHECKED {len(survey.not_checked)}: {shown_names}{more}")
    lines.append(_verdict(survey))
    return "\n".join(lines)


def _verdict(survey: Survey) -> str:
    counts = survey.counts
    total = len(survey.results)
    if survey.ok:
        return f"PASSED: no plugin regressed ({total} checked with both releases)"
    why = [f"{counts[name]} {name}" for name in ("regressed", "error") if counts[name]]
    if not survey.complete:
        why.append("incomplete" + (f" ({survey.stopped})" if survey.stopped else ""))
    return f"FAILED: {', '.join(why)} of {total + counts['not_checked']} plugin(s)"


def _release(result: PluginResult) -> str:
    if result.version is None:
        return inert(result.requirement)
    kind = f" ({result.artifact.kind})" if result.artifact else ""
    return f"{inert(result.name)} {inert(result.version)}{kind}"


def _hint(result: PluginResult) -> str | None:
    side = result.candidate if result.survey_class != "fixed" else result.baseline
    if side is None or not side.failures:
        return None
    return side.failures[0].hint
