"""Targets and static facts about artifacts."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sandboxverify._artifacts import (
    ArtifactProblem,
    ArtifactsTarget,
    ProjectTarget,
    classify,
    inspect_sdist,
    inspect_wheel,
    select_wheel,
)
from sandboxverify._errors import UsageError
from tests.helpers import fixture


def make_wheel(
    directory: Path,
    filename: str,
    *,
    name: str = "demo",
    version: str = "1.0",
    files: tuple[str, ...] = ("demo/__init__.py",),
    skip: str = "",
) -> Path:
    path = directory / filename
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        for member in files:
            archive.writestr(member, "")
        for part, text in (
            ("METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
            ("WHEEL", "Wheel-Version: 1.0\n"),
            ("RECORD", ""),
        ):
            if part != skip:
                archive.writestr(f"{info}/{part}", text)
    return path


def make_sdist(
    directory: Path, filename: str, *, pkg_info: str | None, with_pyproject: bool = True
) -> Path:
    path = directory / filename
    stem = filename[: -len(".tar.gz")]
    with tarfile.open(path, "w:gz") as archive:
        members = {}
        if pkg_info is not None:
            members[f"{stem}/PKG-INFO"] = pkg_info
        if with_pyproject:
            members[f"{stem}/pyproject.toml"] = "[project]\n"
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_classify_project_directory_and_default() -> None:
    assert classify([str(fixture("good-hatch"))]) == ProjectTarget(fixture("good-hatch"))


def test_classify_artifacts(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any.whl")
    sdist = make_sdist(tmp_path, "demo-1.0.tar.gz", pkg_info="Name: demo\nVersion: 1.0\n")
    assert classify([str(wheel), str(sdist)]) == ArtifactsTarget((wheel,), (sdist,))


def test_directory_and_artifacts_together_is_a_usage_error(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any.whl")
    with pytest.raises(UsageError, match="not both"):
        classify([str(fixture("good-hatch")), str(wheel)])


def test_wheel_facts(tmp_path: Path) -> None:
    wheel = inspect_wheel(
        make_wheel(
            tmp_path,
            "demo-1.0-py3-none-any.whl",
            files=("demo/__init__.py", "demo_helpers.py", "fast.cpython-312-x86_64-linux-gnu.so"),
        )
    )
    assert wheel.kind == "wheel"
    assert str(wheel.name) == "demo"
    assert str(wheel.version) == "1.0"
    assert wheel.top_level == {"demo", "demo_helpers", "fast"}
    assert len(wheel.sha256) == 64


@pytest.mark.parametrize(
    ("filename", "kwargs", "message"),
    [
        ("demo-1.0-py3-none-any.whl", {"skip": "RECORD"}, "RECORD is missing"),
        ("demo-1.0-py3-none-any.whl", {"version": "2.0"}, "the filename says demo 1.0"),
        ("demo.whl", {}, "not a valid wheel filename"),
    ],
)
def test_broken_wheels_are_artifact_problems(
    tmp_path: Path, filename: str, kwargs: dict[str, str], message: str
) -> None:
    path = make_wheel(tmp_path, filename, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ArtifactProblem, match=message):
        inspect_wheel(path)


def test_a_wheel_that_is_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_text("not a zip")
    with pytest.raises(ArtifactProblem, match="not a readable zip"):
        inspect_wheel(path)


def test_sdist_facts_and_problems(tmp_path: Path) -> None:
    good = make_sdist(tmp_path, "demo-1.0.tar.gz", pkg_info="Name: demo\nVersion: 1.0\n")
    assert inspect_sdist(good).kind == "sdist"
    (tmp_path / "a").mkdir()
    no_info = make_sdist(tmp_path / "a", "demo-1.0.tar.gz", pkg_info=None)
    with pytest.raises(ArtifactProblem, match="PKG-INFO is missing"):
        inspect_sdist(no_info)
    (tmp_path / "b").mkdir()
    unbuildable = make_sdist(
        tmp_path / "b",
        "demo-1.0.tar.gz",
        pkg_info="Name: demo\nVersion: 1.0\n",
        with_pyproject=False,
    )
    with pytest.raises(ArtifactProblem, match="cannot be built"):
        inspect_sdist(unbuildable)


def test_select_wheel_picks_the_one_for_the_interpreter(tmp_path: Path) -> None:
    # platform-independent tags, so the expected choice is the same on every machine
    names = [
        "demo-1.0-cp310-none-any.whl",
        "demo-1.0-cp312-none-any.whl",
        "demo-1.0-py3-none-any.whl",
    ]
    wheels = [inspect_wheel(make_wheel(tmp_path, name)) for name in names]

    def chosen(wheels: list[Any], version: tuple[int, int, int]) -> str | None:
        found = select_wheel(wheels, version)
        return found.path.name if found else None

    # the wheel for this exact Python beats the universal one, which serves the rest
    assert chosen(wheels, (3, 12, 1)) == "demo-1.0-cp312-none-any.whl"
    assert chosen(wheels, (3, 10, 4)) == "demo-1.0-cp310-none-any.whl"
    assert chosen(wheels, (3, 11, 0)) == "demo-1.0-py3-none-any.whl"
    assert chosen(wheels[:2], (3, 11, 0)) is None
