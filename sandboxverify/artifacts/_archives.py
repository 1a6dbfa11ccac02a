"""Reading and unpacking sdists and wheels without trusting them.

An artifact under test may be hostile or merely broken; either way nothing in it may write
outside the directory it is unpacked into, and no member may cost more than a sane amount of
memory or time. Every archive is inspected from its headers before any member is read or
unpacked:

- member paths that are absolute, contain ``..``, pass through a symbolic link of the archive,
  symbolic links and hard links that resolve outside the archive root, device files and pipes
  are refused (on every host Python, with or without tarfile's extraction filters); a zip
  archive (a wheel, a zip sdist) may hold files and directories only;
- metadata files (``METADATA``, ``PKG-INFO``, ``RECORD``, ``entry_points.txt``) are read only up
  to :data:`MAX_METADATA_BYTES`, judged by the size the header declares before reading;
- an archive with more than :data:`MAX_MEMBERS` members or more than :data:`MAX_TOTAL_BYTES`
  uncompressed is refused (a zip or gzip bomb), and so is a tar header (a pax or GNU long-name
  record) larger than :data:`MAX_METADATA_BYTES`, which tarfile would otherwise load whole.

Unpacking (:func:`extract_sdist`) goes through the same checks, then through tarfile's ``data``
filter where the host Python has it. Standard library only: the tests run it on every
supported host Python.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import os
import posixpath
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

#: the most a metadata file (METADATA, PKG-INFO, RECORD, entry_points.txt) may take, uncompressed
MAX_METADATA_BYTES = 10 * 1024 * 1024
#: the most all members of an archive may take together, uncompressed
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
#: the most members an archive may have
MAX_MEMBERS = 100_000
#: how many symbolic links one path may pass through before it counts as a loop
_MAX_LINK_HOPS = 40
#: tarfile's extraction filters (Python 3.12, and security releases of 3.8 to 3.11)
HAS_DATA_FILTER = hasattr(tarfile, "data_filter")

_DRIVE = re.compile(r"^[A-Za-z]:")
_OUTSIDE = " (it could be written outside the directory the archive is unpacked into)"


class UnsafeArchive(Exception):
    """The archive must not be read further or unpacked; each reason names a member."""

    def __init__(self, reasons: Sequence[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = tuple(reasons)


def size_text(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def unsafe_name(name: str) -> str | None:
    """Why a member name could land outside the directory it is unpacked into, if it could."""
    if "\0" in name:
        return "a NUL character in its name"
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "an absolute path"
    parts = re.split(r"[/\\]", name.rstrip("/\\"))
    if ".." in parts:
        return "a '..' path component"
    if "" in parts:
        return "an empty path component"
    return None


def _quoted(name: str) -> str:
    return repr(name) if len(name) <= 300 else repr(name[:300] + "...")


# --- wheels and zip sdists -----------------------------------------------------------------


def zip_problems(archive: zipfile.ZipFile) -> list[str]:
    """Everything that makes a zip archive unsafe to read or unpack, from its directory alone.
    A member that is not a file or a directory (a symbolic link, a device, a pipe) is refused
    too: a wheel holds files only, zipfile, pip and uv write such a member as a file holding
    the link's target, and a source tree needs links as links or not at all."""
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        return [f"it has {len(infos)} members, more than the {MAX_MEMBERS} allowed"]
    problems: list[str] = []
    for info in infos:
        why = unsafe_name(info.filename)
        if why is not None:
            problems.append(f"member {_quoted(info.filename)} has {why}{_OUTSIDE}")
            continue
        kind = _special_kind(info.external_attr >> 16)
        if kind is not None:
            problems.append(f"member {_quoted(info.filename)} is {kind}")
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        problems.append(
            f"its members take {size_text(total)} uncompressed, more than the "
            f"{size_text(MAX_TOTAL_BYTES)} allowed (a zip bomb?)"
        )
    return problems


