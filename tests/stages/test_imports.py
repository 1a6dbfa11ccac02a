"""Stages ``imports`` and ``scripts`` on the host side: from the runtime's findings (or what a
dead run left in its progress file) to failures, and console scripts run for real."""

from __future__ import annotations

import dataclasses
import json
import stat
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify.artifacts._artifacts import Artifact
from sandboxverify.report._model import Failure, PluginError, PluginRecord
from sandboxverify.report._records import AllowedFailure, SkippedModule
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.sandbox._context import RunContext
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._toolchain import choose_toolchain
from sandboxverify.sandbox._venv import Sandbox
from sandboxverify.sandbox._workspace import SandboxPaths
from sandboxverify.stages._import_stops import from_progress, stopped
from sandboxverify.stages._imports import (
    ImportRun,
    ImportsOutcome,
    _Judge,
    judge_imports,
)
from sandboxverify.stages._plugin_modules import failed_plugin_modules
from sandboxverify.stages._scripts import check_scripts

WHEEL = Artifact(
    "wheel",
    Path("svtest_pkg-1.0-py3-none-any.whl"),
    canonicalize_name("svtest-pkg"),
    Version("1.0"),
    "0" * 64,
    top_level=frozenset({"svtest_pkg"}),
)


def plugin(
    name: str, stage: str | None, kind: str = "ModuleNotFoundError", message: str = ""
) -> PluginRecord:
    error = PluginError(kind, message, "", stage) if stage else None
    return PluginRecord(name, "g", f"svtest_pkg.{name}:setup", ok=stage is None, error=error)


def failed(module: str, kind: str, message: str) -> dict[str, Any]:
    return {
        "module": module,
        "ok": False,
        "error": {"type": kind, "message": message, "traceback": "Traceback ..."},
    }


def judge(
    result: dict[str, Any], *, plugins: tuple[PluginRecord, ...] = (), allow: tuple[str, ...] = ()
) -> ImportsOutcome:
    return _Judge("3.12.1", WHEEL, plugins, allow).judge(result)


def test_only_plugins_that_failed_or_died_at_import_keep_their_modules_out() -> None:
    plugins = [
        plugin("good", None),
        plugin("missing", "import"),
        plugin("hangs", "probe", "timeout"),
        plugin("raises", "setup", "RuntimeError"),
    ]

    assert failed_plugin_modules(plugins) == {
        "svtest_pkg.missing": "plugin 'missing' failed to load from it",
        "svtest_pkg.hangs": "plugin 'hangs' failed to load from it",
    }


def test_a_module_an_installed_dependency_lacks_is_no_dependency_to_declare() -> None:
    """tox_docker.tox3 imports ``tox.venv``, which tox 4 no longer has."""
    gone = failed("svtest_pkg.tox3", "ModuleNotFoundError", "No module named 'tox.venv'")
    gone["cause"] = {"missing": [], "names": [["tox", "venv"]], "skip": False}
    [failure] = judge({"modules": ["svtest_pkg.tox3"], "results": [gone]}).failures
    assert failure.hint is not None and failure.hint.startswith(
        "tox is installed, and this version of it has no tox.venv: svtest_pkg.tox3 was written "
        "for another version of tox"
    )


@pytest.mark.parametrize(
    ("kind", "message", "names", "lacked"),
    [
        (
            "ImportError",
            "cannot import name '_build_result' from 'resolvelib.resolvers' (/x/__init__.py)",
            ["resolvelib.resolvers", "_build_result"],
            "resolvelib.resolvers._build_result",
        ),
        ("AttributeError", "module 'tox' has no attribute 'hookimpl'", ["tox", "hookimpl"], None),
    ],
)
def test_a_name_an_installed_dependency_lacks_is_a_version_to_declare_not_a_module_to_skip(
    kind: str, message: str, names: list[str], lacked: str | None
) -> None:
    """pdm-conda's resolvers need a resolvelib older than the one its range lets in."""
    gone = failed("svtest_pkg.compat", kind, message)
    gone["cause"] = {"missing": [], "names": [names], "skip": False}
    [failure] = judge({"modules": ["svtest_pkg.compat"], "results": [gone]}).failures
    top = names[0].split(".")[0]
    assert failure.hint is not None and failure.hint.startswith(
        f"{top} is installed, and this version of it has no {lacked or '.'.join(names)}: "
        f"svtest_pkg.compat was written for another version of {top}"
    )
    assert "--import-skip" not in failure.hint


