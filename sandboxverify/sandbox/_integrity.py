"""Whether untrusted code changed sandboxverify's own installation during a check.

The OS sandbox never shows it; in process isolation code from the package runs as the user and
could rewrite a module of ours, to change this verdict (every module the verdict needs is imported
before untrusted code runs, so that fails) or a later one. A check compares its installation
before and after, and a change fails the check (``host_modified``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

#: sandboxverify's own package directory
PACKAGE = Path(__file__).resolve().parents[1]

Fingerprint = Mapping[str, str]


def fingerprint(root: Path = PACKAGE) -> dict[str, str]:
    """Every file under ``root`` (bytecode caches aside), by relative path, with its digest."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            digest = f"unreadable: {exc.strerror or exc}"
        found[str(path.relative_to(root))] = digest
    return found


def changes(before: Fingerprint, after: Fingerprint) -> list[str]:
    """What differs: ``changed x``, ``added y``, ``removed z``."""
    found = [f"changed {name}" for name in before if name in after and after[name] != before[name]]
    found += [f"added {name}" for name in after if name not in before]
    found += [f"removed {name}" for name in before if name not in after]
    return sorted(found, key=lambda text: text.split(" ", 1)[1])
