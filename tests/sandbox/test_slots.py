"""Sandboxes' environments at slots: the same path check after check, never two checks at once,
empty before and after, and none where the slots' directory is not safely ours."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxverify.sandbox._slots import claim_venv_slot
from sandboxverify.sandbox._workspace import Workspace

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="slots need fcntl locks")

PYTHON = Path(sys.executable)


def test_a_slot_given_back_is_empty_and_claimed_again_at_the_same_path(tmp_path: Path) -> None:
    root = tmp_path / "slots"
    first = claim_venv_slot(PYTHON, root)
    assert first is not None
    first.path.mkdir()
    (first.path / "left-by-plugin-code").write_text("x", encoding="utf-8")
    first.release()
    assert not first.path.exists()
    assert not root.exists()  # the last slot given back leaves no directory behind
    again = claim_venv_slot(PYTHON, root)
    assert again is not None
    assert again.path == first.path
    again.release()


def test_slots_held_at_once_differ_and_another_interpreter_has_its_own(tmp_path: Path) -> None:
    root = tmp_path / "slots"
    held = [claim_venv_slot(PYTHON, root) for _ in range(3)]
    other = claim_venv_slot(tmp_path / "other" / "python", root)
    try:
        paths = [slot.path for slot in held if slot is not None]
        assert len(set(paths)) == 3
        assert other is not None
        assert other.path.parent != paths[0].parent
    finally:
        for slot in [*held, other]:
            if slot is not None:
                slot.release()


def test_a_slot_another_process_holds_is_not_claimed(tmp_path: Path) -> None:
    """Checks side by side are separate processes: the lock is the kernel's, not ours."""
    root = tmp_path / "slots"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib\n"
            "from sandboxverify.sandbox._slots import claim_venv_slot\n"
            f"slot = claim_venv_slot(pathlib.Path({str(PYTHON)!r}), pathlib.Path({str(root)!r}))\n"
            "print(slot.path, flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        held = Path(holder.stdout.readline().strip())
        mine = claim_venv_slot(PYTHON, root)
        assert mine is not None
        assert mine.path != held
        mine.release()
    finally:
        holder.communicate("", timeout=30)


RACER = """
import os, sys, pathlib
from sandboxverify.sandbox._slots import claim_venv_slot
python, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
claimed = 0
for _ in range(300):
    slot = claim_venv_slot(python, root)
    if slot is None:  # so much giving back that it gave up: the sandbox makes its own path
        continue
    claimed += 1
    slot.path.mkdir()
    # two holders at once would both make this file
    os.close(os.open(slot.path / "holder", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    slot.release()
print(claimed)
"""


def test_checks_claiming_and_giving_back_at_once_never_share_a_slot(tmp_path: Path) -> None:
    """Giving back removes the lock file and the empty directories while others claim: a
    check that opened the lock file just before must not hold a lock on a removed file."""
    root = tmp_path / "slots"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(PYTHON), str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    ended = [racer.communicate(timeout=120) for racer in racers]
    assert [racer.returncode for racer in racers] == [0] * 6, [err for _, err in ended]
    assert sum(int(out) for out, _ in ended) > 900
    assert not root.exists()


def test_what_a_killed_check_left_in_its_slot_is_gone_before_the_next_uses_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "slots"
    slot = claim_venv_slot(PYTHON, root)
    assert slot is not None
    path = slot.path
    (path / "lib").mkdir(parents=True)
    assert slot._lock is not None
    os.close(slot._lock)  # as the kernel does for a killed process
    slot._lock = None
    again = claim_venv_slot(PYTHON, root)
    assert again is not None
    assert again.path == path
    assert not path.exists()
    again.release()


def test_no_slot_in_a_directory_others_can_write(tmp_path: Path) -> None:
    root = tmp_path / "slots"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    assert claim_venv_slot(PYTHON, root) is None


def test_no_slot_in_a_directory_others_can_reach(tmp_path: Path) -> None:
    """Another user who made the directory first, or left a link there, chooses where our
    environments go: no slot then."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    assert claim_venv_slot(PYTHON, shared) is None
    link = tmp_path / "link"
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    link.symlink_to(private)
    assert claim_venv_slot(PYTHON, link) is None


def test_a_workspace_gives_its_slots_back_and_a_kept_one_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with Workspace() as workspace:
        paths = workspace.sandbox("3.x", PYTHON)
        assert workspace.sandbox("3.x", PYTHON) == paths  # asked again: the same sandbox
        assert paths.venv.parent.parent == tmp_path / f"sandboxverify-{os.getuid()}-envs"
        paths.venv.mkdir()
    assert not paths.venv.exists()
    with Workspace(keep=True) as kept:
        assert kept.sandbox("3.x", PYTHON).venv == kept.root / "py3.x" / "venv"
    kept.remove()
