"""The build stage: the copy of the project (what is skipped, what a copy failure reports),
and the static checks of artifacts (every problem a failure; ``--expect-files``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.artifacts._artifacts import ArtifactsTarget, ProjectTarget
from sandboxverify.artifacts._build import (
    BuildResult,
    BuildSettings,
    build_project,
    copy_source,
    prepare_artifacts,
)
from sandboxverify.sandbox._toolchain import IndexOptions, PypaBuild
from sandboxverify.sandbox._workspace import Workspace
from tests.helpers import copy_fixture, make_wheel


def test_the_copy_skips_environments_caches_and_special_files(tmp_path: Path) -> None:
    project = copy_fixture("good-flit", tmp_path)
    (project / "__pycache__").mkdir()
    (project / ".tox").mkdir()
    (project / "env").mkdir()
    (project / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    os.mkfifo(project / "pipe")  # copying a pipe would block forever

    copy_source(project, tmp_path / "copy")

    copied = {p.name for p in (tmp_path / "copy").iterdir()}
    assert {"pyproject.toml", "svfix_good_flit"} <= copied
    assert copied.isdisjoint({"__pycache__", ".tox", "env", "pipe"})


def test_a_file_that_cannot_be_copied_is_build_failed_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # root reads every file here, so the copy error is raised as copytree would raise it
    def copytree(*args: object, **kwargs: object) -> None:
        raise shutil.Error(
            [
                ("/p/secret.txt", "/c/secret.txt", "[Errno 13] Permission denied"),
                ("/p/other", "/c/other", "[Errno 13] Permission denied"),
            ]
        )

    monkeypatch.setattr(shutil, "copytree", copytree)
    settings = BuildSettings(PypaBuild(), IndexOptions(), (), 60)
    with Workspace() as workspace:
        result = build_project(ProjectTarget(tmp_path), workspace, settings, None)

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        "cannot copy the project to build it: /p/secret.txt: "
        "[Errno 13] Permission denied (and 1 more)"
    )
    assert not result.ok


def _given(wheel: Path, *expect_files: str) -> BuildResult:
    """The build stage on a given wheel: static checks only, nothing is built."""
    settings = BuildSettings(PypaBuild(), IndexOptions(), (), 60, expect_files=expect_files)
    with Workspace() as workspace:
        return prepare_artifacts(ArtifactsTarget((wheel,), ()), workspace, settings, None)


DATA_FILES = {
    "demo/__init__.py": "",
    "demo/data/tools.json": "[]",
    "demo/data/voices.json": "[]",
    "demo/templates/page.html": "",
}


def test_expect_files_that_match_pass(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, files=DATA_FILES)
    # '*' crosses '/'; a leading './' or '/' is ignored; a directory matches when it holds a file
    result = _given(
        wheel, "demo/data/*.json", "demo/*.html", "./demo/templates/", "/demo/data", "*/tools.json"
    )

    assert result.failures == ()
    assert result.ok
    assert [w.path for w in result.wheels] == [wheel]


def test_each_expect_files_glob_that_matches_nothing_is_artifact_invalid(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, files=DATA_FILES)
    result = _given(wheel, "demo/data/*.json", "demo/data/*.yaml", "demo/tools.json", "docs/*")

    assert not result.ok
    assert result.wheels == ()
    assert [f.code for f in result.failures] == ["artifact_invalid"] * 3
    # the files near where each glob points, closest first
    assert [f.message for f in result.failures] == [
        "demo-1.0-py3-none-any.whl: no file matches --expect-files 'demo/data/*.yaml'; "
        "similar files in the wheel: demo/data/tools.json, demo/data/voices.json",
        "demo-1.0-py3-none-any.whl: no file matches --expect-files 'demo/tools.json'; "
        "similar files in the wheel: demo/data/tools.json, demo/data/voices.json, "
        "demo/templates/page.html, demo/__init__.py",
        "demo-1.0-py3-none-any.whl: no file matches --expect-files 'docs/*'; similar files "
        "in the wheel: demo/data/voices.json, demo/__init__.py, demo/templates/page.html, "
        "demo/data/tools.json",
    ]
    assert all(
        f.hint and f.hint.startswith("include the files in the wheel") for f in result.failures
    )
    assert all(f.python is None for f in result.failures)


def test_expect_files_is_checked_in_a_wheel_with_other_problems_too(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, files=DATA_FILES, unrecorded=("demo/data/voices.json",))
    result = _given(wheel, "demo/data/*.csv")

    assert [f.message.split(": ", 1)[1][:40] for f in result.failures] == [
        "1 file(s) in the archive are not listed ",
        "no file matches --expect-files 'demo/dat",
    ]


def test_every_artifact_problem_is_its_own_failure_with_a_hint(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        files=("demo/__init__.py", "tests/__init__.py"),
        tampered=("demo/__init__.py",),
        metadata="Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: six >>> 1\n",
    )
    result = _given(wheel)

    assert [f.code for f in result.failures] == ["artifact_invalid"] * 3
    assert all(f.message.startswith(wheel.name + ": ") for f in result.failures)
    hints = [f.hint or "" for f in result.failures]
    assert "dependencies" in hints[0]
    assert "RECORD" in hints[1]
    assert hints[2].startswith("exclude it from the wheel")
    assert not result.ok


def test_given_artifacts_of_two_releases_are_a_usage_error_even_when_broken(
    tmp_path: Path,
) -> None:
    first = make_wheel(tmp_path, files=())  # empty: artifact_invalid on its own
    second = make_wheel(tmp_path, "other-2.0-py3-none-any.whl", name="other", version="2.0")
    settings = BuildSettings(PypaBuild(), IndexOptions(), (), 60)
    with Workspace() as workspace, pytest.raises(UsageError, match="different releases"):
        prepare_artifacts(ArtifactsTarget((first, second), ()), workspace, settings, None)
