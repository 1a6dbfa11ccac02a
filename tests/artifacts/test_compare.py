"""A given wheel and the wheel built from the given sdist: compared by contents, never bytes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sandboxverify.artifacts._artifacts import inspect_wheel
from sandboxverify.artifacts._compare import SDIST_LACKS, WHEEL_STALE, compare_wheels
from sandboxverify.report import Failure
from tests.helpers import make_wheel

INFO = "demo-1.0.dist-info"
FILES = {
    "demo/__init__.py": "",
    "demo/plugin.py": "def setup(api): ...\n",
    "demo/data/voices.json": "[]",
    "demo-1.0.data/scripts/demo-tool": "#!python\n",
    f"{INFO}/entry_points.txt": "[sandboxverify.plugins]\nvoices = demo.plugin:setup\n",
}
METADATA = (
    "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.9\n"
    "Requires-Dist: six>=1.16\nRequires-Dist: rich; extra == 'fancy'\nProvides-Extra: fancy\n"
)


def _compare(
    tmp_path: Path,
    given: Mapping[str, str] = FILES,
    built: Mapping[str, str] = FILES,
    *,
    given_metadata: str = METADATA,
    built_metadata: str = METADATA,
) -> tuple[Failure, ...]:
    (tmp_path / "given").mkdir()
    (tmp_path / "built").mkdir()
    ours = make_wheel(tmp_path / "given", files=given, metadata=given_metadata)
    theirs = make_wheel(tmp_path / "built", files=built, metadata=built_metadata)
    return compare_wheels(inspect_wheel(ours), inspect_wheel(theirs), "demo-1.0.tar.gz")


def test_wheels_that_hold_the_same_agree_whatever_their_bytes(tmp_path: Path) -> None:
    """Another member order, another backend version in WHEEL (so RECORD's hashes differ) and
    metadata spelled another way are no difference: what gets installed is the same."""
    reordered = dict(reversed(list(FILES.items())))
    reordered[f"{INFO}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: setuptools (80.9.0)\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    )
    reordered[f"{INFO}/top_level.txt"] = "demo\n"  # a backend's own bookkeeping
    respelled = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >= 3.9\n"
        'Requires-Dist: Six >= 1.16\nRequires-Dist: rich ; extra == "fancy"\n'
        "Provides-Extra: Fancy\nLicense-File: LICENSE\n"
    )

    assert _compare(tmp_path, built=reordered, built_metadata=respelled) == ()


def test_a_module_the_wheel_built_from_the_sdist_lacks_is_named(tmp_path: Path) -> None:
    lacking = {name: text for name, text in FILES.items() if name != "demo/plugin.py"}

    [failure] = _compare(tmp_path, built=lacking)

    assert failure.code == "artifact_mismatch"
    assert failure.python is None and failure.wheel is None
    assert failure.message == (
        "the given wheel demo-1.0-py3-none-any.whl and the wheel built from demo-1.0.tar.gz "
        "(demo-1.0-py3-none-any.whl) differ in files: only in the given wheel: demo/plugin.py"
    )
    assert failure.hint == SDIST_LACKS


def test_package_data_only_the_wheel_built_from_the_sdist_has_points_at_a_stale_wheel(
    tmp_path: Path,
) -> None:
    grown = {**FILES, "demo/data/whispers.json": "[]"}

    [failure] = _compare(tmp_path, built=grown)

    assert "only in the wheel built from the sdist: demo/data/whispers.json" in failure.message
    assert failure.hint == WHEEL_STALE


def test_each_metadata_field_that_differs_is_a_failure_of_its_own(tmp_path: Path) -> None:
    other_entry_points = {
        **FILES,
        f"{INFO}/entry_points.txt": "[sandboxverify.plugins]\nvoices = demo.plugin:setpu\n",
    }
    other_metadata = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.10\n"
        "Requires-Dist: six>=1.17\nRequires-Dist: rich; extra == 'fancy'\n"
        "Provides-Extra: fancy\n"
    )

    failures = _compare(tmp_path, built=other_entry_points, built_metadata=other_metadata)

    messages = {failure.message.split(" differ in ")[1] for failure in failures}
    assert messages == {
        "Requires-Dist: only in the given wheel: six>=1.16; "
        "only in the wheel built from the sdist: six>=1.17",
        "entry points: only in the given wheel: [sandboxverify.plugins] voices = "
        "demo.plugin:setup; only in the wheel built from the sdist: [sandboxverify.plugins] "
        "voices = demo.plugin:setpu",
        "Requires-Python: >=3.9 in the given wheel, >=3.10 in the wheel built from the sdist",
    }
    assert all(failure.code == "artifact_mismatch" for failure in failures)


def test_what_a_repair_tool_vendors_into_a_platform_wheel_is_no_difference(
    tmp_path: Path,
) -> None:
    """auditwheel and delvewheel add ``<name>.libs/``, delocate ``.dylibs/``: a released
    platform wheel has them, the wheel built here from the sdist never does."""
    repaired = {
        **FILES,
        "demo.libs/libz-5a1b2c3d.so.1.2.13": "",
        "demo/.dylibs/libz.1.dylib": "",
    }

    assert _compare(tmp_path, given=repaired) == ()
