"""Where a sandbox's environment is made: one of a few paths, the same check after check.

An installer learns the interpreter of an environment it has not met by running it (uv: some 60
to 80 ms of every install) and keeps the answer by the environment's path. A sandbox's
environment made afresh, with the same base interpreter, at the path an earlier check's was
made at is learnt once for all the checks after it. Each such path is a slot: claimed under a
lock for the life of one workspace (checks side by side take different slots), emptied before
it is used and once it is given back, so a sandbox is as fresh as one at a new path.

The slots live in a directory of this user's in the temporary directory. Unless it is ours,
private and a real directory (not a link another user left there), no slot is claimed and the
sandbox keeps its environment in the check's own workspace; so it does on a system without
``fcntl`` locks, and where the sandbox is kept (``--keep``), so it can be looked at afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: sandboxes keep their environments in their workspaces
    fcntl = None  # type: ignore[assignment]

#: how many checks of one interpreter may hold a slot at once; more make their own paths
_MOST = 64


class VenvSlot:
    """A claimed path for one environment; :meth:`release` empties it and gives it back."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path = path
        self._lock: int | None = lock

    def release(self) -> None:
        """Empty the slot and give it back; the last check to give one back leaves no
        directory behind (the path is the same for the next one all the same)."""
        if self._lock is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(_lock_file(self.path))  # while held: whoever opened it meanwhile sees it gone
        os.close(self._lock)  # the lock goes with the descriptor
        self._lock = None
        for directory in (self.path.parent, self.path.parent.parent):
            with contextlib.suppress(OSError):  # not empty: another check holds a slot
                directory.rmdir()


def slots_root() -> Path:
    """The directory of this user's slots (not checked: see :func:`claim_venv_slot`)."""
    return Path(tempfile.gettempdir()) / f"sandboxverify-{os.getuid()}-envs"


def claim_venv_slot(interpreter: Path, root: Path | None = None) -> VenvSlot | None:
    """A free slot for an environment of ``interpreter``, emptied; ``None`` where slots cannot
    be had safely (see the module's text) or all are taken."""
    if fcntl is None or not hasattr(os, "getuid"):
        return None
    root = slots_root() if root is None else root
    key = hashlib.sha256(os.fsencode(os.path.abspath(interpreter))).hexdigest()[:16]
    for _ in range(10):  # a check giving its slot back may remove a directory as it is made
        with contextlib.suppress(FileNotFoundError):
            return _claim(root, root / key)
    return None


def _claim(root: Path, place: Path) -> VenvSlot | None:
    if not (_private_directory(root) and _private_directory(place)):
        return None
    for number in range(_MOST):
        path = place / str(number)
        lock_path = _lock_file(path)
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # its last holder removed the file as this check opened it: a lock on nothing
            if os.fstat(lock).st_ino != os.stat(lock_path).st_ino:
                raise BlockingIOError
        except OSError:
            os.close(lock)
            continue
        shutil.rmtree(path, ignore_errors=True)  # left by a check that was killed
        if path.exists() or path.is_symlink():
            os.close(lock)
            continue
        return VenvSlot(path, lock)
    return None


def _lock_file(slot: Path) -> Path:
    """The file whose lock holds ``slot``, beside it."""
    return slot.with_name(f"{slot.name}.lock")


def _private_directory(path: Path) -> bool:
    """``path`` is a directory (made now if missing), not a link, ours, and nobody else's to
    read or write. A parent removed meanwhile raises ``FileNotFoundError``: try again."""
    try:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        status = path.lstat()
    except FileNotFoundError:
        raise
    except OSError:
        return False
    return (
        stat.S_ISDIR(status.st_mode)
        and status.st_uid == os.getuid()
        and not status.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )
