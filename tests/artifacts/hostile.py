"""Hostile artifacts, written by hand as an attacker would write them.

Every escape aims at one directory, ``outside``: absolute names point into it, and relative
ones climb with more ``..`` than any unpack directory is deep, so whatever unpacks them from
wherever would write there. A test then only has to find ``outside`` unchanged.

Standard library only, and nothing newer than Python 3.9: :func:`main` runs these attacks
against the safe extraction on every host Python (``python -I hostile.py ROOT OUTPUT``).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import importlib.util
import io
import json
import os
import stat
import struct
import sys
import tarfile
import tempfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, NamedTuple

SDIST_ROOT = "demo-1.0"
DIST_INFO = "demo-1.0.dist-info"
#: far more '..' than any directory an artifact is unpacked into is deep
CLIMB = "../" * 20
PKG_INFO = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"


class Member(NamedTuple):
    name: str
    kind: bytes = tarfile.REGTYPE
    link: str = ""
    data: bytes = b"pwned\n"


def _sdist_cases(outside: str) -> dict[str, tuple[list[Member], str]]:
    """Each attack: its members (after a valid PKG-INFO and pyproject.toml), and the member the
    refusal must name."""
    climb = CLIMB + outside.lstrip("/")
    root = SDIST_ROOT
    return {
        "dotdot": ([Member(f"{root}/{climb}/dotdot")], f"{root}/{climb}/dotdot"),
        "absolute": ([Member(f"{outside}/absolute")], f"{outside}/absolute"),
        "symlink-absolute": (
            [
                Member(f"{root}/link", tarfile.SYMTYPE, outside),
                Member(f"{root}/link/through-absolute-link"),
            ],
            f"{root}/link",
        ),
        "symlink-up": (
            [
                Member(f"{root}/up", tarfile.SYMTYPE, climb),
                Member(f"{root}/up/through-relative-link"),
            ],
            f"{root}/up",
        ),
        # each link alone stays inside when read lexically; followed, 't' is the parent of the
        # unpack directory
        "symlink-chain": (
            [
                Member(f"{root}/s", tarfile.SYMTYPE, "."),
                Member(f"{root}/t", tarfile.SYMTYPE, "s/../.."),
            ],
            f"{root}/t",
        ),
        "hardlink-absolute": (
            [
                Member(f"{root}/hard", tarfile.LNKTYPE, f"{outside}/target"),
                Member(f"{root}/hard", data=b"overwritten through a hard link\n"),
            ],
            f"{root}/hard",
        ),
        "hardlink-up": (
            [Member(f"{root}/hard", tarfile.LNKTYPE, f"{climb}/target")],
            f"{root}/hard",
        ),
        "device": ([Member(f"{root}/null", tarfile.CHRTYPE)], f"{root}/null"),
        "fifo": ([Member(f"{root}/fifo", tarfile.FIFOTYPE)], f"{root}/fifo"),
    }


SDIST_ATTACKS = tuple(_sdist_cases("/x"))


def write_sdist(directory: Path, attack: str, outside: Path) -> tuple[Path, str]:
    """An otherwise valid sdist carrying one attack; and the member its refusal must name."""
    members, named = _sdist_cases(str(outside))[attack]
    path = directory / f"{SDIST_ROOT}.tar.gz"
    valid = [
        Member(f"{SDIST_ROOT}/PKG-INFO", data=PKG_INFO),
        Member(f"{SDIST_ROOT}/pyproject.toml", data=b"[project]\nname = 'demo'\n"),
    ]
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as archive:
        for member in [*valid, *members]:
            info = tarfile.TarInfo(member.name)
            info.type = member.kind
            info.linkname = member.link
            info.mode = 0o644
            if member.kind == tarfile.CHRTYPE:
                info.devmajor, info.devminor = 1, 3
            if member.kind == tarfile.REGTYPE:
                info.size = len(member.data)
                archive.addfile(info, io.BytesIO(member.data))
            else:
                archive.addfile(info)
    return path, named


def write_pax_bomb(directory: Path, size: int = 20 * 1024 * 1024) -> Path:
    """A small sdist whose first tar header is a pax record of ``size`` bytes (tarfile would
    read it whole into memory)."""
    payload = b" comment=" + b"a" * size + b"\n"
    length = len(payload)
    while len(str(length)) + len(payload) != length:
        length = len(str(length)) + len(payload)
    record = str(length).encode() + payload
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = len(record)
    info = tarfile.TarInfo(f"{SDIST_ROOT}/PKG-INFO")
    info.size = len(PKG_INFO)
    path = directory / f"{SDIST_ROOT}.tar.gz"
    with gzip.open(path, "wb", compresslevel=1) as stream:
        for block in (header.tobuf(format=tarfile.USTAR_FORMAT), record):
            stream.write(block + b"\0" * (-len(block) % 512))
        stream.write(info.tobuf(format=tarfile.USTAR_FORMAT))
        stream.write(PKG_INFO + b"\0" * (-len(PKG_INFO) % 512) + b"\0" * 1024)
    return path


def wheel_attacks(outside: str) -> dict[str, str]:
    """Each attack: the member name a wheel carries (the refusal must name it)."""
    climb = CLIMB + outside.lstrip("/")
    return {
        "dotdot": "../evil.py",
        "absolute": f"{outside}/evil.py",
        "data-scripts": f"demo-1.0.data/scripts/{climb}/evil",
        "data-data": f"demo-1.0.data/data/../../{climb}/evil",
        "data-purelib": "demo-1.0.data/purelib/../../../evil.py",
        "backslash": "demo\\..\\..\\evil.py",
        "drive": "C:/evil.py",
    }


#: members that are not files: (name, Unix file type, what the member holds: a link's target)
def _wheel_specials(outside: str) -> dict[str, tuple[str, int, str]]:
    return {
        "symlink-absolute": ("demo/link", stat.S_IFLNK, f"{outside}/target"),
        "symlink-up": ("demo/up", stat.S_IFLNK, f"../{CLIMB}{outside.lstrip('/')}"),
        "data-symlink": ("demo-1.0.data/scripts/evil", stat.S_IFLNK, f"{outside}/target"),
        "data-purelib-symlink": ("demo-1.0.data/purelib/demo/x", stat.S_IFLNK, "/etc/passwd"),
        "device": ("demo/null", stat.S_IFCHR, ""),
        "fifo": ("demo-1.0.data/data/fifo", stat.S_IFIFO, ""),
    }


WHEEL_ATTACKS = tuple(wheel_attacks("/x")) + tuple(_wheel_specials("/x"))


class _Entry(NamedTuple):
    name: str
    method: int
    payload: bytes
    crc: int
    size: int
    mode: int = stat.S_IFREG | 0o644


def wheel_entry(attack: str, outside: Path) -> tuple[_Entry, str]:
    """The hostile member of a wheel attack, and the member name its refusal must name."""
    names = wheel_attacks(str(outside))
    if attack in names:
        return stored(names[attack], b"pwned\n"), names[attack]
    name, kind, target = _wheel_specials(str(outside))[attack]
    data = target.encode()
    return _Entry(name, zipfile.ZIP_STORED, data, zlib.crc32(data), len(data), kind | 0o777), name


def write_zip(path: Path, entries: list[_Entry]) -> Path:
    """A zip archive written byte by byte: members may be deflated ahead of time (a bomb)."""
    body = bytearray()
    directory = bytearray()
    for entry in entries:
        name = entry.name.encode()
        offset = len(body)
        body += struct.pack(
            "<4s2B4HL2L2H",
            b"PK\003\004",
            20,
            0,
            0,
            entry.method,
            0,
            0x21,
            entry.crc,
            len(entry.payload),
            entry.size,
            len(name),
            0,
        )
        body += name + entry.payload
        directory += struct.pack(
            "<4s4B4HL2L5H2L",
            b"PK\001\002",
            20,
            3,
            20,
            0,
            0,
            entry.method,
            0,
            0x21,
            entry.crc,
            len(entry.payload),
            entry.size,
            len(name),
            0,
            0,
            0,
            0,
            entry.mode << 16,
            offset,
        )
        directory += name
    end = struct.pack(
        "<4s4H2LH",
        b"PK\005\006",
        0,
        0,
        len(entries),
        len(entries),
        len(directory),
        len(body),
        0,
    )
    path.write_bytes(bytes(body + directory + end))
    return path


def stored(name: str, data: bytes) -> _Entry:
    return _Entry(name, zipfile.ZIP_STORED, data, zlib.crc32(data), len(data))


def bomb(name: str, megabytes: int) -> _Entry:
    """``megabytes`` MB of 'a' deflated to about 1 KB per MB, without compressing them all:
    after a full flush, deflate writes the same bytes for the same input."""
    chunk = b"a" * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = compressor.compress(chunk) + compressor.flush()
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(chunk, crc)
    return _Entry(name, zipfile.ZIP_DEFLATED, block * (megabytes - 1) + last, crc, megabytes << 20)


def write_wheel(directory: Path, extra: list[_Entry]) -> Path:
    """``demo-1.0-py3-none-any.whl``, valid but for ``extra`` members (RECORD omits them)."""
    files = {
        "demo/__init__.py": b"",
        f"{DIST_INFO}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    names = {entry.name for entry in extra}
    if f"{DIST_INFO}/METADATA" not in names:
        files[f"{DIST_INFO}/METADATA"] = PKG_INFO
    entries = [stored(name, data) for name, data in files.items()] + extra
    if f"{DIST_INFO}/RECORD" not in names:
        entries.append(stored(f"{DIST_INFO}/RECORD", b""))
    return write_zip(directory / "demo-1.0-py3-none-any.whl", entries)


def outside_snapshot(outside: Path) -> dict[str, str]:
    """What ``outside`` holds (an attack that worked changes it)."""
    found: dict[str, str] = {}
    for path in sorted(outside.rglob("*")):
        relative = path.relative_to(outside).as_posix()
        found[relative] = "dir" if path.is_dir() else path.read_bytes().decode("latin-1")
    return found


def prepare_outside(outside: Path) -> None:
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "target").write_bytes(b"untouched\n")


def _refusal(attempt: Callable[[], object], unsafe: type[Exception]) -> list[str]:
    try:
        attempt()
    except unsafe as exc:
        return list(exc.reasons)  # type: ignore[attr-defined]
    return []


def _peak(attempt: Callable[[], object]) -> int:
    """The most memory ``attempt`` took at once, in bytes."""
    tracemalloc.start()
    try:
        with contextlib.suppress(Exception):  # only the memory matters here
            attempt()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def _stdlib_module(path: Path) -> Any:
    """The module at ``path`` on its own, from the tree under test: it is stdlib-only, which this
    interpreter (with nothing else installed) proves; its room's face needs the host side's
    dependencies."""
    spec = importlib.util.spec_from_file_location("sandboxverify_archives", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def main() -> None:
    """Every attack against this Python's tarfile and zipfile: each sdist through
    ``extract_sdist`` with and without tarfile's ``data`` filter, each wheel through
    ``zip_problems``, and the bombs with the memory they took; writes the outcomes as JSON."""
    root, output = sys.argv[1], Path(sys.argv[2])
    _archives = _stdlib_module(Path(root) / "sandboxverify" / "artifacts" / "_archives.py")

    unsafe = _archives.UnsafeArchive
    results: dict[str, dict[str, object]] = {}
    for data_filter in sorted({False, _archives.HAS_DATA_FILTER}):
        _archives.HAS_DATA_FILTER = data_filter
        for attack in SDIST_ATTACKS:
            with tempfile.TemporaryDirectory() as temporary:
                tmp = Path(temporary)
                outside = tmp / "outside"
                prepare_outside(outside)
                before = outside_snapshot(outside)
                sdist, named = write_sdist(tmp, attack, outside)
                unpack = functools.partial(
                    _archives.extract_sdist, sdist, tmp / "work" / "unpacked"
                )
                refused = _refusal(unpack, unsafe)
                results[f"sdist {attack} filter={data_filter}"] = {
                    "refused": refused,
                    "named": any(repr(named) in reason for reason in refused),
                    "outside_unchanged": outside_snapshot(outside) == before,
                    "unpacked": sorted(os.path.relpath(p, tmp) for p in (tmp / "work").rglob("*")),
                }
    with tempfile.TemporaryDirectory() as temporary:
        tmp = Path(temporary)
        for attack in WHEEL_ATTACKS:
            entry, named = wheel_entry(attack, tmp / "outside")
            with zipfile.ZipFile(write_wheel(tmp, [entry])) as archive:
                refused = _archives.zip_problems(archive)
            results[f"wheel {attack}"] = {
                "refused": refused,
                "named": any(repr(named) in reason for reason in refused),
            }
        with zipfile.ZipFile(write_wheel(tmp, [bomb(f"{DIST_INFO}/METADATA", 512)])) as archive:
            member = f"{DIST_INFO}/METADATA"
            results["wheel METADATA bomb"] = {
                "refused": _refusal(lambda: _archives.read_zip_member(archive, member), unsafe),
                "peak": _peak(lambda: _archives.read_zip_member(archive, member)),
            }
        pax = write_pax_bomb(tmp)

        def read_pax() -> None:
            with _archives.open_tar(pax):
                pass

        results["sdist pax header bomb"] = {
            "refused": _refusal(read_pax, unsafe),
            "peak": _peak(read_pax),
        }
    output.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
