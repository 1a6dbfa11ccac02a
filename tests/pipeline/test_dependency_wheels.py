"""An install that stopped for want of a dependency's wheel, tried again with one built."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from packaging.version import Version

from sandboxverify.artifacts import _dependency
from sandboxverify.pipeline._dependency_wheels import (
    built_notes,
    install_building_dependencies,
    with_dependency_wheels,
)
from sandboxverify.report import Failure
from sandboxverify.sandbox import RunContext
from sandboxverify.sandbox._toolchain import choose_toolchain

pytestmark = pytest.mark.usefixtures("needs_uv")

UV_SAYS = (
    "  hint: Wheels are required for `{}` because building from source is disabled for all "
    "packages (i.e., with `--no-build`)\n"
)


def _no_wheel(name: str) -> Failure:
    return Failure("install_failed", "installing x with uv exited", details=UV_SAYS.format(name))


def _state(tmp_path: Path) -> Any:
    ctx = RunContext(choose_toolchain("uv"), 60.0, 60.0)
    return SimpleNamespace(workspace=SimpleNamespace(root=tmp_path), context=ctx)


def _builds(monkeypatch: pytest.MonkeyPatch, wheel: str) -> None:
    """Building any dependency makes ``wheel``."""

    def build(name: str, python: Version, into: Path, ctx: Any) -> tuple[str, None]:
        into.mkdir(parents=True, exist_ok=True)
        (into / wheel).write_bytes(b"")
        return wheel, None

    monkeypatch.setattr(_dependency, "build_dependency_wheel", build)


def test_each_missing_wheel_is_built_once_and_the_install_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(tmp_path)
    built: list[str] = []

    def build(name: str, python: Version, into: Path, ctx: Any) -> tuple[str, None]:
        built.append(name)
        into.mkdir(parents=True, exist_ok=True)
        (into / f"{name}-1.0-py3-none-any.whl").write_bytes(b"")
        return f"{name}-1.0-py3-none-any.whl", None

    monkeypatch.setattr(_dependency, "build_dependency_wheel", build)
    answers = [[_no_wheel("a")], [_no_wheel("b")], []]
    links: list[tuple[str, ...]] = []

    def install(ctx: Any) -> list[Failure]:
        links.append(ctx.index.find_links)
        return answers.pop(0)

    failures, wheels = install_building_dependencies(state, state.context, "3.11.7", install)
    assert failures == [] and built == ["a", "b"]
    assert wheels == ["a-1.0-py3-none-any.whl", "b-1.0-py3-none-any.whl"]
    place = str(tmp_path / "dependency-wheels")
    assert links == [(), (place,), (place,)]  # offered once there is a wheel to offer
    result: Any = SimpleNamespace(built_requirements=("vcversioner-2.16-py3-none-any.whl",))
    notes = built_notes(state, result)
    assert [note.split(" from ")[0] for note in notes] == [
        "built vcversioner-2.16-py3-none-any.whl",
        "built a-1.0-py3-none-any.whl",
        "built b-1.0-py3-none-any.whl",
    ]
    assert "a build requirement that publishes no wheel" in notes[0]
    assert with_dependency_wheels(state.context, state).index.find_links == (place,)


def test_a_dependency_that_does_not_build_is_the_install_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(tmp_path)
    broken = Failure("build_failed", "building a wheel of the dependency a failed: no compiler")
    monkeypatch.setattr(_dependency, "build_dependency_wheel", lambda *a: (None, broken))
    failures, wheels = install_building_dependencies(
        state, state.context, "3.11.7", lambda ctx: [_no_wheel("a")]
    )
    assert [f.message for f in failures] == [broken.message]
    assert failures[0].python == "3.11.7" and wheels == []


def test_an_install_that_still_lacks_the_same_wheel_is_not_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wheel built for another Python does not fit: the first failure stands."""
    state = _state(tmp_path)
    calls: list[int] = []

    _builds(monkeypatch, "a-1.0-cp311-cp311-linux_x86_64.whl")

    first = Failure(
        "install_failed",
        "installing x with uv exited with code 1: the dependency 'a' has no wheel for Python "
        "3.12.1, only a source distribution, and the installer here builds nothing",
        python="3.12.1",
        details=UV_SAYS.format("a"),
    )

    def install(ctx: Any) -> list[Failure]:
        calls.append(1)
        return [first]

    failures, _ = install_building_dependencies(state, state.context, "3.12.1", install)
    assert len(calls) == 2 and [f.code for f in failures] == ["install_failed"]
    [failure] = failures
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert failure.message == (
        "installing x with uv exited with code 1: the dependency 'a' publishes only a source "
        "distribution; sandboxverify built a wheel of it (a-1.0-cp311-cp311-linux_x86_64.whl, "
        f"with Python {running}, in the sandbox), but the installer does not take that wheel "
        "for Python 3.12.1: it holds compiled code for another Python"
    )
    assert failure.hint is not None and failure.hint.startswith(f"check with --python {running}")


def test_a_pure_wheel_the_installer_still_refuses_is_said_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not 'compiled for another Python': what the installer said stands."""
    state = _state(tmp_path)

    _builds(monkeypatch, "a-2.0-py3-none-any.whl")
    refused = Failure(
        "install_failed",
        "installing x with uv exited with code 1: the dependency 'a' has no wheel",
        python="3.11.7",
        details=UV_SAYS.format("a"),
    )
    failures, _ = install_building_dependencies(
        state, state.context, "3.11.7", lambda ctx: [refused]
    )
    [failure] = failures
    assert "sandboxverify built a-2.0-py3-none-any.whl of it (in the sandbox), and the " in (
        failure.message
    )
    assert "compiled code" not in failure.message
    assert failure.message.endswith(
        "building from source is disabled for all packages (i.e., with `--no-build`)"
    )
