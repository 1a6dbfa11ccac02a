"""The copy of the project a build starts from: the user's source tree must stay byte-for-byte
unchanged, since build backends write into the tree they build (``*.egg-info``, ``build/``).

The tree is the package's, and untrusted: a symbolic link in it may point anywhere
(``leak.txt -> /proc/self/environ``, ``-> ~/.pypirc``), and what the copy holds is what the build
backend reads and may put in the package. So the copy never follows a link out of the project.
It walks the tree through directory file descriptors, each opened without following a link
(``O_NOFOLLOW`` guards only the last component of a path; a walk by descriptors has no other),
and reads each file through its directory's descriptor, ``O_NOFOLLOW``, checked to be a regular
file. A link is resolved component by component inside the project: one that stays inside
(chains, ``..``, an absolute path into the project) is kept as a link to the same place in the
copy; one that leaves is refused (:class:`OutsideLinks`, every one of them), unless the caller
asks for what such links point at to be copied (``--follow-external-links``; never anything under
``/proc``, ``/sys`` or ``/dev``).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

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
#: links followed one after another before the chain counts as a loop (as the kernel does)
_MAX_HOPS = 40
#: where a link never leads a copy, even when external links are followed
_PSEUDO = ("/proc", "/sys", "/dev")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
#: POSIX walks by descriptors; elsewhere (Windows) by paths whose every component was checked
_BY_DESCRIPTOR = {os.open, os.stat, os.readlink} <= os.supports_dir_fd and os.listdir in (
    os.supports_fd
)
_LOOP = "a symbolic link to a directory that contains it (a loop): remove it or point it elsewhere"


class OutsideLinks(Exception):
    """Symbolic links that lead out of the project, each with what it points at."""

    def __init__(self, links: Sequence[tuple[str, str]]) -> None:
        super().__init__(", ".join(f"{link} -> {target}" for link, target in links))
        self.links = tuple(links)


def copy_source(source: Path, destination: Path, *, follow_external: bool = False) -> None:
    """Copy the project to build it, leaving out environments, caches and special files.

    A symbolic link that stays inside the project becomes a relative link to the same place in
    the copy; one that leaves it is refused (:class:`OutsideLinks`), or with ``follow_external``
    replaced by a copy of what it points at (nothing a build writes through a link may reach a
    real file). Like copytree, every file that cannot be copied is collected into one
    :class:`shutil.Error`."""
    run = _CopyRun(os.path.realpath(source), destination, follow_external)
    _copy_tree(run.root, destination, run, frozenset())
    if run.outside:
        raise OutsideLinks(run.outside)
    if run.errors:
        raise shutil.Error(run.errors)


@dataclass
class _CopyRun:
    #: the project's real path: links are resolved inside it
    root: str
    destination: Path
    follow_external: bool
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    #: refused links: their path in the project, what they point at
    outside: list[tuple[str, str]] = field(default_factory=list)

    def shown(self, path: str) -> str:
        """``path`` as a message names it: relative to the project when inside it."""
        inside = _relative(path, self.root)
        return "/".join(inside) if inside else path


#: a directory being walked: its descriptor, or (without descriptors) its checked path
_Handle = Union[int, str]


def _at(directory: _Handle, name: str) -> tuple[str, int | None]:
    """``name`` in ``directory`` as the ``os`` functions take it: by descriptor, or by path."""
    if isinstance(directory, int):
        return name, directory
    return os.path.join(directory, name), None


def _open_directory(directory: _Handle | None, name: str) -> _Handle:
    """A directory to walk, never through a link (``directory=None``: ``name`` is a path)."""
    path, fd = (name, None) if directory is None else _at(directory, name)
    if not _BY_DESCRIPTOR:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise OSError(f"{path} became a symbolic link while it was copied")
        return path
    return os.open(path, _DIRECTORY, dir_fd=fd)


def _close(directory: _Handle) -> None:
    if isinstance(directory, int):
        os.close(directory)


def _copy_tree(source: str, destination: Path, run: _CopyRun, ancestors: frozenset[str]) -> None:
    """``source``, a real directory (no link on its path), into ``destination``."""
    try:
        handle = _open_directory(None, source)
    except OSError as exc:
        run.errors.append((source, str(destination), str(exc)))
        return
    try:
        _copy_from(handle, source, destination, run, ancestors | {source})
    finally:
        _close(handle)


def _copy_from(
    handle: _Handle, source: str, destination: Path, run: _CopyRun, ancestors: frozenset[str]
) -> None:
    destination.mkdir(parents=True)
    try:
        names = sorted(os.listdir(handle))
    except OSError as exc:
        run.errors.append((source, str(destination), str(exc)))
        return
    for name in names:
        item, target = os.path.join(source, name), destination / name
        try:
            path, fd = _at(handle, name)
            mode = os.stat(path, dir_fd=fd, follow_symlinks=False).st_mode
            if name in _SKIP_NAMES or not (
                stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)
            ):
                continue  # pipes, sockets and devices are never sdist content
            if stat.S_ISLNK(mode):
                _copy_link(os.readlink(path, dir_fd=fd), item, target, run, ancestors)
            elif stat.S_ISDIR(mode):
                _copy_subdirectory(handle, item, target, run, ancestors)
            else:
                _copy_file(handle, name, target)
        except OSError as exc:
            run.errors.append((item, str(target), str(exc)))
    try:
        shutil.copystat(source, destination, follow_symlinks=False)
    except OSError as exc:
        run.errors.append((source, str(destination), str(exc)))


def _copy_subdirectory(
    parent: _Handle, item: str, target: Path, run: _CopyRun, ancestors: frozenset[str]
) -> None:
    handle = _open_directory(parent, os.path.basename(item))
    try:
        try:  # an environment (pyvenv.cfg) is never copied
            path, fd = _at(handle, "pyvenv.cfg")
            environment = stat.S_ISREG(os.stat(path, dir_fd=fd).st_mode)
        except OSError:
            environment = False
        if not environment:
            _copy_from(handle, item, target, run, ancestors)
    finally:
        _close(handle)


def _copy_file(parent: _Handle, name: str, target: Path) -> None:
    """A regular file, read through its directory's descriptor without following a link."""
    path, dir_fd = _at(parent, name)
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW, dir_fd=dir_fd)
    try:
        facts = os.fstat(fd)
        if not stat.S_ISREG(facts.st_mode):
            return  # replaced by something else while the copy ran
        with os.fdopen(os.dup(fd), "rb") as reader, open(target, "wb") as writer:
            shutil.copyfileobj(reader, writer)
        os.chmod(target, stat.S_IMODE(facts.st_mode))
        os.utime(target, ns=(facts.st_atime_ns, facts.st_mtime_ns))
    finally:
        os.close(fd)


