"""The copy a build starts from never follows a link out of the project: every such link is
refused, naming it and where it points, unless the caller asks for what they point at; links
inside the project (chains, ``..``, absolute paths into it, directories) stay links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxverify.artifacts._artifacts import ProjectTarget
from sandboxverify.artifacts._build import build_project
from sandboxverify.artifacts._copy import OutsideLinks, copy_source
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._toolchain import PipInstaller, Toolchain, VirtualenvBackend
from sandboxverify.sandbox._workspace import Workspace

SECRET = "svfix-outside-secret"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with links of every kind, next to an outside directory holding a secret."""
    outside = tmp_path / "outside"
    (outside / "secretdir").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "secretdir" / "key").write_text(SECRET)
    project = tmp_path / "project"
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\n")
    (project / "pkg" / "mod.py").write_text("x = 1\n")
    (project / "pkg" / "sub" / "file.txt").write_text("data\n")
    return project


def link(project: Path, name: str, target: str | Path) -> None:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


INSIDE = {
    "inside_link": ("pkg/mod.py", "pkg/mod.py"),
    "chain_a": ("c", "pkg/sub/file.txt"),  # chain_a -> c -> chain_b -> pkg/sub/file.txt
    "dotdot_inside": ("pkg/sub/../mod.py", "pkg/mod.py"),
    "pkg/sub/up_and_over": ("../mod.py", "pkg/mod.py"),
    "dir_link": ("pkg/sub", "pkg/sub"),
    "via_dir_link": ("dir_link/file.txt", "pkg/sub/file.txt"),
    "loop": (".", ""),
    "dangling": ("nowhere", "nowhere"),
    "pkg/dangling_back": ("gone/../sub/missing", "pkg/sub/missing"),
}


def test_links_inside_the_project_stay_links_to_the_same_place_in_the_copy(
    tree: Path, tmp_path: Path
) -> None:
    for name, (target, _) in INSIDE.items():
        link(tree, name, target)
    link(tree, "c", "chain_b")
    link(tree, "chain_b", "pkg/sub/file.txt")
    link(tree, "abs_inside", tree / "pkg" / "mod.py")

    copy = tmp_path / "copy"
    copy_source(tree, copy)

    expected = {name: where for name, (_, where) in INSIDE.items()}
    expected["abs_inside"] = "pkg/mod.py"
    for name, where in expected.items():
        path = copy / name
        assert path.is_symlink(), name
        assert not os.path.isabs(os.readlink(path)), name
        assert os.path.normpath(path.parent / os.readlink(path)) == os.path.normpath(
            copy / where
        ), name
    assert (copy / "via_dir_link").read_text() == "data\n"
    assert (copy / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not (copy / "dangling").exists()


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("environ_link", "/proc/self/environ"),
        ("magic_fd", "/proc/self/fd/0"),
        ("dotdot_escape", "../outside/secret.txt"),
        ("dotdot_deep", "pkg/sub/../../../outside/secret.txt"),
        ("pkg/dir_escape", "../../outside/secretdir"),
        ("hop", "OUTSIDE"),  # absolute, out
        ("loop_out", "../project/../outside/secret.txt"),
        ("dangling_then_out", "nowhere/../../outside/secret.txt"),
        ("pkg/missing_then_out", "gone/../../../outside/secret.txt"),
    ],
)
def test_a_link_out_of_the_project_is_refused_naming_it_and_its_target(
    tree: Path, tmp_path: Path, name: str, target: str
) -> None:
    target = target.replace("OUTSIDE", str(tmp_path / "outside"))
    link(tree, name, target)
    with pytest.raises(OutsideLinks) as caught:
        copy_source(tree, tmp_path / "copy")
    assert caught.value.links == ((name, target),)
    assert not any(SECRET in p.read_text() for p in _files(tmp_path / "copy"))


def test_chains_and_intermediate_components_that_leave_are_refused_every_one(
    tree: Path, tmp_path: Path
) -> None:
    link(tree, "hop", tmp_path / "outside")
    link(tree, "chain_escape", "hop")
    link(tree, "through_hop", "hop/secret.txt")  # leaves through an intermediate component
    link(tree, "pkg/pypirc", Path("..") / ".." / "outside" / "secret.txt")
    with pytest.raises(OutsideLinks) as caught:
        copy_source(tree, tmp_path / "copy")
    assert sorted(caught.value.links) == [
        ("chain_escape", "hop"),
        ("hop", str(tmp_path / "outside")),
        ("pkg/pypirc", "../../outside/secret.txt"),
        ("through_hop", "hop/secret.txt"),
    ]
    assert not any(SECRET in p.read_text() for p in _files(tmp_path / "copy"))


def test_an_absolute_link_naming_the_project_through_a_link_of_the_callers_stays_inside(
    tree: Path, tmp_path: Path
) -> None:
    (tmp_path / "alias").symlink_to(tree)  # as /tmp is /private/tmp on macOS
    link(tree, "through_alias", tmp_path / "alias" / "pkg" / "mod.py")
    copy = tmp_path / "copy"
    copy_source(tmp_path / "alias", copy)
    assert os.readlink(copy / "through_alias") == os.path.join("pkg", "mod.py")


def test_a_dangling_link_out_of_the_project_is_left_out(tree: Path, tmp_path: Path) -> None:
    link(tree, "gone", tmp_path / "nowhere")
    copy_source(tree, tmp_path / "copy")
    assert not os.path.lexists(tmp_path / "copy" / "gone")


def test_the_caller_may_have_what_links_out_point_at_copied_but_never_proc(
    tree: Path, tmp_path: Path
) -> None:
    link(tree, "secret.txt", Path("..") / "outside" / "secret.txt")
    link(tree, "secrets", tmp_path / "outside" / "secretdir")
    copy = tmp_path / "copy"
    copy_source(tree, copy, follow_external=True)
    assert not (copy / "secret.txt").is_symlink()
    assert (copy / "secret.txt").read_text() == SECRET
    assert (copy / "secrets" / "key").read_text() == SECRET
    # what a build writes into the copy stays there
    (copy / "secrets" / "demo.egg-info").mkdir()
    assert not (tmp_path / "outside" / "secretdir" / "demo.egg-info").exists()

    link(tree, "environ", "/proc/self/environ")
    with pytest.raises(OutsideLinks) as caught:
        copy_source(tree, tmp_path / "copy-2", follow_external=True)
    assert caught.value.links == (("environ", "/proc/self/environ"),)


def test_a_project_with_links_out_is_build_failed_before_any_build(
    tree: Path, tmp_path: Path
) -> None:
    link(tree, "leak.txt", "/proc/self/environ")
    link(tree, "pkg/pypirc.txt", Path("..") / ".." / "outside" / "secret.txt")
    ctx = RunContext(Toolchain(VirtualenvBackend(), PipInstaller()), 60, 60)
    with Workspace() as workspace:
        result = build_project(ProjectTarget(tree), workspace, ctx)
        built = list(workspace.dist.iterdir()) if workspace.dist.exists() else []

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        "the project has symbolic links that lead out of it: leak.txt -> /proc/self/environ, "
        "pkg/pypirc.txt -> ../../outside/secret.txt"
    )
    assert failure.hint is not None and "--follow-external-links" in failure.hint
    assert built == []


def _files(root: Path) -> list[Path]:
    return (
        [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()] if root.exists() else []
    )
