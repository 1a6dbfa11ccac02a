"""Targets and static facts about artifacts."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.artifacts._artifacts import (
    ArtifactProblem,
    ArtifactsTarget,
    ProjectTarget,
    classify,
    inspect_sdist,
    inspect_wheel,
    select_wheel,
)
from tests.helpers import b64_sha256, fixture, make_wheel


def problems_of(path: Path) -> list[str]:
    """Every problem ``inspect_wheel`` finds, as messages (none: the wheel is valid)."""
    try:
        inspect_wheel(path)
    except ArtifactProblem as exc:
        problems = exc.problems
    else:
        return []
    assert all(problem.hint for problem in problems)
    return [problem.message for problem in problems]


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
            members[f"{stem}/pyproject.toml"] = '[project]\nname = "demo"\ndynamic = ["version"]\n'
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


PKG_INFO = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.9\n"


def test_classify_project_directory_and_default() -> None:
    assert classify([str(fixture("good-hatch"))]) == ProjectTarget(fixture("good-hatch"))


def test_classify_artifacts(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any.whl")
    sdist = make_sdist(tmp_path, "demo-1.0.tar.gz", pkg_info=PKG_INFO)
    assert classify([str(wheel), str(sdist)]) == ArtifactsTarget((wheel,), (sdist,))


def test_directory_and_artifacts_together_is_a_usage_error(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any.whl")
    with pytest.raises(UsageError, match="not both"):
        classify([str(fixture("good-hatch")), str(wheel)])


def test_wheel_facts(tmp_path: Path) -> None:
    wheel = inspect_wheel(
        make_wheel(
            tmp_path,
            files=(
                "demo/__init__.py",
                "demo_helpers.py",
                "fast.cpython-312-x86_64-linux-gnu.so",
                "demo-1.0.data/purelib/extra/__init__.py",
                "demo-1.0.data/scripts/demo-tool",
            ),
            metadata="Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.9\n",
        )
    )
    assert wheel.kind == "wheel"
    assert str(wheel.name) == "demo"
    assert str(wheel.version) == "1.0"
    # purelib installs into site-packages; scripts do not
    assert wheel.top_level == {"demo", "demo_helpers", "fast", "extra"}
    assert wheel.requires_python == ">=3.9"
    assert "demo-1.0.data/scripts/demo-tool" in wheel.files
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
    path = make_wheel(tmp_path, filename, **kwargs)
    with pytest.raises(ArtifactProblem, match=message):
        inspect_wheel(path)


def test_a_wheel_that_is_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_text("not a zip")
    with pytest.raises(ArtifactProblem, match="not a readable zip"):
        inspect_wheel(path)


def test_sdist_facts_and_problems(tmp_path: Path) -> None:
    good = make_sdist(tmp_path, "demo-1.0.tar.gz", pkg_info=PKG_INFO)
    assert inspect_sdist(good).kind == "sdist"
    (tmp_path / "a").mkdir()
    no_info = make_sdist(tmp_path / "a", "demo-1.0.tar.gz", pkg_info=None)
    with pytest.raises(ArtifactProblem, match="PKG-INFO is missing"):
        inspect_sdist(no_info)
    (tmp_path / "b").mkdir()
    unbuildable = make_sdist(
        tmp_path / "b",
        "demo-1.0.tar.gz",
        pkg_info=PKG_INFO,
        with_pyproject=False,
    )
    with pytest.raises(ArtifactProblem, match="cannot be built"):
        inspect_sdist(unbuildable)


def test_sdist_requires_python_and_invalid_pkg_info(tmp_path: Path) -> None:
    good = make_sdist(tmp_path, "demo-1.0.tar.gz", pkg_info=PKG_INFO)
    assert inspect_sdist(good).requires_python == ">=3.9"
    (tmp_path / "bad").mkdir()
    bad = make_sdist(
        tmp_path / "bad", "demo-1.0.tar.gz", pkg_info=PKG_INFO + "Requires-Dist: six >>> 1\n"
    )
    with pytest.raises(ArtifactProblem) as info:
        inspect_sdist(bad)
    [problem] = info.value.problems
    assert problem.message.startswith("demo-1.0.tar.gz: PKG-INFO is invalid: 'six >>> 1'")
    assert "dependencies" in problem.hint


def test_every_metadata_error_is_its_own_problem_with_the_cause(tmp_path: Path) -> None:
    metadata = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
        "Requires-Python: >=3.x\nRequires-Dist: six >>> 1\nX-Made-Up: yes\n"
    )
    found = problems_of(make_wheel(tmp_path, metadata=metadata))

    assert sorted(found) == [
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA is invalid: "
        "'>=3.x' is invalid for 'requires-python' (Invalid specifier: '>=3.x')",
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA is invalid: "
        "'six >>> 1' is invalid for 'requires-dist' "
        "(Expected semicolon (after name with no version specifier) or end)",
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA is invalid: "
        "unrecognized field: 'x-made-up'",
    ]


def test_metadata_hints_name_the_pyproject_setting(tmp_path: Path) -> None:
    metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.x\n"
    with pytest.raises(ArtifactProblem) as info:
        inspect_wheel(make_wheel(tmp_path, metadata=metadata))
    [problem] = info.value.problems
    assert problem.hint.startswith("fix requires-python in pyproject.toml's [project] table")


def test_a_missing_metadata_version_is_named(tmp_path: Path) -> None:
    found = problems_of(make_wheel(tmp_path, metadata="Name: demo\nVersion: 1.0\n"))
    assert found == [
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA has no Metadata-Version"
    ]


@pytest.mark.parametrize(
    "metadata",
    [
        # old setuptools wrote 'UNKNOWN' for a missing value
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nDescription-Content-Type: UNKNOWN\n",
        # setuptools < 77 writes License-File under 2.1 (six, pytz on PyPI today): a warning
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nLicense-File: LICENSE\n",
        # CRLF line ends and a body
        "Metadata-Version: 2.1\r\nName: demo\r\nVersion: 1.0\r\n\r\nThe description.\r\n",
        "Metadata-Version: 1.0\nName: demo\nVersion: 1.0\n",
    ],
)
def test_metadata_real_releases_carry_is_accepted(tmp_path: Path, metadata: str) -> None:
    assert problems_of(make_wheel(tmp_path, metadata=metadata)) == []


@pytest.mark.parametrize("declared", ["2.0", "2.6", "2.99"])
def test_a_metadata_version_pypi_refuses_fails(tmp_path: Path, declared: str) -> None:
    # bdist_wheel wrote 2.0 for years, and packaging >= 26.3 reads 2.6: PyPI takes neither
    found = problems_of(
        make_wheel(tmp_path, metadata=f"Metadata-Version: {declared}\nName: demo\nVersion: 1.0\n")
    )
    assert len(found) == 1
    assert f"declares Metadata-Version {declared}, which PyPI does not accept" in found[0]


def test_a_field_newer_than_its_metadata_version_fails(tmp_path: Path) -> None:
    # hatchling 1.21 wrote License-Expression under 2.1 (userpath 1.9.2): twine and PyPI refuse it
    metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nLicense-Expression: MIT\n"
    found = problems_of(make_wheel(tmp_path, metadata=metadata))
    assert len(found) == 1
    assert "'license-expression', which Metadata-Version 2.1 does not have" in found[0]


def test_an_unknown_major_metadata_version_is_a_problem(tmp_path: Path) -> None:
    found = problems_of(
        make_wheel(tmp_path, metadata="Metadata-Version: 3.0\nName: demo\nVersion: 1.0\n")
    )
    assert found == [
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA is invalid: "
        "'3.0' is not a valid metadata version"
    ]


def test_record_must_list_every_file_with_its_hash_and_size(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        files={"demo/__init__.py": "", "demo/core.py": "x = 1\n", "demo/extra.py": "y = 2\n"},
        unrecorded=("demo/extra.py",),
        tampered=("demo/core.py",),
        record_rows=(
            "demo/gone.py,sha256=AAAA,3",
            "demo/old.py,md5=1B2M2Y8AsgTpgAmY7PhCfg,0",
            "demo/bad_line.py",
        ),
    )
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("demo/old.py", "")
    found = problems_of(wheel)

    record = "demo-1.0.dist-info/RECORD"
    assert found == [
        f"demo-1.0-py3-none-any.whl: {record} has 1 malformed line(s) (not path,hash,size): line 7",
        f"demo-1.0-py3-none-any.whl: 1 file(s) in the archive are not listed in {record}: "
        "demo/extra.py",
        f"demo-1.0-py3-none-any.whl: {record} lists 1 file(s) the archive does not contain: "
        "demo/gone.py",
        f"demo-1.0-py3-none-any.whl: 1 file(s) do not match the sha256 hash or size {record} "
        "gives: demo/core.py",
        f"demo-1.0-py3-none-any.whl: {record} gives no sha256 (or stronger) hash for 1 "
        "file(s): demo/old.py (md5=1B2M2Y8AsgTpgAmY7PhCfg)",
    ]


def test_a_size_that_differs_from_record_is_a_problem(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        unrecorded=("demo/__init__.py",),
        record_rows=(f"demo/__init__.py,sha256={b64_sha256(b'')},7",),
    )
    [problem] = problems_of(wheel)
    assert "do not match the sha256 hash or size" in problem
    assert problem.endswith(": demo/__init__.py")


def test_record_signatures_and_directory_entries_need_no_record_line(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("demo-1.0.dist-info/RECORD.jws", "{}")
        archive.writestr("demo/", "")
    assert problems_of(wheel) == []


def test_many_unlisted_files_are_one_problem_listing_a_few(tmp_path: Path) -> None:
    names = [f"demo/m{i}.py" for i in range(8)]
    [problem] = problems_of(make_wheel(tmp_path, files=names, unrecorded=names))
    assert problem.endswith(
        "8 file(s) in the archive are not listed in demo-1.0.dist-info/RECORD: "
        "demo/m0.py, demo/m1.py, demo/m2.py, demo/m3.py, demo/m4.py (and 3 more)"
    )


def test_an_empty_wheel_is_a_problem(tmp_path: Path) -> None:
    assert problems_of(make_wheel(tmp_path, files=())) == [
        "demo-1.0-py3-none-any.whl: the wheel is empty: it ships nothing outside demo-1.0.dist-info"
    ]


def test_a_wheel_of_only_data_and_scripts_is_a_problem(tmp_path: Path) -> None:
    files = ("demo-1.0.data/scripts/demo", "demo-1.0.data/data/share/demo.txt", "demo/README")
    assert problems_of(make_wheel(tmp_path, files=files)) == [
        "demo-1.0-py3-none-any.whl: the wheel ships no importable module or package, only "
        "demo-1.0.data/scripts/demo, demo-1.0.data/data/share/demo.txt, demo/README"
    ]


@pytest.mark.parametrize(
    "files",
    [
        ("demo-stubs/__init__.pyi",),  # a stubs-only distribution
        ("demo-1.0.data/platlib/demo/__init__.py",),
        ("demo.cp311-win_amd64.pyd",),
    ],
)
def test_code_in_any_importable_form_counts(tmp_path: Path, files: tuple[str, ...]) -> None:
    assert problems_of(make_wheel(tmp_path, files=files)) == []


@pytest.mark.parametrize("files", [("tests/__init__.py", "tests/test_demo.py"), ("test.py",)])
def test_a_top_level_tests_package_or_module_is_a_warning(
    tmp_path: Path, files: tuple[str, ...]
) -> None:
    """Hygiene, not breakage: installers take the wheel and no user's import reaches it, so it
    fails nothing unless the project promotes the warning."""
    wheel = make_wheel(tmp_path, files=("demo/__init__.py", *files))
    [problem] = [w for w in inspect_wheel(wheel).warnings if w.rule == "wheel-tests-toplevel"]
    clash = files[0].split("/")[0].removesuffix(".py")
    assert problem.rule == "wheel-tests-toplevel"
    assert problem.severity == "warning"
    assert problem.message == (
        f"demo-1.0-py3-none-any.whl: the wheel ships a top-level {clash!r} package or module: "
        f"it would be installed as site-packages/{clash} and clash with every other project "
        "that does this"
    )
    assert problem.hint.startswith("exclude it from the wheel")
    # inside the project's own package it is fine
    inside = make_wheel(tmp_path, files=("demo/__init__.py", "demo/tests/t.py"))
    assert all(w.rule != "wheel-tests-toplevel" for w in inspect_wheel(inside).warnings)


def test_every_problem_of_a_wheel_is_reported_at_once(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        files=("demo/__init__.py", "tests/__init__.py"),
        unrecorded=("tests/__init__.py",),
        metadata="Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: 3\n",
    )
    with pytest.raises(ArtifactProblem) as info:
        inspect_wheel(wheel)
    messages = [problem.message for problem in info.value.problems]
    assert "'requires-python'" in messages[0]
    assert "not listed in demo-1.0.dist-info/RECORD: tests/__init__.py" in messages[1]
    assert [problem.severity for problem in info.value.problems][:2] == ["error", "error"]
    assert info.value.artifact is None  # a RECORD that lies: nothing is installed
    info_dir = "demo-1.0.dist-info"
    assert info.value.files == (
        "demo/__init__.py",
        "tests/__init__.py",
        *(f"{info_dir}/{part}" for part in ("METADATA", "WHEEL", "RECORD")),
    )


def test_duplicate_members_and_several_dist_info_directories(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    with zipfile.ZipFile(wheel, "a") as archive, pytest.warns(UserWarning, match="Duplicate"):
        archive.writestr("demo/__init__.py", "shadow = True\n")
    assert any("demo/__init__.py appear(s) more than once" in p for p in problems_of(wheel))
    (tmp_path / "two").mkdir()
    two = make_wheel(tmp_path / "two", files=("demo/__init__.py", "other-1.0.dist-info/METADATA"))
    assert problems_of(two) == [
        "demo-1.0-py3-none-any.whl: expected one .dist-info directory, found 2 "
        "(demo-1.0.dist-info, other-1.0.dist-info)"
    ]


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
