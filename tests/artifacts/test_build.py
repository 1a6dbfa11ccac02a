"""The build stage: the copy of the project (what is skipped, what a copy failure reports),
and the static checks of artifacts (every problem a failure; ``--expect-files``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.artifacts._artifacts import ArtifactsTarget, ProjectTarget
from sandboxverify.artifacts._backend import HookRun
from sandboxverify.artifacts._build import BuildResult, build_project
from sandboxverify.artifacts._build_steps import build_failure
from sandboxverify.artifacts._copy import copy_source
from sandboxverify.artifacts._given import prepare_artifacts
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._subprocess import Command, Outcome
from sandboxverify.sandbox._toolchain import (
    PipInstaller,
    Toolchain,
    VirtualenvBackend,
)
from sandboxverify.sandbox._workspace import Workspace
from tests.helpers import copy_fixture, make_wheel

PIP_BUILD = RunContext(Toolchain(VirtualenvBackend(), PipInstaller()), 60, 60)


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


def test_a_link_to_a_directory_holding_the_project_is_a_copy_failure(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\n")
    (project / "up").symlink_to(tmp_path)
    with pytest.raises(shutil.Error) as caught:  # followed only when asked
        copy_source(project, tmp_path / "copy", follow_external=True)
    [(source, _, why)] = caught.value.args[0]
    assert source == str(project / "up")
    assert "(a loop)" in why


def test_a_file_that_cannot_be_copied_is_build_failed_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "secret.txt").write_text("")

    # root reads every file here, so the copy fails as it would for an unreadable file
    def copyfileobj(source: object, destination: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(shutil, "copyfileobj", copyfileobj)
    with Workspace() as workspace:
        result = build_project(ProjectTarget(tmp_path), workspace, PIP_BUILD)

    [failure] = result.failures
    assert failure.code == "build_failed"
    assert failure.message == (
        f"cannot copy the project to build it: {tmp_path / 'pyproject.toml'}: "
        "[Errno 13] Permission denied (and 1 more)"
    )
    assert not result.ok


def _given(wheel: Path, *expect_files: str) -> BuildResult:
    """The build stage on a given wheel: static checks only, nothing is built."""
    with Workspace() as workspace:
        target = ArtifactsTarget((wheel,), ())
        return prepare_artifacts(target, workspace, PIP_BUILD, expect_files=expect_files)


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

    assert [f.code for f in result.failures] == ["artifact_invalid"] * 2
    assert all(f.message.startswith(wheel.name + ": ") for f in result.failures)
    hints = [f.hint or "" for f in result.failures]
    assert "dependencies" in hints[0]
    assert "RECORD" in hints[1]
    assert not result.ok


def test_given_artifacts_of_two_releases_are_a_usage_error_even_when_broken(
    tmp_path: Path,
) -> None:
    first = make_wheel(tmp_path, files=())  # empty: artifact_invalid on its own
    second = make_wheel(tmp_path, "other-2.0-py3-none-any.whl", name="other", version="2.0")
    with Workspace() as workspace, pytest.raises(UsageError, match="different releases"):
        prepare_artifacts(ArtifactsTarget((first, second), ()), workspace, PIP_BUILD)


def _failed_step(tmp_path: Path, argv: list[str], label: str, tail: str) -> Outcome:
    """A step of a build that exited with 1, having printed ``tail``."""
    command = Command(
        argv=argv, env={}, cwd=tmp_path, timeout=60.0, log_path=tmp_path / "log", label=label
    )
    return Outcome(command, returncode=1, timed_out=False, seconds=1.0, tail=tail)


@pytest.mark.parametrize(
    ("tail", "network"),
    [
        (
            "[stb] $ python -m nodeenv --node=18.20.5 --prebuilt\n * Install prebuilt node "
            "(18.20.5) .Error: cannot download https://nodejs.org/dist/node.tar.gz: "
            "[Errno -2] Name or service not known\nerror: nodeenv-creation-failed",
            True,
        ),
        ("error: [Errno -3] Temporary failure in name resolution", True),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'README.md'", False),
    ],
)
def test_a_build_that_reached_for_the_network_says_so(
    tmp_path: Path, tail: str, network: bool
) -> None:
    outcome = _failed_step(tmp_path, ["uv", "build"], "build-wheel", tail)
    failure = build_failure(
        "building a wheel from demo-1.0.tar.gz", HookRun(failed=outcome), "missing?"
    )
    assert failure.code == "build_failed"
    assert ("could not reach the network" in (failure.hint or "")) is network
    assert (failure.hint == "missing?") is not network


def test_a_build_requirement_without_a_wheel_is_named_with_the_no_wheel_hint(
    tmp_path: Path,
) -> None:
    # tox-docker 5.0.0 builds with vcversioner, which has only an sdist
    tail = (
        "error: No solution found when resolving dependencies\n"
        "  hint: Wheels are required for `vcversioner` because building from source is "
        "disabled for all packages (i.e., with `--no-build`)\n"
    )
    outcome = _failed_step(tmp_path, ["uv", "pip", "install"], "build-requirements", tail)
    hooks = HookRun(
        failed=outcome,
        doing="installing its build requirements (vcversioner)",
        unbuilt="building a wheel of the dependency vcversioner failed: no compiler",
    )
    failure = build_failure("building a wheel from tox_docker-5.0.0.tar.gz", hooks, "missing?")
    assert failure.code == "build_failed"
    assert (
        "the build requirement 'vcversioner' has no wheel, only a source distribution, and "
        "building a wheel of it here failed: building a wheel of the dependency vcversioner "
        "failed: no compiler"
    ) in failure.message
    assert failure.hint is not None and "--find-links" in failure.hint


def test_a_build_that_cannot_import_a_module_names_it_as_a_requirement_or_a_left_out_part(
    tmp_path: Path,
) -> None:
    """markdown-katex's setup.py imports lib3to6, which it declares nowhere."""
    tail = (
        'Traceback (most recent call last):\n  File "setup.py", line 12, in <module>\n'
        "    import lib3to6\nModuleNotFoundError: No module named 'lib3to6'\n"
    )
    outcome = _failed_step(tmp_path, ["python", "-m", "pep517"], "build-wheel", tail)
    failure = build_failure(
        "building a wheel from k-1.0.tar.gz", HookRun(failed=outcome), "missing?"
    )
    assert failure.hint == (
        "the build imports lib3to6, which its build environment does not have: if the build "
        "uses it, declare it in [build-system] requires (without pyproject.toml a build has "
        "setuptools alone); if it is the project's own: missing?"
    )
