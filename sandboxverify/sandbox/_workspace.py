"""The one temporary directory a check works in, removed afterwards unless ``--keep``.

Layout::

    <root>/src/              copy of the project (the source tree itself is never written to)
    <root>/dist/             the artifacts built or verified
    <root>/runtime/          the private copy of the stdlib-only runtime
    <root>/hooks/            the PEP 517 hook runner; <root>/build-env*/ where it runs
    <root>/logs/             build logs
    <root>/py<version>/      one sandbox per interpreter: venv/, home/, tmp/, work/, logs/

A sandbox's ``venv/`` is made at a slot instead where one can be claimed (``_slots``): a path
that earlier checks' sandboxes of the same interpreter had, which the installer knows.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType

from sandboxverify._frozen import frozen
from sandboxverify.sandbox._slots import VenvSlot, claim_venv_slot
from sandboxverify.sandbox._subprocess import COPY_TIMEOUT, query
from sandboxverify.sandbox._templates import keep_template, runtime_template_for, used_template

#: The installed sandboxverify package, whose stdlib-only parts are copied into every sandbox.
_PACKAGE = Path(__file__).resolve().parents[1]
#: What the runtime copy consists of: the package marker and the stdlib-only subpackage.
_RUNTIME_PARTS = ("__init__.py", "_version.py", "runtime", "harness.py")
#: the name ending of this interpreter's bytecode (``.cpython-311.pyc``)
_OWN_BYTECODE = f".{sys.implementation.cache_tag}.pyc"


@frozen
class SandboxPaths:
    root: Path
    #: where the environment is made, if not in ``root`` (a claimed slot)
    venv_at: Path | None = None

    @property
    def venv(self) -> Path:
        return self.root / "venv" if self.venv_at is None else self.venv_at

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def work(self) -> Path:
        """The empty working directory plugin code starts in (nothing to shadow imports)."""
        return self.root / "work"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def make(self) -> None:
        for path in (self.home, self.tmp, self.work, self.logs):
            path.mkdir(parents=True, exist_ok=True)


def _runtime_files(bytecode: bool) -> list[str]:
    """The runtime's files, relative to the directory that holds our package: its sources and,
    with ``bytecode``, this interpreter's bytecode, which the sandboxes of its version read
    instead of compiling every module of the runtime in each of their processes; no other
    bytecode."""
    files: list[str] = []
    for part in _RUNTIME_PARTS:
        source = _PACKAGE / part
        if source.is_file():
            files.append(f"{_PACKAGE.name}/{part}")
        for directory, dirnames, filenames in os.walk(source):
            if not bytecode:
                dirnames[:] = [name for name in dirnames if name != "__pycache__"]
            in_cache = os.path.basename(directory) == "__pycache__"
            relative = os.path.relpath(directory, _PACKAGE.parent)
            files.extend(
                f"{relative}/{name}"
                for name in filenames
                if (name.endswith(_OWN_BYTECODE) if in_cache else not name.endswith(".pyc"))
            )
    return files


def _copied_by_cp(files: Sequence[str], target: Path) -> bool:
    """``files`` copied under ``target`` by GNU cp, modes and times kept (a source's time is
    what its bytecode is checked against): one process, and none of this interpreter's time,
    which the check's main thread wants meanwhile. ``False`` where that cannot be done."""
    cp = shutil.which("cp") if sys.platform.startswith("linux") else None
    if cp is None:
        return False
    argv = [cp, "--parents", "--preserve=mode,timestamps", "-t", str(target), "--", *files]
    return query(argv, COPY_TIMEOUT, cwd=_PACKAGE.parent) is not None


class Workspace:
    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self.root = Path(tempfile.mkdtemp(prefix="sandboxverify-"))
        self._copying: list[threading.Thread] = []
        self._sandboxes: dict[str, SandboxPaths] = {}
        self._slots: list[VenvSlot] = []
        self._claiming = threading.Lock()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.keep:
            self.remove()
        self._copied()

    def remove(self) -> None:
        self._copied()  # a copy still under way would write into what is being removed
        shutil.rmtree(self.root, ignore_errors=True)
        for slot in self._slots:
            slot.release()

    def _copied(self) -> None:
        for thread in self._copying:
            thread.join()

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def dist(self) -> Path:
        return self.root / "dist"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def sandbox(self, label: str, interpreter: Path | None = None) -> SandboxPaths:
        """The sandbox called ``label`` (the same one each time it is asked for), its
        environment at a claimed slot of ``interpreter``'s if one can be had; a kept workspace
        keeps its environments in itself, to be looked at."""
        with self._claiming:
            paths = self._sandboxes.get(label)
            if paths is None:
                slot = None if self.keep or interpreter is None else claim_venv_slot(interpreter)
                if slot is not None:
                    self._slots.append(slot)
                paths = SandboxPaths(self.root / f"py{label}", None if slot is None else slot.path)
                self._sandboxes[label] = paths
        paths.make()
        return paths

    @property
    def sandboxes(self) -> tuple[SandboxPaths, ...]:
        """The sandboxes asked for so far."""
        with self._claiming:
            return tuple(self._sandboxes.values())

    def install_hook_runner(self) -> Path:
        """Copy the PEP 517 hook runner alone into a directory of its own: the build
        environment's interpreter runs it as a script, and a script's directory is importable."""
        target = self.root / "hooks" / "_pep517.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(_PACKAGE / "runtime" / "_pep517.py", target)
        return target

    def install_runtime_meanwhile(
        self, *, bytecode: bool = False, kept_in: Path | None = None
    ) -> Future[Path]:
        """The runtime the sandboxes read, once it is there: :meth:`install_runtime` on a
        thread of its own (the first request to the runtime waits for it,
        ``RunContext.runtime_copy``, not the steps before; the workspace waits for it before it
        is removed). ``kept_in``: where a copy made by an earlier check is read instead, and
        this one's is kept for the next (only where no package code can write there: the OS
        sandbox, with the cache on: ``bytecode`` too)."""
        copied: Future[Path] = Future()

        def copy() -> None:
            kept = None
            try:
                if kept_in is not None:  # here: listing the runtime takes ~5 ms
                    kept = runtime_template_for(kept_in, _PACKAGE.parent, _runtime_files(False))
                if kept is not None and used_template(kept):
                    copied.set_result(kept)
                    return
                made = self.install_runtime(bytecode=bytecode)
            except BaseException as exc:  # the first request raises it
                copied.set_exception(exc)
                return
            copied.set_result(made)
            if kept is not None:
                keep_template(made, kept, prune=True)

        thread = threading.Thread(target=copy, name="sandboxverify-runtime-copy", daemon=True)
        self._copying.append(thread)
        thread.start()
        return copied

    @property
    def runtime(self) -> Path:
        """Where :meth:`install_runtime` copies the runtime."""
        return self.root / "runtime"

    def install_runtime(self, *, bytecode: bool = False) -> Path:
        """Copy the runtime into a private directory; it is appended last to the sandbox path.
        ``bytecode``: with our installation's bytecode for this interpreter, only where no code
        from the package can write it while the copy is made (the bytecode caches are outside
        the integrity fingerprint, the sources are not)."""
        target = self.runtime
        target.mkdir(parents=True, exist_ok=True)
        files = _runtime_files(bytecode)
        if not _copied_by_cp(files, target):
            for name in files:  # what cp would have done
                copy = target / name
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(_PACKAGE.parent / name, copy)
        return target
