"""A survey of releases that are not on any index: the candidate a project directory (built once,
as ``check`` builds it, and served to every plugin's check), the baseline a wheel file. Offline,
the plugins' sdists served from a local directory through ``--find-links``; the survey runs in
this process so that the application's builds can be counted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.artifacts import build_project
from sandboxverify.options import SurveyOptions
from sandboxverify.pipeline import _check
from sandboxverify.pipeline import survey as run_survey
from sandboxverify.report import Application, Survey, SurveyHeader
from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import fixture, run_cli, schema_errors

pytestmark = pytest.mark.slow

APPLICATION = "svfix-survey-app"
CANDIDATE = fixture("survey-app/2.0")
#: the plugins and the class a survey of 1.0.0 -> 2.0.0 gives each
EXPECTED = {"svfix-survey-plugin-regresses": "regressed", "svfix-survey-plugin-steady": "ok"}


def uv_build(source: Path, kind: str, out: Path, work: Path) -> None:
    copy = work / source.name
    subprocess.run(["cp", "-r", str(source), str(copy)], check=True)
    uv = find_uv()
    if uv is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra")
    command = [str(uv), "build", kind, "-q", "--python", sys.executable, "-o", str(out), str(copy)]
    subprocess.run(command, check=True, timeout=300)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The "index" (the plugins' sdists, no release of the application) and the 1.0 wheel."""
    links, wheels = tmp_path_factory.mktemp("links"), tmp_path_factory.mktemp("wheels")
    work = tmp_path_factory.mktemp("sources")
    for name in EXPECTED:
        uv_build(fixture(name.removeprefix("svfix-")), "--sdist", links, work)
    uv_build(fixture("survey-app/1.0"), "--wheel", wheels, work)
    (baseline,) = wheels.glob("*.whl")
    return links, baseline


