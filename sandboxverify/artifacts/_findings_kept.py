"""What the static rules found in built artifacts, kept beside them in the artifact cache: a
re-check of an unchanged project reads its artifacts' findings back instead of inspecting them
again (~60 ms, most of it importing the metadata, ``pyproject.toml`` and README machinery).

Findings are read back only by the code that found them. The record names that code: the
interpreter, sandboxverify's version, the sources of the static rules (each file's path, size
and modification time, so an edited checkout counts as new code) and every distribution
installed beside sandboxverify (each ``.dist-info`` name carries the version: packaging,
trove-classifiers, validate-pyproject, readme-renderer...). Anything else, or a record that
does not read back exactly, and the artifacts are inspected again.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Union

from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify._version import __version__
from sandboxverify.artifacts._artifacts import (
    Artifact,
    ArtifactProblem,
    inspect_sdist,
    inspect_wheel,
    sha256_of,
)
from sandboxverify.artifacts._rules import Problem
from sandboxverify.runtime import EntryPointRef

#: an artifact's inspection: the artifact, or every problem found in it
Outcome = Union[Artifact, ArtifactProblem]

#: the static rules' code: this package (the entry points' parser is the runtime's)
_HERE = Path(__file__).resolve().parent
_METADATA_DIRS = (".dist-info", ".egg-info")


def inspect(path: Path) -> Outcome:
    """The static rules applied to one artifact."""
    try:
        return inspect_wheel(path) if path.name.endswith(".whl") else inspect_sdist(path)
    except ArtifactProblem as exc:
        return exc


@cache
def inspector() -> str:
    """What the code that inspects is, as a digest: equal only for the same code."""
    digest = hashlib.sha256(f"{sys.version}\0{__version__}\0".encode())
    sources = sorted(_HERE.glob("*.py"))
    sources.append(Path(sys.modules[EntryPointRef.__module__].__file__ or ""))
    for source in sources:
        status = source.stat()
        digest.update(f"{source}\0{status.st_size}\0{status.st_mtime_ns}\0".encode())
    for entry in sys.path:
        if os.path.basename(entry) in ("site-packages", "dist-packages"):
            try:
                names = sorted(name for name in os.listdir(entry) if name.endswith(_METADATA_DIRS))
            except OSError:
                continue
            digest.update(f"{entry}\0{names}\0".encode())
    return digest.hexdigest()


def record_of(paths: Sequence[Path], outcomes: Sequence[Outcome]) -> dict[str, Any] | None:
    """The findings as JSON, for :func:`read_back` (``None``: an artifact is unreadable now)."""
    try:
        artifacts = {path.name: _outcome_record(path, o) for path, o in zip(paths, outcomes)}
    except OSError:
        return None
    return {"inspector": inspector(), "artifacts": artifacts}


def read_back(
    record: object, paths: Sequence[Path], digests: Mapping[str, str]
) -> list[Outcome] | None:
    """The findings of ``paths`` (whose sha256 are ``digests``, by file name) as
    :func:`record_of` wrote them; ``None`` when the record is of other code or other files,
    or not one :func:`record_of` wrote."""
    try:
        if not isinstance(record, dict) or record.get("inspector") != inspector():
            return None
        artifacts = record["artifacts"]
        if sorted(artifacts) != sorted(path.name for path in paths):
            return None
        if any(artifacts[path.name]["sha256"] != digests.get(path.name) for path in paths):
            return None
        return [_outcome(artifacts[path.name], path) for path in paths]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _outcome_record(path: Path, outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Artifact):
        return {"sha256": outcome.sha256, "artifact": _artifact_record(outcome)}
    artifact = outcome.artifact
    return {
        "sha256": artifact.sha256 if artifact is not None else sha256_of(path),
        "problems": [_problem_record(p) for p in (*outcome.problems, *outcome.warnings)],
        "files": list(outcome.files),
        "artifact": _artifact_record(artifact) if artifact is not None else None,
    }


def _outcome(record: dict[str, Any], path: Path) -> Outcome:
    artifact = record["artifact"]
    if "problems" not in record:
        return _artifact(artifact, path)
    return ArtifactProblem(
        *(_problem(p) for p in record["problems"]),
        files=_strings(record["files"]),
        artifact=_artifact(artifact, path) if artifact is not None else None,
    )


def _artifact_record(artifact: Artifact) -> dict[str, Any]:
    return {
        "kind": artifact.kind,
        "name": artifact.name,
        "version": str(artifact.version),
        "sha256": artifact.sha256,
        "tags": sorted([t.interpreter, t.abi, t.platform] for t in artifact.tags),
        "top_level": sorted(artifact.top_level),
        "entry_points": [[e.name, e.group, e.value] for e in artifact.entry_points],
        "requires_python": artifact.requires_python,
        "files": list(artifact.files),
        "dependencies": sorted(artifact.dependencies),
        "warnings": [_problem_record(p) for p in artifact.warnings],
    }


def _artifact(record: dict[str, Any], path: Path) -> Artifact:
    kind = record["kind"]
    if kind not in ("sdist", "wheel"):
        raise ValueError(f"not an artifact kind: {kind!r}")
    requires_python = record["requires_python"]
    return Artifact(
        kind,
        path,
        canonicalize_name(str(record["name"])),
        Version(str(record["version"])),
        str(record["sha256"]),
        frozenset(Tag(*_strings(tag)) for tag in record["tags"]),
        frozenset(_strings(record["top_level"])),
        tuple(EntryPointRef(*_strings(e)) for e in record["entry_points"]),
        None if requires_python is None else str(requires_python),
        _strings(record["files"]),
        frozenset(_strings(record["dependencies"])),
        tuple(_problem(p) for p in record["warnings"]),
    )


def _problem_record(problem: Problem) -> dict[str, Any]:
    return {
        "message": problem.message,
        "hint": problem.hint,
        "installable": problem.installable,
        "rule": problem.rule,
        "file": problem.file,
        "given": problem.given,
    }


def _problem(record: dict[str, Any]) -> Problem:
    rule, file = record["rule"], record["file"]
    return Problem(
        str(record["message"]),
        str(record["hint"]),
        installable=record["installable"] is True,
        rule=None if rule is None else str(rule),
        file=None if file is None else str(file),
        given=record["given"] is True,
    )


def _strings(values: object) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError("not a list of strings")
    return tuple(values)
