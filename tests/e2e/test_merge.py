"""``sandboxverify merge`` and ``sandboxverify matrix`` on real reports: a release matrix played
here, each "job" a real check of a fixture on one of this machine's Pythons, its report laid
out as actions/download-artifact lays out the artifacts of a matrix (one directory each)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandboxverify.cli._matrix import CPYTHON_RELEASES
from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import assert_valid_matrix, assert_valid_report, fixture, run_cli

#: the "jobs": (artifact directory, fixture, Python) — two Pythons from pyenv, and a broken
#: package on one of them
JOBS = (
    ("report-ubuntu-3.10", "good-hatch", "3.10"),
    ("report-ubuntu-3.12", "good-hatch", "3.12"),
    ("report-ubuntu-3.12-broken", "broken-typo-attr", "3.12"),
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each job's report in a directory of its own, written by a real check."""
    if find_uv() is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra")
    root = tmp_path_factory.mktemp("artifacts")
    for directory, name, python in JOBS:
        (root / directory).mkdir()
        report = root / directory / "report.json"
        result = run_cli(
            [
                *("check", str(fixture(name)), "--python", python, "--installer", "uv", "-q"),
                *("--json", str(report)),
            ]
        )
        assert result.code == (1 if name.startswith("broken") else 0), result.stdout + result.stderr
    return root


def good(reports: Path) -> list[str]:
    return [
        str(reports / directory / "report.json") for directory, name, _ in JOBS if "good" in name
    ]


def as_macos(report: Path, destination: Path) -> Path:
    """The same report as a macOS job's: its runs say they ran there (no macOS runner here)."""
    document = json.loads(report.read_text(encoding="utf-8"))
    for run in document["runs"]:
        run["os"], run["platform"] = "macOS", "macosx-14.0-arm64"
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(json.dumps(document), encoding="utf-8")
    return destination


@pytest.mark.slow
def test_a_green_matrix_merges_into_one_green_verdict_junit_and_summary(
    reports: Path, tmp_path: Path
) -> None:
    macos = as_macos(Path(good(reports)[1]), tmp_path / "report-macos-3.12" / "report.json")
    summary = tmp_path / "summary.md"
    summary.touch()
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}

    result = run_cli(
        [
            *("merge", *good(reports), str(macos)),
            *("--json", str(tmp_path / "merged.json"), "--junit-xml", str(tmp_path / "junit.xml")),
        ],
        env=env,
    )

    assert result.code == 0, result.stdout + result.stderr
    assert "PASSED: 3 run(s) from 3 report(s)" in result.stdout
    assert "::error" not in result.stdout
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert merged["ok"] is True and merged["version"] == 1
    labels = [run["label"] for run in merged["runs"]]
    assert [label.split(" on ")[1] for label in labels] == ["Linux", "Linux", "macOS"]
    assert [label.split()[1][:4] for label in labels] == ["3.10", "3.12", "3.12"]
    assert all(run["os"] and run["platform"] for run in merged["runs"])
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    suites = [suite.get("name") for suite in junit.findall("testsuite")]
    assert [name for name in suites if not str(name).startswith("build")] == labels
    assert junit.get("failures") == "0"
    assert int(junit.get("tests", "0")) == sum(
        int(suite.get("tests", "0")) for suite in junit.findall("testsuite")
    )
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## sandboxverify merge passed")
    for label in labels:
        assert f"| {label} | passed |" in text


