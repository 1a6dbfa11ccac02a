"""A change to sandboxverify's own files during a check is found."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandboxverify.sandbox._integrity import changes, fingerprint


def test_changed_added_and_removed_files_are_found_bytecode_aside(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a")
    (tmp_path / "b.py").write_text("b")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.py").write_text("c")
    before = fingerprint(tmp_path)

    (tmp_path / "a.py").write_text("import os; os._exit(0)\na")
    (tmp_path / "b.py").unlink()
    (tmp_path / "sub" / "d.py").write_text("d")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"")

    assert changes(before, fingerprint(tmp_path)) == [
        "changed a.py",
        "removed b.py",
        "added sub/d.py",
    ]
    assert changes(before, before) == []


def test_a_rewrite_that_keeps_the_size_and_the_modification_time_is_found(
    tmp_path: Path,
) -> None:
    target = tmp_path / "verdict.py"
    target.write_text("OK = False\n")
    before_stat = target.stat()
    before = fingerprint(tmp_path)
    time.sleep(0.05)  # past the file system's timestamp granularity, as any later write is

    target.write_text("OK = True!\n")  # same size
    os.utime(target, ns=(before_stat.st_atime_ns, before_stat.st_mtime_ns))

    assert target.stat().st_size == before_stat.st_size
    assert target.stat().st_mtime_ns == before_stat.st_mtime_ns
    assert changes(before, fingerprint(tmp_path)) == ["changed verdict.py"]


def test_a_directory_that_cannot_be_read_is_a_change_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory made unreadable (chmod 000: root reads it anyway, so the refusal is
    simulated) must not hide what it holds, nor stop the check."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.py").write_text("c")
    before = fingerprint(tmp_path)
    scandir = os.scandir

    def refusing(path: str) -> object:
        if path.endswith("sub"):
            raise PermissionError(13, "Permission denied")
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert changes(before, fingerprint(tmp_path)) == ["added sub/", "removed sub/c.py"]
