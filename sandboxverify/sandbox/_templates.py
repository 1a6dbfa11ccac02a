"""A sandbox's environment copied from what its backend made there before, in ~2 ms.

Making an empty environment (``uv venv``: ~20 ms alone, twice that beside a build) is the one
step of a re-check that nothing before it can start: the install waits for it. What the
backend writes depends only on its command line (the interpreter, the environment's path: a
slot, the same check after check), the backend's and the interpreter's files and its
environment variables; an empty environment, copied right after the backend made it, before
anything was installed, is kept under a key of all of these and copied in place of running the
backend again: the same files, at the same path.

The runtime is kept the same way (:func:`runtime_template_for`): the copy of our stdlib-only
files every sandbox reads, bound read-only into each, instead of a copy per check (~100 files:
a ``cp`` of 25 ms alone, four times that beside a check's other processes, then removed again).

Only where nothing a check runs can write the copies (the OS sandbox; see ``RunContext``) are
they kept or used, and only in the cache directory, beside the artifacts they serve.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandboxverify.sandbox._subprocess import COPY_TIMEOUT, query

#: per-check temporary directories: the same environment whatever they are
_TEMPORARY = ("TMPDIR", "TEMP", "TMP")
#: kept runtimes beyond the newest few are removed once no check has used them for this long
#: (a check still reading one is never that old)
_RUNTIMES_KEPT = 4
_IDLE_SECONDS = 24 * 3600


def template_for(root: Path, argv: Sequence[str], env: Mapping[str, str]) -> Path | None:
    """Where the environment ``argv`` makes is kept (it may not be there yet); ``None`` when
    the backend or the interpreter cannot be told apart from another (gone, unreadable)."""
    try:
        identities = [_identity(argv[0]), *(_identity(arg) for arg in argv if _is_file(arg))]
    except OSError:
        return None
    inputs = {
        "argv": list(argv),
        "files": identities,
        "env": {name: value for name, value in env.items() if name not in _TEMPORARY},
    }
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return root / key[:32]


def runtime_template_for(root: Path, base: Path, sources: Sequence[str]) -> Path | None:
    """Where the runtime made of ``sources`` (relative to ``base``) is kept: keyed by the
    path, size and modification time of each, which a new version or an edit changes;
    ``None`` when one cannot be read."""
    try:
        identities = [
            [name, status.st_size, status.st_mtime_ns]
            for name in sorted(sources)
            for status in [os.stat(base / name)]
        ]
    except OSError:
        return None
    key = hashlib.sha256(json.dumps([str(base), identities]).encode()).hexdigest()
    return root / key[:32]


def used_template(template: Path) -> bool:
    """Whether ``template`` is kept; if so it is marked as just used (see
    :func:`keep_template`'s pruning)."""
    try:
        os.utime(template)
    except OSError:
        return False
    return template.is_dir()


def copy_template(template: Path, destination: Path) -> bool:
    """Make ``destination`` from ``template``; ``False`` (and nothing at ``destination``) when
    there is no template or it cannot be copied. One ``cp`` process, not a copy file by file
    here: beside a build's checks on another thread, every file's system calls would wait for
    the interpreter's lock (some 50 ms, against 2 alone)."""
    copier = shutil.which("cp")
    if copier is None or not template.is_dir() or destination.exists():
        return False
    if query([copier, "-a", "--", str(template), str(destination)], COPY_TIMEOUT) is None:
        shutil.rmtree(destination, ignore_errors=True)
        return False
    return True


def keep_template(made: Path, template: Path, *, prune: bool = False) -> None:
    """Keep a copy of the directory just made, staged and renamed into place: a reader never
    sees half of one, and of two checks keeping one at once one wins. By one ``cp`` process
    where there is one (none of the check's interpreter time). ``prune``: the newest few of
    ``template``'s siblings are kept, and those not used for a day. Best effort."""
    with contextlib.suppress(OSError):
        template.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=template.parent))
        try:
            copier = shutil.which("cp")
            argv = [copier, "-a", "--", str(made), str(staging / "env")] if copier else None
            if argv is None or query(argv, COPY_TIMEOUT) is None:
                shutil.rmtree(staging / "env", ignore_errors=True)
                shutil.copytree(made, staging / "env", symlinks=True)
            (staging / "env").rename(template)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if prune:
            _prune(template.parent)


def _prune(root: Path) -> None:
    kept = sorted(
        (path for path in root.iterdir() if not path.name.startswith(".")),
        key=lambda path: path.stat().st_mtime,
        reverse=True,
    )
    for path in kept[_RUNTIMES_KEPT:]:
        if time.time() - path.stat().st_mtime > _IDLE_SECONDS:
            shutil.rmtree(path, ignore_errors=True)


def _identity(path: str) -> list[object]:
    real = os.path.realpath(path)
    status = os.stat(real)
    return [real, status.st_size, status.st_mtime_ns]


def _is_file(arg: str) -> bool:
    return os.path.isabs(arg) and os.path.isfile(arg)
