"""The runtime's copy is made beside the build, and read only once it is whole."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from sandboxverify.sandbox import _workspace
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._templates import keep_template
from sandboxverify.sandbox._toolchain import choose_toolchain
from sandboxverify.sandbox._workspace import Workspace


def _context(runtime: Path, ready: Future[Path]) -> RunContext:
    return RunContext(choose_toolchain("pip"), 1.0, 60.0).with_runtime(runtime, ready)


def test_a_request_reads_the_runtime_only_once_its_copy_is_done(tmp_path: Path) -> None:
    ready: Future[Path] = Future()
    timer = threading.Timer(0.2, ready.set_result, args=(tmp_path,))
    timer.start()
    try:
        assert _context(tmp_path, ready).runtime_copy == tmp_path
        assert ready.done()
    finally:
        timer.cancel()


def test_a_copy_that_failed_fails_the_first_request(tmp_path: Path) -> None:
    ready: Future[Path] = Future()
    ready.set_exception(OSError(28, "No space left on device"))
    with pytest.raises(OSError, match="No space left"):
        _ = _context(tmp_path, ready).runtime_copy


def test_the_copy_made_meanwhile_is_the_whole_runtime() -> None:
    with Workspace() as workspace:
        copied = workspace.install_runtime_meanwhile().result(timeout=60)
        assert copied == workspace.runtime
        assert (copied / "sandboxverify" / "runtime" / "_probe.py").is_file()
        tag = f".{sys.implementation.cache_tag}.pyc"
        assert all(path.name.endswith(tag) for path in copied.rglob("*.pyc"))


def test_a_workspace_is_removed_only_after_its_copy_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A copy still under way when the check ends would write into a removed workspace and
    leave it behind."""
    install_runtime = Workspace.install_runtime

    def slow_install(self: Workspace, *, bytecode: bool = False) -> Path:
        time.sleep(0.3)  # the check ends first
        return install_runtime(self, bytecode=bytecode)

    monkeypatch.setattr(Workspace, "install_runtime", slow_install)
    workspace = Workspace()
    copied = workspace.install_runtime_meanwhile()
    workspace.remove()
    with contextlib.suppress(Exception):  # however the copy ended: once it has
        copied.result(timeout=60)
    assert not workspace.root.exists()


