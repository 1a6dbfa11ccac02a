"""The build frontend: one build environment, requirements a backend asks for, an sdist with a
[build-system] of its own, and a [build-system] nothing can build from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandboxverify.artifacts._artifacts import ProjectTarget
from sandboxverify.artifacts._backend import (
    BuildFrontend,
    BuildSystem,
    _requirements,
    build_system,
)
from sandboxverify.artifacts._build import build_project
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._toolchain import choose_toolchain
from sandboxverify.sandbox._workspace import Workspace
from tests.helpers import FIXTURES

#: An in-tree backend (backend-path): an sdist of the tree, a placeholder wheel; what it asks
#: for comes from a file in the tree.
IN_TREE_BACKEND = """
import os, tarfile

def get_requires_for_build_wheel(config_settings=None):
    if os.path.exists("wheel-requires.txt"):
        return open("wheel-requires.txt").read().split()
    return []

def build_sdist(sdist_directory, config_settings=None):
    name = "demo-1.0.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as archive:
        for entry in os.listdir("."):
            archive.add(entry, arcname="demo-1.0/" + entry)
    return name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "demo-1.0-py3-none-any.whl"
    open(os.path.join(wheel_directory, name), "w").close()
    return name
"""
PYPROJECT = """[build-system]
requires = []
build-backend = "in_tree_backend"
backend-path = ["."]
"""

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def project(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "in_tree_backend.py").write_text(IN_TREE_BACKEND)
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return root


def context() -> RunContext:
    return RunContext(choose_toolchain("uv"), plugin_timeout=60, install_timeout=300)


def installed(env: Path) -> set[str]:
    return {p.name.split("-")[0].lower() for p in env.glob("lib/python*/site-packages/*.dist-info")}


def test_requirements_the_backend_asks_for_are_installed_before_its_hook(tmp_path: Path) -> None:
    source = project(tmp_path, {"wheel-requires.txt": "pluggy"})
    with Workspace() as workspace:
        frontend = BuildFrontend(workspace, context())
        sdist = frontend.build("sdist", source)
        wheel = frontend.build("wheel", source)
        envs = sorted(workspace.root.glob("build-env*"))

        assert sdist.ok, sdist.failed.tail if sdist.failed else sdist.problem
        assert wheel.ok, wheel.failed.tail if wheel.failed else wheel.problem
        assert (sdist.done, wheel.done) == ("demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl")
        assert [env.name for env in envs] == ["build-env"]
        assert "pluggy" in installed(envs[0])


def test_a_tree_with_another_build_system_gets_its_own_environment(tmp_path: Path) -> None:
    """The sdist's own [build-system] decides how its wheel is built."""
    source = project(tmp_path)
    theirs = tmp_path / "unpacked"
    shutil.copytree(source, theirs)
    (theirs / "pyproject.toml").write_text(
        PYPROJECT.replace("requires = []", 'requires = ["pluggy"]')
    )
    with Workspace() as workspace:
        frontend = BuildFrontend(workspace, context())
        assert frontend.build("sdist", source).ok
        assert frontend.build("wheel", theirs).ok
        envs = sorted(workspace.root.glob("build-env*"))

        assert [env.name for env in envs] == ["build-env", "build-env-2"]
        assert "pluggy" not in installed(envs[0])
        assert "pluggy" in installed(envs[1])


def test_a_build_system_that_cannot_be_read_is_build_failed(tmp_path: Path) -> None:
    source = project(tmp_path)
    (source / "pyproject.toml").write_text('[build-system]\nrequires = "hatchling"\n')
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, context())

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        "building the sdist failed: [build-system] requires must be a list of requirement strings"
    )


def test_build_requirements_that_cannot_be_installed_are_build_failed(tmp_path: Path) -> None:
    source = project(tmp_path)
    (source / "pyproject.toml").write_text(
        PYPROJECT.replace("requires = []", 'requires = ["svfix-no-such-package-anywhere"]')
    )
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, context())

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message.startswith(
        "building the sdist failed: installing its build requirements "
        "(svfix-no-such-package-anywhere): "
    )


def test_defaults_without_a_build_system(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    expected = BuildSystem(("setuptools>=40.8.0",), "setuptools.build_meta:__legacy__")
    assert build_system(tmp_path) == expected
    (tmp_path / "pyproject.toml").unlink()
    assert build_system(tmp_path) == expected


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        (["hatchling>=1.27", "wheel"], None),
        (["pkg @ https://example.org/pkg-1.0.tar.gz"], "a URL or a path"),
        (["pkg @ https://example.org/pkg-1.0-py3-none-any.whl"], "a URL or a path"),
        (["pkg @ file:///home/user/.pypirc"], "a URL or a path"),
        (["--index-url=https://evil.example/simple"], "not a requirement"),
        ([3], "not a string"),
        ("hatchling", "not a list of requirements"),
    ],
)
def test_requirements_a_backend_asks_for_reach_the_installer_only_when_safe(
    asked: object, problem: str | None
) -> None:
    # the installer is not confined: an option, a URL or a path must never reach it
    wanted, said = _requirements(asked)
    if problem is None:
        assert (wanted, said) == (asked, None)
    else:
        assert wanted == []
        assert said is not None and problem in said


def test_one_hook_runner_builds_the_sdist_and_the_wheel_from_it(tmp_path: Path) -> None:
    """A backend from the build environment is imported once for both steps: one runner."""
    with Workspace() as workspace:
        result = build_project(ProjectTarget(FIXTURES / "good-hatch"), workspace, context())
        runners = sorted(workspace.logs.glob("*-build.log"))

        assert result.ok, result.failures
        assert [a.path.name for a in result.artifacts] == [
            "svfix_good_hatch-1.0.0.tar.gz",
            "svfix_good_hatch-1.0.0-py3-none-any.whl",
        ]
        assert len(runners) == 1


def test_an_sdist_step_that_writes_where_its_sdist_is_unpacked_is_build_failed(
    tmp_path: Path,
) -> None:
    # the wheel must come from the sdist alone: nothing the sdist step leaves may join it
    backend = IN_TREE_BACKEND.replace(
        "def build_sdist(sdist_directory, config_settings=None):\n",
        "def build_sdist(sdist_directory, config_settings=None):\n"
        "    open(os.path.join('..', 'sdist', 'stray.txt'), 'w').close()\n",
    )
    source = project(tmp_path, {"in_tree_backend.py": backend})
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, context())

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert "building the sdist wrote where its sdist is unpacked" in failure.message
    assert "stray.txt" in failure.message
