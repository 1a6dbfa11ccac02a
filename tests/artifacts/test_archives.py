"""Hostile artifacts: every member that could land outside the directory it is unpacked into,
every link or device, every bomb is refused as ``artifact_invalid`` naming it, before anything
reads it further or unpacks it, on every host Python, with or without tarfile's filters."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.artifacts import _archives
from sandboxverify.artifacts._archives import UnsafeArchive, extract_sdist, open_tar
from sandboxverify.artifacts._artifacts import ArtifactProblem, inspect_sdist, inspect_wheel
from tests.artifacts import hostile
from tests.artifacts.hostile import DIST_INFO, SDIST_ATTACKS, WHEEL_ATTACKS
from tests.helpers import ROOT, make_wheel, run_cli, tree_digest


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """Where every attack aims; it must stay as it is."""
    target = tmp_path / "outside"
    hostile.prepare_outside(target)
    before = hostile.outside_snapshot(target)
    yield target
    assert hostile.outside_snapshot(target) == before, "an attack wrote outside"


def refusal(path: Path) -> list[str]:
    with pytest.raises(ArtifactProblem) as caught:
        inspect_wheel(path) if path.name.endswith(".whl") else inspect_sdist(path)
    return [problem.message for problem in caught.value.problems]


@pytest.mark.parametrize("data_filter", [True, False], ids=["filter", "no-filter"])
@pytest.mark.parametrize("attack", SDIST_ATTACKS)
def test_an_unsafe_sdist_member_is_refused_and_nothing_is_unpacked(
    attack: str, data_filter: bool, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pythons before 3.12 (and 3.8.17, 3.9.17, 3.10.12, 3.11.4) have no extraction filters
    monkeypatch.setattr(_archives, "HAS_DATA_FILTER", data_filter and _archives.HAS_DATA_FILTER)
    sdist, named = hostile.write_sdist(tmp_path, attack, outside)

    with pytest.raises(UnsafeArchive) as caught:
        extract_sdist(sdist, tmp_path / "unpacked")

    assert any(repr(named) in reason for reason in caught.value.reasons), caught.value.reasons
    assert not (tmp_path / "unpacked").exists()
    assert any(m.startswith(f"demo-1.0.tar.gz: member {named!r} ") for m in refusal(sdist))


def _host_pythons() -> list[Path]:
    """The newest patch release of every supported minor version under pyenv (3.9 to 3.13):
    tarfile's filters arrived in security releases, and its header reads differ by version."""
    found = []
    for minor in range(9, 14):
        found += sorted(
            Path.home().glob(f".pyenv/versions/3.{minor}.*/bin/python"),
            key=lambda path: int(path.parent.parent.name.split(".")[2].split("-")[0] or 0),
        )[-1:]
    return found