def test_the_copy_carries_this_interpreters_bytecode_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no package code can write it meanwhile, the sandboxes of this interpreter's
    version read the runtime's bytecode instead of compiling it in every process; bytecode of
    other versions, or optimized, stays out."""
    package = tmp_path / "sandboxverify"
    cache = package / "runtime" / "__pycache__"
    cache.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "runtime" / "_probe.py").write_text("")
    own = f"_probe.{sys.implementation.cache_tag}.pyc"
    for name in (own, "_probe.cpython-39.pyc", f"_probe.{sys.implementation.cache_tag}.opt-1.pyc"):
        (cache / name).write_bytes(b"")
    (package / "runtime" / "stray.pyc").write_bytes(b"")
    monkeypatch.setattr(_workspace, "_PACKAGE", package)
    with Workspace() as workspace:
        plain = workspace.install_runtime() / "sandboxverify" / "runtime"
        assert not list(plain.rglob("*.pyc"))  # by default (process isolation): sources only
        shutil.rmtree(workspace.runtime)
        copied = workspace.install_runtime(bytecode=True) / "sandboxverify" / "runtime"
        assert sorted(p.relative_to(copied).as_posix() for p in copied.rglob("*.pyc")) == [
            f"__pycache__/{own}"
        ]
        assert (copied / "_probe.py").is_file()


@pytest.mark.parametrize("bytecode", [False, True])
def test_cp_copies_what_the_python_copy_would(
    monkeypatch: pytest.MonkeyPatch, bytecode: bool
) -> None:
    """The runtime is copied by GNU cp where there is one (one process, none of the check's
    interpreter time); the same files, with their modes and modification times (the bytecode
    is checked against a source's time), as the copy made in Python elsewhere."""

    def files(root: Path) -> dict[str, tuple[int, int, bytes]]:
        return {
            path.relative_to(root).as_posix(): (
                path.stat().st_mode,
                path.stat().st_mtime_ns // 1_000_000_000,
                path.read_bytes(),
            )
            for path in root.rglob("*")
            if path.is_file()
        }

    with Workspace() as workspace:
        # this suite runs where GNU cp is: the copy is cp's, not the fallback's
        runtime_files = _workspace._runtime_files(bytecode)
        workspace.runtime.mkdir()
        assert _workspace._copied_by_cp(runtime_files, workspace.runtime)
        copied = files(workspace.runtime)
        shutil.rmtree(workspace.runtime)
        with monkeypatch.context() as patch:
            patch.setattr(_workspace, "_copied_by_cp", lambda files, target: False)
            in_python = files(workspace.install_runtime(bytecode=bytecode))

    assert copied == in_python
    assert "sandboxverify/runtime/_probe.py" in copied


def _small_package(root: Path) -> Path:
    """A package shaped like ours: a marker and a runtime with its bytecode."""
    package = root / "sandboxverify"
    (package / "runtime" / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "runtime" / "_probe.py").write_text("print('probe')\n")
    own = f"_probe.{sys.implementation.cache_tag}.pyc"
    (package / "runtime" / "__pycache__" / own).write_bytes(b"bytecode")
    return package


def test_a_kept_runtime_is_read_by_the_next_check_and_not_copied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first check copies the runtime into its workspace and keeps a copy in the cache
    directory; the next reads that one, with the bytecode, and copies nothing."""
    package = _small_package(tmp_path / "installed")
    monkeypatch.setattr(_workspace, "_PACKAGE", package)
    kept_in = tmp_path / "cache" / "runtime"
    with Workspace() as first:
        read = first.install_runtime_meanwhile(bytecode=True, kept_in=kept_in).result(60)
        assert read == first.runtime
    [kept] = kept_in.iterdir()
    assert (kept / "sandboxverify" / "runtime" / "_probe.py").read_text() == "print('probe')\n"
    with Workspace() as second:
        read = second.install_runtime_meanwhile(bytecode=True, kept_in=kept_in).result(60)
        assert read == kept
        assert not second.runtime.exists()
    cached = kept / "sandboxverify" / "runtime" / "__pycache__"
    assert [p.name for p in cached.iterdir()] == [f"_probe.{sys.implementation.cache_tag}.pyc"]


def test_a_changed_runtime_is_never_read_from_an_older_kept_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new version (or an edit) of a runtime source is a new key: its checks copy it, and
    keep it beside the old."""
    package = _small_package(tmp_path / "installed")
    monkeypatch.setattr(_workspace, "_PACKAGE", package)
    kept_in = tmp_path / "cache" / "runtime"
    with Workspace() as first:
        first.install_runtime_meanwhile(bytecode=True, kept_in=kept_in).result(60)
    (package / "runtime" / "_probe.py").write_text("print('edited')\n")
    with Workspace() as second:
        read = second.install_runtime_meanwhile(bytecode=True, kept_in=kept_in).result(60)
        assert read == second.runtime
        assert (read / "sandboxverify" / "runtime" / "_probe.py").read_text() == (
            "print('edited')\n"
        )
    assert len(list(kept_in.iterdir())) == 2


def test_without_a_place_to_keep_it_each_check_copies_the_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Process isolation, or --no-cache: nothing is kept, nothing read from the cache."""
    monkeypatch.setattr(_workspace, "_PACKAGE", _small_package(tmp_path / "installed"))
    for _ in range(2):
        with Workspace() as workspace:
            assert workspace.install_runtime_meanwhile().result(60) == workspace.runtime


def test_kept_runtimes_beyond_the_newest_are_removed_once_idle(tmp_path: Path) -> None:
    """Each version of sandboxverify keeps its own; old ones go once no check has read them
    for a day, never one a check may still be reading."""
    root = tmp_path / "runtime"
    made = tmp_path / "made"
    made.mkdir()
    (made / "file").write_text("x")
    day = 24 * 3600
    for age, name in enumerate(["a", "b", "c", "d", "e", "f"]):
        keep_template(made, root / name)
        stamp = time.time() - (age * day if name in "ef" else age)
        os.utime(root / name, (stamp, stamp))
    keep_template(made, root / "new", prune=True)
    # the newest four kept; d too, read seconds ago; e and f, unread for days, removed
    assert sorted(p.name for p in root.iterdir()) == ["a", "b", "c", "d", "new"]