def test_a_module_missing_from_the_wheel_and_an_undeclared_dependency_get_different_hints() -> None:
    judged = judge(
        {
            "modules": ["svtest_pkg", "svtest_pkg.a", "svtest_pkg.b"],
            "results": [
                {"module": "svtest_pkg", "ok": True, "error": None},
                failed("svtest_pkg.a", "ModuleNotFoundError", "No module named 'svtest_pkg.gone'"),
                failed("svtest_pkg.b", "ModuleNotFoundError", "No module named 'yaml'"),
            ],
        }
    )

    own, undeclared = judged.failures
    assert (own.code, own.module) == ("import_failed", "svtest_pkg.a")
    assert own.message == (
        "module 'svtest_pkg.a' failed to import: ModuleNotFoundError: "
        "No module named 'svtest_pkg.gone'"
    )
    assert own.details == "Traceback ..."
    assert own.hint is not None and own.hint.startswith("svtest_pkg.gone belongs to this project")
    assert undeclared.hint is not None
    assert "'yaml' is imported by svtest_pkg.b but not installed" in undeclared.hint
    assert "--import-allow-fail svtest_pkg.b" in undeclared.hint
    assert judged.record.imported == ("svtest_pkg",)
    assert judged.summary == "2 of 3 module(s) failed"


def test_allowed_failures_and_plugin_duplicates_are_recorded_not_reported() -> None:
    judged = judge(
        {
            "modules": ["svtest_pkg.extras.yaml", "svtest_pkg.other"],
            "results": [
                failed("svtest_pkg.extras.yaml", "ModuleNotFoundError", "No module named 'yaml'"),
                failed("svtest_pkg.other", "RuntimeError", "no config"),
            ],
            "skipped": [{"module": "svtest_pkg.p", "reason": "plugin 'p' failed to load from it"}],
        },
        plugins=(plugin("p", "import", "RuntimeError", "no config"),),
        allow=("svtest_pkg.extras",),
    )

    assert judged.failures == ()
    assert judged.record.allowed_failures == (
        AllowedFailure(
            "svtest_pkg.extras.yaml",
            "ModuleNotFoundError",
            "No module named 'yaml'",
            allowed_by="svtest_pkg.extras",
        ),
    )
    assert judged.record.failed[0].reported_by == "plugin 'p'"
    assert (
        judged.summary
        == "0 module(s) imported, 1 failed as a plugin did, 1 allowed to fail, 1 skipped"
    )


def test_modules_from_outside_are_one_failure_per_top_level_name() -> None:
    judged = judge(
        {
            "modules": ["svtest_pkg"],
            "results": [{"module": "svtest_pkg", "ok": True, "error": None}],
            "outside": [
                {"module": "shadow", "file": "/src/shadow/__init__.py"},
                {"module": "shadow.core", "file": "/src/shadow/core.py"},
                {"module": "lone", "file": "/elsewhere/lone.py", "pth": "x.pth", "shipped": False},
            ],
        }
    )

    shadow, lone = judged.failures
    assert shadow.message == (
        "module 'shadow' was imported from /src/shadow/__init__.py, outside the sandbox's "
        "site-packages (and 1 more of its modules)"
    )
    assert shadow.details == "shadow: /src/shadow/__init__.py\nshadow.core: /src/shadow/core.py"
    assert lone.message.endswith("; x.pth puts that directory on sys.path")
    assert lone.hint is not None and "do not add directories to sys.path" in lone.hint


def test_record_files_missing_after_install_are_artifact_invalid() -> None:
    missing = [f"svtest_pkg/m{i}.py" for i in range(7)]
    judged = judge({"modules": [], "results": [], "missing_files": missing})

    [failure] = judged.failures
    assert failure.code == "artifact_invalid"
    assert failure.python == "3.12.1"
    assert failure.message == (
        "7 file(s) the installed RECORD of svtest-pkg lists do not exist: svtest_pkg/m0.py, "
        "svtest_pkg/m1.py, svtest_pkg/m2.py, svtest_pkg/m3.py, svtest_pkg/m4.py (and 2 more)"
    )
    assert failure.details == "\n".join(missing)


def test_a_wheel_without_modules_says_so_without_failing(sandbox: Sandbox) -> None:
    stubs = dataclasses.replace(WHEEL, top_level=frozenset({"svtest_pkg-stubs"}))
    empty = ImportRun({"ok": True, "modules": [], "results": [], "skipped": []}, (), 0.1)

    outcome = judge_imports(empty, sandbox=sandbox, wheel=stubs, plugins=(), allow_fail=())

    assert outcome.failures == ()
    assert outcome.summary == "the wheel ships no importable modules"


def test_a_run_that_finds_none_of_the_wheels_modules_fails(sandbox: Sandbox) -> None:
    """Finding nothing to import must never pass for a wheel that ships modules."""
    empty = ImportRun({"ok": True, "modules": [], "results": [], "skipped": []}, (), 0.1)

    outcome = judge_imports(empty, sandbox=sandbox, wheel=WHEEL, plugins=(), allow_fail=())

    [failure] = outcome.failures
    assert failure.code == "probe_crashed"
    assert "found none of the wheel's modules" in failure.message
    assert "svtest_pkg" in failure.message