@pytest.mark.slow
def test_one_failed_job_fails_the_merge_with_its_label_on_the_failure(
    reports: Path, tmp_path: Path
) -> None:
    """The artifacts' directory as download-artifact leaves it, passed whole."""
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}

    result = run_cli(
        ["merge", str(reports), "--allow-mixed", "--junit-xml", str(tmp_path / "junit.xml")],
        env=env,
    )

    assert result.code == 1, result.stdout + result.stderr
    assert "FAILED: 1 failure(s); 1 of 3 report(s) failed (3 run(s))" in result.stdout
    [annotation] = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert "plugin_load_failed [Python 3.12" in annotation and " on Linux" in annotation
    assert "setpu" in annotation
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    # the failed job's own failed cases, and only those: its probe and its plugin
    failed = [case for case in junit.iter("testcase") if case.find("failure") is not None]
    assert junit.get("failures") == str(len(failed)) == "2"
    assert len({str(case.get("classname")).split(".")[1] for case in failed}) == 1
    assert any("setpu" in ET.tostring(case, "unicode") for case in failed)
    assert "### Python 3.12" in summary.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_merged_report_written_beside_the_reports_is_not_merged_again(
    reports: Path, tmp_path: Path
) -> None:
    shutil.copytree(reports, tmp_path / "reports")
    out = tmp_path / "reports" / "merged.json"

    first = run_cli(["merge", str(tmp_path / "reports"), "--allow-mixed", "--json", str(out)])
    again = run_cli(["merge", str(tmp_path / "reports"), "--allow-mixed", "--json", str(out)])
    named = run_cli(["merge", str(out)])

    assert first.code == again.code == 1
    assert len(json.loads(out.read_text(encoding="utf-8"))["runs"]) == 3
    assert named.code == 2
    assert "is a merged report" in named.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "report not found"),
        ("not json", "is not JSON"),
        ('{"version": 1, "runs": []}', "failures: expected a list"),
    ],
)
def test_a_report_that_cannot_be_read_is_a_usage_error(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")

    result = run_cli(["merge", str(path)])

    assert result.code == 2
    assert message in result.stderr
    assert result.stderr.startswith("ERROR ")


def test_a_merge_that_cannot_read_a_report_leaves_every_surface(tmp_path: Path) -> None:
    """Exit 2 as ``check`` leaves it: the JSON report with its error, a JUnit file with one
    failed case, an ``::error`` annotation and the step summary."""
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    out, junit = tmp_path / "out" / "merged.json", tmp_path / "out" / "junit.xml"

    result = run_cli(
        ["merge", str(tmp_path / "missing.json"), "--json", str(out), "--junit-xml", str(junit)],
        env=env,
    )

    assert result.code == 2
    assert result.stderr.startswith("ERROR report not found: ")
    [annotation] = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error title=sandboxverify%3A usage_error::report not found")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert_valid_report(document)
    assert document["ok"] is False and document["error"]["code"] == "usage_error"
    assert "a matrix job that failed" in document["error"]["hint"]
    [case] = ET.parse(junit).getroot().iter("testcase")
    assert case.get("name") == "usage_error" and case.find("failure") is not None
    assert "**ERROR** report not found" in summary.read_text(encoding="utf-8")


def test_a_job_whose_check_stopped_early_fails_the_merge(tmp_path: Path) -> None:
    """The report a check writes on a usage error (exit 2) is merged as a failed job: its error
    is said with its file, annotated, and counted in the verdict."""
    stopped = tmp_path / "report-windows" / "report.json"
    stopped.parent.mkdir()
    assert run_cli(["check", str(tmp_path / "nope"), "--json", str(stopped)]).code == 2
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}

    result = run_cli(["merge", str(tmp_path), "--json", str(tmp_path / "merged.json")], env=env)

    assert result.code == 1, result.stdout + result.stderr
    assert f"ERROR usage_error [{stopped}]: target not found" in result.stdout
    assert "FAILED: 1 failure(s); 1 of 1 report(s) failed (0 run(s))" in result.stdout
    [annotation] = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert "usage_error [" in annotation
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert merged["reports"][0]["error"]["code"] == "usage_error"
    assert merged["error"] is None and merged["failures"] == []
    assert "sandboxverify merge failed" in summary.read_text(encoding="utf-8")


def test_merge_refuses_reports_of_different_distributions(reports: Path) -> None:
    result = run_cli(["merge", str(reports)])

    assert result.code == 2, result.stdout + result.stderr
    assert "the reports are of different distributions" in result.stderr
    assert "svfix-good-hatch" in result.stderr and "svfix-broken-typo-attr" in result.stderr
    assert "--allow-mixed" in result.stderr


