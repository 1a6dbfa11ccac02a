"""``check dist/*`` with a wheel and an sdist: the given wheel and the wheel built from the given
sdist are both installed and verified, and where they differ fails the check."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sandboxverify import CheckOptions
from sandboxverify import check as check_artifacts
from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import copy_fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

MODULE = "svfix_broken_sdist_excludes_module/helpers.py"


def sdist_and_wheel(source: Path, *, env: dict[str, str] | None = None) -> list[str]:
    """``uv build --sdist --wheel``: both straight from the tree, as many release jobs build
    them; the files as a shell expands ``dist/*``."""
    uv = find_uv()
    assert uv is not None
    subprocess.run(
        [
            *(str(uv), "build", "--sdist", "--wheel", "--no-python-downloads"),
            *("--python", sys.executable, "--out-dir", str(source / "dist"), str(source)),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
    )
    built = (source / "dist").iterdir()
    return sorted(str(path) for path in built if not path.name.startswith("."))  # .gitignore


def check(files: list[str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """The command line, where no pyproject.toml configures it (as in a release job's dist/)."""
    report = tmp_path / "report.json"
    argv = ["check", *files, "--installer", "uv", "--json", str(report), *args]
    result = run_cli(argv, cwd=tmp_path)
    return result.code, json.loads(report.read_text(encoding="utf-8"))


def test_an_sdist_that_lacks_a_module_fails_beside_a_wheel_that_has_it(tmp_path: Path) -> None:
    """The wheel built from the tree works; the sdist's wheel lacks helpers.py. Each interpreter
    runs both, the difference is named once, the failing run says which wheel it had, and the
    JUnit file and ``merge`` keep the runs apart."""
    files = sdist_and_wheel(copy_fixture("broken-sdist-excludes-module", tmp_path))
    junit = tmp_path / "junit.xml"

    code, report = check(
        files, tmp_path, "--python", "3.10", "--python", "3.12", "--junit-xml", str(junit)
    )

    assert code == 1
    runs = [(run["python"][:4], run["wheel_built"], run["ok"]) for run in report["runs"]]
    assert runs == [
        ("3.10", False, True),
        ("3.10", True, False),
        ("3.12", False, True),
        ("3.12", True, False),
    ]
    assert len({run["wheel"] for run in report["runs"]}) == 1  # one filename, two wheels
    assert [(a["kind"], a["built"]) for a in report["artifacts"]] == [
        ("sdist", False),
        ("wheel", False),
        ("wheel", True),
    ]
    [contents] = [f for f in report["failures"] if f["python"] is None]
    assert contents["code"] == "artifact_mismatch"
    assert f"differ in files: only in the given wheel: {MODULE}" in contents["message"]
    for python in ("3.10", "3.12"):
        of_run = [f for f in report["failures"] if (f["python"] or "").startswith(python)]
        assert [(f["code"], f["wheel_built"]) for f in of_run] == [
            ("plugin_load_failed", True),
            ("artifact_mismatch", True),
        ]
        assert "fails where the given wheel" in of_run[1]["message"]
        assert "stage(s) probe (plugin(s) 'helped'" in of_run[1]["message"]

    newest = report["runs"][-1]["python"]
    suites = {s.get("name"): s for s in ET.parse(junit).getroot().iter("testsuite")}
    from_sdist = suites[f"python {newest} (wheel built from the sdist)"]
    assert suites[f"python {newest} (wheel as given)"].get("failures") == "0"
    assert {c.get("classname") for c in from_sdist.iter("testcase")} == {
        "sandboxverify.py" + newest.replace(".", "_") + "_from_sdist"
    }
    failed = {c.get("name") for c in from_sdist.iter("testcase") if c.find("failure") is not None}
    assert "artifact_mismatch" in failed
    build_cases = [c.get("name") or "" for c in suites["build"].iter("testcase")]
    assert any(name.endswith("(built from the sdist)") for name in build_cases)

    merged = run_cli(["merge", str(tmp_path / "report.json"), "--json", "-"])
    labels = [run["label"] for run in merged.json()["runs"]]
    assert len(set(labels)) == 4
    of_sdist = [label for label in labels if label.endswith(", wheel built from the sdist")]
    assert of_sdist == [labels[1], labels[3]]
    loading = [f for f in merged.json()["failures"] if f["code"] == "plugin_load_failed"]
    assert [f["label"] for f in loading] == of_sdist


def test_a_wheel_and_its_sdist_that_agree_pass_with_a_run_of_each(tmp_path: Path) -> None:
    files = sdist_and_wheel(copy_fixture("good-hatch", tmp_path))

    argv = ["check", *files, "--installer", "uv", "--expect-tools", "greet,add"]
    result = run_cli(argv, cwd=tmp_path)

    assert result.code == 0, result.stdout + result.stderr
    assert f"[{platform.python_version()} from sdist] probe" in result.stdout
    assert "wheel as given: svfix_good_hatch-1.0.0-py3-none-any.whl" in result.stdout
    code, report = check(files, tmp_path)
    assert code == 0 and report["failures"] == []
    runs = report["runs"]
    assert [run["wheel_built"] for run in runs] == [False, True]
    for run in runs:
        assert {s["status"] for s in run["stages"]} == {"passed"}
        assert [tool["name"] for tool in run["tools"]] == ["greet", "add"]


def test_setuptools_builds_that_differ_only_in_bytes_agree(tmp_path: Path) -> None:
    """The given wheel's members carry SOURCE_DATE_EPOCH's date, the one built from the sdist
    the files' own: other bytes, other sha256, the same contents."""
    files = sdist_and_wheel(
        copy_fixture("good-setuptools-src", tmp_path), env={"SOURCE_DATE_EPOCH": "315532800"}
    )

    code, report = check(files, tmp_path)

    assert code == 0, report["failures"]
    given, built = [a for a in report["artifacts"] if a["kind"] == "wheel"]
    assert given["filename"] == built["filename"]
    assert given["sha256"] != built["sha256"]
    assert [run["ok"] for run in report["runs"]] == [True, True]


def test_the_wheel_of_a_given_sdist_is_reused_for_that_sdist_only(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    files = sdist_and_wheel(project)

    first = check(files, tmp_path)[1]["artifacts"]
    again = check(files, tmp_path)[1]["artifacts"]
    plugin = project / "svfix_good_hatch" / "plugin.py"
    plugin.write_text(plugin.read_text() + "\n# another sdist of the same release\n")
    for path in files:
        os.unlink(path)
    changed = check(sdist_and_wheel(project), tmp_path)[1]["artifacts"]

    assert [(a["built"], a["reused"]) for a in first] == [(False, False)] * 2 + [(True, False)]
    assert [(a["built"], a["reused"]) for a in again] == [(False, False)] * 2 + [(True, True)]
    assert again[2]["sha256"] == first[2]["sha256"]
    assert [(a["built"], a["reused"]) for a in changed] == [(False, False)] * 2 + [(True, False)]
    assert changed[0]["sha256"] != first[0]["sha256"]


def test_a_given_wheel_is_verified_even_when_its_sdist_builds_no_wheel(tmp_path: Path) -> None:
    files = sdist_and_wheel(copy_fixture("good-hatch", tmp_path))
    [sdist] = [Path(path) for path in files if path.endswith(".tar.gz")]
    unpacked = tmp_path / "unpacked"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    [top] = unpacked.iterdir()
    pyproject = top / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("hatchling.build", "hatchling.nowhere"))
    with tarfile.open(sdist, "w:gz") as archive:
        archive.add(top, arcname=top.name)

    code, report = check(files, tmp_path)

    assert code == 1
    [failure] = report["failures"]
    assert failure["code"] == "build_failed" and failure["python"] is None
    assert f"building a wheel from {sdist.name} failed" in failure["message"]
    assert [a["built"] for a in report["artifacts"]] == [False, False]
    [run] = report["runs"]
    assert run["wheel_built"] is False
    assert [(s["name"], s["status"]) for s in run["stages"][1:]] == [
        (name, "passed") for name in ("venv", "install", "probe", "imports", "scripts")
    ]


def test_a_problem_of_the_wheel_built_from_the_sdist_says_which_wheel_it_is(
    tmp_path: Path,
) -> None:
    """Both wheels have one filename: a problem found in the one built from the sdist says so."""
    files = sdist_and_wheel(copy_fixture("broken-sdist-excludes-module", tmp_path))

    code, report = check(files, tmp_path, "--expect-files", MODULE)

    assert code == 1
    [failure] = report["failures"]
    assert failure["code"] == "artifact_invalid"
    assert f"no file matches --expect-files '{MODULE}'" in failure["message"]
    assert failure["message"].endswith(f"(the wheel built from {Path(files[1]).name})")


def children() -> list[int]:
    """The processes this one started that are still there."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(os.getpid()):
            found.append(int(status.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_library_leaves_no_process_of_the_wheel_built_from_a_given_sdist(
    tmp_path: Path,
) -> None:
    # a check through the library runs in a process that lives on (a survey, a test run): the
    # hook runner kept for a next build step must end with the build, not with that process
    files = sdist_and_wheel(copy_fixture("good-hatch", tmp_path))
    before = set(children())
    report = check_artifacts(CheckOptions(targets=tuple(files), installer="uv"), config=False)

    assert report.ok, report.failures
    assert set(children()) - before == set()
