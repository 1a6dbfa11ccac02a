"""A survey's results file resumed: the same survey's results kept, another survey's or another
shard's file refused before any plugin is checked (and left as it was), a last line cut short
dropped, and ``--retry-errors`` dropping only the errors (the end-to-end tests resume real
runs)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.pipeline._survey_results import ResultsLog, check_resumable
from sandboxverify.pipeline._survey_sides import application_name
from sandboxverify.report import (
    Application,
    PluginResult,
    SideFailure,
    SideResult,
    SurveyHeader,
    read_results,
)

OLD = Application("app", "1.0", "app==1.0", "index")
NEW = Application("app", "2.0", "./app", "project")
HEADER = SurveyHeader(OLD, NEW, ("p-ok", "p-error", "p-regressed"), None, "3.12.1", "1.0")
PASSED = SideResult("passed", "1.0")
FAILED = SideResult("failed", "2.0", (SideFailure("plugin_load_failed", "boom", "p", "m"),))
OK = PluginResult("p-ok", "p-ok", "1", None, "ok", "passes with both", PASSED, PASSED)
ERROR = PluginResult("p-error", "p-error", "1", None, "error", "its build failed")
REGRESSED = PluginResult(
    "p-regressed", "p-regressed", "1", None, "regressed", "fails with app 2.0", PASSED, FAILED
)


def written(path: Path, header: SurveyHeader, *results: PluginResult) -> Path:
    """A results file as a run leaves it."""
    with ResultsLog(path, header) as log:
        for result in results:
            log.append(result)
    return path


def requirements(path: Path) -> list[str]:
    return [result.requirement for result in read_results(path).results]


def test_a_new_file_gets_the_header_and_a_whole_line_per_result(tmp_path: Path) -> None:
    path = written(tmp_path / "survey.jsonl", HEADER, OK, REGRESSED)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # every line ends: nothing half-written
    assert [json.loads(line)["record"] for line in lines[:-1]] == ["survey", "plugin", "plugin"]
    assert read_results(path).header == HEADER


def test_a_rerun_of_the_same_survey_keeps_its_results_and_checks_the_rest(tmp_path: Path) -> None:
    path = written(tmp_path / "survey.jsonl", HEADER, OK, ERROR)
    before = path.read_bytes()
    with ResultsLog(path, HEADER) as log:
        assert log.done == {"p-ok", "p-error"}  # an error is a result unless asked again
        assert log.kept == (OK, ERROR)
    assert path.read_bytes() == before  # nothing to drop: the file is left as it was


@pytest.mark.parametrize(
    ("other", "said"),
    [
        (replace(HEADER, candidate=replace(NEW, version="2.1")), "app 1.0 -> app 2.1"),
        (replace(HEADER, baseline=replace(OLD, version="0.9")), "app 0.9 -> app 2.0"),
        (replace(HEADER, python="3.11.9"), "Python 3.11.9"),
        (
            replace(
                HEADER,
                baseline=replace(OLD, name="other"),
                candidate=replace(NEW, name="other"),
            ),
            "other 1.0 -> other 2.0",
        ),
    ],
    ids=["candidate", "baseline", "python", "application"],
)
def test_a_file_of_another_survey_is_refused_and_left_alone(
    tmp_path: Path, other: SurveyHeader, said: str
) -> None:
    path = written(tmp_path / "survey.jsonl", other, OK)
    before = path.read_bytes()
    with pytest.raises(UsageError) as refused, ResultsLog(path, HEADER):
        pytest.fail("no plugin may be checked")
    assert "holds another survey" in refused.value.message
    assert said in refused.value.message
    assert "\n" not in refused.value.message
    assert refused.value.hint and "its own results file" in refused.value.hint
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("theirs", "ours"), [((1, 2), (2, 2)), ((1, 2), None), (None, (1, 2)), ((1, 2), (1, 3))]
)
def test_a_file_of_another_shard_is_refused_and_left_alone(
    tmp_path: Path, theirs: tuple[int, int] | None, ours: tuple[int, int] | None
) -> None:
    path = written(tmp_path / "survey.jsonl", replace(HEADER, shard=theirs), OK)
    before = path.read_bytes()
    with pytest.raises(UsageError) as refused, ResultsLog(path, replace(HEADER, shard=ours)):
        pytest.fail("no plugin may be checked")
    assert "another shard" in refused.value.message
    assert "\n" not in refused.value.message
    assert refused.value.hint == "give each shard its own results file"
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [
        b'{"version": 1, "ok": true, "runs": []}\n',  # a check's report
        b"not json\n",
        b'{"record": "survey", "version": 99}\n',
    ],
    ids=["check-report", "not-json", "newer-version"],
)
def test_a_file_that_is_no_survey_s_results_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "survey.jsonl"
    path.write_bytes(content)
    with pytest.raises(UsageError) as refused, ResultsLog(path, HEADER):
        pytest.fail("no plugin may be checked")
    assert "is not the results file of a survey" in refused.value.message
    assert refused.value.hint
    assert path.read_bytes() == content


def test_a_last_line_cut_short_is_dropped_and_its_plugin_checked_again(tmp_path: Path) -> None:
    path = written(tmp_path / "survey.jsonl", HEADER, OK)
    whole = path.read_bytes()
    line = json.dumps(REGRESSED.to_json()).encode()
    path.write_bytes(whole + line[: len(line) // 2])  # killed in the middle of the write
    with ResultsLog(path, HEADER) as log:
        assert log.done == {"p-ok"}
        log.append(REGRESSED)
    assert path.read_bytes().startswith(whole)
    assert requirements(path) == ["p-ok", "p-regressed"]
    assert not read_results(path).truncated


def test_retry_errors_drops_the_errors_and_keeps_the_rest(tmp_path: Path) -> None:
    path = written(tmp_path / "survey.jsonl", HEADER, OK, ERROR, REGRESSED)
    with ResultsLog(path, HEADER, retry_errors=True) as log:
        assert log.done == {"p-ok", "p-regressed"}
    # dropped from the file too: the error's new result is its only line
    assert requirements(path) == ["p-ok", "p-regressed"]


def test_results_of_plugins_this_run_does_not_list_are_dropped(tmp_path: Path) -> None:
    path = written(tmp_path / "survey.jsonl", HEADER, OK, REGRESSED)
    fewer = replace(HEADER, plugins=("p-ok",))
    with ResultsLog(path, fewer) as log:
        assert log.done == {"p-ok"}
    assert read_results(path).header == fewer
    assert requirements(path) == ["p-ok"]


def test_what_can_be_told_before_the_releases_are_known_is_told_then(tmp_path: Path) -> None:
    """A project given as a release is built to learn its version: a file no resumed run could
    use is refused first."""
    path = written(tmp_path / "survey.jsonl", replace(HEADER, shard=(1, 2)), OK)
    check_resumable(path, (1, 2))  # the same shard: the releases decide
    check_resumable(tmp_path / "new.jsonl", None)  # no file yet
    with pytest.raises(UsageError, match="another shard"):
        check_resumable(path, (2, 2))
    path.write_bytes(b"not json\n")
    with pytest.raises(UsageError, match="is not the results file of a survey"):
        check_resumable(path, (1, 2))


def test_a_file_of_another_application_or_python_is_refused_before_anything_resolves(
    tmp_path: Path,
) -> None:
    """What the command line says without a build (the application's name, the Python) is
    compared at once; the releases only once they are resolved."""
    path = written(tmp_path / "survey.jsonl", HEADER, OK)
    before = path.read_bytes()
    check_resumable(path, None, application="App", python="3.12.1")  # spelled another way
    check_resumable(path, None)  # nothing known yet: the releases decide
    for other in ({"application": "other-app"}, {"python": "3.13.0"}):
        with pytest.raises(UsageError) as refused:
            check_resumable(path, None, **other)
        assert f"--results {path} holds another survey: app 1.0 -> app 2.0" in (
            refused.value.message
        )
        assert next(iter(other.values())) in refused.value.message
        assert refused.value.hint and "its own results file" in refused.value.hint
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("datasette>=1.0a1", "datasette"),
        ("Datasette[test]==0.65", "Datasette"),
        ("not a requirement!", None),
    ],
)
def test_the_application_is_named_from_a_requirement(given: str, named: str | None) -> None:
    assert application_name(given) == named


def test_the_application_is_named_from_a_wheel_or_a_static_project_name(tmp_path: Path) -> None:
    wheel = tmp_path / "my_app-2.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    assert application_name(str(wheel)) == "my-app"
    project = tmp_path / "project"
    project.mkdir()
    assert application_name(str(project)) is None  # no pyproject.toml: told by its build
    (project / "pyproject.toml").write_text('[project]\nname = "my-app"\n', encoding="utf-8")
    assert application_name(str(project)) == "my-app"
    (project / "pyproject.toml").write_text("[project\n", encoding="utf-8")
    assert application_name(str(project)) is None
