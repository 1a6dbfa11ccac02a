"""The artifact cache: what its key covers, what it stores, and what it refuses to trust."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sandboxverify.artifacts import _cache
from sandboxverify.artifacts._cache import ArtifactCache, default_root, tree_digest


def tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return root


def test_every_change_to_the_tree_changes_its_digest(tmp_path: Path) -> None:
    root = tree(tmp_path / "t")
    first = tree_digest(root)
    assert first is not None and tree_digest(root) == first

    changes: list[Callable[[], object]] = [
        lambda: (root / "pkg" / "__init__.py").write_text("VALUE = 2\n"),
        lambda: (root / "notes.txt").write_text("not in git, still in the copy\n"),
        (root / "empty").mkdir,
        lambda: (root / "pkg" / "__init__.py").chmod(0o755),
        lambda: (root / "link").symlink_to("pkg/__init__.py"),
        lambda: (root / "notes.txt").rename(root / "pkg" / "notes.txt"),
    ]
    seen = {first}
    for change in changes:
        change()
        digest = tree_digest(root)
        assert digest is not None
        assert digest not in seen
        seen.add(digest)


def test_a_symlink_out_of_the_tree_makes_it_uncacheable(tmp_path: Path) -> None:
    root = tree(tmp_path / "t")
    (tmp_path / "outside.txt").write_text("may change unseen\n")
    (root / "data.txt").symlink_to(tmp_path / "outside.txt")

    assert tree_digest(root) is None


def artifacts(tmp_path: Path) -> list[Path]:
    built = tmp_path / "built"
    built.mkdir()
    (built / "demo-1.0.tar.gz").write_bytes(b"sdist bytes")
    (built / "demo-1.0-py3-none-any.whl").write_bytes(b"wheel bytes")
    return sorted(built.iterdir())


def test_an_entry_comes_back_byte_for_byte(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    files = artifacts(tmp_path)
    cache.put("k" * 64, files)

    got = cache.get("k" * 64, tmp_path / "dist")

    assert got is not None
    assert [p.name for p in got.paths] == [p.name for p in files]
    assert [p.read_bytes() for p in got.paths] == [p.read_bytes() for p in files]
    assert got.digests == {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    assert got.findings is None
    assert cache.get("other", tmp_path / "dist2") is None
    # nothing half-written is left next to the entries
    assert [p.name for p in (tmp_path / "cache" / "artifacts").iterdir()] == ["k" * 64]


def test_findings_are_kept_with_the_entry_and_recorded_later(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    files = artifacts(tmp_path)
    cache.put("k" * 64, files, findings={"found": 1})
    cache.put("j" * 64, files)

    kept = cache.get("k" * 64, tmp_path / "dist")
    cache.remember_findings("j" * 64, {"found": 2})
    recorded = cache.get("j" * 64, tmp_path / "dist2")
    cache.remember_findings("gone", {"found": 3})  # no entry: nothing is written

    assert kept is not None and kept.findings == {"found": 1}
    assert recorded is not None and recorded.findings == {"found": 2}
    assert sorted(p.name for p in (tmp_path / "cache" / "artifacts").iterdir()) == [
        "j" * 64,
        "k" * 64,
    ]
    assert sorted(p.name for p in (tmp_path / "cache" / "artifacts" / ("j" * 64)).iterdir()) == [
        "demo-1.0-py3-none-any.whl",
        "demo-1.0.tar.gz",
        "entry.json",
    ]


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda entry: (entry / "demo-1.0-py3-none-any.whl").write_bytes(b"tampered"),
        lambda entry: (entry / "demo-1.0.tar.gz").unlink(),
        lambda entry: (entry / "entry.json").write_text("{not json"),
        lambda entry: (entry / "entry.json").write_text(
            json.dumps({"files": [{"filename": "../escape.whl", "sha256": "0"}]})
        ),
    ],
    ids=["changed-file", "missing-file", "unreadable-entry", "path-in-entry"],
)
def test_an_entry_that_does_not_verify_is_removed_not_trusted(
    tmp_path: Path, corrupt: object
) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    cache.put("k" * 64, artifacts(tmp_path))
    entry = tmp_path / "cache" / "artifacts" / ("k" * 64)
    corrupt(entry)  # type: ignore[operator]

    assert cache.get("k" * 64, tmp_path / "dist") is None
    assert not entry.exists()
    assert not (tmp_path / "escape.whl").exists()
    assert list((tmp_path / "dist").glob("*")) == []


def test_the_least_recently_used_entries_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cache, "MAX_ENTRIES", 2)
    cache = ArtifactCache(tmp_path / "cache")
    files = artifacts(tmp_path)
    for number, key in enumerate(("a", "b", "c")):
        cache.put(key, files)
        os.utime(tmp_path / "cache" / "artifacts" / key / "entry.json", (number, number))
    assert cache.get("a", tmp_path / "dist") is None  # pruned when "c" came
    assert cache.get("b", tmp_path / "dist") is not None  # used now: the newest
    cache.put("d", files)

    assert sorted(p.name for p in (tmp_path / "cache" / "artifacts").iterdir()) == ["b", "d"]


def test_where_the_cache_lives(tmp_path: Path) -> None:
    assert default_root({"SANDBOXVERIFY_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert default_root({"XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/sandboxverify")
    assert default_root({"XDG_CACHE_HOME": "relative"}) == Path.home() / ".cache/sandboxverify"


def test_what_a_backend_imported_is_remembered_per_backend(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    hatchling = {"requires": ["hatchling"], "build-backend": "hatchling.build"}
    assert cache.preload(hatchling) == []

    cache.remember_preload(hatchling, ["hatchling.builders.wheel", "pathspec"])

    assert cache.preload(hatchling) == ["hatchling.builders.wheel", "pathspec"]
    assert cache.preload({**hatchling, "requires": ["hatchling<1.20"]}) == []