def test_a_failed_plugins_module_counts_as_skipped_its_siblings_stay(sandbox: Sandbox) -> None:
    run = ImportRun(
        {
            "ok": True,
            "modules": ["svtest_pkg", "svtest_pkg.missing", "svtest_pkg.cli"],
            "results": [
                {"module": "svtest_pkg", "ok": True},
                failed("svtest_pkg.missing", "ModuleNotFoundError", "No module named 'x'"),
                failed("svtest_pkg.cli", "ModuleNotFoundError", "No module named 'rich'"),
            ],
            "skipped": [],
        },
        (),
        0.1,
    )

    outcome = judge_imports(
        run,
        sandbox=sandbox,
        wheel=WHEEL,
        plugins=(plugin("missing", "import", message="No module named 'x'"),),
        allow_fail=(),
    )

    assert outcome.record.skipped == (
        SkippedModule("svtest_pkg.missing", "plugin 'missing' failed to load from it"),
    )
    assert outcome.record.imported == ("svtest_pkg",)
    assert [f.module for f in outcome.failures] == ["svtest_pkg.cli"]


def notes(path: Path, *lines: object) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"importing": "trunc')
    return path


def test_the_progress_file_of_a_dead_run_names_the_module_and_what_was_left(
    tmp_path: Path,
) -> None:
    progress = notes(
        tmp_path / "progress",
        {"planned": ["a", "a.b", "a.c", "a.d"]},
        {"importing": "a"},
        {"module": "a", "ok": True, "error": None},
        {"importing": "a.b"},
    )

    partial = from_progress(progress)

    assert partial["stopped_at"] == "a.b"
    assert partial["not_checked"] == ["a.c", "a.d"]
    assert [r["module"] for r in partial["results"]] == ["a"]
    assert from_progress(tmp_path / "absent")["stopped_at"] is None


def test_a_run_that_died_after_its_imports_blames_no_module(tmp_path: Path) -> None:
    progress = notes(
        tmp_path / "progress",
        {"planned": ["a"]},
        {"importing": "a"},
        {"module": "a", "ok": True, "error": None},
        {"done": True},
    )

    assert from_progress(progress)["stopped_at"] is None


PARTIAL: dict[str, Any] = {"stopped_at": "a.b", "not_checked": ["a.c"]}


def test_a_crash_and_a_hang_are_reported_against_the_module() -> None:
    partial = PARTIAL
    crash = Failure(
        "probe_crashed",
        "the import of every module crashed: the interpreter was killed by SIGSEGV",
        python="3.12.1",
        details="tail",
    )
    hang = Failure("timeout", "the import of every module did not finish", python="3.12.1")

    crashed, hung = stopped(crash, partial, 5), stopped(hang, partial, 5)

    assert (crashed.code, crashed.module, crashed.details) == ("import_failed", "a.b", "tail")
    assert crashed.message == (
        "importing module 'a.b' crashed the interpreter: the interpreter was killed by SIGSEGV; "
        "the remaining 1 module(s) were not checked"
    )
    assert (hung.code, hung.module) == ("timeout", "a.b")
    assert hung.message == (
        "importing module 'a.b' did not finish: the import run was killed after 5s (--timeout); "
        "the remaining 1 module(s) were not checked"
    )
    assert stopped(crash, {"stopped_at": None}, 5) is crash


def test_the_summary_of_a_dead_run_counts_the_module_it_died_in() -> None:
    ok = {"module": "a", "ok": True, "error": None}
    died = judge({"modules": ["a", "a.b", "a.c"], "results": [ok], **PARTIAL})
    early = judge({"modules": [], "results": [], "stopped_at": None, "not_checked": []})

    assert died.summary == "1 of 3 module(s) failed, 1 not checked"
    assert died.record.stopped_at == "a.b"
    assert early.summary == "the import run did not finish"


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    paths = SandboxPaths(tmp_path / "sandbox")
    paths.make()
    interpreter = Interpreter("python", Path(sys.executable), "3.12.1", (3, 12, 1), "cpython")
    box = Sandbox(interpreter, paths)
    box.bin.mkdir(parents=True)
    return box


