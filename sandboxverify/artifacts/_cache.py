"""The artifact cache: a project that has not changed is not built again.

An entry is keyed by everything a build reads: the content of every file of the copy of the
tree the backend builds from (the copy skips only environments and caches, so files VCS-ignored
that a backend could include count; ``pyproject.toml`` and with it ``build-system.requires`` and
the backend's name among them), the variables that steer a build or its installer, the index
options, the frontend, the interpreter that builds and the version of sandboxverify (with its
hook runner). A symlink that leaves the tree makes the build uncacheable: what it points at
could change unseen.

Entries live under the user's cache directory (``SANDBOXVERIFY_CACHE_DIR``, else
``$XDG_CACHE_HOME/sandboxverify`` or the platform's equivalent), are written to a temporary
directory and renamed into place (a reader never sees half an entry), and are trusted only when
every file still has the sha256 the entry recorded: anything else is removed and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify._version import __version__

ENV_VAR = "SANDBOXVERIFY_CACHE_DIR"
#: Entries kept; the least recently used go first.
MAX_ENTRIES = 32
_ENTRY = "entry.json"
_ABANDONED_SECONDS = 3600.0
_CHUNK = 1 << 20
#: the hook runner builds what is cached: a changed runner is a changed build
_RUNNER = Path(__file__).resolve().parents[1] / "runtime" / "_pep517.py"


def default_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    home = Path.home()
    if sys.platform == "win32":  # pragma: no cover
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / "sandboxverify" / "Cache"
    if sys.platform == "darwin":  # pragma: no cover
        return home / "Library" / "Caches" / "sandboxverify"
    xdg = env.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else home / ".cache") / "sandboxverify"


def tree_digest(root: Path) -> str | None:
    """sha256 of what the tree holds: every path, its kind, its executable bit, the content of
    files and the target of symlinks; ``None`` when a symlink leaves the tree."""
    digest = hashlib.sha256()
    real_root = root.resolve()
    for directory, dirnames, filenames in os.walk(root):
        here = Path(directory)
        dirnames.sort()
        names = sorted([*dirnames, *filenames])
        for name in names:
            path = here / name
            relative = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                target = os.readlink(path)
                resolved = path.resolve()
                if resolved != real_root and real_root not in resolved.parents:
                    return None
                _field(digest, "link", relative, target.encode())
            elif stat.S_ISDIR(mode):
                _field(digest, "dir", relative, b"")
            elif stat.S_ISREG(mode):
                executable = b"x" if mode & 0o111 else b"-"
                _field(digest, "file", relative, executable + _file_sha256(path).encode())
    return digest.hexdigest()


def cache_key(tree: str, *, frontend: str, index: Mapping[str, Any], env: Mapping[str, str]) -> str:
    inputs = {
        "sandboxverify": __version__,
        "runner": _file_sha256(_RUNNER),
        "python": [sys.version, sys.implementation.cache_tag, platform.machine(), sys.platform],
        "frontend": frontend,
        "index": dict(index),
        "env": dict(sorted(env.items())),
        "tree": tree,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


@frozen
class CachedBuild:
    """An entry's files, copied out and verified, and what was recorded about them."""

    paths: list[Path]
    #: the sha256 of each file (by name), as verified
    digests: dict[str, str]
    #: what the static rules found in them (``_findings_kept``), if that was recorded
    findings: object = None


