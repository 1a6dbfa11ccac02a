"""Stage ``install``'s check of what got installed: pip's runs package code, so it is confined;
with nothing but the wheel installed there is nothing to check."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.sandbox import _venv
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._subprocess import Command, Outcome
from sandboxverify.sandbox._toolchain import PipInstaller, Toolchain, UvInstaller, VirtualenvBackend
from sandboxverify.sandbox._workspace import SandboxPaths


class _Succeeding:
    """Runs nothing: every command succeeds, and is kept by its label."""

    def __init__(self) -> None:
        self.ran: dict[str, Command] = {}

    def run(self, command: Command, python: str | None) -> Outcome:
        self.ran[command.label] = command
        return Outcome(command, returncode=0, timed_out=False, seconds=0.0, tail="")

    def ended(self, outcome: Outcome, python: str | None) -> None:
        raise AssertionError("an install starts no command server")


def _installed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    installer: PipInstaller | UvInstaller,
    **install: Any,
) -> dict[str, Command]:
    """Every command an install ran, by label; each one succeeds."""
    runner = _Succeeding()
    monkeypatch.setenv("PIP_INDEX_URL", "https://user:secret@index.example/simple")
    paths = SandboxPaths(tmp_path / "py")
    paths.make()
    interpreter = Interpreter("3", Path(sys.executable), "3.11.7", (3, 11, 7), "cpython")
    sandbox = _venv.Sandbox(interpreter, paths)
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    ctx = RunContext(Toolchain(VirtualenvBackend(), installer), 60.0, 60.0, runner=runner)
    assert _venv.install_wheel(sandbox, wheel, ctx, **install) == []
    return runner.ran


def test_pip_check_runs_the_sandboxes_python_confined_without_the_installers_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip check starts the sandbox's interpreter, which runs the ``.pth`` files just installed."""
    ran = _installed(tmp_path, monkeypatch, PipInstaller())

    install, check = ran["install"], ran["pip-check"]
    assert install.launcher is None  # the installer is trusted
    assert "PIP_INDEX_URL" in install.env
    assert check.launcher is not None
    launch = check.launch()
    launch.close()
    assert launch.argv != list(check.argv) or sys.platform != "linux"
    assert "PIP_INDEX_URL" not in check.env
    assert check.env["HOME"] == str(tmp_path / "py" / "home")


def test_uvs_check_reads_metadata_and_stays_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = _installed(tmp_path, monkeypatch, UvInstaller(Path("/usr/bin/uv")))

    assert ran["pip-check"].launcher is None


@pytest.mark.parametrize(
    ("install", "checked"),
    [
        ({"requirements": False}, False),
        ({"requirements": True}, True),
        ({"requirements": False, "extra": ("llm",)}, True),
    ],
)
def test_the_installed_requirements_are_checked_when_there_are_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, install: dict[str, Any], checked: bool
) -> None:
    ran = _installed(tmp_path, monkeypatch, UvInstaller(Path("/usr/bin/uv")), **install)

    assert "install" in ran
    assert ("pip-check" in ran) is checked


def test_uv_learns_a_fresh_sandboxs_interpreter_and_pip_needs_not() -> None:
    uv = UvInstaller(Path("/usr/bin/uv"))
    python = Path("/tmp/sandbox/venv/bin/python")
    assert uv.learn_interpreter(python) == ["/usr/bin/uv", "pip", "list", "--python", str(python)]
    assert PipInstaller().learn_interpreter(python) is None
