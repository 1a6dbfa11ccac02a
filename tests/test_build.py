"""The build stage's copy of the project: what is skipped, and what a copy failure reports."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandboxverify._artifacts import ProjectTarget
from sandboxverify._build import BuildSettings, build_project, copy_source
from sandboxverify._toolchain import IndexOptions, PypaBuild
from sandboxverify._workspace import Workspace
from tests.helpers import copy_fixture


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
