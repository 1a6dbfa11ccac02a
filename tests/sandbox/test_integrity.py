"""A change to sandboxverify's own files during a check is found."""

from __future__ import annotations

from pathlib import Path

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
