"""Targets (a project directory or built artifacts) and static facts about artifacts."""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal, Union

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.artifacts._archives import (
    UnsafeArchive,
    open_tar,
    read_tar_member,
    read_zip_member,
    zip_problems,
)
from sandboxverify.artifacts._contents import wheel_content_problems
from sandboxverify.artifacts._hygiene import filename_problems, hygiene_problems
from sandboxverify.artifacts._rules import (
    REBUILD_HINT,
    Problem,
    content_problems,
    few,
    record_problems,
    script_name_problems,
    top_level_names,
    unsafe_problems,
)
from sandboxverify.runtime import EntryPointRef, parse_entry_points

ArtifactKind = Literal["sdist", "wheel"]
_SDIST_SUFFIXES = (".tar.gz", ".zip")


@frozen
class ProjectTarget:
    """A source tree: build the sdist, then the wheel from the sdist."""

    path: Path


@frozen
class ArtifactsTarget:
    """Built artifacts, verified as they are (a wheel is never rebuilt)."""

    wheels: tuple[Path, ...]
    sdists: tuple[Path, ...]


Target = Union[ProjectTarget, ArtifactsTarget]


@frozen
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
    #: the wheel's file paths (directories left out)
    files: tuple[str, ...] = ()
    #: the distributions it depends on (Requires-Dist without extras), normalized
    dependencies: frozenset[str] = frozenset()
    #: what the static rules found worth fixing that fails nothing (``warning`` severity)
    warnings: tuple[Problem, ...] = ()


#: what reading a broken archive raises (zipfile reports bad members in several ways)
UNREADABLE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
)


class ArtifactProblem(Exception):
    """An artifact that would be published is broken (``artifact_invalid``): every problem
    found in it, not only the first."""

    def __init__(
        self, *problems: Problem, files: tuple[str, ...] = (), artifact: Artifact | None = None
    ) -> None:
        errors = tuple(problem for problem in problems if problem.severity == "error")
        super().__init__("\n".join(problem.message for problem in errors))
        #: what fails the check
        self.problems = errors
        #: what the static rules found worth fixing that fails nothing
        self.warnings = tuple(problem for problem in problems if problem.severity == "warning")
        #: the archive's files, when it could be read (``--expect-files`` still applies)
        self.files = files
        #: the artifact, when every problem leaves it installable
        self.artifact = artifact


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
    """Static facts about a wheel; every problem found is raised at once (``ArtifactProblem``)."""
    try:
        name, version, _build, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise ArtifactProblem(
            Problem(f"{path.name}: not a valid wheel filename: {exc}", REBUILD_HINT)
        ) from None
    try:
        with zipfile.ZipFile(path) as archive:
            unsafe = zip_problems(archive)
            if unsafe:  # nothing more is read from it, and nothing installs it
                raise ArtifactProblem(*unsafe_problems(path.name, unsafe))
            problems, facts = _read_wheel(path.name, archive, name, version, tags)
    except UNREADABLE as exc:
        raise ArtifactProblem(
            Problem(f"{path.name}: not a readable zip archive: {exc}", REBUILD_HINT)
        ) from None
    artifact = Artifact(
        "wheel",
        path,
        name,
        version,
        sha256_of(path),
        frozenset(tags),
        top_level_names(facts.files),
        facts.entry_points,
        facts.requires_python,
        facts.files,
        facts.dependencies,
    )
    problems.extend(filename_problems(path, name, version, tags))
    return _judged(artifact, problems, facts.files)


def _judged(artifact: Artifact, problems: list[Problem], files: tuple[str, ...] = ()) -> Artifact:
    """The artifact with its warnings, or :class:`ArtifactProblem` with every problem when an
    error is among them (the artifact too when every error leaves it installable)."""
    errors = [problem for problem in problems if problem.severity == "error"]
    if errors:
        usable = all(problem.installable for problem in errors)
        raise ArtifactProblem(*problems, files=files, artifact=artifact if usable else None)
    return replace(artifact, warnings=tuple(problems))


@frozen
class _WheelFacts:
    files: tuple[str, ...] = ()
    entry_points: tuple[EntryPointRef, ...] = ()
    requires_python: str | None = None
    dependencies: frozenset[str] = frozenset()


