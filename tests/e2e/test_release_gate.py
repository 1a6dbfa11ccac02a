"""One release gate, end to end through the real command line: each defect fixture (a real build
by its real backend) fails with its code and rule, or passes with its warning on stderr; a
project's own configuration makes a warning a failure; --dist-dir keeps the verified files byte
for byte; --github turns warnings into annotations."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.cli._main import run
from sandboxverify.sandbox import _isolation
from tests.helpers import assert_valid_report, copy_fixture, fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


@pytest.fixture(autouse=True)
def _away_from_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """``sandboxverify check ARGS --json -``: the exit code, the report and stderr."""
    code = run(["check", *args, "--installer", "uv", "--json", "-"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert_valid_report(report)
    return code, report, captured.err


def rules(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(failure["code"], failure["rule"]) for failure in report["failures"]]


@pytest.mark.parametrize(
    ("name", "code", "rule"),
    [
        # what twine and PyPI refuse at upload
        ("defect-license-expression-early", "artifact_invalid", "metadata-field-too-new"),
        ("defect-readme-rst", "artifact_invalid", "readme-invalid"),
        # what validate-pyproject refuses: the backend built it without the dependency
        ("defect-pyproject-typo", "pyproject_invalid", "pyproject-invalid"),
    ],
)
def test_what_pypi_or_the_schema_refuses_fails(
    capsys: pytest.CaptureFixture[str], name: str, code: str, rule: str
) -> None:
    exit_code, report, _ = check(capsys, str(fixture(name)))

    assert exit_code == 1
    assert set(rules(report)) == {(code, rule)}
    assert all(failure["hint"] for failure in report["failures"])
    # the package itself installs and imports: the report still says so
    assert report["runs"] and all(run["installed"] for run in report["runs"])


@pytest.mark.parametrize(
    ("name", "warning", "file_suffix"),
    [
        ("defect-junk-sdist", "junk-files", ".tar.gz"),
        ("defect-bytecode-wheel", "wheel-bytecode", ".whl"),
        ("defect-duplicate-files", "wheel-duplicate-content", ".whl"),
    ],
)
def test_hygiene_is_a_warning_on_stderr_and_a_failure_where_the_project_asks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, warning: str, file_suffix: str
) -> None:
    exit_code, report, stderr = check(capsys, str(fixture(name)))

    assert exit_code == 0, report["failures"]
    assert [(w["code"], w["file"].endswith(file_suffix)) for w in report["warnings"]] == [
        (warning, True)
    ]
    [line] = [line for line in stderr.splitlines() if line.startswith("warning:")]
    assert line.startswith(f"warning: [{warning}] ") and "(hint: " in line

    project = copy_fixture(name, tmp_path)
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'\n[tool.sandboxverify]\nfail-on-warning = ["{warning}"]\n')
    exit_code, report, _ = check(capsys, str(project))

    assert exit_code == 1
    assert [failure["rule"] for failure in report["failures"]] == [warning]
    assert report["warnings"] == []


def test_dist_dir_keeps_the_verified_files_byte_for_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dist = tmp_path / "verified"
    exit_code, report, stderr = check(capsys, str(fixture("good-hatch")), "--dist-dir", str(dist))

    assert exit_code == 0, report["failures"]
    assert report["dist_dir"] == str(dist)
    kept = {Path(a["kept"]): a["sha256"] for a in report["artifacts"]}
    assert sorted(path.name for path in kept) == sorted(path.name for path in dist.iterdir())
    assert {a["kind"] for a in report["artifacts"]} == {"sdist", "wheel"}
    for path, sha256 in kept.items():
        assert path.parent == dist
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    assert "warning:" not in stderr


def test_dist_dir_is_left_alone_when_the_check_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dist = tmp_path / "verified"
    exit_code, report, _ = check(capsys, str(fixture("defect-readme-rst")), "--dist-dir", str(dist))

    assert exit_code == 1
    assert report["dist_dir"] is None
    assert all(a["kept"] is None for a in report["artifacts"])
    assert not dist.exists()


def test_the_project_may_not_choose_where_the_files_are_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'\n[tool.sandboxverify]\ndist-dir = "{tmp_path / "elsewhere"}"\n')

    exit_code = run(["check", str(project), "--installer", "uv"])

    assert exit_code == 2
    assert "dist-dir" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists()


def test_warnings_are_annotations_under_github(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = run(["check", str(fixture("defect-junk-sdist")), "--installer", "uv", "--github"])
    out = capsys.readouterr().out

    assert code == 0
    [annotation] = [line for line in out.splitlines() if line.startswith("::warning")]
    assert annotation.startswith("::warning title=sandboxverify%3A junk-files::")
    assert ".github/" in annotation


def test_without_the_os_sandbox_the_warning_is_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_isolation, "available", lambda: (None, "bwrap is not installed"))
    code = run(["check", str(fixture("good-hatch")), "--installer", "uv", "--github"])
    captured = capsys.readouterr()

    assert code == 0
    assert "running without the OS sandbox" not in captured.out
    [line] = [line for line in captured.err.splitlines() if "no-os-sandbox" in line]
    assert line.startswith("warning: [no-os-sandbox] ran without the OS sandbox (bwrap is not")
    assert [line for line in captured.out.splitlines() if line.startswith("::warning")] == [
        line for line in captured.out.splitlines() if "sandboxverify%3A no-os-sandbox" in line
    ]
    assert any("sandboxverify%3A no-os-sandbox" in line for line in captured.out.splitlines())


def test_an_upload_refusal_in_given_files_is_a_warning_the_release_job_can_promote(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Files given as they are may be published already: what PyPI would refuse at upload is
    a warning there (their users meet nothing of it), and a failure where a release job asks
    (--fail-on-warning), as it is for a project built to be published."""
    dist = tmp_path / "dist"
    exit_code, report, _ = check(capsys, str(fixture("defect-license-expression-early")), "--keep")
    assert report["workdir"]
    built = Path(report["workdir"]) / "dist"
    try:
        shutil.copytree(built, dist)
    finally:
        shutil.rmtree(report["workdir"])
    given = [str(path) for path in sorted(dist.iterdir())]

    exit_code, report, _ = check(capsys, *given)
    assert exit_code == 0
    assert "metadata-field-too-new" in {warning["code"] for warning in report["warnings"]}
    assert {a["built"] for a in report["artifacts"] if a["kind"] == "sdist"} == {False}

    exit_code, report, _ = check(capsys, *given, "--fail-on-warning", "metadata-field-too-new")
    assert exit_code == 1
    assert {rule for _, rule in rules(report)} == {"metadata-field-too-new"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_a_module_git_tracks_that_the_sdist_lacks_fails_in_a_git_checkout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = copy_fixture("broken-sdist-excludes-module", tmp_path)
    exit_code, report, _ = check(capsys, str(project))
    assert [code for code, _ in rules(report)] == ["plugin_load_failed"]  # no git: not compared

    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "the project")
    exit_code, report, _ = check(capsys, str(project), "--no-cache")

    assert exit_code == 1
    assert rules(report)[0] == ("sdist_incomplete", "sdist-missing-module")
    assert "svfix_broken_sdist_excludes_module/helpers.py" in report["failures"][0]["message"]
