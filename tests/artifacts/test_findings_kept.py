"""Findings kept in the artifact cache read back as the inspection that found them, and only
for the same files inspected by the same code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.artifacts import _findings_kept
from sandboxverify.artifacts._artifacts import Artifact, ArtifactProblem, sha256_of
from sandboxverify.artifacts._findings_kept import Outcome, inspect, read_back, record_of
from tests.artifacts.test_artifacts import PKG_INFO, make_sdist
from tests.helpers import make_wheel


def artifacts(directory: Path) -> list[Path]:
    """An sdist with warnings, a good wheel with an entry point, a wheel whose metadata PyPI
    refuses (an error, still installed) and one whose RECORD is wrong (an error, no artifact)."""
    good = make_wheel(
        directory,
        files={
            "demo/__init__.py": "",
            "demo-1.0.dist-info/entry_points.txt": "[demo.plugins]\nhello = demo:hello\n",
        },
    )
    (directory / "refused").mkdir()
    refused = make_wheel(
        directory / "refused",
        metadata="Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nLicense-Expression: MIT\n",
    )
    (directory / "tampered").mkdir()
    tampered = make_wheel(directory / "tampered", tampered=["demo/__init__.py"])
    return [make_sdist(directory, "demo-1.0.tar.gz", pkg_info=PKG_INFO), good, refused, tampered]


def facts(outcome: Outcome) -> Any:
    if isinstance(outcome, Artifact):
        return outcome
    return (str(outcome), outcome.problems, outcome.warnings, outcome.files, outcome.artifact)


def digests(paths: list[Path]) -> dict[str, str]:
    return {path.name: sha256_of(path) for path in paths}


def test_findings_read_back_as_they_were_found(tmp_path: Path) -> None:
    paths = artifacts(tmp_path)
    found = [inspect(path) for path in paths]
    # every kind of outcome is among them
    assert isinstance(found[0], Artifact) and found[0].warnings
    assert isinstance(found[1], Artifact) and found[1].entry_points
    assert isinstance(found[2], ArtifactProblem) and found[2].artifact is not None
    assert isinstance(found[3], ArtifactProblem) and found[3].artifact is None

    for entry in ([paths[0], paths[1]], [paths[2]], [paths[3]]):  # an entry's names differ
        # through JSON, as the cache keeps it
        record = json.loads(json.dumps(record_of(entry, [found[paths.index(p)] for p in entry])))
        back = read_back(record, entry, digests(entry))

        assert back is not None
        assert [facts(o) for o in back] == [facts(found[paths.index(p)]) for p in entry]


def test_findings_are_not_read_back_for_other_files_or_other_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = artifacts(tmp_path)[:2]
    record = record_of(paths, [inspect(path) for path in paths])
    known = digests(paths)

    assert read_back(record, paths, {**known, paths[1].name: "0" * 64}) is None
    assert read_back(record, paths[:1], known) is None
    assert read_back(None, paths, known) is None
    assert read_back({"inspector": record["inspector"]}, paths, known) is None  # type: ignore[index]
    damaged = json.loads(json.dumps(record))
    damaged["artifacts"][paths[1].name]["artifact"]["tags"] = [["py3", "none"]]
    assert read_back(damaged, paths, known) is None

    _findings_kept.inspector.cache_clear()
    monkeypatch.setattr("sys.version", "another interpreter")
    try:
        assert read_back(record, paths, known) is None
    finally:
        _findings_kept.inspector.cache_clear()


def test_an_edited_rule_is_other_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout whose static rules changed since the findings were recorded inspects again."""
    package = tmp_path / "artifacts"
    package.mkdir()
    rules = package / "_rules.py"
    rules.write_text("RULES = ()\n")
    monkeypatch.setattr(_findings_kept, "_HERE", package)
    _findings_kept.inspector.cache_clear()
    try:
        before = _findings_kept.inspector()
        rules.write_text("RULES = ('new',)\n")
        _findings_kept.inspector.cache_clear()
        assert _findings_kept.inspector() != before
    finally:
        _findings_kept.inspector.cache_clear()
