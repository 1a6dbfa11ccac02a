"""Build requirements reach the installer by name and version only, and as wheels only: the
installer runs outside the sandbox, so nothing it installs for a build is ever built by it (a
requirement published only as an sdist is built confined, as a dependency is)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from sandboxverify.artifacts._artifacts import ProjectTarget
from sandboxverify.artifacts._build import build_project
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._toolchain import IndexOptions, choose_toolchain
from sandboxverify.sandbox._workspace import Workspace
from tests.artifacts.test_backend import PYPROJECT, project

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

#: a dependency that has only an sdist: its setup.py leaves a marker in HOME whenever it runs
BUILDER_SETUP = """
import os, pathlib
pathlib.Path(os.environ["HOME"], "svfix-builder-ran").write_text(repr(dict(os.environ)))
from setuptools import setup
setup(name="svfix-sdist-only-builder", version="1.0")
"""


def sdist_only(links: Path) -> Path:
    """A find-links directory whose only distribution is the builder's sdist (made by hand, so
    its setup.py never ran here)."""
    tree = links.parent / "svfix_sdist_only_builder-1.0"
    tree.mkdir(parents=True)
    (tree / "setup.py").write_text(BUILDER_SETUP)
    (tree / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: svfix-sdist-only-builder\nVersion: 1.0\n"
    )
    links.mkdir()
    with tarfile.open(links / "svfix_sdist_only_builder-1.0.tar.gz", "w:gz") as archive:
        archive.add(tree, tree.name)
    return links


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_build_requirement_with_only_an_sdist_is_never_built_by_the_installer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: str
) -> None:
    """uv names the requirement it stops at: it is built from its sdist, confined as a
    dependency is, and the build goes on; pip does not name it: the build fails. Either way
    its setup.py never runs as the user."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    links = sdist_only(tmp_path / "links")
    source = project(tmp_path)
    (source / "pyproject.toml").write_text(
        PYPROJECT.replace("requires = []", 'requires = ["svfix-sdist-only-builder"]')
    )
    ctx = RunContext(
        choose_toolchain(installer),  # type: ignore[arg-type]
        plugin_timeout=60,
        install_timeout=300,
        index=IndexOptions(find_links=(str(links),)),
    )
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, ctx)

    assert not (home / "svfix-builder-ran").exists()  # its setup.py never ran unconfined
    if installer == "uv":  # the project's toy backend ran (its sdist is not a valid one)
        assert "build_failed" not in [failure.code for failure in result.failures]
        assert any(f.message.startswith("demo-1.0.tar.gz: ") for f in result.failures)
        return
    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message.startswith(
        "building the sdist failed: installing its build requirements (svfix-sdist-only-builder)"
    )


@pytest.mark.parametrize(
    "requirement",
    [
        "svfix-sdist-only-builder @ file:///tmp/svfix_sdist_only_builder-1.0.tar.gz",
        "svfix-sdist-only-builder @ https://example.invalid/svfix_sdist_only_builder-1.0.tar.gz",
        "./svfix_sdist_only_builder-1.0.tar.gz",
    ],
)
def test_a_build_system_requirement_with_a_url_or_a_path_is_build_failed_before_any_install(
    tmp_path: Path, requirement: str
) -> None:
    source = project(tmp_path)
    (source / "pyproject.toml").write_text(
        PYPROJECT.replace("requires = []", f'requires = ["hatchling", "{requirement}"]')
    )
    ctx = RunContext(choose_toolchain("uv"), plugin_timeout=60, install_timeout=300)
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, ctx)
        logs = sorted(path.name for path in workspace.logs.iterdir())

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        f"building the sdist failed: [build-system] requires {requirement!r}: build "
        "requirements are installed by name and version range only, never from a URL or a "
        "path (the installer, outside the sandbox, would build or read what it points at)"
    )
    assert logs == ["01-build-env.log"]  # nothing was installed


def test_a_url_the_backend_asks_for_is_build_failed(tmp_path: Path) -> None:
    wanted = "svfix-sdist-only-builder@https://example.invalid/svfix_sdist_only_builder-1.0.tar.gz"
    source = project(tmp_path, {"wheel-requires.txt": wanted})
    ctx = RunContext(choose_toolchain("uv"), plugin_timeout=60, install_timeout=300)
    with Workspace() as workspace:
        result = build_project(ProjectTarget(source), workspace, ctx)

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        f"building the wheel from the sdist failed: the backend asked for {wanted!r}, a URL or a "
        "path: build requirements are installed by name and version range only, never from a "
        "URL or a path (the installer, outside the sandbox, would build or read what it "
        "points at)"
    )
