"""An empty sandbox copied from what uv made at the same slot before: the same files at the
same path, used only where it can be told apart from any other, and never taken on trust when
it cannot be copied."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._slots import claim_venv_slot
from sandboxverify.sandbox._templates import copy_template, template_for
from sandboxverify.sandbox._toolchain import choose_toolchain
from sandboxverify.sandbox._venv import create_sandbox
from sandboxverify.sandbox._workspace import SandboxPaths

pytestmark = [
    pytest.mark.usefixtures("needs_uv"),
    pytest.mark.skipif(sys.platform == "win32", reason="slots need fcntl locks"),
]

INTERPRETER = Interpreter(
    "3",
    Path(sys.executable),
    "3.x",
    (sys.version_info.major, sys.version_info.minor, sys.version_info.micro),
    "cpython",
)


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root``: a link's target, a file's bytes (as text), a directory."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = path.read_text(encoding="utf-8", errors="replace")
        else:
            found[name] = "/"
    return found


def _sandbox_at_slot(tmp_path: Path, templates: Path | None, name: str) -> tuple[Path, str]:
    """A sandbox made at this test's one slot; its environment's files and its log."""
    slot = claim_venv_slot(INTERPRETER.path, tmp_path / "slots")
    assert slot is not None
    try:
        paths = SandboxPaths(tmp_path / name, venv_at=slot.path)
        paths.make()
        ctx = RunContext(choose_toolchain("uv"), 60.0, 60.0, venv_templates=templates)
        sandbox, failure = create_sandbox(INTERPRETER, paths, ctx)
        assert failure is None
        prefix = subprocess.run(
            [str(sandbox.python), "-c", "import sys; print(sys.prefix)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert prefix == str(slot.path)
        tree = tmp_path / f"{name}.tree"
        tree.write_text(repr(_tree(slot.path)), encoding="utf-8")
        return tree, (paths.logs / "venv.log").read_text(encoding="utf-8")
    finally:
        slot.release()


def test_a_sandbox_at_a_slot_is_copied_from_what_uv_made_there(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    first_tree, first_log = _sandbox_at_slot(tmp_path, templates, "first")
    assert "copied from" not in first_log  # uv made it, and it was kept
    assert len(list(templates.iterdir())) == 1
    second_tree, second_log = _sandbox_at_slot(tmp_path, templates, "second")
    assert "copied from" in second_log
    assert second_tree.read_text() == first_tree.read_text()


def test_without_a_place_for_templates_uv_makes_every_sandbox(tmp_path: Path) -> None:
    _, first = _sandbox_at_slot(tmp_path, None, "first")
    _, second = _sandbox_at_slot(tmp_path, None, "second")
    assert "copied from" not in first + second


def test_a_sandbox_outside_a_slot_keeps_no_template(tmp_path: Path) -> None:
    """A kept workspace's environment is at a path never used again."""
    templates = tmp_path / "templates"
    paths = SandboxPaths(tmp_path / "kept")
    paths.make()
    ctx = RunContext(choose_toolchain("uv"), 60.0, 60.0, venv_templates=templates)
    _, failure = create_sandbox(INTERPRETER, paths, ctx)
    assert failure is None
    assert not templates.exists()


def test_a_template_is_told_apart_by_its_command_its_programs_and_its_environment(
    tmp_path: Path,
) -> None:
    uv = tmp_path / "uv"
    uv.write_bytes(b"one")
    argv = [str(uv), "venv", "--python", sys.executable, str(tmp_path / "slot")]
    env = {"PATH": "/usr/bin", "TMPDIR": str(tmp_path / "a")}
    key = template_for(tmp_path, argv, env)
    assert key is not None
    assert template_for(tmp_path, argv, {**env, "TMPDIR": str(tmp_path / "b")}) == key
    assert template_for(tmp_path, argv, {**env, "UV_SEED": "1"}) != key
    assert template_for(tmp_path, [*argv[:-1], str(tmp_path / "other")], env) != key
    uv.write_bytes(b"another uv")
    assert template_for(tmp_path, argv, env) != key
    uv.unlink()
    assert template_for(tmp_path, argv, env) is None


def test_a_template_that_is_not_there_or_cannot_be_copied_is_not_used(tmp_path: Path) -> None:
    template = tmp_path / "template"
    assert not copy_template(template, tmp_path / "a")  # none kept yet
    template.mkdir()
    (template / "pyvenv.cfg").write_text("home = /x\n")
    taken = tmp_path / "taken"
    taken.mkdir()
    assert not copy_template(template, taken)  # never over what is there
    assert not copy_template(template, tmp_path / "missing" / "env")  # cp fails
    assert not (tmp_path / "missing").exists()
    assert copy_template(template, tmp_path / "env")
    assert (tmp_path / "env" / "pyvenv.cfg").read_text() == "home = /x\n"
