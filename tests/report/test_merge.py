"""Reports read back from JSON and merged: labels that tell every run apart, failures that keep
their run, one JUnit document and one summary (the end-to-end tests merge real reports)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

import pytest

from sandboxverify.report._junit import junit_xml
from sandboxverify.report._load import ReportFormatError, report_from_json
from sandboxverify.report._merge import (
    Source,
    merge,
    merged_document,
    merged_junit,
    merged_summary,
    problems,
)
from sandboxverify.report._model import (
    ApplicationRecord,
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    ReportError,
    ReportWarning,
    Run,
    Stage,
    ToolRecord,
    stopped_report,
)
from sandboxverify.report._records import ImportsRecord
from tests.helpers import assert_valid_report


def report(python: str = "3.12.1", os: str | None = "Linux", *, broken: bool = False) -> Report:
    plugin = PluginRecord(
        "greet",
        "sandboxverify.plugins",
        "pkg.plugin:setup",
        ok=not broken,
        error=PluginError("AttributeError", "no setpu", "Traceback…", "import") if broken else None,
        seconds=0.1,
        handlers={"tool_call": 1},
        host="native",
        host_reason="its group",
        application=ApplicationRecord(
            "pkg-app", "2.0", "name", installed=True, tried=(("pkg_x", "does not name it"),)
        ),
    )
    run = Run(
        python=python,
        interpreter=f"/usr/bin/python{python[:4]}",
        ok=not broken,
        stages=(Stage("build", "passed", 1.0), Stage("venv", "passed", 0.2)),
        plugins=(plugin,),
        tools=() if broken else (ToolRecord("greet", "greet", "Say hello", {"type": "object"}),),
        imports=ImportsRecord(modules=1, imported=("pkg",)),
        scripts=(),
        installed=({"name": "pkg", "version": "1.0"},),
        os=os,
        platform="linux-x86_64" if os == "Linux" else "macosx-14.0-arm64",
    )
    failures = (
        (Failure("plugin_load_failed", "plugin 'greet' failed", python=python, plugin="greet"),)
        if broken
        else ()
    )
    return Report(
        target="dist/*",
        artifacts=(ArtifactRecord("wheel", "pkg-1.0-py3-none-any.whl", "ab" * 32, built=False),),
        runs=(run,),
        failures=failures,
        host="auto",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=3.5,
        expect_tools=("greet",),
    )


def source(name: str, built: Report) -> Source:
    document = json.loads(json.dumps(built.to_json()))
    return Source(name, document, report_from_json(document))


def test_a_report_survives_the_round_trip_through_json() -> None:
    for original in (report(), report(broken=True)):
        document = json.loads(json.dumps(original.to_json()))
        assert report_from_json(document).to_json() == original.to_json()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "the document: expected an object"),
        ({"version": 2, "runs": [], "failures": []}, "version: 2"),
        ({"version": 1, "failures": []}, "runs: expected a list, found nothing"),
        ({"version": 1, "runs": [{"stages": []}], "failures": []}, "runs[0].python"),
        ({"version": 1, "runs": [], "failures": [{"code": "x"}]}, "failures[0].message"),
    ],
)
def test_what_is_no_report_is_refused_with_the_field_named(document: Any, message: str) -> None:
    with pytest.raises(ReportFormatError, match=re.escape(message)):
        report_from_json(document)


def test_fields_of_a_newer_or_older_report_are_tolerated() -> None:
    document: dict[str, Any] = report().to_json()
    document["isolation"] = "os"  # a newer field
    del document["runs"][0]["os"], document["runs"][0]["platform"]  # an older report
    loaded = report_from_json(document)
    assert loaded.runs[0].os is None
    merged = merge([Source("old.json", document, loaded)])
    assert merged.run_labels == (("Python 3.12.1 on an unknown OS",),)


def test_a_report_whose_check_stopped_early_is_a_failed_source_with_its_error() -> None:
    """A job's usage error (exit 2) leaves a report with an ``error`` and no run: the merge fails,
    and the error is the job's, not a failure code report v1 does not have."""
    error = ReportError("usage_error", "target not found: nope/*", "pass a project")
    stopped = stopped_report(error, target="nope/*", seconds=0.1)
    merged = merge([source("job.json", stopped), source("linux.json", report())])
    assert not merged.ok
    assert merged.failures == 1
    [problem] = problems(merged)
    assert (problem.code, problem.message, problem.label, problem.error) == (
        "usage_error",
        "target not found: nope/*",
        "job.json",
        True,
    )
    document = merged_document(merged)
    assert_valid_report(document)
    assert document["failures"] == []
    assert document["error"] is None  # the merge itself reached its verdict
    assert document["reports"][0]["error"]["code"] == "usage_error"
    assert [r["ok"] for r in document["reports"]] == [False, True]
    assert "| job.json | failed | no run | 1 |" in merged_summary(merged)
    [suite, *_] = ET.fromstring(merged_junit(merged)).findall("testsuite")
    case = suite.find("testcase")
    assert case is not None and case.get("name") == "usage_error"
    assert case.find("failure") is not None


