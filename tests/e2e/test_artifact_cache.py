"""An unchanged project is not built again; any change, --no-cache or a damaged cache entry
means a new build. The sandbox is new every time."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.cli._main import run
from tests.helpers import copy_fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def check(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> dict[str, Any]:
    code = run(["check", str(project), "--installer", "uv", "--json", "-", *args])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, report["failures"]
    return report


def reused(report: dict[str, Any]) -> list[bool]:
    return [artifact["reused"] for artifact in report["artifacts"]]


def hashes(report: dict[str, Any]) -> dict[str, str]:
    return {a["filename"]: a["sha256"] for a in report["artifacts"]}


def cached_files(kind: str) -> list[Path]:
    root = Path(os.environ["SANDBOXVERIFY_CACHE_DIR"]) / "artifacts"
    return sorted(root.glob(f"*/*{kind}"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_fixture("good-hatch", tmp_path)


def test_an_unchanged_project_reuses_its_artifacts_in_a_new_sandbox(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    first = check(capsys, project, "--keep")
    second = check(capsys, project, "--keep")
    for kept in (first["workdir"], second["workdir"]):
        shutil.rmtree(kept)

    assert reused(first) == [False, False]
    assert reused(second) == [True, True]
    assert [a["built"] for a in second["artifacts"]] == [True, True]
    assert hashes(second) == hashes(first)
    # never a sandbox of an earlier check: a new venv, the wheel installed again, plugins loaded
    assert first["runs"][0]["sandbox"] != second["runs"][0]["sandbox"]
    assert [s["status"] for s in second["runs"][0]["stages"]] == ["passed"] * 6
    assert [tool["name"] for tool in second["runs"][0]["tools"]] == ["greet", "add"]


@pytest.mark.parametrize(
    "change",
    ["a module", "a file git ignores", "an empty directory"],
)
def test_a_changed_file_is_built_again(
    capsys: pytest.CaptureFixture[str], project: Path, change: str
) -> None:
    check(capsys, project)
    if change == "a module":
        plugin = project / "svfix_good_hatch" / "plugin.py"
        plugin.write_text(plugin.read_text() + "\n# changed\n")
    elif change == "a file git ignores":
        # not in git, so not in any commit; the backend still sees it in the tree it builds
        (project / ".gitignore").write_text("scratch/\n")
        (project / "scratch").mkdir()
        (project / "scratch" / "data.json").write_text("{}")
        check(capsys, project)  # with the ignore file: built once, so the next build is cached
        (project / "scratch" / "data.json").write_text('{"changed": true}')
    else:
        (project / "svfix_good_hatch" / "templates").mkdir()

    assert reused(check(capsys, project)) == [False, False]


def test_no_cache_builds_again_and_stores_nothing(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    assert reused(check(capsys, project, "--no-cache")) == [False, False]
    assert cached_files(".whl") == []
    check(capsys, project)

    assert reused(check(capsys, project, "--no-cache")) == [False, False]
    with (project / "pyproject.toml").open("a") as handle:
        handle.write("\n[tool.sandboxverify]\ncache = false\n")
    check(capsys, project, "--cache")  # the command line wins: builds the changed tree, caches it
    assert reused(check(capsys, project)) == [False, False]
    assert reused(check(capsys, project, "--cache")) == [True, True]


def test_a_damaged_cache_entry_is_built_again_not_trusted(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    first = check(capsys, project)
    [wheel] = cached_files(".whl")
    wheel.write_bytes(wheel.read_bytes() + b"tampered")
    tampered = hashlib.sha256(wheel.read_bytes()).hexdigest()

    again = check(capsys, project)

    assert reused(again) == [False, False]
    assert tampered not in hashes(again).values()
    assert hashes(again).keys() == hashes(first).keys()
    # the rebuilt artifacts replaced the damaged entry
    [stored] = cached_files(".whl")
    assert hashlib.sha256(stored.read_bytes()).hexdigest() != tampered
    assert reused(check(capsys, project)) == [True, True]


@pytest.mark.usefixtures("os_sandbox")
def test_the_backends_bytecode_is_compiled_once_and_used_by_the_next_build(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    first = check(capsys, project, "--keep", "--isolation", "strict")
    kept = list((tmp_path / "cache" / "bytecode").glob("*/*/*.pyc"))
    (project / "NEWS.txt").write_text("a change: built again\n")
    second = check(capsys, project, "--keep", "--isolation", "strict")
    environments = [Path(report["workdir"]) / "build-env" for report in (first, second)]
    compiled = [
        sorted(env.glob("lib/python*/site-packages/hatchling/__pycache__/*.pyc"))
        for env in environments
    ]
    for report in (first, second):
        shutil.rmtree(report["workdir"])

    assert reused(second) == [False, False]
    assert kept  # the first build's environment, compiled after it
    assert not compiled[0]  # the first build had none to start from
    assert compiled[1]  # the second had hatchling's, before its hooks ran


def test_with_process_isolation_no_bytecode_is_kept(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the build's code runs as the user there: it could write what later builds would run
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    check(capsys, project, "--isolation", "process")

    assert (tmp_path / "cache" / "artifacts").is_dir()
    assert not (tmp_path / "cache" / "bytecode").exists()


def findings_of(report: dict[str, Any]) -> Any:
    return (
        [(f["code"], f["message"], f.get("hint"), f.get("rule")) for f in report["failures"]],
        report["warnings"],
        [(a["filename"], a["sha256"]) for a in report["artifacts"]],
    )


@pytest.mark.parametrize("name", ["defect-junk-sdist", "defect-license-expression-early"])
def test_a_reused_build_reports_what_its_first_check_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """The static rules' findings are kept with the artifacts: read back, or found again where
    the code that found them changed, they are the first check's (warnings, and failures)."""
    project = copy_fixture(name, tmp_path)

    def again() -> dict[str, Any]:
        run(["check", str(project), "--installer", "uv", "--json", "-"])
        report: dict[str, Any] = json.loads(capsys.readouterr().out)
        return report

    first = again()
    (entry,) = cached_files("entry.json")
    kept = json.loads(entry.read_text(encoding="utf-8"))
    read_back = again()
    kept["findings"]["inspector"] = "other code"
    entry.write_text(json.dumps(kept), encoding="utf-8")
    found_again = again()
    recorded = json.loads(entry.read_text(encoding="utf-8"))["findings"]

    assert first["warnings"] or first["failures"]
    assert reused(first) == [False, False]
    assert reused(read_back) == reused(found_again) == [True, True]
    assert findings_of(read_back) == findings_of(first)
    assert findings_of(found_again) == findings_of(first)
    assert recorded == {**kept["findings"], "inspector": recorded["inspector"]}
    assert recorded["inspector"] != "other code"
