"""Finding installed distributions and their entry points, read the way ``importlib.metadata``
reads them.

Importing ``importlib.metadata`` costs a sandbox process some 40 ms (``email``, ``zipfile``,
``csv``...), and two processes of every check (``discover`` and ``imports``) need only what
wheels install: ``.dist-info`` directories in the directories on ``sys.path``. Those are read
here as ``importlib.metadata`` (Python 3.10 on) reads them: ``sys.path`` in order; in each
directory, the metadata directories grouped by normalised name in listing order; the first
``Name`` and ``Version`` headers of ``METADATA``; ``entry_points.txt`` line by line in sections;
``RECORD`` as it is. Where anything else could be found (an ``.egg-info`` or an ``.egg``, a zip
file on ``sys.path``, a finder of distributions other than the standard one, a header it would
parse otherwise, Python 3.9's ``configparser`` reading of entry points), ``importlib.metadata``
itself is asked, so both always find the same.
"""

from __future__ import annotations

import os
import re
import sys

from sandboxverify.runtime._protocol import EntryPointRef

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterator


#: where the finder that reads metadata directories on ``sys.path`` comes from (``PathFinder``)
_STANDARD_FINDERS = "_frozen_importlib_external"


class _Unusual(Exception):
    """Something only ``importlib.metadata`` is sure to read as it does."""


class Installed:
    """One installed distribution: a ``.dist-info`` directory, or what ``importlib.metadata``
    found."""

    def __init__(self, path: str | None, name: str | None, version: str | None) -> None:
        self._path = path
        self.name = name
        self.version = version
        self._found: object = None

    @classmethod
    def found(cls, dist: object) -> Installed:
        """``dist``, an ``importlib.metadata.Distribution``."""
        meta: object = getattr(dist, "metadata", None)
        name = meta["Name"] if meta is not None else None  # type: ignore[index]
        installed = cls(None, name, getattr(dist, "version", None))
        installed._found = dist
        return installed

    def read_text(self, filename: str) -> str | None:
        if self._path is None:
            read: str | None = self._found.read_text(filename)  # type: ignore[attr-defined]
            return read
        return _read(os.path.join(self._path, filename))

    def locate_file(self, path: str) -> str:
        """Where a path ``RECORD`` lists is, as ``importlib.metadata`` joins it."""
        if self._path is None:
            return str(self._found.locate_file(path))  # type: ignore[attr-defined]
        parent = os.path.dirname(self._path)
        return os.path.join(parent, path) if path else parent

    @property
    def entry_points(self) -> list[EntryPointRef]:
        if self._path is None:
            return [
                EntryPointRef(name=ep.name, group=ep.group, value=ep.value)
                for ep in self._found.entry_points  # type: ignore[attr-defined]
            ]
        try:
            return _entry_points(self.read_text("entry_points.txt") or "")
        except _Unusual:
            import pathlib  # noqa: PLC0415 - only where importlib.metadata must be asked
            from importlib import metadata  # noqa: PLC0415

            return Installed.found(metadata.PathDistribution(pathlib.Path(self._path))).entry_points


def canonical_name(name: str) -> str:
    """PEP 503 normalisation: ``Foo_Bar.baz`` and ``foo-bar-baz`` are the same project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions() -> list[Installed]:
    """Every distribution on ``sys.path``, in ``importlib.metadata``'s order."""
    try:
        return _read_directly()
    except _Unusual:
        from importlib import metadata  # noqa: PLC0415 - only where it must be asked

        return [Installed.found(dist) for dist in metadata.distributions()]


def find_distribution(name: str) -> Installed | None:
    """The installed distribution called ``name`` (first on ``sys.path`` wins, like imports)."""
    wanted = canonical_name(name)
    return next(
        (d for d in distributions() if d.name is not None and canonical_name(d.name) == wanted),
        None,
    )


