"""Release gating through the real command line: static artifact checks (artifact_invalid,
--expect-files) and --python min|all chosen by the release's Requires-Python."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.cli._main import run
from tests.helpers import copy_fixture, fixture, make_wheel, uv_wheel

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

DATA_GLOB = "svfix_good_setuptools_src/data/*.json"


@pytest.fixture(autouse=True)
def _away_from_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Artifact targets read [tool.sandboxverify] from the current directory: run where the
    repository's own (its self-check's expectations) does not apply to the fixtures' files."""
    monkeypatch.chdir(tmp_path)


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """``sandboxverify check ARGS --json -``: the exit code, the report and the text report."""
    code = run(["check", *args, "--json", "-"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def codes(report: dict[str, Any]) -> list[str]:
    return [failure["code"] for failure in report["failures"]]


def stages(report: dict[str, Any]) -> dict[str, str]:
    [only] = report["runs"]
    return {stage["name"]: stage["status"] for stage in only["stages"]}


def test_expect_files_that_the_wheel_ships_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = check_json(
        capsys, str(fixture("good-setuptools-src")), "--expect-files", DATA_GLOB
    )

    assert code == 0, report["failures"]
    assert report["ok"] is True


def test_expect_files_that_the_wheel_lacks_fail_the_build_naming_the_glob(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report, text = check_json(
        capsys,
        str(fixture("good-setuptools-src")),
        "--expect-files",
        DATA_GLOB,
        "--expect-files",
        "svfix_good_setuptools_src/data/*.yaml",
    )

    assert code == 1
    assert codes(report) == ["artifact_invalid"]
    [failure] = report["failures"]
    assert failure["message"] == (
        "svfix_good_setuptools_src-1.0.0-py3-none-any.whl: no file matches --expect-files "
        "'svfix_good_setuptools_src/data/*.yaml'; similar files in the wheel: "
        "svfix_good_setuptools_src/data/tools.json"
    )
    assert failure["hint"].startswith("include the files in the wheel")
    assert failure["python"] is None
    # nothing is installed from a wheel that would be published broken
    assert stages(report)["build"] == "failed"
    assert stages(report)["venv"] == "skipped"
    assert "FAILED artifact_invalid" in text


def test_expect_files_from_pyproject(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    project = copy_fixture("good-setuptools-src", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(
            '\n[tool.sandboxverify]\nexpect-files = ["svfix_good_setuptools_src/*.yaml"]\n'
        )

    code, report, _ = check_json(capsys, str(project))

    assert code == 1
    assert codes(report) == ["artifact_invalid"]
    assert "'svfix_good_setuptools_src/*.yaml'" in report["failures"][0]["message"]


def test_a_broken_wheel_given_as_the_target_reports_every_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wheel = make_wheel(
        tmp_path,
        "svfix_handmade-1.0-py3-none-any.whl",
        name="svfix_handmade",
        files={
            "svfix_handmade/__init__.py": "",
            "svfix_handmade/plugin.py": "def setup(api):\n    pass\n",
            "tests/__init__.py": "",
        },
        tampered=("svfix_handmade/plugin.py",),
        metadata="Metadata-Version: 2.1\nName: svfix-handmade\nVersion: 1.0\n"
        "Requires-Python: >=3.x\n",
    )

    code, report, text = check_json(capsys, str(wheel))

    assert code == 1
    assert codes(report) == ["artifact_invalid"] * 2
    messages = [failure["message"] for failure in report["failures"]]
    assert all(message.startswith(wheel.name + ": ") for message in messages)
    assert "'>=3.x' is invalid for 'requires-python'" in messages[0]
    assert messages[1].endswith("RECORD gives: svfix_handmade/plugin.py")
    assert all(failure["hint"] for failure in report["failures"])
    assert stages(report)["venv"] == "skipped"
    assert text.count("FAILED artifact_invalid") == 2
    # the stray tests package: a warning beside the failures
    assert "wheel-tests-toplevel" in [w["code"] for w in report["warnings"]]


def test_a_real_wheel_passes_as_built_and_fails_once_changed_after_the_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wheel = uv_wheel(copy_fixture("good-hatch", tmp_path), tmp_path / "dist")
    code, report, _ = check_json(capsys, str(wheel), "--expect-files", "svfix_good_hatch/*.py")
    assert code == 0, report["failures"]

    # a post-build step adds a file and does not rewrite RECORD
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("svfix_good_hatch/py.typed", "")
    code, report, _ = check_json(capsys, str(wheel))

    assert code == 1
    [failure] = report["failures"]
    assert failure["code"] == "artifact_invalid"
    assert failure["message"] == (
        "svfix_good_hatch-1.0.0-py3-none-any.whl: 1 file(s) in the archive are not listed in "
        "svfix_good_hatch-1.0.0.dist-info/RECORD: svfix_good_hatch/py.typed"
    )
    assert "RECORD" in failure["hint"]


def test_a_python_the_code_supports_passes_the_python_floor_fixture(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report, _ = check_json(capsys, str(fixture("broken-python-floor")), "--python", "3.12")

    assert code == 0, report["failures"]
    [only] = report["runs"]
    assert only["python"].startswith("3.12.")
    assert [tool["name"] for tool in only["tools"]] == ["route"]


def test_python_min_runs_the_lowest_allowed_python_and_catches_newer_syntax(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report, _ = check_json(capsys, str(fixture("broken-python-floor")), "--python", "min")

    assert code == 1
    [only] = report["runs"]
    assert only["python"].startswith("3.9.")
    plugin_failures = [f for f in report["failures"] if f["code"] == "plugin_load_failed"]
    assert [f["plugin"] for f in plugin_failures] == ["router"]
    assert "SyntaxError" in plugin_failures[0]["message"]
    assert plugin_failures[0]["python"] == only["python"]
    # the import-all stage may name the same module; nothing else fails
    assert set(codes(report)) <= {"plugin_load_failed", "import_failed"}


def test_python_all_runs_every_allowed_python_and_fails_only_where_it_breaks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report, _ = check_json(capsys, str(fixture("broken-python-floor")), "--python", "all")

    assert code == 1
    minors = [tuple(map(int, r["python"].split(".")[:2])) for r in report["runs"]]
    assert minors == sorted(set(minors))
    assert {(3, 9), (3, 10), (3, 11), (3, 12), (3, 13)} <= set(minors)
    assert (3, 8) not in minors  # below requires-python and the sandbox floor
    verdicts = {r["python"]: r["ok"] for r in report["runs"]}
    assert [python for python, ok in verdicts.items() if not ok] == [report["runs"][0]["python"]]
    assert report["runs"][0]["python"].startswith("3.9.")
    assert {f["python"] for f in report["failures"]} == {report["runs"][0]["python"]}
    assert "plugin_load_failed" in codes(report)


def test_python_min_without_an_allowed_interpreter_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = run(["check", str(fixture("broken-requires-python")), "--python", "min"])
    captured = capsys.readouterr()

    assert code == 2
    assert (
        "ERROR --python min: no Python interpreter here satisfies the release's "
        "Requires-Python '>=3.14' (found: 3.9." in captured.err
    )
    assert "  hint: install a Python it allows" in captured.err


def test_a_given_sdist_that_builds_a_wheel_of_another_version_is_artifact_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The sdist says 1.0 (filename and PKG-INFO), its pyproject.toml builds 2.0."""
    source = copy_fixture("good-hatch", tmp_path)
    pyproject = source / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace('version = "1.0.0"', 'version = "2.0.0"'),
        encoding="utf-8",
    )
    stem = "svfix_good_hatch-1.0.0"
    pkg_info = "Metadata-Version: 2.1\nName: svfix-good-hatch\nVersion: 1.0.0\n"
    (source / "PKG-INFO").write_text(pkg_info, encoding="utf-8")
    sdist = tmp_path / f"{stem}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        archive.add(source, arcname=stem)

    # uv refuses such a build itself (build_failed); python -m build does not, so we must
    code, report, _ = check_json(capsys, str(sdist), "--installer", "pip")

    assert code == 1
    assert codes(report) == ["artifact_invalid"]
    assert "different releases" in report["failures"][0]["message"]
    assert "svfix_good_hatch-2.0.0-py3-none-any.whl" in report["failures"][0]["message"]
    assert stages(report)["install"] == "skipped"