def test_merge_names_each_report_once_per_line(reports: Path, tmp_path: Path) -> None:
    # the same report twice (two jobs of one Python): their labels name their files
    again = tmp_path / "again.json"
    shutil.copy(good(reports)[1], again)
    result = run_cli(["merge", good(reports)[1], str(again)])

    assert result.code == 0, result.stdout + result.stderr
    runs = [line for line in result.stdout.splitlines() if line.startswith("ok ")]
    assert len(runs) == 2
    for line in runs:
        named = [part for part in (good(reports)[1], str(again)) if part in line]
        assert len(named) == 1 and line.count(named[0]) == 1, line


def test_merge_needs_a_report() -> None:
    result = run_cli(["merge"])
    assert result.code == 2
    assert "REPORT" in result.stderr


def test_matrix_prints_the_pythons_requires_python_allows(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\nrequires-python = ">=3.10,!=3.11.*,<3.14"\n',
        encoding="utf-8",
    )

    result = run_cli(["matrix", str(project)])
    with_os = run_cli(["matrix", str(project), "--os", "ubuntu-latest", "--os", "macos-latest"])
    here = run_cli(["matrix"], cwd=fixture("good-hatch"))

    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == {"python": ["3.10", "3.12", "3.13"]}
    assert len(result.stdout.splitlines()) == 1  # one line: fit for $GITHUB_OUTPUT
    assert json.loads(with_os.stdout) == {
        "os": ["ubuntu-latest", "macos-latest"],
        "python": ["3.10", "3.12", "3.13"],
    }
    assert json.loads(here.stdout)["python"][0] == "3.9"
    assert json.loads(here.stdout)["python"][-1] == CPYTHON_RELEASES[-1]
    for printed in (result, with_os, here):
        assert_valid_matrix(json.loads(printed.stdout))


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv")
def test_matrix_reads_built_artifacts_metadata(tmp_path: Path) -> None:
    project = shutil.copytree(fixture("good-hatch"), tmp_path / "good-hatch")
    text = (project / "pyproject.toml").read_text(encoding="utf-8")
    (project / "pyproject.toml").write_text(
        text.replace('requires-python = ">=3.9"', 'requires-python = ">=3.11"'), encoding="utf-8"
    )
    assert 'requires-python = ">=3.11"' in (project / "pyproject.toml").read_text()
    uv = find_uv()
    assert uv is not None
    subprocess.run(
        [
            *(str(uv), "build", "--python", sys.executable, "--no-python-downloads"),
            *("--out-dir", str(tmp_path / "dist"), str(project)),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )

    result = run_cli(["matrix", *map(str, sorted((tmp_path / "dist").glob("svfix*")))])

    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["python"] == [
        v for v in CPYTHON_RELEASES if tuple(map(int, v.split("."))) >= (3, 11)
    ]


def test_matrix_refuses_an_empty_target_as_check_does(tmp_path: Path) -> None:
    """``sandboxverify matrix "$UNSET"`` would read the current directory's pyproject.toml."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    result = run_cli(["matrix", " "], cwd=tmp_path)
    assert result.code == 2
    assert result.stderr.startswith("ERROR an empty TARGET was given")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("pyproject", "message"),
    [
        ('[project]\nname = "x"\nrequires-python = "<3.8"\n', "allows none of Python 3.9"),
        ('[project]\nname = "x"\nrequires-python = "3.9"\n', "not a valid version specifier"),
        ('[project]\nname = "x"\ndynamic = ["requires-python"]\n', "requires-python is dynamic"),
    ],
)
def test_matrix_refuses_what_allows_no_python_it_knows(
    tmp_path: Path, pyproject: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")

    result = run_cli(["matrix", str(tmp_path)])

    assert result.code == 2
    assert message in result.stderr
    assert result.stdout == ""