@pytest.mark.parametrize("python", _host_pythons(), ids=lambda p: p.parent.parent.name)
def test_the_safe_extraction_refuses_every_attack_on_other_host_pythons(
    python: Path, tmp_path: Path
) -> None:
    output = tmp_path / "results.json"
    completed = subprocess.run(
        [str(python), "-I", str(Path(hostile.__file__)), str(ROOT), str(output)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    results: dict[str, dict[str, Any]] = json.loads(output.read_text())
    sdists = {key.split()[1] for key in results if key.startswith("sdist ") and "filter=" in key}
    wheels = {key.split()[1] for key in results if key.startswith("wheel ") and "bomb" not in key}
    assert (sdists, wheels) == (set(SDIST_ATTACKS), set(WHEEL_ATTACKS))
    for key, result in results.items():
        assert result["refused"], key
        if "bomb" in key:
            assert result["peak"] < 5 * 1024 * 1024, key
            continue
        assert result["named"], key
        if key.startswith("sdist "):
            assert result["outside_unchanged"], key
            assert result["unpacked"] == [], key


def test_every_supported_host_python_is_tried() -> None:
    """The CI machines carry 3.9 to 3.13 under pyenv; without them the test above is empty."""
    assert [p.parent.parent.name.rsplit(".", 1)[0] for p in _host_pythons()] == [
        "3.9",
        "3.10",
        "3.11",
        "3.12",
        "3.13",
    ]


def test_symlinks_and_hardlinks_that_stay_inside_are_unpacked(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, kind, link in (
            ("demo-1.0/PKG-INFO", tarfile.REGTYPE, ""),
            ("demo-1.0/docs/PKG-INFO", tarfile.SYMTYPE, "../PKG-INFO"),
            ("demo-1.0/copy", tarfile.LNKTYPE, "demo-1.0/PKG-INFO"),
        ):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            info.size = len(hostile.PKG_INFO) if kind == tarfile.REGTYPE else 0
            archive.addfile(info, io.BytesIO(hostile.PKG_INFO))

    extract_sdist(path, tmp_path / "unpacked")

    tree = tmp_path / "unpacked" / "demo-1.0"
    assert (tree / "docs" / "PKG-INFO").read_bytes() == hostile.PKG_INFO
    assert (tree / "copy").read_bytes() == hostile.PKG_INFO


def test_a_pax_header_bomb_is_refused_before_tarfile_reads_it(tmp_path: Path) -> None:
    sdist = hostile.write_pax_bomb(tmp_path)  # 20 MB of header in a 20 KB sdist
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeArchive, match="pax or GNU long-name header"), open_tar(sdist):
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024
    assert "header bomb" in refusal(sdist)[0]


@pytest.mark.parametrize("attack", WHEEL_ATTACKS)
def test_an_unsafe_wheel_member_is_refused(attack: str, tmp_path: Path) -> None:
    entry, name = hostile.wheel_entry(attack, tmp_path / "outside")
    wheel = hostile.write_wheel(tmp_path, [entry])

    [message] = refusal(wheel)
    assert message.startswith(f"demo-1.0-py3-none-any.whl: member {name!r} ")
    assert "outside the directory" in message or message.endswith(
        ("is a symbolic link", "is a device file", "is a pipe")
    )


@pytest.mark.parametrize("member", ["METADATA", "RECORD", "entry_points.txt"])
def test_a_metadata_bomb_is_refused_from_its_header_without_reading_it(
    member: str, tmp_path: Path
) -> None:
    wheel = hostile.write_wheel(tmp_path, [hostile.bomb(f"{DIST_INFO}/{member}", 512)])
    assert wheel.stat().st_size < 600 * 1024  # 512 MB once inflated

    tracemalloc.start()
    try:
        messages = refusal(wheel)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert (
        f"demo-1.0-py3-none-any.whl: {DIST_INFO}/{member} takes 512 MB uncompressed, more "
        "than the 10 MB allowed for a metadata file"
    ) in messages
    assert peak < 5 * 1024 * 1024


def test_a_pkg_info_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0.zip"
    hostile.write_zip(path, [hostile.bomb("demo-1.0/PKG-INFO", 64)])
    assert refusal(path) == [
        "demo-1.0.zip: demo-1.0/PKG-INFO takes 64 MB uncompressed, more than the 10 MB allowed "
        "for a metadata file"
    ]


def test_archives_past_the_size_and_member_limits_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_archives, "MAX_TOTAL_BYTES", 3 << 20)
    bombed = hostile.write_wheel(tmp_path, [hostile.bomb("demo/data.bin", 4)])
    [message] = refusal(bombed)
    assert "take 4 MB uncompressed, more than the 3 MB allowed (a zip bomb?)" in message

    sdist = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for index in range(4):
            info = tarfile.TarInfo(f"demo-1.0/zeros{index}")
            info.size = 1 << 20
            archive.addfile(info, io.BytesIO(bytes(info.size)))
    assert "more than the 3 MB allowed uncompressed" in refusal(sdist)[0]

    monkeypatch.setattr(_archives, "MAX_MEMBERS", 2)
    assert "more than the 2 members allowed" in refusal(sdist)[0]
    assert "5 members, more than the 2 allowed" in refusal(bombed)[0]


def test_a_pkg_info_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        big = tarfile.TarInfo("demo-1.0/big")
        big.size = 11 << 20
        archive.addfile(big, io.BytesIO(bytes(big.size)))
        link = tarfile.TarInfo("demo-1.0/PKG-INFO")
        link.type, link.linkname = tarfile.SYMTYPE, "big"
        archive.addfile(link)
    assert refusal(path) == [
        "demo-1.0.tar.gz: member 'demo-1.0/PKG-INFO' is not a regular file",
    ]


def test_a_zip_sdist_with_a_link_or_a_climbing_member_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo-1.0/PKG-INFO", hostile.PKG_INFO)
        link = zipfile.ZipInfo("demo-1.0/link")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc")
        archive.writestr("demo-1.0/../../evil", "pwned")
    messages = refusal(path)
    assert [m.split(": ", 1)[1][:30] for m in messages] == [
        "member 'demo-1.0/link' is a sy",
        "member 'demo-1.0/../../evil' h",
    ]
    with pytest.raises(UnsafeArchive):
        extract_sdist(path, tmp_path / "unpacked")
    assert not (tmp_path / "unpacked").exists()


# --- through the command line ------------------------------------------------------------


def check_refuses(artifact: Path, tmp_path: Path, installer: str, *fragments: str) -> None:
    """``sandboxverify check ARTIFACT``: exit 1, only artifact_invalid, no traceback, and the
    directory the attacks aim at (and everything else under tmp_path) untouched."""
    report = tmp_path / "report" / "check.json"
    report.parent.mkdir()
    before = tree_digest(tmp_path)
    result = run_cli(
        ["check", str(artifact), "--installer", installer, "--json", str(report)],
        cwd=tmp_path,
        timeout=120,
    )
    assert result.code == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    document = json.loads(report.read_text())
    report.unlink()
    assert tree_digest(tmp_path) == before
    failures = document["failures"]
    assert failures and {f["code"] for f in failures} == {"artifact_invalid"}
    assert document["runs"] == [] or all(not r["plugins"] for r in document["runs"])
    messages = "\n".join(f["message"] for f in failures)
    for fragment in fragments:
        assert fragment in messages
    assert all(f["hint"].startswith("nothing was unpacked or installed") for f in failures)


INSTALLERS = pytest.mark.parametrize("installer", ["uv", "pip"])


@INSTALLERS
@pytest.mark.parametrize("attack", SDIST_ATTACKS)
def test_check_refuses_a_hostile_sdist(
    attack: str, installer: str, tmp_path: Path, outside: Path
) -> None:
    sdist, named = hostile.write_sdist(tmp_path, attack, outside)
    check_refuses(sdist, tmp_path, installer, f"demo-1.0.tar.gz: member {named!r}")


@INSTALLERS
@pytest.mark.parametrize("attack", WHEEL_ATTACKS)
def test_check_refuses_a_hostile_wheel(
    attack: str, installer: str, tmp_path: Path, outside: Path
) -> None:
    entry, name = hostile.wheel_entry(attack, outside)
    wheel = hostile.write_wheel(tmp_path, [entry])
    check_refuses(wheel, tmp_path, installer, f"member {name!r}")


@INSTALLERS
def test_a_hostile_sdist_next_to_a_good_wheel_is_refused(
    installer: str, tmp_path: Path, outside: Path
) -> None:
    """A release is its sdist and its wheels: a good wheel does not excuse a hostile sdist."""
    sdist, named = hostile.write_sdist(tmp_path, "symlink-chain", outside)
    wheel = make_wheel(tmp_path)  # with a RECORD that lists every file
    before = tree_digest(tmp_path)

    result = run_cli(
        ["check", str(sdist), str(wheel), "--installer", installer, "--json", "-"], cwd=tmp_path
    )

    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    [refused] = [f for f in result.json()["failures"] if f["code"] == "artifact_invalid"]
    assert refused["message"].startswith(f"demo-1.0.tar.gz: member {named!r}")
    assert tree_digest(tmp_path) == before


@INSTALLERS
def test_check_refuses_a_metadata_bomb(installer: str, tmp_path: Path) -> None:
    wheel = hostile.write_wheel(tmp_path, [hostile.bomb(f"{DIST_INFO}/METADATA", 512)])
    check_refuses(wheel, tmp_path, installer, "METADATA takes 512 MB uncompressed")


@INSTALLERS
def test_check_refuses_a_pax_header_bomb(installer: str, tmp_path: Path) -> None:
    check_refuses(hostile.write_pax_bomb(tmp_path), tmp_path, installer, "pax or GNU long-name")