def _read_wheel(
    filename: str,
    archive: zipfile.ZipFile,
    name: NormalizedName,
    version: Version,
    tags: frozenset[Tag],
) -> tuple[list[Problem], _WheelFacts]:
    # packaging.metadata and the email package it parses with (~20 ms) are imported when an
    # artifact is inspected, not while a check starts (pipeline/_headstart imports them meanwhile)
    from sandboxverify.artifacts._metadata import (  # noqa: PLC0415
        check_metadata,
        dependency_names,
        license_file_problems,
    )

    names = archive.namelist()
    files = tuple(n for n in names if not n.endswith("/"))
    dist_info = sorted(
        {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    )
    if len(dist_info) != 1:
        found = f" ({', '.join(dist_info)})" if dist_info else ""
        problem = Problem(
            f"{filename}: expected one .dist-info directory, found {len(dist_info)}{found}",
            REBUILD_HINT,
        )
        return [problem], _WheelFacts(files)
    info = dist_info[0]
    problems = [
        Problem(f"{filename}: {info}/{required} is missing", REBUILD_HINT)
        for required in ("METADATA", "WHEEL", "RECORD")
        if f"{info}/{required}" not in names
    ]
    duplicates = sorted(n for n, count in Counter(files).items() if count > 1)
    if duplicates:
        problems.append(
            Problem(
                f"{filename}: {few(duplicates)} appear(s) more than once in the archive "
                "(installers keep only one of the copies)",
                REBUILD_HINT,
            )
        )
    requires_python = None
    dependencies: frozenset[str] = frozenset()
    entry_points: list[EntryPointRef] = []
    try:
        if f"{info}/METADATA" in names:
            metadata = read_zip_member(archive, f"{info}/METADATA")
            found_problems, requires_python = check_metadata(
                filename, f"{info}/METADATA", metadata, name, version
            )
            problems.extend(found_problems)
            dependencies = frozenset(dependency_names(metadata))
            problems.extend(license_file_problems(filename, metadata, f"{info}/licenses/", files))
        if f"{info}/RECORD" in names:
            record = read_zip_member(archive, f"{info}/RECORD")
            problems.extend(record_problems(filename, archive, info, record, files))
        problems.extend(content_problems(filename, info, files))
        problems.extend(wheel_content_problems(filename, archive, files, tags))
        problems.extend(hygiene_problems(filename, files))
        entry_points_file = f"{info}/entry_points.txt"
        if entry_points_file in names:
            text = read_zip_member(archive, entry_points_file).decode("utf-8", "replace")
            entry_points = parse_entry_points(text)
            problems.extend(script_name_problems(filename, entry_points))
    except UnsafeArchive as exc:
        problems.extend(unsafe_problems(filename, exc.reasons))
    return problems, _WheelFacts(files, tuple(entry_points), requires_python, dependencies)


def inspect_sdist(path: Path) -> Artifact:
    # as _read_wheel: imported when an artifact is inspected
    from sandboxverify.artifacts._metadata import (  # noqa: PLC0415
        check_metadata,
        license_file_problems,
    )
    from sandboxverify.artifacts._pyproject import pyproject_problems  # noqa: PLC0415

    try:
        name, version = parse_sdist_filename(path.name)
    except InvalidSdistFilename as exc:
        raise ArtifactProblem(
            Problem(f"{path.name}: not a valid sdist filename: {exc}", REBUILD_HINT)
        ) from None
    stem = (
        path.name[: -len(".tar.gz")] if path.name.endswith(".tar.gz") else path.name[: -len(".zip")]
    )
    try:
        members, pkg_info, pyproject = _read_sdist(path, stem)
    except UnsafeArchive as exc:
        raise ArtifactProblem(*unsafe_problems(path.name, exc.reasons)) from None
    except (tarfile.TarError, *UNREADABLE) as exc:
        raise ArtifactProblem(
            Problem(f"{path.name}: not a readable archive: {exc}", REBUILD_HINT)
        ) from None
    problems: list[Problem] = []
    requires_python = None
    if pkg_info is None:
        problems.append(
            Problem(f"{path.name}: {stem}/PKG-INFO is missing (not a valid sdist)", REBUILD_HINT)
        )
    else:
        found, requires_python = check_metadata(path.name, "PKG-INFO", pkg_info, name, version)
        problems.extend(found)
    if f"{stem}/pyproject.toml" not in members and f"{stem}/setup.py" not in members:
        problems.append(
            Problem(
                f"{path.name}: has neither pyproject.toml nor setup.py; it cannot be built",
                "build the sdist with a PEP 517 backend (python -m build --sdist / uv build "
                "--sdist): it includes pyproject.toml",
            )
        )
    problems.extend(filename_problems(path, name, version))
    inside = [member[len(stem) + 1 :] for member in members if member.startswith(f"{stem}/")]
    problems.extend(hygiene_problems(path.name, inside))
    if pkg_info is not None:
        problems.extend(license_file_problems(path.name, pkg_info, "", inside))
    if pyproject is not None:
        problems.extend(pyproject_problems(pyproject, path.name))
    artifact = Artifact(
        "sdist", path, name, version, sha256_of(path), requires_python=requires_python
    )
    return _judged(artifact, problems)


def _read_sdist(path: Path, stem: str) -> tuple[list[str], bytes | None, bytes | None]:
    """The sdist's member names, its PKG-INFO and its pyproject.toml; :class:`UnsafeArchive`
    before anything is read when a member is unsafe (the archive is never unpacked then)."""
    wanted = (f"{stem}/PKG-INFO", f"{stem}/pyproject.toml")
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as zip_archive:
            unsafe = zip_problems(zip_archive)
            if unsafe:
                raise UnsafeArchive(unsafe)
            names = zip_archive.namelist()
            pkg_info, pyproject = (
                read_zip_member(zip_archive, name) if name in names else None for name in wanted
            )
            return names, pkg_info, pyproject
    with open_tar(path) as (tar_archive, tar_members):
        names = [member.name for member in tar_members]
        read: list[bytes | None] = []
        for name in wanted:
            found = [member for member in tar_members if member.name == name]
            if found and not found[-1].isreg():
                raise UnsafeArchive([f"member {name!r} is not a regular file"])
            read.append(read_tar_member(tar_archive, found[-1]) if found else None)
        return names, read[0], read[1]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_release_named(paths: Sequence[Path]) -> None:
    """All artifacts must be one project at one version (one release is verified per run),
    judged by filenames alone, before (and whatever) inspection finds: passing artifacts of
    two releases is a usage error even when they are broken too."""
    releases: list[tuple[NormalizedName, Version]] = []
    for path in paths:
        try:
            if path.name.endswith(".whl"):
                name, version, _, _ = parse_wheel_filename(path.name)
            else:
                name, version = parse_sdist_filename(path.name)
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue  # an artifact_invalid of its own
        releases.append((name, version))
    if releases:
        _one_release(releases)


def _one_release(found: Sequence[tuple[NormalizedName, Version]]) -> None:
    releases = sorted({(name, str(version)) for name, version in found})
    if len(releases) != 1:
        listed = ", ".join(f"{name} {version}" for name, version in releases)
        raise UsageError(
            f"the artifacts belong to different releases ({listed})",
            hint="verify one project at one version per run",
        )


def shared_namespace(wheel: Artifact, top: str) -> bool:
    """Whether the wheel's top-level package ``top`` is a namespace package, which other
    distributions add modules to: it has no ``__init__.py`` (PEP 420), or its ``__init__.py``
    extends its path (``pkgutil.extend_path``, ``pkg_resources.declare_namespace``)."""
    init = f"{top}/__init__.py"
    if init not in wheel.files:
        return any(name.startswith(f"{top}/") for name in wheel.files)
    try:
        with zipfile.ZipFile(wheel.path) as archive, archive.open(init) as handle:
            text = handle.read(_NAMESPACE_READ).decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    return "extend_path" in text or "declare_namespace" in text


#: how much of an ``__init__.py`` says whether it makes a namespace package
_NAMESPACE_READ = 64 * 1024


def select_wheel(wheels: Sequence[Artifact], version_info: tuple[int, int, int]) -> Artifact | None:
    """The wheel an installer would pick for this Python version on this platform."""
    if len(wheels) == 1:
        return wheels[0]
    rank = _supported_tags(version_info)
    best: tuple[int, Artifact] | None = None
    for wheel in wheels:
        scores = [rank[tag] for tag in wheel.tags if tag in rank]
        if scores and (best is None or min(scores) < best[0]):
            best = (min(scores), wheel)
    return best[1] if best else None


def fits(wheel: Artifact, version_info: tuple[int, int, int]) -> bool:
    """Whether an installer would install ``wheel`` on this Python version on this platform."""
    return not wheel.tags.isdisjoint(_supported_tags(version_info))


def _supported_tags(version_info: tuple[int, int, int]) -> dict[Tag, int]:
    """The tags this Python version installs here, the most specific first, by rank."""
    python_version = version_info[:2]
    interpreter = f"cp{python_version[0]}{python_version[1]}"  # else cpXY-none-any is missed
    supported = [*cpython_tags(python_version), *compatible_tags(python_version, interpreter)]
    return {tag: index for index, tag in enumerate(supported)}
