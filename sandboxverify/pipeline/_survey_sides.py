"""The two releases a survey compares: each given as a requirement (pinned once to the newest
release it allows, so every plugin meets the same one), a project directory (built once, as a
check builds: the sdist, then the wheel from it, confined) or a wheel; a local one is served to
every check from one directory (``--find-links``)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify._toml import tomllib
from sandboxverify.artifacts import FetchError, PackageIndex
from sandboxverify.options import CheckOptions, SurveyOptions
from sandboxverify.pipeline._check import build_target, plan
from sandboxverify.pipeline._progress import ignore
from sandboxverify.pipeline._request import validated
from sandboxverify.pipeline._state import CheckState
from sandboxverify.report import Application
from sandboxverify.sandbox import SUBPROCESSES, Workspace, supervised


@frozen
class Releases:
    baseline: Application
    candidate: Application


def application_name(given: str) -> str | None:
    """The distribution ``--application`` names, where that is known without building or
    fetching anything: a requirement's name, a wheel's file name, a project's static
    ``[project] name``; ``None`` otherwise (resolving it says what is wrong, if anything)."""
    path = Path(given)
    try:
        if path.is_dir():
            document = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
            project = document.get("project")
            name = project.get("name") if isinstance(project, dict) else None
            return name if isinstance(name, str) and name else None
        if path.is_file():
            return str(parse_wheel_filename(path.name)[0])
        return Requirement(given).name
    except (OSError, ValueError):  # TOML, wheel-name, requirement and decoding errors alike
        return None


def resolve_releases(
    options: SurveyOptions, index: PackageIndex, links: Path, python: Version
) -> Releases:
    """The candidate and the baseline (by default the newest final release on the index
    older than the candidate); local ones built or copied into ``links``. Raises
    :class:`UsageError` for releases that cannot be compared."""
    candidate = _release(options.application, "--application", options, index, links, python)
    if options.baseline:
        baseline = _release(options.baseline, "--baseline", options, index, links, python)
    else:
        baseline = _default_baseline(candidate, index, python)
    if canonicalize_name(baseline.name) != canonicalize_name(candidate.name):
        raise UsageError(
            f"the baseline is {baseline.name}, the candidate {candidate.name}: "
            "a survey compares two releases of one application",
            hint="give --application and --baseline as releases of the same distribution",
        )
    if Version(baseline.version) == Version(candidate.version):
        raise UsageError(
            f"the baseline and the candidate are both {candidate.label}",
            hint="give the candidate a version of its own (e.g. 2.0.dev1 or 2.0+candidate), or "
            "another --baseline",
        )
    return Releases(baseline, candidate)


def _release(  # noqa: PLR0917 - one side, and everything it is resolved with
    given: str,
    flag: str,
    options: SurveyOptions,
    index: PackageIndex,
    links: Path,
    python: Version,
) -> Application:
    path = Path(given)
    if path.is_dir():
        wheel, excused = build_application(path, options, links)
        return replace(_local(wheel, given, "project", index, python), excused=excused)
    if path.is_file():
        if path.suffix != ".whl":
            raise UsageError(
                f"{flag} {given} is a file but not a wheel",
                hint="give a wheel, a project directory or a requirement such as 'app==2.0'",
            )
        links.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, links / path.name)
        return _local(links / path.name, given, "wheel", index, python)
    try:
        requirement = Requirement(given)
    except InvalidRequirement as exc:
        raise UsageError(
            f"{flag} {given!r} is neither a project directory, a wheel nor a requirement: {exc}",
            hint="e.g. --application 'datasette==1.0a41', --application ./datasette or a .whl",
        ) from None
    return _pinned(requirement, given, index, python)


def _pinned(
    requirement: Requirement, given: str, index: PackageIndex, python: Version
) -> Application:
    try:
        versions = index.releases(requirement, python)
        if not versions:
            raise UsageError(
                f"no release of {requirement} for Python {python} on the index",
                hint="check the name and the version range, or pass --index-url/--find-links",
            )
        version = versions[0]
        if not index.has_wheel(requirement.name, version, python):
            raise UsageError(
                f"{requirement.name} {version} has no wheel for Python {python}: sandboxes "
                "install wheels only",
                hint="build a wheel of it and give that (--application/--baseline PATH.whl)",
            )
    except FetchError as exc:
        raise UsageError(str(exc), hint="check --index-url and --find-links") from None
    return Application(requirement.name, str(version), given, "index")


def _local(
    wheel: Path, given: str, source: str, index: PackageIndex, python: Version
) -> Application:
    try:
        name, version, _, _ = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        raise UsageError(f"{given}: {exc}") from None
    try:
        published = {f.version for f in index.files(str(name))}
    except FetchError:
        published = set()
    if version in published:
        raise UsageError(
            f"{given} is {name} {version}, which the index has too: the installer could take "
            "either",
            hint="give the local build a version of its own (e.g. a .dev or +local version)",
        )
    project = _project_name(wheel) or str(name)
    return Application(project, str(version), given, "project" if source == "project" else "wheel")


def _default_baseline(candidate: Application, index: PackageIndex, python: Version) -> Application:
    try:
        versions = index.releases(Requirement(candidate.name), python)
    except FetchError as exc:
        raise UsageError(str(exc), hint="give --baseline") from None
    older = [
        v
        for v in versions
        if v < Version(candidate.version) and not v.is_prerelease and not v.is_devrelease
    ]
    if not older:
        raise UsageError(
            f"no final release of {candidate.name} older than {candidate.version} on the index",
            hint="give the release to compare with: --baseline 'NAME==VERSION' or a wheel",
        )
    return _pinned(Requirement(f"{candidate.name}=={older[0]}"), f"{candidate.name}", index, python)


def build_application(
    project: Path, survey: SurveyOptions, into: Path
) -> tuple[Path, tuple[str, ...]]:
    """The application's wheel, built once from ``project`` as a check builds it (the sdist,
    then the wheel from it, confined; reused from the artifact cache when unchanged), and what
    the build found that leaves the wheel installable: it would stop a release, not this
    survey (the local version a candidate is told to carry is one), so it is excused, said."""
    options = CheckOptions(
        targets=(str(project),),
        installer=survey.installer,
        isolation=survey.isolation,
        index_url=survey.index_url,
        find_links=survey.find_links,
    )
    request = validated(options)
    _, context = plan(request, ignore, SUBPROCESSES)
    with Workspace(keep=False) as workspace, supervised():
        result = build_target(CheckState(request, workspace, context, ignore))
        if not result.installable:
            first = result.failures[0].message if result.failures else "no wheel was built"
            raise UsageError(
                f"the application in {project} did not build: {first}",
                hint=f"'sandboxverify check {project}' shows the whole build",
            )
        wheel = result.wheels[0].path
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheel, into / wheel.name)
    excused = tuple(f"{f.code}: {f.message.splitlines()[0]}" for f in result.failures)
    return into / wheel.name, excused


def _project_name(wheel: Path) -> str | None:
    """The ``Name`` its metadata spells (the file name normalises it)."""
    import zipfile  # noqa: PLC0415 - only for a local wheel

    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".dist-info/METADATA") and member.count("/") == 1:
                    for line in archive.read(member).decode("utf-8", "replace").splitlines():
                        if line.startswith("Name:"):
                            return line.split(":", 1)[1].strip()
                        if not line:
                            break
    except (OSError, zipfile.BadZipFile):
        return None
    return None
