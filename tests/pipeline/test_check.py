"""The driver: what it does side by side while the build runs."""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandboxverify.artifacts._build import BuildResult
from sandboxverify.options._check_options import CheckOptions
from sandboxverify.pipeline import _check, _headstart
from sandboxverify.pipeline._check import check
from sandboxverify.pipeline._state import CheckState
from sandboxverify.sandbox import RunContext, Sandbox, Workspace, fingerprint, learn_interpreter
from sandboxverify.sandbox._isolation import IsolationChoice
from tests.helpers import FIXTURES
from tests.os_sandbox import require_os_sandbox

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def venv_made(workspace: Workspace) -> bool:
    """Whether a sandbox's venv has its interpreter (in the workspace or at a slot)."""
    return any((paths.venv / "bin" / "python").exists() for paths in workspace.sandboxes)


def sandboxes_made_during_the_build(
    monkeypatch: pytest.MonkeyPatch,
    isolation: IsolationChoice,
    wait: float,
    made: str | None = None,
) -> list[bool]:
    """Check good-hatch; whether a sandbox's file (``made``, a pattern in the workspace; by
    default its venv's interpreter, wherever the venv is) appeared while the build stage began
    (the build waits up to ``wait`` seconds for it, then goes on)."""
    seen: list[bool] = []
    build = _check.build_target

    def build_watching(
        state: CheckState, on_building: Callable[[], None] | None = None
    ) -> BuildResult:
        if on_building is not None:  # the backend is to run: nothing is reused (no cache)
            on_building()
        workspace = state.workspace

        def appeared() -> bool:
            if made is not None:
                return bool(list(workspace.root.glob(made)))
            return venv_made(workspace)

        deadline = time.monotonic() + wait
        while not appeared() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(appeared())
        return build(state, on_building)

    monkeypatch.setattr(_check, "build_target", build_watching)
    report = check(
        CheckOptions(
            targets=(str(FIXTURES / "good-hatch"),),
            installer="uv",
            isolation=isolation,
            cache=False,
            expect_tools=("greet", "add"),
        )
    )
    assert report.ok, report.failures
    assert report.runs[0].stages[1].name == "venv"
    return seen


@pytest.mark.usefixtures("os_sandbox")
def test_in_the_os_sandbox_the_sandbox_is_made_while_the_build_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the build cannot see the sandboxes, so they need not wait for it
    assert sandboxes_made_during_the_build(monkeypatch, "strict", wait=60) == [True]


@pytest.mark.usefixtures("os_sandbox")
def test_while_the_build_runs_uv_meets_the_sandboxs_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # so the install, when the wheel is there, does not stop to ask it what it is
    seen = sandboxes_made_during_the_build(
        monkeypatch, "strict", wait=60, made="py*/logs/installer-learns-interpreter.log"
    )
    assert seen == [True]


@pytest.mark.usefixtures("os_sandbox")
def test_a_check_that_reuses_its_artifacts_does_not_wait_to_teach_the_installer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Teaching uv the sandbox's interpreter pays while a backend runs; a re-check's build
    ends at once, and its install would wait for the teaching."""
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    taught: list[Path] = []
    learn = learn_interpreter

    def counted(sandbox: Sandbox, ctx: RunContext) -> None:
        taught.append(sandbox.python)
        learn(sandbox, ctx)

    monkeypatch.setattr(_headstart, "learn_interpreter", counted)
    options = CheckOptions(
        targets=(str(FIXTURES / "good-hatch"),), installer="uv", isolation="strict"
    )
    first = check(options)
    assert first.ok, first.failures
    assert len(taught) == 1
    build = _check.build_target

    def build_once_the_sandbox_is_made(
        state: CheckState, on_building: Callable[[], None] | None = None
    ) -> BuildResult:
        # the sandbox is made before the reused artifacts end the build, as on a busy machine
        deadline = time.monotonic() + 60
        while not venv_made(state.workspace):
            assert time.monotonic() < deadline, "the sandbox was not made during the build"
            time.sleep(0.01)
        return build(state, on_building)

    monkeypatch.setattr(_check, "build_target", build_once_the_sandbox_is_made)
    again = check(options)
    assert again.ok, again.failures
    assert [artifact.reused for artifact in again.artifacts] == [True, True]
    assert len(taught) == 1


def test_in_process_isolation_the_sandbox_is_made_after_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the build's code runs unconfined: nothing of a sandbox exists while it could reach it
    assert sandboxes_made_during_the_build(monkeypatch, "process", wait=0.5) == [False]


def runtime_copied_with_bytecode(
    monkeypatch: pytest.MonkeyPatch, isolation: IsolationChoice
) -> bool:
    """Check good-hatch; whether its runtime's copy was made with our bytecode (what sandbox
    processes write there later, in process isolation, is theirs)."""
    asked: list[bool] = []
    install_runtime = Workspace.install_runtime

    def recorded(self: Workspace, *, bytecode: bool = False) -> Path:
        asked.append(bytecode)
        copied = install_runtime(self, bytecode=bytecode)
        asked.append(bool(list(copied.rglob("*.pyc"))))
        return copied

    monkeypatch.setattr(Workspace, "install_runtime", recorded)
    compileall.compile_dir(Path(_check.__file__).parents[1] / "runtime", quiet=2)
    # no cache: in the OS sandbox a check would read the runtime an earlier one kept
    options = CheckOptions(
        targets=(str(FIXTURES / "good-hatch"),), installer="uv", isolation=isolation, cache=False
    )
    report = check(options)
    assert report.ok, report.failures
    [flag, found] = asked
    assert flag == found
    return found


def test_in_process_isolation_the_runtime_is_copied_without_bytecode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the build's code runs as the user while the copy is made, and could write bytecode of
    # ours, which the integrity fingerprint leaves out
    assert not runtime_copied_with_bytecode(monkeypatch, "process")


@pytest.mark.usefixtures("os_sandbox")
def test_in_the_os_sandbox_the_runtime_is_copied_with_its_bytecode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert runtime_copied_with_bytecode(monkeypatch, "strict")


@pytest.mark.usefixtures("os_sandbox")
def test_in_the_os_sandbox_a_check_reads_the_runtime_an_earlier_check_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first check copies the runtime and keeps the copy in the cache directory; the next
    binds that copy into its sandboxes (read-only) and copies nothing, and passes."""
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    copies: list[Path] = []
    install_runtime = Workspace.install_runtime

    def recorded(self: Workspace, *, bytecode: bool = False) -> Path:
        copies.append(install_runtime(self, bytecode=bytecode))
        return copies[-1]

    monkeypatch.setattr(Workspace, "install_runtime", recorded)
    options = CheckOptions(targets=(str(FIXTURES / "good-hatch"),), installer="uv")
    first = check(options)
    assert first.ok, first.failures
    assert len(copies) == 1
    [kept] = (tmp_path / "cache" / "runtime").iterdir()
    second = check(options)
    assert second.ok, second.failures
    assert len(copies) == 1
    [run] = second.runs
    assert [plugin.name for plugin in run.plugins] == ["greeter"]
    assert [tool.name for tool in run.tools] == ["greet", "add"]
    assert kept.is_dir()