@pytest.fixture(scope="module")
def surveyed(
    served: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Survey, Path, list[Path]]:
    """One survey with the 2.0 project as the candidate and the 1.0 wheel as the baseline: what
    it found, its results file, and every project directory a check built."""
    links, baseline = served
    results = tmp_path_factory.mktemp("survey") / "survey.jsonl"
    built: list[Path] = []

    def counted(target: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(Path(target.path))
        return build_project(target, *args, **kwargs)  # the real build, counted

    options = SurveyOptions(
        plugins=tuple(EXPECTED),
        application=str(CANDIDATE),
        baseline=str(baseline),
        jobs=2,
        results=str(results),
        find_links=(str(links),),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UV_OFFLINE", "1")
        no_config = tmp_path_factory.getbasetemp() / "no-user-config.toml"
        patch.setenv("SANDBOXVERIFY_CONFIG", str(no_config))
        # every build of a project a check makes (the plugins are files: they are not)
        patch.setattr(_check, "build_project", counted)
        found = run_survey(options)
    return found, results, built


def header(results: Path) -> dict[str, Any]:
    first = json.loads(results.read_text(encoding="utf-8").splitlines()[0])
    assert not schema_errors("survey-v1", first, closed=True)
    assert isinstance(first, dict)
    return first


def test_the_candidate_project_is_built_once_for_every_plugin(
    surveyed: tuple[Survey, Path, list[Path]],
) -> None:
    found, _, built = surveyed
    assert [path.resolve() for path in built] == [CANDIDATE.resolve()]
    # and every plugin's check with the candidate had that build installed
    for result in found.results:
        assert result.candidate is not None
        assert result.candidate.application_version == "2.0.0"


def test_the_survey_says_where_each_release_came_from(
    surveyed: tuple[Survey, Path, list[Path]],
) -> None:
    _, results, _ = surveyed
    first = header(results)
    assert first["candidate"]["source"] == "project"
    assert first["candidate"]["given"] == str(CANDIDATE)
    assert first["candidate"]["version"] == "2.0.0"
    assert first["baseline"]["source"] == "wheel"
    assert first["baseline"]["given"].endswith(".whl")
    assert first["baseline"]["version"] == "1.0.0"
    assert first["application"] == APPLICATION


def test_plugins_are_classified_against_the_local_releases(
    surveyed: tuple[Survey, Path, list[Path]],
) -> None:
    found, _, _ = surveyed
    assert {result.name: result.survey_class for result in found.results} == EXPECTED
    assert found.complete
    (regressed,) = [r for r in found.results if r.survey_class == "regressed"]
    assert f"{APPLICATION} 2.0.0" in regressed.reason
    assert "plugin_load_failed" in regressed.reason
    assert regressed.baseline is not None
    assert regressed.baseline.status == "passed"
    assert regressed.baseline.application_version == "1.0.0"
    assert not os.path.exists(CANDIDATE / "dist")  # built from a copy: the tree is untouched


def offline() -> dict[str, str]:
    return {**os.environ, "UV_OFFLINE": "1"}


def test_a_local_release_the_index_has_too_is_refused(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    """The installer could take either file: the survey would not know which it judged."""
    links, baseline = served
    index = tmp_path / "index"
    shutil.copytree(links, index)
    shutil.copy2(baseline, index / baseline.name)
    args = ["survey", *EXPECTED, "--application", str(CANDIDATE), "--baseline", str(baseline)]
    done = run_cli(
        [*args, "--find-links", str(index), "--results", str(tmp_path / "s.jsonl")], env=offline()
    )
    assert done.code == 2, done.stdout + done.stderr
    assert f"{baseline} is {APPLICATION} 1.0.0, which the index has too" in done.stderr
    assert "hint: give the local build a version of its own" in done.stderr
    assert not (tmp_path / "s.jsonl").exists()


def test_a_file_that_is_no_wheel_is_refused(served: tuple[Path, Path], tmp_path: Path) -> None:
    links, _ = served
    (sdist, *_) = links.glob("*.tar.gz")
    args = ["survey", *EXPECTED, "--application", str(sdist), "--find-links", str(links)]
    done = run_cli([*args, "--results", str(tmp_path / "s.jsonl")], env=offline())
    assert done.code == 2, done.stdout + done.stderr
    assert f"--application {sdist} is a file but not a wheel" in done.stderr
    assert not (tmp_path / "s.jsonl").exists()


def test_a_results_file_of_another_shard_is_refused_before_the_candidate_is_built(
    tmp_path: Path,
) -> None:
    results = tmp_path / "survey.jsonl"
    application = Application(APPLICATION, "1.0.0", f"{APPLICATION}==1.0.0", "index")
    header = SurveyHeader(application, application, tuple(EXPECTED), (1, 2), "3.12.1", "1.0")
    results.write_text(json.dumps(header.to_json()) + "\n", encoding="utf-8")
    before = results.read_bytes()
    unbuildable = fixture("broken-build")  # were it built, the error would be its build's
    args = ["survey", *EXPECTED, "--application", str(unbuildable), "--shard", "2/2"]
    done = run_cli([*args, "--results", str(results)], env=offline())
    assert done.code == 2, done.stdout + done.stderr
    assert "holds the results of another shard" in done.stderr
    assert "did not build" not in done.stderr
    assert results.read_bytes() == before


def test_a_results_file_of_another_application_is_refused_before_the_candidate_is_built(
    tmp_path: Path,
) -> None:
    """The name a project declares is known without its build: a results file of a survey of
    another application is refused before that build, not after it."""
    results = tmp_path / "survey.jsonl"
    application = Application(APPLICATION, "1.0.0", f"{APPLICATION}==1.0.0", "index")
    header = SurveyHeader(application, application, tuple(EXPECTED), None, "3.12.1", "1.0")
    results.write_text(json.dumps(header.to_json()) + "\n", encoding="utf-8")
    before = results.read_bytes()
    unbuildable = fixture("broken-build")  # svfix-broken-build: were it built, it would fail
    args = ["survey", *EXPECTED, "--application", str(unbuildable)]
    done = run_cli([*args, "--results", str(results)], env=offline())
    assert done.code == 2, done.stdout + done.stderr
    assert "holds another survey" in done.stderr
    assert "not svfix-broken-build" in done.stderr
    assert "did not build" not in done.stderr
    assert results.read_bytes() == before


def test_a_candidate_with_a_local_version_is_built_and_what_pypi_would_refuse_is_said(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    """The version the README tells a local candidate to carry (``+rc``) fails an upload, not
    a survey: the build is used, the excuse shown in the text and in the survey's JSON."""
    links, baseline = served
    candidate = tmp_path / "app"
    shutil.copytree(CANDIDATE, candidate)
    pyproject = candidate / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('version = "2.0.0"', 'version = "2.0.0+rc"'), "utf-8")
    steady = "svfix-survey-plugin-steady"
    args = ["survey", steady, "--application", str(candidate), "--baseline", str(baseline)]
    report = tmp_path / "survey.json"
    args += ["--find-links", str(links), "--results", str(tmp_path / "s.jsonl")]
    done = run_cli([*args, "--json", str(report)], env=offline())
    assert done.code == 0, done.stdout + done.stderr
    assert "svfix-survey-app 2.0.0+rc built with what only its upload would fail, excused: " in (
        done.stdout
    )
    document = json.loads(report.read_text(encoding="utf-8"))
    assert not schema_errors("survey-v1", document, closed=True)
    excused = document["candidate"]["excused"]
    assert excused
    assert all("local version '2.0.0+rc'" in excuse for excuse in excused)
    assert document["baseline"]["excused"] == []
    assert [p["candidate"]["application_version"] for p in document["plugins"]] == ["2.0.0+rc"]


def test_a_candidate_project_that_does_not_build_is_a_usage_error(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    links, baseline = served
    unbuildable = fixture("broken-build")
    args = ["survey", *EXPECTED, "--application", str(unbuildable), "--baseline", str(baseline)]
    done = run_cli(
        [*args, "--find-links", str(links), "--results", str(tmp_path / "s.jsonl")], env=offline()
    )
    assert done.code == 2, done.stdout + done.stderr
    assert f"ERROR the application in {unbuildable} did not build: " in done.stderr
    assert f"hint: 'sandboxverify check {unbuildable}' shows the whole build" in done.stderr
    assert not (tmp_path / "s.jsonl").exists()
