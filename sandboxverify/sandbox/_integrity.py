"""Whether untrusted code changed sandboxverify's own installation during a check.

The OS sandbox never shows it; in process isolation code from the package runs as the user and
could rewrite a module of ours, to change this verdict (every module the verdict needs is imported
before untrusted code runs, so that fails) or a later one. A check compares its installation
before and after, and a change fails the check (``host_modified``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

#: sandboxverify's own package directory
PACKAGE = Path(__file__).resolve().parents[1]

Fingerprint = Mapping[str, str]


def fingerprint(root: Path = PACKAGE) -> dict[str, str]:
    """Every file under ``root`` (bytecode caches aside), by relative path, with what says
    whether it was written. On POSIX that is what the file system keeps of it, read in a few
    milliseconds: inode, size, mode, and modification and change times. No process can set a
    change time back (setting the modification time back sets it to now), so a rewrite shows
    even when it keeps the size and restores the modification time. Elsewhere (Windows has no
    change time) it is a digest of the content."""
    found: dict[str, str] = {}
    # ``scandir`` rather than ``walk`` + ``lstat``: a check takes this twice, and the entries
    # of a directory read come with what ``lstat`` would say (a quarter of the time)
    pending = [(str(root), "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:  # a directory made unreadable is a change, never skipped
            found[prefix or "."] = f"unreadable: {exc.strerror or exc}"
            continue
        for entry in entries:
            name = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append((entry.path, name + "/"))
                continue
            try:
                state = _state(entry)
            except OSError as exc:
                state = f"unreadable: {exc.strerror or exc}"
            found[name] = state
    return found


def _state(entry: os.DirEntry[str]) -> str:
    if os.name != "posix":
        with open(entry.path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    stat = entry.stat(follow_symlinks=False)
    return f"{stat.st_ino} {stat.st_size} {stat.st_mode:o} {stat.st_mtime_ns} {stat.st_ctime_ns}"


def changes(before: Fingerprint, after: Fingerprint) -> list[str]:
    """What differs: ``changed x``, ``added y``, ``removed z``."""
    found = [f"changed {name}" for name in before if name in after and after[name] != before[name]]
    found += [f"added {name}" for name in after if name not in before]
    found += [f"removed {name}" for name in before if name not in after]
    return sorted(found, key=lambda text: text.split(" ", 1)[1])