class ArtifactCache:
    def __init__(self, root: Path) -> None:
        self.root = root / "artifacts"
        self.hints = root / "preload"
        #: build environments' bytecode, by source (``_bytecode``)
        self.bytecode = root / "bytecode"

    def preload(self, backend: Mapping[str, Any]) -> list[str]:
        """The modules of its build environment a backend's hooks imported last time: the hook
        runner imports them before it forks a process per hook (only a head start: a wrong list
        costs time, never a result)."""
        try:
            names = json.loads((self.hints / _hint_name(backend)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(n) for n in names] if isinstance(names, list) else []

    def remember_preload(self, backend: Mapping[str, Any], names: Sequence[str]) -> None:
        try:
            self.hints.mkdir(parents=True, exist_ok=True)
            target = self.hints / _hint_name(backend)
            partial = target.with_name(f".{target.name}.{os.getpid()}")
            partial.write_text(json.dumps(sorted(set(names))), encoding="utf-8")
            os.replace(partial, target)
        except OSError:
            return

    def get(self, key: str, destination: Path) -> CachedBuild | None:
        """The entry's files copied into ``destination``, each verified against the sha256
        recorded; ``None`` (and the entry removed) when anything does not match."""
        entry = self.root / key
        try:
            document = json.loads((entry / _ENTRY).read_text(encoding="utf-8"))
            files = document["files"]
        except (OSError, ValueError, KeyError, TypeError):
            if entry.exists():
                self._discard(entry)
            return None
        destination.mkdir(parents=True, exist_ok=True)
        copied: list[Path] = []
        digests: dict[str, str] = {}
        try:
            for item in files:
                name, expected = str(item["filename"]), str(item["sha256"])
                if Path(name).name != name:
                    raise ValueError(f"not a file name: {name!r}")
                target = destination / name
                copied.append(target)
                if _copy_hashed(entry / name, target) != expected:
                    raise ValueError(f"{name} changed in the cache")
                digests[name] = expected
        except (OSError, ValueError, KeyError, TypeError):
            for path in copied:
                path.unlink(missing_ok=True)
            self._discard(entry)
            return None
        os.utime(entry / _ENTRY)  # recently used
        return CachedBuild(copied, digests, document.get("findings"))

    def put(self, key: str, files: Sequence[Path], findings: object = None) -> None:
        """Store ``files`` under ``key`` (with what the static rules found in them, as JSON);
        a cache that cannot be written is no cache."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        except OSError:
            return
        try:
            recorded = []
            for path in files:
                recorded.append(
                    {"filename": path.name, "sha256": _copy_hashed(path, staging / path.name)}
                )
            document = {
                "files": recorded,
                "created": time.time(),
                "sandboxverify": __version__,
                "findings": findings,
            }
            (staging / _ENTRY).write_text(json.dumps(document), encoding="utf-8")
            os.replace(staging, self.root / key)
        except OSError:  # written meanwhile by another check, or no space: keep what is there
            shutil.rmtree(staging, ignore_errors=True)
            return
        self._prune()

    def remember_findings(self, key: str, findings: object) -> None:
        """Record what the static rules found in an entry's files (found again: the entry
        had none, or of other code); the entry is rewritten whole, never half."""
        entry = self.root / key / _ENTRY
        try:
            document = json.loads(entry.read_text(encoding="utf-8"))
            document["findings"] = findings
            text = json.dumps(document)
            descriptor, partial = tempfile.mkstemp(prefix=f".{_ENTRY}.", dir=entry.parent)
        except (OSError, ValueError, TypeError):
            return
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(partial, entry)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(partial)

    def _discard(self, entry: Path) -> None:
        """Out of the way first (a rename is atomic), then removed."""
        try:
            trash = Path(tempfile.mkdtemp(prefix=".trash-", dir=self.root))
            os.replace(entry, trash / "entry")
        except OSError:
            trash = entry
        shutil.rmtree(trash, ignore_errors=True)

    def _prune(self) -> None:
        entries = []
        for entry in self.root.iterdir():
            if entry.name.startswith("."):  # staging or trash a killed check left behind
                with contextlib.suppress(OSError):
                    if time.time() - entry.stat().st_mtime > _ABANDONED_SECONDS:
                        shutil.rmtree(entry, ignore_errors=True)
                continue
            try:
                entries.append(((entry / _ENTRY).stat().st_mtime, entry))
            except OSError:
                continue
        for _, entry in sorted(entries, reverse=True)[MAX_ENTRIES:]:
            self._discard(entry)


def _hint_name(backend: Mapping[str, Any]) -> str:
    inputs = {"backend": dict(backend), "python": sys.version, "sandboxverify": __version__}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest() + ".json"


def _field(digest: Any, kind: str, relative: str, value: bytes) -> None:
    digest.update(f"{kind}\0{relative}\0{len(value)}\0".encode())
    digest.update(value)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_hashed(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target``; the sha256 of what was copied."""
    digest = hashlib.sha256()
    with source.open("rb") as reader, target.open("wb") as writer:
        for chunk in iter(lambda: reader.read(_CHUNK), b""):
            digest.update(chunk)
            writer.write(chunk)
    return digest.hexdigest()
