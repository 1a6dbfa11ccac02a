"""Core metadata (a wheel's METADATA, an sdist's PKG-INFO) validated as packaging, twine and PyPI
validate it (``_pypi``: what PyPI refuses beyond packaging's validation)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from packaging.metadata import ExceptionGroup, Metadata, RawMetadata, parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from sandboxverify.artifacts._pypi import pypi_problems, too_new
from sandboxverify.artifacts._rules import REBUILD_HINT, Problem

_METADATA_HINT = (
    "fix {setting} in pyproject.toml's [project] table (or the same setting in setup.cfg / "
    "setup.py) and rebuild; PyPI rejects such metadata too"
)
#: the pyproject.toml [project] key that produces each core metadata field
_PYPROJECT_KEYS = {
    "name": "name",
    "version": "version",
    "summary": "description",
    "description-content-type": "readme",
    "requires-dist": "dependencies / optional-dependencies",
    "provides-extra": "optional-dependencies",
    "requires-python": "requires-python",
    "license-expression": "license",
    "license-file": "license-files",
    "project-url": "urls",
    "keywords": "keywords",
    "classifier": "classifiers",
    "author-email": "authors",
    "maintainer-email": "maintainers",
    "dynamic": "dynamic",
}
#: fields of metadata versions older packaging releases (>= 24.0) do not know yet
_LATER_FIELDS = {
    "2.4": frozenset({"license-expression", "license-file"}),
    "2.5": frozenset({"import-name", "import-namespace"}),
}


def dependency_names(data: bytes) -> frozenset[NormalizedName]:
    """The distributions METADATA requires unconditionally or under a marker (not extras-only):
    what the sandbox installs next to the wheel, e.g. the application that loads the plugins."""
    raw, _ = parse_email(data)
    names: set[NormalizedName] = set()
    for line in raw.get("requires_dist") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue  # reported by check_metadata
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        names.add(canonicalize_name(requirement.name))
    return frozenset(names)


def check_metadata(
    filename: str, source: str, data: bytes, name: NormalizedName, version: Version
) -> tuple[list[Problem], str | None]:
    """Validate METADATA / PKG-INFO as packaging (and PyPI) does, minus what installers accept
    in real releases; returns the problems and Requires-Python."""
    where = f"{filename}: {source}"
    raw, _ = parse_email(data)
    declared = raw.get("metadata_version")
    problems: list[Problem] = []
    if declared is None:
        problems.append(Problem(f"{where} has no Metadata-Version", REBUILD_HINT))
    as_version = _validated_as(declared)
    newer = as_version is not None and declared not in (None, "2.0")
    try:
        Metadata.from_email(_lenient(data, as_version), validate=True)
    except ExceptionGroup as group:
        for error in group.exceptions:
            text = str(error)
            field = str(getattr(error, "field", ""))
            if "introduced in metadata version" in text:
                problems.append(too_new(where, field, declared))
                continue
            if text.startswith("unrecognized field") and (newer or field in _unknown_fields()):
                continue  # a field of a metadata version newer than this packaging knows
            if declared is None and field == "metadata-version":
                continue  # reported above, readably
            problems.append(
                Problem(f"{where} is invalid: {_explained(error)}", _hint_for(field, text))
            )
    problems.extend(_direct_references(where, raw.get("requires_dist") or []))
    problems.extend(pypi_problems(filename, where, raw))
    meta_name, meta_version = raw.get("name"), raw.get("version")
    if meta_name and meta_version:
        try:
            same = canonicalize_name(meta_name) == name and Version(meta_version) == version
        except InvalidVersion:
            same = True  # the invalid version is reported above
        if not same:
            problems.append(
                Problem(
                    f"{filename}: the filename says {name} {version} "
                    f"but the metadata says {meta_name} {meta_version}",
                    "rename nothing by hand: rebuild the artifact so its filename and its "
                    "metadata come from the same [project] name and version",
                )
            )
    return problems, raw.get("requires_python")


_DIRECT_REFERENCE_HINT = (
    "depend on the project by name and version range (publish it, or build it into a wheel and "
    "pass its directory with --find-links); a direct reference comes from [project] "
    "dependencies or from code in setup.py that writes one"
)


def _direct_references(where: str, requires_dist: list[str]) -> list[Problem]:
    """Requirements with a URL (``name @ file:///...``, ``name @ https://...tar.gz``): PyPI
    refuses them ("Can't have direct dependency"), and an installer given one builds what it
    points at outside any sandbox, ``--only-binary`` or not. Nothing installs such an artifact."""
    found = []
    for line in requires_dist:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue  # reported by the validation
        if requirement.url:
            found.append(line)
    if not found:
        return []
    listed = "; ".join(repr(line) for line in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    return [
        Problem(
            f"{where} has a direct reference in Requires-Dist: {listed}{more}; PyPI refuses it "
            "and sandboxverify installs no dependency from a URL or a path",
            _DIRECT_REFERENCE_HINT,
        )
    ]


def _explained(error: Exception) -> str:
    cause = error.__cause__
    detail = str(cause).strip().splitlines()[0] if cause is not None and str(cause) else ""
    return f"{error} ({detail})" if detail and detail not in str(error) else str(error)


def _hint_for(field: str, text: str) -> str:
    if text.startswith("unrecognized field"):
        return (
            f"the build backend (or a plugin of it) wrote {field!r}, which the core metadata "
            "specification does not define: upgrade or fix the backend"
        )
    if field.startswith("metadata"):
        return REBUILD_HINT
    setting = _PYPROJECT_KEYS.get(field, f"what produces {field!r}")
    return _METADATA_HINT.format(setting=setting)


_METADATA_VERSION_LINE = re.compile(rb"^metadata-version:", re.IGNORECASE)
_UNKNOWN_CONTENT_TYPE = re.compile(rb"^description-content-type:\s*UNKNOWN\s*$", re.IGNORECASE)


def _lenient(data: bytes, as_version: str | None) -> bytes:
    """The headers as validated: 'UNKNOWN' content types (written by old setuptools for a
    missing value) dropped, and the Metadata-Version replaced when validated as another one."""
    kept: list[bytes] = []
    in_headers = True
    for line in data.split(b"\n"):
        bare = line.rstrip(b"\r")
        in_headers = in_headers and bool(bare)  # the body starts after the first blank line
        if in_headers and _UNKNOWN_CONTENT_TYPE.match(bare):
            continue
        if in_headers and as_version is not None and _METADATA_VERSION_LINE.match(bare):
            kept.append(b"Metadata-Version: " + as_version.encode("ascii") + line[len(bare) :])
        else:
            kept.append(line)
    return b"\n".join(kept)


def _validated_as(declared: str | None) -> str | None:
    """The Metadata-Version to validate as, when not the declared one: 2.0 (written by
    bdist_wheel for years, never standardised) as 2.1; a 2.x newer than this packaging knows as
    the newest it knows (the spec asks consumers to accept newer minor versions)."""
    known = _known_metadata_versions()
    if declared == "2.0" and "2.1" in known:
        return "2.1"
    if declared is None or declared in known:
        return None
    try:
        wanted = Version(declared)
    except InvalidVersion:
        return None
    newest = max((Version(v) for v in known), default=None)
    if newest is not None and wanted.major == newest.major and wanted > newest:
        return str(newest)
    return None


@cache
def _known_metadata_versions() -> frozenset[str]:
    """What the installed packaging validates (it grows with packaging releases)."""
    known: set[str] = set()
    for major, minors in ((1, range(3)), (2, range(1, 20))):
        for minor in minors:
            candidate = f"{major}.{minor}"
            raw: RawMetadata = {"metadata_version": candidate, "name": "x", "version": "1"}
            try:
                Metadata.from_raw(raw, validate=True)
            except ExceptionGroup:
                continue
            known.add(candidate)
    return frozenset(known)


@cache
def _unknown_fields() -> frozenset[str]:
    known = _known_metadata_versions()
    return frozenset().union(
        *(fields for version, fields in _LATER_FIELDS.items() if version not in known)
    )


def license_file_problems(
    filename: str, data: bytes, prefix: str, files: Sequence[str]
) -> list[Problem]:
    """Each License-File must be in the archive (``prefix``: where; a wheel's under
    ``.dist-info/licenses/``), as PyPI checks from Metadata-Version 2.4 on (before it, twine drops
    the field)."""
    raw, _ = parse_email(data)
    declared = raw.get("metadata_version") or ""
    try:
        checked = Version(declared) >= Version("2.4")
    except InvalidVersion:
        checked = False
    present = set(files)
    missing = [
        path for path in raw.get("license_files") or [] if checked and prefix + path not in present
    ]
    if not missing:
        return []
    where = prefix or "the top of the sdist"
    return [
        Problem(
            f"{filename}: License-File names files the archive lacks (at {where}): "
            + ", ".join(missing),
            "list existing files in [project] license-files and rebuild; a step that edits "
            "the archive after the build must keep them",
            installable=True,
            rule="license-file-missing",
            file=filename,
        )
    ]
