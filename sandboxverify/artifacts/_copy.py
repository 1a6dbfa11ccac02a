"""The copy of the project a build starts from: the user's source tree must stay byte-for-byte
unchanged, since build backends write into the tree they build (``*.egg-info``, ``build/``)."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

#: Never copied: environments, caches and VCS-ignored bulk that no sdist contains.
_SKIP_NAMES = frozenset(
    {
        "__pycache__",
        ".tox",
        ".nox",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".eggs",
        "node_modules",
    }
)


def copy_source(source: Path, destination: Path) -> None:
    """Copy the project to build it, leaving out environments, caches and special files.

    A symbolic link that stays inside the project becomes a relative link to the same place in
    the copy; one that leaves it (an absolute ``src``, say) is replaced by a copy of what it
    points at: nothing a build writes through a link may reach a real file. Like copytree,
    every file that cannot be copied is collected into one :class:`shutil.Error`."""
    root = source.resolve()
    errors: list[tuple[str, str, str]] = []
    _copy_tree(source, destination, _CopyRun(root, destination, errors), frozenset())
    if errors:
        raise shutil.Error(errors)


@dataclass(frozen=True)
class _CopyRun:
    root: Path
    destination: Path
    errors: list[tuple[str, str, str]]


def _copy_tree(source: Path, destination: Path, run: _CopyRun, ancestors: frozenset[Path]) -> None:
    ancestors = ancestors | {Path(os.path.realpath(source))}
    destination.mkdir(parents=True)
    try:
        names = sorted(os.listdir(source))
    except OSError as exc:
        run.errors.append((str(source), str(destination), str(exc)))
        return
    for name in names:
        if _skipped(source / name):
            continue
        item, target = source / name, destination / name
        try:
            if item.is_symlink():
                _copy_link(item, target, run, ancestors)
            elif item.is_dir():
                _copy_tree(item, target, run, ancestors)
            else:
                shutil.copy2(item, target)
        except OSError as exc:
            run.errors.append((str(item), str(target), str(exc)))
    try:
        shutil.copystat(source, destination)
    except OSError as exc:
        run.errors.append((str(source), str(destination), str(exc)))


_LOOP = "a symbolic link to a directory that contains it (a loop): remove it or point it elsewhere"


def _copy_link(link: Path, target: Path, run: _CopyRun, ancestors: frozenset[Path]) -> None:
    real = Path(os.path.realpath(link))
    if real == run.root or real.is_relative_to(run.root):
        # the same place in the copy: never a way back into the real tree
        inside = run.destination / real.relative_to(run.root)
        os.symlink(os.path.relpath(inside, target.parent), target)
    elif real.is_dir():
        # a directory that holds the one being copied (or the project) would never end
        if real in ancestors or run.root.is_relative_to(real):
            run.errors.append((str(link), str(target), _LOOP))
        else:
            _copy_tree(real, target, run, ancestors)
    elif real.is_file():
        shutil.copy2(real, target)
    # else dangling (or special) outside the project: nothing to copy, nothing to write through


def _skipped(path: Path) -> bool:
    return (
        path.name in _SKIP_NAMES
        or (path / "pyvenv.cfg").is_file()
        # pipes, sockets and devices are never sdist content (and a pipe would block the copy)
        or _special(path)
    )


def copy_problem(exc: BaseException) -> str:
    """The first file copytree could not copy (it collects them all in one shutil.Error)."""
    problems = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(problems, list) and problems and len(problems[0]) == 3:
        source, _, why = problems[0]
        return f"{source}: {why}" + (
            f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        )
    return str(exc)


def _special(path: Path) -> bool:
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))
