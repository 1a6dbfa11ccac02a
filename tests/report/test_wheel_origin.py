"""Two runs of one interpreter (a given wheel, and the wheel built from the given sdist): every
rendering names them apart and puts each failure with its run; reports of one kind of run, and
reports of older versions without the fields, read as before."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from sandboxverify.report._junit import junit_xml
from sandboxverify.report._load import report_from_json
from sandboxverify.report._merge import Source, merge, merged_document, merged_summary
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    Run,
    Stage,
    run_of,
    wheel_origin,
)
from sandboxverify.report._summary import step_summary

WHEEL = "demo-1.0-py3-none-any.whl"


def _run(*, built: bool, ok: bool) -> Run:
    error = None if ok else PluginError("ModuleNotFoundError", "No module named 'demo.x'", "", "")
    return Run(
        "3.12.1",
        "/usr/bin/python3.12",
        ok,
        (Stage("build", "passed", 1.0), Stage("probe", "passed" if ok else "failed", 0.1)),
        (PluginRecord("helped", "sandboxverify.plugins", "demo.plugin:setup", ok, error),),
        os="Linux",
        wheel=WHEEL,
        wheel_built=built,
    )


def _pair() -> Report:
    loading = Failure(
        "plugin_load_failed",
        "plugin 'helped' failed to load",
        python="3.12.1",
        plugin="helped",
        wheel=WHEEL,
        wheel_built=True,
    )
    contents = Failure("artifact_mismatch", f"the given wheel {WHEEL} and … differ in files")
    return Report(
        target="dist/*",
        artifacts=(
            ArtifactRecord("sdist", "demo-1.0.tar.gz", "0" * 64, built=False),
            ArtifactRecord("wheel", WHEEL, "1" * 64, built=False),
            ArtifactRecord("wheel", WHEEL, "2" * 64, built=True),
        ),
        runs=(_run(built=False, ok=True), _run(built=True, ok=False)),
        failures=(contents, loading),
        host="auto",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=2.0,
    )


def test_a_failure_belongs_to_the_run_of_its_wheel() -> None:
    report = _pair()
    given, from_sdist = report.runs

    assert run_of(report.failures[1], report.runs) is from_sdist is not given
    assert run_of(report.failures[0], report.runs) is None
    assert wheel_origin(False, report.runs) == "wheel as given"
    assert wheel_origin(True, report.runs) == "wheel built from the sdist"
    # every run built by the check (a project), or every run given: the Python says it all
    assert wheel_origin(True, [from_sdist, from_sdist]) is None
    assert wheel_origin(None, report.runs) is None


def test_junit_has_a_suite_per_run_and_the_built_wheel_a_case_of_its_own() -> None:
    root = ET.fromstring(junit_xml(_pair()))
    suites = {suite.get("name"): suite for suite in root}

    assert list(suites) == [
        "build",
        "python 3.12.1 (wheel as given)",
        "python 3.12.1 (wheel built from the sdist)",
    ]
    assert suites["python 3.12.1 (wheel as given)"].get("failures") == "0"
    failed = suites["python 3.12.1 (wheel built from the sdist)"]
    assert {case.get("classname") for case in failed} - {None} == {
        "sandboxverify.py3_12_1_from_sdist"
    }
    [built_case] = [c for c in suites["build"].iter("testcase") if c.find("failure") is not None]
    assert built_case.get("name") == f"wheel {WHEEL} (built from the sdist)"
    failure = built_case.find("failure")
    assert failure is not None and failure.get("type") == "artifact_mismatch"


def test_the_step_summary_titles_each_run_with_its_wheel() -> None:
    summary = step_summary(_pair())

    assert f"### Python 3.12.1, wheel as given: `{WHEEL}`" in summary
    assert f"### Python 3.12.1, wheel built from the sdist: `{WHEEL}`" in summary
    assert "#### plugin\\_load\\_failed [3.12.1, wheel built from the sdist]" in summary
    assert "on Python 3.12.1 in" in summary  # the interpreter once


def test_merge_labels_the_runs_apart_and_older_reports_as_before() -> None:
    document = json.loads(json.dumps(_pair().to_json()))
    older = json.loads(json.dumps(_pair().to_json()))
    for item in (*older["runs"], *older["failures"]):
        del item["wheel"], item["wheel_built"]
    sources = [
        Source(name, doc, report_from_json(doc))
        for name, doc in (("pair.json", document), ("older.json", older))
    ]

    merged = merge(sources)
    merged_json = merged_document(merged)

    assert merged.run_labels[0] == (
        "Python 3.12.1 on Linux, wheel as given",
        "Python 3.12.1 on Linux, wheel built from the sdist",
    )
    # as before: a report without the fields names its runs by their Python alone
    assert merged.run_labels[1] == ("Python 3.12.1 on Linux (older.json)",) * 2
    loading = [f for f in merged_json["failures"] if f["code"] == "plugin_load_failed"]
    assert [f["label"] for f in loading] == [
        "Python 3.12.1 on Linux, wheel built from the sdist",
        "Python 3.12.1 on Linux (older.json)",
    ]
    assert [run["wheel_built"] for run in merged_json["runs"]] == [False, True, None, None]
    assert "| Python 3.12.1 on Linux, wheel built from the sdist | failed |" in merged_summary(
        merged
    )