def _special_kind(mode: int) -> str | None:
    """What a Unix file mode (the high bits of a zip member's external attributes) makes a
    member when it is neither a file nor a directory."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def read_zip_member(archive: zipfile.ZipFile, name: str, limit: int = MAX_METADATA_BYTES) -> bytes:
    """A member's bytes, refused (:class:`UnsafeArchive`) past ``limit`` without reading it."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise UnsafeArchive([_too_big(name, info.file_size, limit)])
    with archive.open(info) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # pragma: no cover - zipfile never returns more than the header says
        raise UnsafeArchive([_too_big(name, len(data), limit)])
    return data


def _too_big(name: str, size: int, limit: int) -> str:
    return (
        f"{name} takes {size_text(size)} uncompressed, more than the {size_text(limit)} "
        "allowed for a metadata file"
    )


# --- tar sdists ----------------------------------------------------------------------------


class _BoundedReads:
    """The decompressed stream tarfile reads, refusing any single read larger than a metadata
    file may be: tarfile reads a pax or GNU long-name header whole, so a 1 MB sdist could
    otherwise make it allocate gigabytes. Members' data is read in small chunks."""

    def __init__(self, stream: gzip.GzipFile, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or size > self._limit:
            raise UnsafeArchive(
                [
                    f"a tar header or member larger than {size_text(self._limit)} would have to "
                    "be read at once (a pax or GNU long-name header bomb?)"
                ]
            )
        return self._stream.read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._stream.seek(offset, whence)

    def tell(self) -> int:
        return self._stream.tell()

    def close(self) -> None:
        self._stream.close()


@contextlib.contextmanager
def open_tar(path: Path) -> Iterator[tuple[tarfile.TarFile, list[tarfile.TarInfo]]]:
    """A ``.tar.gz`` and its members, read header by header within the limits; every unsafe
    member is refused (:class:`UnsafeArchive`) before the caller reads or unpacks anything.
    Unreadable archives raise what tarfile, gzip and zlib raise."""
    with gzip.GzipFile(path, "rb") as compressed:
        bounded: Any = _BoundedReads(compressed, MAX_METADATA_BYTES + 1)
        with tarfile.open(fileobj=bounded, mode="r:") as archive:
            members: list[tarfile.TarInfo] = []
            total = 0
            # one header at a time: past a limit, nothing more is decompressed
            while (member := archive.next()) is not None:
                members.append(member)
                total += member.size
                if len(members) > MAX_MEMBERS:
                    raise UnsafeArchive([f"it has more than the {MAX_MEMBERS} members allowed"])
                if total > MAX_TOTAL_BYTES:
                    raise UnsafeArchive(
                        [
                            f"its members take more than the {size_text(MAX_TOTAL_BYTES)} "
                            "allowed uncompressed (a gzip bomb?)"
                        ]
                    )
            problems = tar_problems(members)
            if problems:
                raise UnsafeArchive(problems)
            yield archive, members


def tar_problems(members: Sequence[tarfile.TarInfo]) -> list[str]:
    """Members that could write outside the directory the archive is unpacked into (or write
    anything but files, directories and links inside it)."""
    problems: list[str] = []
    links = {
        _normal(m.name): m.linkname for m in members if m.issym() and unsafe_name(m.name) is None
    }
    files: set[str] = set()
    for member in members:
        name = member.name
        why = unsafe_name(name)
        if why is not None:
            problems.append(f"member {_quoted(name)} has {why}{_OUTSIDE}")
            continue
        normal = _normal(name)
        through = _through_link(normal, links)
        if through is not None:
            problems.append(
                f"member {_quoted(name)} lies inside the symbolic link {_quoted(through)}"
            )
        elif member.ischr() or member.isblk() or member.isfifo():
            kind = "a pipe" if member.isfifo() else "a device file"
            problems.append(f"member {_quoted(name)} is {kind}")
        elif member.issym():
            problems.extend(_symlink_problems(member, links))
        elif member.islnk():
            target = member.linkname
            if unsafe_name(target) is not None:
                problems.append(
                    f"member {_quoted(name)} is a hard link to {target!r}, outside the archive"
                )
            elif _normal(target) not in files:
                problems.append(
                    f"member {_quoted(name)} is a hard link to {target!r}, which is not a file "
                    "earlier in the archive"
                )
        if member.isreg() or member.islnk():
            files.add(normal)
    return problems


def _symlink_problems(member: tarfile.TarInfo, links: dict[str, str]) -> list[str]:
    target = member.linkname
    if not target or target.startswith(("/", "\\")) or _DRIVE.match(target):
        return [f"member {_quoted(member.name)} is a symbolic link to an absolute path {target!r}"]
    joined = posixpath.join(posixpath.dirname(_normal(member.name)), target.replace("\\", "/"))
    if _escapes(joined, links):
        return [
            f"member {_quoted(member.name)} is a symbolic link to {target!r}, outside the archive"
        ]
    return []


def _normal(name: str) -> str:
    return posixpath.normpath(name.replace("\\", "/")).lstrip("/")


def _through_link(normal: str, links: dict[str, str]) -> str | None:
    """The archive's symbolic link a member path passes through, if any (writing the member
    would write wherever that link points)."""
    parts = normal.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        if prefix in links:
            return prefix
    return None


def _escapes(path: str, links: dict[str, str]) -> bool:
    """Whether ``path`` (relative to the archive root) leaves the root once the archive's own
    symbolic links are followed, as the file system would follow them after unpacking."""
    pending = list(reversed(path.split("/")))
    resolved: list[str] = []
    hops = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return True
            resolved.pop()
            continue
        resolved.append(part)
        target = links.get("/".join(resolved))
        if target is None:
            continue
        hops += 1
        if hops > _MAX_LINK_HOPS or target.startswith(("/", "\\")) or _DRIVE.match(target):
            return True
        resolved.pop()
        pending.extend(reversed(target.replace("\\", "/").split("/")))
    return False


def read_tar_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, limit: int = MAX_METADATA_BYTES
) -> bytes:
    """A regular member's bytes, refused past ``limit`` from its header, before reading."""
    if member.size > limit:
        raise UnsafeArchive([_too_big(member.name, member.size, limit)])
    handle = archive.extractfile(member)
    if handle is None:
        raise UnsafeArchive([f"member {_quoted(member.name)} is not a regular file"])
    with handle:
        return handle.read(member.size)


