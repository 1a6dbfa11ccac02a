"""Bytecode for a new build environment, from the files an earlier one held.

An installer writes a build environment's modules without their bytecode, so the hook runner's
interpreter compiles the backend and everything it imports (hatchling and its dependencies:
~0.3 s) in every build, before the first hook runs. Each module's bytecode is kept here by the
sha256 of its source, compiled by sandboxverify itself (compiling runs no code) as a hash-based
pyc that Python does not check against the source (the key already is the source's content), and
written next to the same source in later build environments, whatever their path.

Only for the interpreter sandboxverify runs on (the bytecode's format is its own), and only in
the OS sandbox: with process isolation the build's code could write this cache and so reach the
builds of later checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path

#: modules kept; the least recently used go first
MAX_MODULES = 20_000
#: where a module's bytecode goes, beside its source
_TAG = sys.implementation.cache_tag
_MAGIC = importlib.util.MAGIC_NUMBER.hex()


class BytecodeCache:
    """Compiled modules by the sha256 of their source, for this interpreter."""

    def __init__(self, root: Path) -> None:
        self.root = root / f"{_TAG}-{_MAGIC}"

    def restore(self, environment: Path) -> int:
        """Write the bytecode this cache has for the sources of ``environment``'s
        site-packages next to them; how many sources it had none for."""
        missing = 0
        for source, digest in _sources(environment):
            cached = self._entry(digest)
            target = _pyc_of(source)
            if not cached.is_file():
                missing += 1
                continue
            if target.exists():
                continue
            with contextlib.suppress(OSError):
                target.parent.mkdir(exist_ok=True)
                shutil.copyfile(cached, target)
                os.utime(cached)  # recently used
        return missing

    def remember(self, environment: Path) -> int:
        """Compile what this cache lacks of ``environment``'s sources; how many were added.
        A source that does not compile is left out (it never imported either)."""
        added = 0
        for source, digest in _sources(environment):
            entry = self._entry(digest)
            if entry.is_file():
                continue
            with contextlib.suppress(OSError, py_compile.PyCompileError, ValueError):
                entry.parent.mkdir(parents=True, exist_ok=True)
                fd, partial = tempfile.mkstemp(prefix=".tmp-", dir=entry.parent)
                os.close(fd)
                try:
                    py_compile.compile(
                        str(source),
                        cfile=partial,
                        doraise=True,
                        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                    )
                    os.replace(partial, entry)
                    added += 1
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(partial)
        if added:
            self._prune()
        return added

    def _prune(self) -> None:
        kept: list[tuple[float, Path]] = []
        for entry in self.root.glob("*/*.pyc"):
            with contextlib.suppress(OSError):
                kept.append((entry.stat().st_mtime, entry))
        for _, entry in sorted(kept, reverse=True)[MAX_MODULES:]:
            with contextlib.suppress(OSError):
                entry.unlink()

    def _entry(self, digest: str) -> Path:
        return self.root / digest[:2] / f"{digest}.pyc"


def _sources(environment: Path) -> list[tuple[Path, str]]:
    """Every ``.py`` file of the environment's site-packages, with its sha256."""
    found: list[tuple[Path, str]] = []
    for site in [*environment.glob("lib/python*/site-packages"), environment / "Lib/site-packages"]:
        for directory, dirnames, filenames in os.walk(site):
            dirnames[:] = [name for name in dirnames if name != "__pycache__"]
            for name in filenames:
                if name.endswith(".py"):
                    path = Path(directory, name)
                    with contextlib.suppress(OSError):
                        found.append((path, hashlib.sha256(path.read_bytes()).hexdigest()))
    return found


def _pyc_of(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{_TAG}.pyc"
