"""Build environments' bytecode kept by the content of each source: compiled once, written
next to the same source in a later environment at another path, and used by Python there; a
changed source gets none, a source that does not compile is left out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxverify.artifacts import _bytecode
from sandboxverify.artifacts._bytecode import BytecodeCache

TAG = sys.implementation.cache_tag


def environment(root: Path, files: dict[str, str]) -> Path:
    """A stand-in for a build environment: ``files`` in its site-packages."""
    site = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for name, text in files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def site_of(env: Path) -> Path:
    [site] = env.glob("lib/python*/site-packages")
    return site


FILES = {
    "backend/__init__.py": "VALUE = 'compiled once'\n",
    "backend/hooks.py": "def build():\n    return 'wheel'\n",
    "broken.py": "def (:\n",  # never imports: no bytecode
}


def test_bytecode_compiled_for_one_environment_is_used_in_another(tmp_path: Path) -> None:
    cache = BytecodeCache(tmp_path / "cache")
    first = environment(tmp_path / "first", FILES)
    assert cache.restore(first) == 3  # an empty cache: nothing for any source
    assert cache.remember(first) == 2
    assert cache.remember(first) == 0  # kept: nothing compiled twice

    second = environment(tmp_path / "second", FILES)
    assert cache.restore(second) == 1  # only the source that does not compile
    pyc = site_of(second) / "backend" / "__pycache__" / f"hooks.{TAG}.pyc"
    assert pyc.is_file()
    assert not (site_of(second) / "__pycache__" / f"broken.{TAG}.pyc").exists()
    written = pyc.stat().st_mtime_ns

    code = "import backend.hooks as h; print(h.__cached__); print(h.build())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site_of(second))},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(pyc), "wheel"]
    assert pyc.stat().st_mtime_ns == written  # read, not compiled again


def test_a_changed_source_gets_no_bytecode_of_the_old_one(tmp_path: Path) -> None:
    cache = BytecodeCache(tmp_path / "cache")
    cache.remember(environment(tmp_path / "first", FILES))
    changed = {**FILES, "backend/hooks.py": "def build():\n    return 'sdist'\n"}
    later = environment(tmp_path / "later", changed)

    assert cache.restore(later) == 2  # the changed source, and the one that does not compile
    assert not (site_of(later) / "backend" / "__pycache__" / f"hooks.{TAG}.pyc").exists()
    assert (site_of(later) / "backend" / "__pycache__" / f"__init__.{TAG}.pyc").is_file()


def test_the_least_recently_used_modules_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bytecode, "MAX_MODULES", 2)
    cache = BytecodeCache(tmp_path / "cache")
    cache.remember(environment(tmp_path / "a", {"one.py": "A = 1\n", "two.py": "B = 2\n"}))
    for entry in cache.root.glob("*/*.pyc"):  # long ago: the clock's resolution cannot tie
        os.utime(entry, (1_000_000, 1_000_000))
    assert cache.restore(environment(tmp_path / "b", {"two.py": "B = 2\n"})) == 0  # used
    cache.remember(environment(tmp_path / "c", {"three.py": "C = 3\n"}))

    assert len(list(cache.root.glob("*/*.pyc"))) == 2
    assert cache.restore(environment(tmp_path / "d", {"two.py": "B = 2\n"})) == 0
    assert cache.restore(environment(tmp_path / "e", {"one.py": "A = 1\n"})) == 1  # gone