# --- unpacking -----------------------------------------------------------------------------


def extract_sdist(path: Path, destination: Path) -> None:
    """Unpack an sdist (``.tar.gz`` or ``.zip``) into ``destination``, after the checks above
    (:class:`UnsafeArchive` when any fails: then nothing is unpacked)."""
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            problems = zip_problems(archive)
            if problems:
                raise UnsafeArchive(problems)
            destination.mkdir(parents=True, exist_ok=True)
            archive.extractall(destination)
        return
    with open_tar(path) as (archive, members):
        destination.mkdir(parents=True, exist_ok=True)
        if HAS_DATA_FILTER:
            archive.extractall(destination, members=members, filter="data")
        else:
            _extract_unfiltered(archive, members, destination)


def _extract_unfiltered(
    archive: tarfile.TarFile, members: Sequence[tarfile.TarInfo], destination: Path
) -> None:
    """What the ``data`` filter does beyond the checks above, for Pythons without it: no
    set-user-ID, set-group-ID or group/other write bits, no ownership taken from the archive."""
    safe: list[tarfile.TarInfo] = []
    for member in members:
        member_copy = copy.copy(member)
        mode = member.mode & 0o755
        member_copy.mode = mode | (0o700 if member.isdir() else 0o600)
        member_copy.uid, member_copy.gid = os.getuid(), os.getgid()
        member_copy.uname = member_copy.gname = ""
        safe.append(member_copy)
    archive.extractall(destination, members=safe)