_IMPORTS_BEFORE_THE_BUILD = """
import json, sys, time
from sandboxverify.pipeline import _check, _headstart
from sandboxverify.options._check_options import CheckOptions

# a module that takes seconds to import stands for what is imported ahead
_headstart._IMPORTED_LATER = ("slow_to_import",) + _headstart._IMPORTED_LATER
seen = []
build = _check.build_target

def build_watching(*args, **kwargs):
    # a module is in sys.modules from the moment its import starts: is it done?
    seen.append(getattr(sys.modules.get("slow_to_import"), "DONE", False))
    return build(*args, **kwargs)

_check.build_target = build_watching
report = _check.check(CheckOptions(targets=(sys.argv[1],), installer="uv", isolation=sys.argv[2]))
print(json.dumps({"ok": report.ok, "imported_before_the_build": seen}))
"""


@pytest.mark.parametrize(
    ("isolation", "imported"),
    [
        ("process", True),
        ("strict", False),
    ],
)
def test_what_is_imported_ahead_is_imported_before_unconfined_build_code_runs(
    tmp_path: Path, isolation: str, imported: bool
) -> None:
    if isolation == "strict":
        require_os_sandbox()
    # in process isolation the build could rewrite a module of ours not yet imported; in the
    # OS sandbox it cannot, and the build need not wait for the imports
    # 3 s: far longer than the check takes to reach its build, even on a loaded machine
    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(3)\nDONE = True\n")
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORTS_BEFORE_THE_BUILD, str(FIXTURES / "good-hatch"), isolation],
        env={**os.environ, "PYTHONPATH": str(tmp_path), "SANDBOXVERIFY_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    result = json.loads(completed.stdout.splitlines()[-1])
    assert result == {"ok": True, "imported_before_the_build": [imported]}, completed.stderr


_IMPORTED_AFTER_THE_BUILD = """
import json, sys
from sandboxverify.pipeline import _check
from sandboxverify.options._check_options import CheckOptions

before = set()
build = _check.build_target

def build_watching(*args, **kwargs):
    before.update(name for name in sys.modules if name.startswith("sandboxverify"))
    return build(*args, **kwargs)

_check.build_target = build_watching
report = _check.check(CheckOptions(targets=(sys.argv[1],), installer="uv", isolation="process"))
after = {name for name in sys.modules if name.startswith("sandboxverify")}
print([f.message[:400] for f in report.failures], file=sys.stderr); print(json.dumps({"failures": [f.code for f in report.failures], "late": sorted(after - before)}))
"""


@pytest.mark.parametrize(
    ("fixture", "failures"),
    [
        ("good-platform-module", []),
        ("broken-reached-platform-module", ["import_failed", "script_failed"]),
    ],
)
def test_in_process_isolation_no_module_of_ours_is_imported_once_package_code_can_run(
    tmp_path: Path, fixture: str, failures: list[str]
) -> None:
    """Unconfined package code could rewrite a module of ours not yet imported, to change the
    verdict: what judges a failed module (an extra's sandbox, the excuses) is imported before
    the build like the rest, although a passing check in the OS sandbox never imports it."""
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORTED_AFTER_THE_BUILD, str(FIXTURES / fixture)],
        env={**os.environ, "SANDBOXVERIFY_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    result = json.loads(completed.stdout.splitlines()[-1])
    assert result == {"failures": failures, "late": []}, completed.stderr


@pytest.mark.parametrize("hidden", [True, False], ids=["os-sandbox", "process"])
def test_our_files_changed_during_a_check_fail_it_blaming_the_package_only_if_it_could(
    hidden: bool,
) -> None:
    """In the OS sandbox package code cannot write sandboxverify's files: an edit of the
    checkout during the check is not the package's doing."""
    now = fingerprint()
    before = {**now, "cli/_main.py": "an older state"}
    [failure] = vars(_check)["_host_modified"](before, hidden=hidden)
    assert failure.code == "host_modified"
    assert "changed cli/_main.py" in failure.message
    assert failure.hint is not None
    assert ("something outside the check" in failure.hint) is hidden
    assert ("code from the package under test" in failure.hint) is not hidden
    assert vars(_check)["_host_modified"](now, hidden=hidden) == []
