"""Targets (a project directory or built artifacts) and static facts about artifacts."""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Union

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from sandboxverify._errors import UsageError
from sandboxverify.runtime._protocol import EntryPointRef, parse_entry_points

ArtifactKind = Literal["sdist", "wheel"]
_SDIST_SUFFIXES = (".tar.gz", ".zip")


@dataclass(frozen=True)
class ProjectTarget:
    """A source tree: build the sdist, then the wheel from the sdist."""

    path: Path


@dataclass(frozen=True)
class ArtifactsTarget:
    """Built artifacts, verified as they are (a wheel is never rebuilt)."""

    wheels: tuple[Path, ...]
    sdists: tuple[Path, ...]


Target = Union[ProjectTarget, ArtifactsTarget]


@dataclass(frozen=True)
class Artifact:
    kind: ArtifactKind
    path: Path
    name: NormalizedName
    version: Version
    sha256: str
    tags: frozenset[Tag] = frozenset()
    #: importable top-level names the wheel ships (packages and modules)
    top_level: frozenset[str] = frozenset()
    #: what the wheel's entry_points.txt declares
    entry_points: tuple[EntryPointRef, ...] = ()
    #: the metadata's Requires-Python, if any
    requires_python: str | None = None


class ArtifactProblem(Exception):
    """An artifact that would be published is broken (``artifact_invalid``)."""


def classify(targets: Sequence[str]) -> Target:
    """Interpret the command line's TARGET arguments; bad input is a usage error."""
    given = list(targets) or ["."]
    paths: list[Path] = []
    for raw in given:
        path = Path(raw).expanduser().absolute()  # installers run elsewhere
        if not path.exists():
            raise UsageError(
                f"target not found: {raw}",
                hint="pass a project directory or built artifacts (dist/*.whl dist/*.tar.gz)",
            )
        paths.append(path)
    directories = [p for p in paths if p.is_dir()]
    if directories:
        if len(paths) > 1:
            raise UsageError(
                "pass either one project directory or built artifacts, not both",
                hint=f"got {', '.join(given)}",
            )
        return ProjectTarget(_project_dir(directories[0]))
    wheels: list[Path] = []
    sdists: list[Path] = []
    for path in paths:
        if path.name.endswith(".whl"):
            wheels.append(path)
        elif path.name.endswith(_SDIST_SUFFIXES):
            sdists.append(path)
        else:
            raise UsageError(
                f"not a wheel or an sdist: {path}",
                hint="artifacts end in .whl or .tar.gz; a project is given as its directory",
            )
    return ArtifactsTarget(tuple(wheels), tuple(sdists))


def _project_dir(path: Path) -> Path:
    if not (path / "pyproject.toml").is_file() and not (path / "setup.py").is_file():
        raise UsageError(
            f"{path} is not a Python project: it has no pyproject.toml or setup.py",
            hint="point at the directory that holds pyproject.toml, "
            "or pass built artifacts (dist/*.whl dist/*.tar.gz)",
        )
    return path.resolve()


