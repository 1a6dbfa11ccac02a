"""Installers run outside the sandbox, so they never build: uv with ``--no-build``, pip with
``--only-binary :all:``, and no requirement with a URL or a path reaches either; a dependency
without a wheel is a failure that names it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sandboxverify.report import Failure
from sandboxverify.sandbox import _venv
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._subprocess import Command, Outcome
from sandboxverify.sandbox._toolchain import (
    IndexOptions,
    PipInstaller,
    Toolchain,
    UvInstaller,
    VirtualenvBackend,
    direct_references,
)
from sandboxverify.sandbox._workspace import SandboxPaths

PY = Path("/venv/bin/python")
WHEEL = Path("/dist/pkg-1.0-py3-none-any.whl")
UV_NO_WHEEL = """Using Python 3.11.7 environment at: v
error: No solution found when resolving dependencies
  cause: Because svfix-builder==1.0 has no usable wheels and only svfix-builder==1.0 is available, \
we can conclude that all versions of svfix-builder cannot be used.
hint: Wheels are required for `svfix-builder` because building from source is disabled for all \
packages (i.e., with `--no-build`)
"""
PIP_NO_WHEEL = """ERROR: Could not find a version that satisfies the requirement svfix-builder \
(from pkg) (from versions: none)
ERROR: No matching distribution found for svfix-builder (from pkg)
"""


def test_uv_never_builds() -> None:
    uv = UvInstaller(Path("/bin/uv"))
    assert "--no-build" in uv.install(PY, WHEEL, IndexOptions(), ("pytest",))
    assert "--no-build" in uv.install_requirements(PY, ["hatchling"], IndexOptions())


def test_pip_installs_wheels_only() -> None:
    for argv in (
        PipInstaller().install(PY, WHEEL, IndexOptions(), ("pytest",)),
        PipInstaller().install_requirements(PY, ["hatchling"], IndexOptions()),
    ):
        at = argv.index("--only-binary")
        assert argv[at + 1] == ":all:"


@pytest.mark.parametrize(
    ("requirement", "direct"),
    [
        ("pytest", False),
        ("llm>=0.26; python_version >= '3.9'", False),
        ("pkg[extra]==1.0", False),
        ("pkg @ file:///home/me/pkg-1.0.tar.gz", True),
        ("pkg @ https://example.invalid/pkg-1.0-py3-none-any.whl", True),
        ("pkg @ git+https://example.invalid/pkg.git", True),
        ("./pkg-1.0.tar.gz", True),
        ("https://example.invalid/pkg-1.0.tar.gz", True),
    ],
)
def test_direct_references(requirement: str, direct: bool) -> None:
    assert direct_references([requirement]) == ([requirement] if direct else [])


class _Failing:
    """Every command fails with ``tail``; what ran is kept."""

    def __init__(self, tail: str) -> None:
        self.tail = tail
        self.ran: list[Command] = []

    def run(self, command: Command, python: str | None) -> Outcome:
        self.ran.append(command)
        return Outcome(command, returncode=1, timed_out=False, seconds=0.0, tail=self.tail)

    def ended(self, outcome: Outcome, python: str | None) -> None:
        raise AssertionError("an install starts no command server")


def _install(tmp_path: Path, runner: _Failing, extra: tuple[str, ...] = ()) -> list[Failure]:
    paths = SandboxPaths(tmp_path / "py")
    paths.make()
    interpreter = Interpreter("3", Path(sys.executable), "3.11.7", (3, 11, 7), "cpython")
    sandbox = _venv.Sandbox(interpreter, paths)
    ctx = RunContext(Toolchain(VirtualenvBackend(), PipInstaller()), 60.0, 60.0, runner=runner)
    return _venv.install_wheel(sandbox, tmp_path / WHEEL.name, ctx, extra=extra)


def test_a_requirement_with_a_url_never_reaches_the_installer(tmp_path: Path) -> None:
    runner = _Failing("")
    [failure] = _install(tmp_path, runner, extra=("pytest", "evil @ file:///tmp/evil.tar.gz"))
    assert runner.ran == []
    assert failure.code == "install_failed"
    assert failure.message == (
        "installing pkg-1.0-py3-none-any.whl with pip refused: 'evil @ file:///tmp/evil.tar.gz' "
        "is not a name and a version range (an installer would fetch and build what it points "
        "at, outside the sandbox)"
    )
    assert failure.hint is not None and "--find-links" in failure.hint


def test_a_dependency_without_a_wheel_is_named(tmp_path: Path) -> None:
    [failure] = _install(tmp_path, _Failing(UV_NO_WHEEL))
    assert failure.code == "install_failed"
    assert failure.message == (
        "installing pkg-1.0-py3-none-any.whl with pip exited with code 1: the dependency "
        "'svfix-builder==1.0' has no wheel for Python 3.11.7, only a source distribution, and "
        "the installer here builds nothing (its build code would run outside the sandbox)"
    )
    assert failure.hint == _venv.NO_WHEEL_HINT
    assert "--find-links" in failure.hint and "maintainers" in failure.hint


def test_pip_says_only_that_nothing_matched_and_the_hint_says_why_that_may_be(
    tmp_path: Path,
) -> None:
    [failure] = _install(tmp_path, _Failing(PIP_NO_WHEEL))
    assert "satisfies the requirement svfix-builder (from pkg)" in failure.message
    assert failure.hint is not None
    assert failure.hint.endswith("if it has only a source distribution, " + _venv.NO_WHEEL_HINT)


@pytest.mark.parametrize(
    ("cause", "wanted"),
    [
        # mdx-smartypants pins namedentities==1.5.2: a newer release will not do
        ("Because namedentities==1.5.2 has no usable wheels and", "namedentities==1.5.2"),
        ("Because namedentities>=1.5,<2 has no usable wheels and", "namedentities>=1.5,<2"),
        ("Because named_entities==1.5.2 has no usable wheels and", "namedentities"),
        ("Because all versions of namedentities have no usable wheels", "namedentities"),
    ],
)
def test_the_dependency_without_a_wheel_comes_with_the_versions_the_installer_wanted(
    cause: str, wanted: str
) -> None:
    hint = "hint: Wheels are required for `namedentities` because building from source is off"
    assert _venv.without_wheel(f"  cause: {cause}\n\n{hint}\n") == wanted
