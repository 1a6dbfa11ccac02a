"""The survey at a glance in GitHub: the step summary (counts, then regressions first) and an
annotation per regression and per plugin that could not be checked."""

from __future__ import annotations

import html
from dataclasses import replace

from sandboxverify.cli._github import survey_annotations
from sandboxverify.cli._survey_render import render_survey
from sandboxverify.report import survey_html, survey_summary
from sandboxverify.report._markdown import escaped
from sandboxverify.report._survey_load import application_from_json
from tests.report.test_survey_html import SURVEY


def test_the_summary_gives_the_counts_then_the_regressions_first() -> None:
    summary = survey_summary(SURVEY)
    assert "**FAILED** · 1 regressed · 1 error · 1 fixed · 1 broken · 3 ok" in summary
    sections = [line for line in summary.splitlines() if line.startswith("### ")]
    assert sections[0].startswith("### Regressed")
    assert sections[1].startswith("### Could not be checked")
    assert summary.index("zeta-regressed") < summary.index("eta-error")


def test_a_survey_without_regressions_passes() -> None:
    calm = replace(SURVEY, results=tuple(r for r in SURVEY.results if r.survey_class == "ok"))
    assert calm.ok
    assert "**FAILED**" not in survey_summary(calm)
    assert survey_annotations(calm) == []


def test_an_annotation_per_regression_and_per_error() -> None:
    annotations = survey_annotations(SURVEY)
    assert [a.split(" ", 1)[0] for a in annotations] == ["::error", "::warning"]
    assert "zeta-regressed" in annotations[0]
    assert "eta-error" in annotations[1]


def test_every_surface_says_what_the_candidate_s_build_was_excused() -> None:
    excuse = "artifact_invalid: app-2.0.0+rc.tar.gz: PKG-INFO has the local version '2.0.0+rc'"
    built = replace(SURVEY.candidate, version="2.0.0+rc", source="project", excused=(excuse,))
    survey = replace(SURVEY, candidate=built)
    said = "svfix-survey-app 2.0.0+rc built with what only its upload would fail, excused: "
    assert said + excuse in render_survey(survey)
    assert escaped(said + excuse) in survey_summary(survey)
    assert html.escape(said + excuse) in survey_html(survey)
    assert application_from_json(built.to_json()) == built  # and read back as written
    assert SURVEY.candidate.to_json()["excused"] == []
    for surface in (render_survey(SURVEY), survey_summary(SURVEY), survey_html(SURVEY)):
        assert "excused" not in surface
