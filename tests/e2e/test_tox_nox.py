"""The README's tox and nox recipes, verbatim, run by real tox and real nox on copies of the
fixtures: the gate passes a good package, fails a broken one, and verifies the artifact it built.
Only the requirement changes: this checkout instead of the package index."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.helpers import ROOT, CliResult, copy_fixture, readme_ci_blocks, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

LOCAL = f"sandboxverify[uv] @ {ROOT.as_uri()}"


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"expected {old!r} once in the recipe"
    return text.replace(old, new)


def tox_ini() -> str:
    [block] = readme_ci_blocks("ini")
    return replace_once(block, "\ndeps = sandboxverify[uv]\n", f"\ndeps = {LOCAL}\n")


def noxfile() -> str:
    [block] = readme_ci_blocks("python")
    return replace_once(
        block, 'session.install("sandboxverify[uv]")', f"session.install({LOCAL!r})"
    )


def run(args: list[str], cwd: Path) -> CliResult:
    """``python -m tox|nox ...`` with nothing of an enclosing tox/nox run or venv leaking in."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("TOX_", "NOX_", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    return run_cli(args[1:], env=env, cwd=cwd, timeout=900, module=args[0])


def tox(project: Path, tmp_path: Path, *posargs: str) -> CliResult:
    (project / "tox.ini").write_text(tox_ini(), encoding="utf-8")
    work = tmp_path / "tox-work"
    return run(
        ["tox", "-c", "tox.ini", "-e", "verify", "--workdir", str(work), "--", *posargs], project
    )


def nox(project: Path, tmp_path: Path, *posargs: str) -> CliResult:
    (project / "noxfile.py").write_text(noxfile(), encoding="utf-8")
    envdir = tmp_path / "nox-envs"
    return run(
        ["nox", "-f", "noxfile.py", "-s", "verify", "--envdir", str(envdir), "--", *posargs],
        project,
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tox_verifies_the_sdist_it_built(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    report_file = tmp_path / "report.json"

    result = tox(project, tmp_path, "--json", str(report_file))

    assert result.code == 0, result.stdout + result.stderr
    assert "PASSED: 1 plugin(s) registering 2 tool(s)" in result.stdout
    report = json.loads(report_file.read_text(encoding="utf-8"))
    # TOX_PACKAGE, not the project directory: the sdist in tox's work dir, the wheel built from it
    target = Path(report["target"])
    assert target.name == "svfix_good_hatch-1.0.0.tar.gz"
    assert target.is_relative_to(tmp_path / "tox-work")
    # tox removes its copy after the run; the one it built stays in the packaging env
    built = tmp_path / "tox-work" / ".pkg" / "dist" / target.name
    [sdist] = [artifact for artifact in report["artifacts"] if artifact["kind"] == "sdist"]
    assert sdist["sha256"] == sha256(built)
    assert sdist["built"] is False


def test_tox_fails_on_a_broken_package(tmp_path: Path) -> None:
    project = copy_fixture("broken-typo-attr", tmp_path)

    result = tox(project, tmp_path)

    assert result.code != 0
    assert "FAILED plugin_load_failed" in result.stdout
    assert "verify: FAIL code 1" in result.stdout


def test_tox_verifies_the_sdist_where_the_project_develops_in_place(tmp_path: Path) -> None:
    # a project-wide usedevelop = true (editable installs for the test envs) must not reach the
    # verify env: an editable wheel points back at the tree and works nowhere else
    project = copy_fixture("good-hatch", tmp_path)
    (project / "tox.ini").write_text(
        "[testenv]\nusedevelop = true\n\n" + tox_ini(), encoding="utf-8"
    )
    report_file = tmp_path / "report.json"

    result = run(
        [
            *("tox", "-c", "tox.ini", "-e", "verify", "--workdir", str(tmp_path / "tox-work")),
            *("--", "--json", str(report_file)),
        ],
        project,
    )

    assert result.code == 0, result.stdout + result.stderr
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert Path(report["target"]).name == "svfix_good_hatch-1.0.0.tar.gz"


def test_tox_without_a_package_fails_instead_of_checking_the_tree(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    (project / "tox.ini").write_text(tox_ini() + "skip_install = true\n", encoding="utf-8")

    result = run(
        ["tox", "-c", "tox.ini", "-e", "verify", "--workdir", str(tmp_path / "tox-work")],
        project,
    )

    assert result.code != 0
    assert "tox built no package to verify" in result.stdout + result.stderr
    assert "PASSED" not in result.stdout


def test_nox_builds_once_and_verifies_exactly_those_files(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    report_file = tmp_path / "report.json"

    result = nox(project, tmp_path, "--json", str(report_file))

    assert result.code == 0, result.stdout + result.stderr
    built = sorted(path for path in (project / "dist").iterdir() if path.suffix in {".whl", ".gz"})
    assert [path.name for path in built] == [
        "svfix_good_hatch-1.0.0-py3-none-any.whl",
        "svfix_good_hatch-1.0.0.tar.gz",
    ]
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert report["ok"] is True
    given = [artifact for artifact in report["artifacts"] if not artifact["built"]]
    assert {a["filename"]: a["sha256"] for a in given} == {
        path.name: sha256(path) for path in built
    }
    # as given, never rebuilt; and the wheel of the given sdist beside them
    assert [artifact["built"] for artifact in report["artifacts"]] == [False, False, True]


def test_nox_fails_on_a_broken_package(tmp_path: Path) -> None:
    project = copy_fixture("broken-typo-attr", tmp_path)

    result = nox(project, tmp_path)

    assert result.code != 0
    assert "FAILED plugin_load_failed" in result.stdout + result.stderr
    assert "Session verify failed" in result.stdout + result.stderr
