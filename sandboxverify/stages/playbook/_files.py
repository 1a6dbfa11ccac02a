"""The files a playbook brings along: what a ``.py`` playbook names next to it (a trace to replay,
snapshots, data), and plugin files a TOML playbook names. They travel with the playbook into
the sandbox, read-only, in the same places relative to it, so a playbook that works with
``sandboxverify run`` works under ``check --smoke``.

A ``.py`` playbook names a file by a string in its code: every string constant that is the path
of an existing file or directory at or below the playbook's directory counts (``"run.jsonl"``,
``"__snapshots__"``, ``"data/plans.json"``, ``"plugins/guard.py:setup"``). Nothing outside that
directory travels, and symbolic links that leave it are left out; a playbook naming more than a
few thousand files or tens of megabytes is a usage error, not a silent copy of the world.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from sandboxverify._errors import UsageError

#: at most this much travels with one playbook
MAX_FILES = 2000
MAX_BYTES = 64 * 1024 * 1024
_PLUGIN_FILE = re.compile(r"(?P<path>.+\.py)(?::[A-Za-z_][A-Za-z0-9_.]*)?")


def named_in_script(script: Path) -> tuple[str, ...]:
    """The paths, relative to the script's directory (POSIX spelling), its string constants
    name; each a file or a directory, in the order first named."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return ()  # the script's own run reports what is wrong with it
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return _beside(script.parent, strings)


def plugin_file(spec: str) -> tuple[str, str] | None:
    """``(path, ":attr" or "")`` if the plugin spec names a file (``path/plugin.py[:attr]``)."""
    match = _PLUGIN_FILE.fullmatch(spec.strip())
    if match is None:
        return None
    return match.group("path"), spec.strip()[len(match.group("path")) :]


def _beside(folder: Path, names: Iterable[str]) -> tuple[str, ...]:
    root = folder.resolve()
    found: dict[str, None] = {}
    for written in names:
        plugin = _PLUGIN_FILE.fullmatch(written.strip())
        name = plugin.group("path") if plugin else written
        if not 0 < len(name) < 400 or "\n" in name or "\0" in name or os.path.isabs(name):
            continue
        try:
            resolved = (root / name).resolve()
        except (OSError, RuntimeError):
            continue
        if resolved == root or root not in resolved.parents or not resolved.exists():
            continue
        found[resolved.relative_to(root).as_posix()] = None
    return tuple(found)


def travelling(source: Path, named: Iterable[str]) -> tuple[Path, ...]:
    """The files that travel for ``named`` (relative to ``source``): each named file, and the
    files below each named directory; a usage error past the limits."""
    root = source.resolve()
    files: list[Path] = []
    size = 0
    for relative in named:
        for path in _walk(root / PurePosixPath(relative), root):
            files.append(path)
            size += path.stat().st_size
            if len(files) > MAX_FILES or size > MAX_BYTES:
                raise UsageError(
                    f"the playbook names {relative!r}, and with it more than {MAX_FILES} files or "
                    f"{MAX_BYTES // (1024 * 1024)} MB would travel into the sandbox",
                    hint="name the files the playbook needs, not a directory above them",
                )
    return tuple(files)


def copy_travelling(source: Path, files: Iterable[Path], destination: Path) -> None:
    """``files`` (below ``source``) into ``destination`` at the same places, read-only."""
    root = source.resolve()
    for path in files:
        target = destination / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        target.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def _walk(path: Path, root: Path) -> Iterable[Path]:
    """The regular files at ``path`` (itself, or below it), none of them a link out of ``root``."""
    if path.is_file():
        yield path
        return
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            file = Path(folder, name)
            if file.is_symlink() and root not in file.resolve().parents:
                continue
            if file.is_file():
                yield file