def script(sandbox: Sandbox, name: str, body: str) -> None:
    path = sandbox.bin / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_console_scripts_run_help_in_the_sandbox_and_fail_with_their_output(
    sandbox: Sandbox,
) -> None:
    script(sandbox, "good", 'test "$1" = --help && pwd && echo "HOME=$HOME" && exit 0\nexit 9')
    script(sandbox, "broken", "echo 'ImportError: cannot import name x' >&2\nexit 1")
    script(sandbox, "hangs", "exec sleep 60")
    script(sandbox, "server", "exit 5")
    script(sandbox, "nohelp-tool", "exit 5")
    script(sandbox, "window", "exit 5")
    refs = [
        EntryPointRef("good", "console_scripts", "m:good"),
        EntryPointRef("broken", "console_scripts", "m:broken"),
        EntryPointRef("hangs", "console_scripts", "m:hangs"),
        EntryPointRef("server", "console_scripts", "m:serve"),
        EntryPointRef("nohelp-tool", "console_scripts", "m:tool"),
        EntryPointRef("window", "gui_scripts", "m:window"),
        EntryPointRef("absent", "console_scripts", "m:absent"),
    ]
    ctx = RunContext(choose_toolchain("pip"), 1.0, 60.0, runtime=Path("unused"))

    outcome = check_scripts(sandbox, refs, skip_help=["nohelp-*"], servers=["server"], ctx=ctx)

    helps = {r.name: (r.exists, r.help, r.exit_code) for r in outcome.records}
    assert helps == {
        "good": (True, "passed", 0),
        "broken": (True, "failed", 1),
        "hangs": (True, "failed", helps["hangs"][2]),  # killed: whatever the signal made it
        "server": (True, "server", None),
        "nohelp-tool": (True, "skipped", None),
        "window": (True, "skipped", None),
        "absent": (False, "skipped", None),
    }
    assert helps["hangs"][2] != 0
    by_plugin = {str(failure.plugin): failure for failure in outcome.failures}
    assert sorted(by_plugin) == ["absent", "broken", "hangs"]
    assert by_plugin["broken"].code == "script_failed"
    assert "exited with code 1: ImportError: cannot import name x" in by_plugin["broken"].message
    assert by_plugin["broken"].hint is not None and "m:broken" in by_plugin["broken"].hint
    assert by_plugin["hangs"].code == "timeout"
    assert "did not finish within 1s" in by_plugin["hangs"].message
    assert by_plugin["absent"].code == "script_failed"
    assert f"is not installed in {sandbox.bin}" in by_plugin["absent"].message
    log = (sandbox.paths.logs / "script-good.log").read_text()
    assert str(sandbox.paths.work) in log  # run from the sandbox's empty work directory
    assert f"HOME={sandbox.paths.home}" in log
    assert outcome.summary == "6 console script(s), 1 GUI script(s), --help not run for 2"


def test_no_scripts_is_said_plainly(sandbox: Sandbox) -> None:
    ctx = RunContext(choose_toolchain("pip"), 1.0, 60.0, runtime=Path("unused"))

    outcome = check_scripts(sandbox, [], skip_help=[], servers=[], ctx=ctx)

    assert (outcome.failures, outcome.records, outcome.summary) == ((), (), "no console scripts")


def test_a_module_importing_what_python_no_longer_has_is_told_it_is_old_code() -> None:
    """Paste's fsdiff imports UserDict: nothing to declare, Python 2 code to port."""
    old = failed("svtest_pkg.fsdiff", "ModuleNotFoundError", "No module named 'UserDict'")
    old["cause"] = {"missing": ["UserDict"], "names": [], "skip": False}
    [failure] = judge({"modules": ["svtest_pkg.fsdiff"], "results": [old]}).failures
    assert failure.hint is not None
    assert failure.hint.startswith("'UserDict' is Python 2's standard library")
    assert "declare it in [project] dependencies" not in failure.hint


@pytest.mark.parametrize(
    ("init", "shared"),
    [
        ("__import__('pkg_resources').declare_namespace(__name__)\n", True),
        ("__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n", True),
        (None, True),  # PEP 420: no __init__.py at all
        ("VERSION = '1'\n", False),
    ],
)
def test_a_module_missing_from_a_shared_namespace_may_be_another_distributions(
    tmp_path: Path, init: str | None, shared: bool
) -> None:
    """Paste's modpython imports paste.deploy, which PasteDeploy adds to the paste namespace."""
    path = tmp_path / "paste-3.10-py3-none-any.whl"
    files = ["paste/util.py", *(["paste/__init__.py"] if init is not None else [])]
    with zipfile.ZipFile(path, "w") as archive:
        for name in files:
            archive.writestr(name, init if name.endswith("__init__.py") and init else "")
    wheel = dataclasses.replace(
        WHEEL, path=path, top_level=frozenset({"paste"}), files=tuple(files)
    )
    gone = failed("paste.modpython", "ModuleNotFoundError", "No module named 'paste.deploy'")
    judged = _Judge("3.12.1", wheel, (), ()).judge(
        {"modules": ["paste.modpython"], "results": [gone]}
    )
    [failure] = judged.failures
    assert failure.hint is not None
    assert ("namespace package that other distributions add to" in failure.hint) is shared
    assert ("belongs to this project" in failure.hint) is not shared