def entry_points_of(dist: Installed, groups: list[str]) -> list[EntryPointRef]:
    """The distribution's entry points in ``groups``, in declaration order."""
    return [ep for ep in dist.entry_points if ep.group in groups]


def declared_groups(dist: Installed) -> list[str]:
    return sorted({ep.group for ep in dist.entry_points})


def others_in_groups(dist_name: str, groups: list[str]) -> list[dict[str, str]]:
    """Entry points other distributions declare in ``groups`` (ignored, but worth telling)."""
    wanted = canonical_name(dist_name)
    found: list[dict[str, str]] = []
    for dist in distributions():
        name = dist.name or "?"
        if canonical_name(name) == wanted:
            continue
        found.extend(
            {"name": ep.name, "group": ep.group, "dist": name}
            for ep in dist.entry_points
            if ep.group in groups
        )
    return found


def installed_distributions() -> list[dict[str, str | None]]:
    """Every distribution installed in the environment, as the report's ``installed`` lists it."""
    found = {
        canonical_name(dist.name): {"name": dist.name, "version": dist.version}
        for dist in distributions()
        if dist.name
    }
    return [found[name] for name in sorted(found)]


def record_entries(dist: Installed) -> list[str] | None:
    """The paths RECORD lists, read directly: ``Distribution.files`` leaves out missing files
    on Python 3.12+, and missing files are what the ``imports`` action looks for."""
    import csv  # noqa: PLC0415 - only RECORD needs it

    text = dist.read_text("RECORD")
    if text is None:
        return None
    return [row[0] for row in csv.reader(text.splitlines()) if row and row[0]]


def _read_directly() -> list[Installed]:
    if sys.version_info < (3, 10):
        raise _Unusual
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder.__module__ != _STANDARD_FINDERS:
            raise _Unusual
    found: list[Installed] = []
    for entry in sys.path:
        found.extend(_in_directory(entry))
    return found


def _in_directory(entry: str) -> Iterator[Installed]:
    root = entry or "."
    if os.path.basename(entry).lower().endswith(".egg"):
        raise _Unusual
    try:
        children = os.listdir(root)
    except OSError:
        if os.path.isfile(root):  # a zip file: importlib.metadata looks inside
            raise _Unusual from None
        return
    named: dict[str, list[str]] = {}
    for child in children:
        low = child.lower()
        if low.endswith(".egg-info"):
            raise _Unusual
        if low.endswith(".dist-info"):
            name = low.rpartition(".")[0].partition("-")[0]
            named.setdefault(_normalise(name), []).append(child)
    for group in named.values():
        for child in group:
            path = os.path.join(entry, child) if entry else child
            headers = _headers(path)
            yield Installed(path, headers.get("name"), headers.get("version"))


def _normalise(name: str) -> str:
    """How ``importlib.metadata`` groups metadata directories by name."""
    return canonical_name(name).replace("-", "_")


def _headers(path: str) -> dict[str, str]:
    """The first ``Name`` and ``Version`` of the metadata, as the ``email`` parser reads them."""
    text = _read(os.path.join(path, "METADATA")) or _read(os.path.join(path, "PKG-INFO"))
    if text is None:
        raise _Unusual
    found: dict[str, str] = {}
    for line in re.split(r"\r\n|\r|\n", text):
        if not line:
            break
        if line[0] in " \t" or ":" not in line or " " in line.partition(":")[0]:
            raise _Unusual  # a folded header, or a line the email parser ends the headers at
        key, _, value = line.partition(":")
        key = key.lower()
        if key in ("name", "version") and key not in found:
            found[key] = value.lstrip(" \t")
    return found


def _entry_points(text: str) -> list[EntryPointRef]:
    found: list[EntryPointRef] = []
    group: str | None = None
    for line in (line.strip() for line in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None:
            continue
        if "=" not in line:
            raise _Unusual  # importlib.metadata raises: let it, with its message
        name, value = line.split("=", 1)
        found.append(EntryPointRef(name=name.strip(), group=group, value=value.strip()))
    return found


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
