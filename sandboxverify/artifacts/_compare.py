"""A given wheel and the wheel built from the given sdist, compared by what they hold.

Contents, never bytes: two builds of one source are rarely byte-identical (timestamps, the order
of members, a backend's version in ``WHEEL`` and with it RECORD's hashes), and what an installer
puts in place is files and metadata. Compared: the files outside ``.dist-info`` (modules,
package data, the ``.data`` directory's scripts and headers), Requires-Dist, Provides-Extra,
Requires-Python and the entry points. Left out: what a repair tool vendors into a platform wheel
(auditwheel's and delvewheel's ``<name>.libs/``, delocate's ``.dylibs/``): a wheel built here is
never repaired.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.artifacts._archives import UnsafeArchive, read_zip_member
from sandboxverify.artifacts._artifacts import UNREADABLE, Artifact
from sandboxverify.artifacts._rules import few
from sandboxverify.report import Failure

if TYPE_CHECKING:
    from packaging.metadata import RawMetadata

#: the hint when the wheel built from the sdist lacks what the given wheel has
SDIST_LACKS = (
    "the sdist does not hold everything the given wheel was built from: include it in the sdist "
    "(hatchling: [tool.hatch.build.targets.sdist]; setuptools: MANIFEST.in or package-data; "
    "flit: [tool.flit.sdist]), and build the wheel from the sdist (uv build, python -m build: "
    "not --sdist --wheel) so the two always agree"
)
#: the hint when the given wheel lacks (or differs from) what its sdist builds
WHEEL_STALE = (
    "the given wheel was not built from what this sdist holds (a stale file in dist/, or a "
    "wheel built with other settings): build the sdist, then the wheel from it, in one step"
)
_METADATA_DIFFERS = (
    "the two builds wrote different metadata: it is computed at build time from something the "
    "sdist lacks or that changed between the builds (a file a dynamic field reads, the VCS, "
    "the environment); build the wheel from the sdist so the release agrees with itself"
)

#: the metadata compared as sets, by the name a reader knows them by
_FIELDS = {
    "Requires-Dist": "requires_dist",
    "Provides-Extra": "provides_extra",
    "entry points": "entry_points",
}


@frozen
class _Contents:
    """What a wheel holds, as comparable sets of text."""

    files: frozenset[str]
    requires_dist: frozenset[str]
    provides_extra: frozenset[str]
    requires_python: str
    entry_points: frozenset[str]


def compare_wheels(given: Artifact, built: Artifact, sdist: str) -> tuple[Failure, ...]:
    """Where ``given`` and ``built`` (the wheel built from the sdist named ``sdist``) differ:
    one ``artifact_mismatch`` per difference (the files, each metadata field)."""
    try:
        ours, theirs = _contents(given), _contents(built)
    except (UnsafeArchive, *UNREADABLE) as exc:  # inspected before: changed on disk since
        return (
            Failure(
                "artifact_mismatch",
                f"cannot compare {given.path.name} with {built.path.name}: {exc}",
                hint=WHEEL_STALE,
            ),
        )
    what = f"the given wheel {given.path.name} and the wheel built from {sdist} ({built.path.name})"
    failures: list[Failure] = []
    files = _difference(what, "files", ours.files, theirs.files)
    if files is not None:
        failures.append(
            Failure(
                "artifact_mismatch",
                files,
                hint=SDIST_LACKS if ours.files - theirs.files else WHEEL_STALE,
            )
        )
    for label, field in _FIELDS.items():
        difference = _difference(what, label, getattr(ours, field), getattr(theirs, field))
        if difference is not None:
            failures.append(Failure("artifact_mismatch", difference, hint=_METADATA_DIFFERS))
    if ours.requires_python != theirs.requires_python:
        failures.append(
            Failure(
                "artifact_mismatch",
                f"{what} differ in Requires-Python: {ours.requires_python or 'none'} in the given "
                f"wheel, {theirs.requires_python or 'none'} in the wheel built from the sdist",
                hint=_METADATA_DIFFERS,
            )
        )
    return tuple(failures)


def _difference(what: str, name: str, ours: frozenset[str], theirs: frozenset[str]) -> str | None:
    if ours == theirs:
        return None
    parts = []
    if ours - theirs:
        parts.append(f"only in the given wheel: {few(sorted(ours - theirs), 10)}")
    if theirs - ours:
        parts.append(f"only in the wheel built from the sdist: {few(sorted(theirs - ours), 10)}")
    return f"{what} differ in {name}: " + "; ".join(parts)


def _contents(wheel: Artifact) -> _Contents:
    metadata = [f for f in wheel.files if f.count("/") == 1 and f.endswith(".dist-info/METADATA")]
    raw: RawMetadata = {}
    if metadata:
        # with the email package it parses with (~20 ms): only where two wheels are compared
        from packaging.metadata import parse_email  # noqa: PLC0415

        with zipfile.ZipFile(wheel.path) as archive:
            raw, _ = parse_email(read_zip_member(archive, metadata[0]))
    return _Contents(
        files=frozenset(_installed_files(wheel.files)),
        requires_dist=frozenset(_requirements(raw.get("requires_dist") or [])),
        provides_extra=frozenset(canonicalize_name(e) for e in raw.get("provides_extra") or []),
        requires_python=_specifiers(wheel.requires_python),
        entry_points=frozenset(
            f"[{ref.group}] {ref.name} = {' '.join(ref.value.split())}"
            for ref in wheel.entry_points
        ),
    )


def _installed_files(files: Iterable[str]) -> Iterable[str]:
    """The wheel's files as installed: ``.dist-info`` left out (its metadata is compared field
    by field), the ``.data`` directory named the same whatever the name's spelling, and what a
    repair tool vendors left out."""
    for path in files:
        head, _, rest = path.partition("/")
        if head.endswith((".dist-info", ".libs")) or "/.dylibs/" in f"/{path}":
            continue
        yield f"<data>/{rest}" if head.endswith(".data") and rest else path


def _requirements(lines: Iterable[str]) -> Iterable[str]:
    """Requires-Dist as one spelling: names normalized, specifiers and markers as packaging
    writes them (``python_version<"3.11"`` and ``python_version < '3.11'`` are one)."""
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            yield " ".join(line.split())
            continue
        extras = ",".join(sorted(canonicalize_name(extra) for extra in requirement.extras))
        text = canonicalize_name(requirement.name) + (f"[{extras}]" if extras else "")
        text += f" @ {requirement.url}" if requirement.url else str(requirement.specifier)
        yield text + (f"; {requirement.marker}" if requirement.marker is not None else "")


def _specifiers(text: str | None) -> str:
    if not text:
        return ""
    try:
        return str(SpecifierSet(text))
    except InvalidSpecifier:
        return " ".join(text.split())