def inspect_wheel(path: Path) -> Artifact:
    """Parse the filename and check the archive's metadata agrees with it."""
    try:
        name, version, _build, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise ArtifactProblem(f"{path.name}: not a valid wheel filename: {exc}") from None
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            dist_info = sorted(
                {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
            )
            if len(dist_info) != 1:
                raise ArtifactProblem(
                    f"{path.name}: expected one .dist-info directory, found {len(dist_info)}"
                )
            for required in ("METADATA", "WHEEL", "RECORD"):
                if f"{dist_info[0]}/{required}" not in names:
                    raise ArtifactProblem(f"{path.name}: {dist_info[0]}/{required} is missing")
            metadata = archive.read(f"{dist_info[0]}/METADATA").decode("utf-8", errors="replace")
            entry_points_file = f"{dist_info[0]}/entry_points.txt"
            entry_points = (
                parse_entry_points(archive.read(entry_points_file).decode("utf-8", "replace"))
                if entry_points_file in names
                else []
            )
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArtifactProblem(f"{path.name}: not a readable zip archive: {exc}") from None
    _check_metadata(path, metadata, name, version)
    return Artifact(
        "wheel",
        path,
        name,
        version,
        sha256_of(path),
        frozenset(tags),
        _top_level_names(names),
        tuple(entry_points),
    )


def inspect_sdist(path: Path) -> Artifact:
    try:
        name, version = parse_sdist_filename(path.name)
    except InvalidSdistFilename as exc:
        raise ArtifactProblem(f"{path.name}: not a valid sdist filename: {exc}") from None
    stem = (
        path.name[: -len(".tar.gz")] if path.name.endswith(".tar.gz") else path.name[: -len(".zip")]
    )
    try:
        if path.name.endswith(".zip"):
            with zipfile.ZipFile(path) as zip_archive:
                members = zip_archive.namelist()
                pkg_info = (
                    zip_archive.read(f"{stem}/PKG-INFO") if f"{stem}/PKG-INFO" in members else None
                )
        else:
            with tarfile.open(path, "r:gz") as tar_archive:
                members = tar_archive.getnames()
                member = (
                    tar_archive.extractfile(f"{stem}/PKG-INFO")
                    if f"{stem}/PKG-INFO" in members
                    else None
                )
                pkg_info = member.read() if member is not None else None
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ArtifactProblem(f"{path.name}: not a readable archive: {exc}") from None
    if pkg_info is None:
        raise ArtifactProblem(f"{path.name}: {stem}/PKG-INFO is missing (not a valid sdist)")
    if f"{stem}/pyproject.toml" not in members and f"{stem}/setup.py" not in members:
        raise ArtifactProblem(
            f"{path.name}: has neither pyproject.toml nor setup.py; it cannot be built"
        )
    _check_metadata(path, pkg_info.decode("utf-8", errors="replace"), name, version)
    return Artifact("sdist", path, name, version, sha256_of(path))


def _check_metadata(path: Path, text: str, name: NormalizedName, version: Version) -> None:
    headers = _headers(text)
    meta_name, meta_version = headers.get("name"), headers.get("version")
    if not meta_name or not meta_version:
        raise ArtifactProblem(f"{path.name}: metadata has no Name or Version")
    if canonicalize_name(meta_name) != name or Version(meta_version) != version:
        raise ArtifactProblem(
            f"{path.name}: the filename says {name} {version} "
            f"but the metadata says {meta_name} {meta_version}"
        )


def _headers(text: str) -> dict[str, str]:
    """The first value of each header of a METADATA/PKG-INFO file (RFC 822 style; the body
    after the first blank line is the description). Cheaper than the email package at start-up."""
    headers: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t") or ":" not in line:
            continue  # a continuation line of a folded header
        key, value = line.split(":", 1)
        headers.setdefault(key.strip().lower(), value.strip())
    return headers


def _top_level_names(names: Sequence[str]) -> frozenset[str]:
    found: set[str] = set()
    for entry in names:
        head, _, rest = entry.partition("/")
        if head.endswith((".dist-info", ".data")):
            continue
        if rest:
            found.add(head)
        elif head.endswith(".py"):
            found.add(head[: -len(".py")])
        elif "." in head and head.split(".", 1)[1].startswith(("cpython", "abi3", "pyd", "so")):
            found.add(head.split(".", 1)[0])
    return frozenset(found)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_project(artifacts: Sequence[Artifact]) -> tuple[NormalizedName, Version]:
    """All artifacts must be one project at one version: one release is verified per run."""
    releases = sorted({(a.name, str(a.version)) for a in artifacts})
    if len(releases) != 1:
        listed = ", ".join(f"{name} {version}" for name, version in releases)
        raise UsageError(
            f"the artifacts belong to different releases ({listed})",
            hint="verify one project at one version per run",
        )
    return artifacts[0].name, artifacts[0].version


def select_wheel(wheels: Sequence[Artifact], version_info: tuple[int, int, int]) -> Artifact | None:
    """The wheel an installer would pick for this Python version on this platform."""
    if len(wheels) == 1:
        return wheels[0]
    python_version = version_info[:2]
    interpreter = f"cp{python_version[0]}{python_version[1]}"  # else cpXY-none-any is missed
    supported = [*cpython_tags(python_version), *compatible_tags(python_version, interpreter)]
    rank = {tag: index for index, tag in enumerate(supported)}
    best: tuple[int, Artifact] | None = None
    for wheel in wheels:
        scores = [rank[tag] for tag in wheel.tags if tag in rank]
        if scores and (best is None or min(scores) < best[0]):
            best = (min(scores), wheel)
    return best[1] if best else None