def _copy_link(
    text: str, link: str, target: Path, run: _CopyRun, ancestors: frozenset[str]
) -> None:
    """A link inside the project stays a link, to the same place in the copy (never a way back
    into the real tree); one that leaves it is refused, or followed when the caller asked."""
    directory = _relative(os.path.dirname(link), run.root)
    # a link in a directory followed out of the project (--follow-external-links) is outside
    inside = None if directory is None else _resolve_inside(run.root, directory, text)
    real = os.path.realpath(link)
    if inside is None and directory is not None:
        # what it leads to is the project's own after all (an absolute path naming the project
        # through a link of the caller's, /tmp for /private/tmp): nothing outside is read
        inside = _relative(real, run.root)
    if inside is not None:
        place = run.destination.joinpath(*inside)
        os.symlink(os.path.relpath(place, target.parent), target)
        return
    if not os.path.exists(real):
        return  # dangling outside the project: nothing to copy, nothing to write through
    if not run.follow_external or _under_any(real, _PSEUDO) or _under_any(text, _PSEUDO):
        run.outside.append((run.shown(link), text))
    elif os.path.isdir(real):
        # a directory that holds the one being copied (or the project) would never end
        if real in ancestors or _under_any(run.root, (real,)):
            run.errors.append((link, str(target), _LOOP))
        else:
            _copy_tree(real, target, run, ancestors)
    elif os.path.isfile(real):
        shutil.copy2(real, target)
    # else special (a pipe, a device) outside the project: never sdist content


def _resolve_inside(root: str, directory: list[str], text: str) -> list[str] | None:
    """Where the link ``text`` in ``directory`` (components below ``root``) leads, as components
    below ``root``, resolved one component at a time (each link met on the way followed, at most
    ``_MAX_HOPS``); ``None`` when it leaves the project (``..`` above it, an absolute path
    elsewhere, a chain that does) or loops. A missing component ends the walk: a dangling link
    inside the project stays one."""
    resolved: list[str] = []
    pending = _start(root, directory, text)
    if pending is None:
        return None
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return None
            resolved.pop()
            continue
        path = os.path.join(root, *resolved, part)
        try:
            mode = os.lstat(path).st_mode
        except OSError:  # missing: the rest is text, no link (a dangling link stays one)
            return _lexically([*resolved, part], pending)
        if not stat.S_ISLNK(mode):
            resolved.append(part)
            continue
        hops += 1
        if hops > _MAX_HOPS:
            return None
        restart = _start(root, resolved, os.readlink(path))
        if restart is None:
            return None
        resolved, pending = [], restart + pending
    return resolved


def _lexically(resolved: list[str], rest: list[str]) -> list[str] | None:
    """``rest`` applied to ``resolved`` as text; ``None`` when its ``..`` climb above the root."""
    resolved = list(resolved)
    for part in rest:
        if part == "..":
            if not resolved:
                return None
            resolved.pop()
        elif part not in ("", "."):
            resolved.append(part)
    return resolved


def _start(root: str, directory: list[str], text: str) -> list[str] | None:
    """The components a link's text asks for, from the project's root: relative to its
    directory, or an absolute path that names the project (``None`` for one elsewhere)."""
    if not os.path.isabs(text):
        return [*directory, *text.split(os.sep)]
    return _relative(text, root)


def _relative(path: str, root: str) -> list[str] | None:
    """``path``'s components below ``root``, or ``None`` when it is not under it (as text)."""
    if path == root:
        return []
    prefix = root.rstrip(os.sep) + os.sep
    return path[len(prefix) :].split(os.sep) if path.startswith(prefix) else None


def _under_any(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def copy_problem(exc: BaseException) -> str:
    """The first file copytree could not copy (it collects them all in one shutil.Error)."""
    problems = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(problems, list) and problems and len(problems[0]) == 3:
        source, _, why = problems[0]
        return f"{source}: {why}" + (
            f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        )
    return str(exc)
