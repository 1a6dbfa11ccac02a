"""What ``sandboxverify survey`` does (its options are in ``_commands``), and ``merge`` of a
survey's shards: the text report, and the survey as JSON, as an HTML page and as the GitHub step
summary. The results file is the survey's record; everything else is rendered from it, also
when a run is interrupted (what was checked, the rest as not checked)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._github import survey_annotations
from sandboxverify.cli._output import check_json_path, check_report_path, write_json
from sandboxverify.cli._surfaces import Surfaces
from sandboxverify.cli._survey_render import SurveyProgress, render_survey
from sandboxverify.options import SurveyOptions
from sandboxverify.pipeline import finished
from sandboxverify.pipeline import survey as run_survey
from sandboxverify.report import (
    Redactor,
    Survey,
    SurveyFormatError,
    merge_results,
    read_results,
    survey_html,
    survey_summary,
)


def survey(ctx: click.Context, plugins: tuple[str, ...], values: dict[str, Any]) -> int:
    surfaces = ctx.find_object(Surfaces) or Surfaces()
    surfaces.asked("survey", plugins, values)
    options = SurveyOptions(
        plugins=plugins,
        application=values["application"],
        baseline=values.get("baseline"),
        jobs=values.get("jobs"),
        shard=values.get("shard"),
        results=values.get("results") or "survey.jsonl",
        retry_errors=bool(values.get("retry_errors")),
        index_url=values.get("index_url"),
        find_links=tuple(values.get("find_links") or ()),
        installer=values.get("installer") or "auto",
        isolation=values.get("isolation") or "auto",
    )
    outputs = Outputs.checked(values, inputs=(*plugins, options.results))
    results = Path(options.results)
    started = time.perf_counter()
    progress = SurveyProgress(surfaces.stream, quiet=outputs.quiet)
    try:
        result = run_survey(options, progress)
    except KeyboardInterrupt as exc:
        # the results file is whole: the survey so far is written out, then the run ends
        # (SIGTERM arrives as a subclass of KeyboardInterrupt, so every cleanup runs)
        why = "interrupted" if type(exc) is KeyboardInterrupt else "terminated"
        if results.is_file():
            try:
                partial = finished(results, time.perf_counter() - started, stopped=why)
            except (SurveyFormatError, OSError):
                raise KeyboardInterrupt from None
            outputs.write(partial, surfaces)
        raise
    outputs.write(result, surfaces)
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


def merge_shards(surfaces: Surfaces, files: Sequence[Path], values: dict[str, Any]) -> int:
    """``merge`` given survey results: the shards of one survey, as one."""
    if values.get("junit_xml"):
        raise UsageError(
            "--junit-xml is for check reports; a survey is written with --json and --html",
            hint="drop --junit-xml",
        )
    outputs = Outputs.checked(values, inputs=tuple(map(str, files)))
    started = time.perf_counter()
    parts = []
    for path in files:
        try:
            parts.append(read_results(path))
        except (SurveyFormatError, OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"{path} is not a survey's results: {exc}",
                hint="pass the files 'sandboxverify survey --results FILE' wrote",
            ) from None
    try:
        merged = merge_results(parts, seconds=time.perf_counter() - started)
    except SurveyFormatError as exc:
        raise UsageError(str(exc), hint="merge the shards of one survey run") from None
    outputs.write(merged, surfaces)
    return EXIT_OK if merged.ok else EXIT_CHECK_FAILED


class Outputs:
    """Where a survey goes besides the terminal, each path checked before any work."""

    def __init__(self, json_out: str | None, html: str | None, github: bool | None, quiet: bool):
        self.json_out = json_out
        self.html = html
        self.github = github if github is not None else os.environ.get("GITHUB_ACTIONS") == "true"
        self.quiet = quiet
        self.secrets = Redactor()

    @classmethod
    def checked(cls, values: dict[str, Any], *, inputs: Sequence[str]) -> Outputs:
        json_out, html = values.get("json_out"), values.get("html")
        check_json_path(json_out, inputs)
        check_report_path("--html", html, inputs)
        return cls(json_out, html, values.get("github"), bool(values.get("quiet")))

    def write(self, survey: Survey, surfaces: Surfaces) -> None:
        survey = self.secrets.value(survey)
        human = surfaces.stream
        human.write(render_survey(survey, quiet=self.quiet) + "\n")
        human.flush()
        write_json(survey.to_json(), self.json_out, self.secrets)
        if self.html:
            _write(self.html, survey_html(survey))
        if self.github:
            for line in survey_annotations(survey):
                human.write(line + "\n")
            human.flush()
            summary = os.environ.get("GITHUB_STEP_SUMMARY")
            if summary:
                try:
                    with open(summary, "a", encoding="utf-8") as handle:
                        handle.write(survey_summary(survey) + "\n")
                except OSError as exc:
                    raise UsageError(
                        f"cannot append the step summary to GITHUB_STEP_SUMMARY={summary}: "
                        f"{exc.strerror or exc}",
                        hint="point GITHUB_STEP_SUMMARY at a writable file, or pass --no-github",
                    ) from None


def _write(out: str, text: str) -> None:
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