def test_the_merge_s_own_error_is_on_every_rendering() -> None:
    """A merge that stopped after its verdict (a step summary it could not append, say) says
    so in its report, its JUnit file and its summary, as a check does."""
    merged = replace(
        merge([source("linux.json", report())]),
        error=ReportError("usage_error", "cannot append the step summary", None),
    )
    assert not merged.ok
    document = merged_document(merged)
    assert_valid_report(document)
    assert document["ok"] is False and document["error"]["code"] == "usage_error"
    root = ET.fromstring(merged_junit(merged))
    assert root.get("failures") == "1"
    assert root.findall("testsuite")[-1].get("name") == "sandboxverify merge"
    assert "cannot append the step summary" in merged_summary(merged)


def test_runs_are_labelled_by_python_and_os_and_same_labels_by_their_report() -> None:
    merged = merge(
        [
            source("linux-3.12/report.json", report("3.12.1", "Linux")),
            source("macos-3.12/report.json", report("3.12.1", "macOS")),
            source("a/report.json", report("3.10.13", "Linux")),
            source("b/report.json", report("3.10.13", "Linux")),
        ]
    )
    assert merged.run_labels == (
        ("Python 3.12.1 on Linux",),
        ("Python 3.12.1 on macOS",),
        ("Python 3.10.13 on Linux (a/report.json)",),
        ("Python 3.10.13 on Linux (b/report.json)",),
    )
    assert len(set(merged.labels)) == 4


def test_the_merged_document_keeps_every_run_and_failure_with_its_label() -> None:
    merged = merge(
        [
            source("linux.json", report("3.12.1", "Linux")),
            source("macos.json", report("3.12.1", "macOS", broken=True)),
        ]
    )
    document = merged_document(merged)
    assert_valid_report(document)
    assert document["version"] == 1 and document["ok"] is False
    assert document["target"] == "dist/*"
    assert [(r["label"], r["os"], r["report"]) for r in document["runs"]] == [
        ("Python 3.12.1 on Linux", "Linux", "linux.json"),
        ("Python 3.12.1 on macOS", "macOS", "macos.json"),
    ]
    [failure] = document["failures"]
    assert failure["code"] == "plugin_load_failed"
    assert failure["label"] == "Python 3.12.1 on macOS"
    assert [r["ok"] for r in document["reports"]] == [True, False]
    assert len(document["artifacts"]) == 1  # the same file verified twice is listed once


def test_one_junit_document_with_every_suite_labelled_and_counts_added_up() -> None:
    sources = [
        source("linux.json", report("3.12.1", "Linux")),
        source("macos.json", report("3.12.1", "macOS", broken=True)),
    ]
    root = ET.fromstring(merged_junit(merge(sources)))
    singles = [ET.fromstring(junit_xml(s.report)) for s in sources]
    assert root.tag == "testsuites"
    for name in ("tests", "failures"):
        assert int(root.get(name, "-1")) == sum(int(s.get(name, "0")) for s in singles)
    names = [suite.get("name") for suite in root.findall("testsuite")]
    assert names == [
        "build (Python 3.12.1 on Linux)",
        "Python 3.12.1 on Linux",
        "build (Python 3.12.1 on macOS)",
        "Python 3.12.1 on macOS",
    ]
    classnames = {case.get("classname") for case in root.iter("testcase")}
    assert "sandboxverify.python_3_12_1_on_linux.py3_12_1" in classnames
    assert "sandboxverify.python_3_12_1_on_macos.py3_12_1" in classnames
    [failed] = [case for case in root.iter("testcase") if case.find("failure") is not None]
    assert failed.get("classname", "").startswith("sandboxverify.python_3_12_1_on_macos.")
    reports = [p.get("value") for p in root.iter("property") if p.get("name") == "report"]
    assert reports == ["linux.json", "linux.json", "macos.json", "macos.json"]


def test_the_summary_tables_every_run_and_opens_the_failed_reports_first() -> None:
    summary = merged_summary(
        merge(
            [
                source("linux.json", report("3.12.1", "Linux")),
                source("macos.json", report("3.12.1", "macOS", broken=True)),
            ]
        )
    )
    assert summary.startswith("## sandboxverify merge failed\n")
    assert "| Python 3.12.1 on Linux | passed |" in summary
    assert "| Python 3.12.1 on macOS | failed |" in summary
    failed = summary.index("### Python 3.12.1 on macOS: failed")
    passed = summary.index("<details><summary>Python 3.12.1 on Linux: passed</summary>")
    assert failed < passed
    # the reports' own summaries, one heading level down
    assert "\n#### Python 3.12.1\n" in summary
    assert "\n## sandboxverify" not in summary[1:]


def test_the_merged_report_lists_the_jobs_warnings_once() -> None:
    warning = ReportWarning("junk-files", "demo-1.0.tar.gz: ships .github/", "demo-1.0.tar.gz", "x")
    other = ReportWarning("wheel-bytecode", "demo.whl: ships .pyc", "demo.whl", "y")
    empty: dict[str, Any] = {"host": "auto", "groups": (), "installer": "uv", "seconds": 1.0}
    first = Report(".", (), (), (), **empty, warnings=(warning,))
    second = Report(".", (), (), (), **empty, warnings=(warning, other))
    sources = [
        Source(name, report.to_json(), report) for name, report in (("a", first), ("b", second))
    ]

    document = merged_document(merge(sources))

    assert document["warnings"] == [warning.to_json(), other.to_json()]
    assert_valid_report(document)
