"""Stages ``imports`` and ``scripts`` through the real pipeline: every module the wheel ships
imports in the sandbox, every console script is installed and answers ``--help``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandboxverify import Report
from sandboxverify.report._model import Failure, Run
from sandboxverify.report._records import ImportFailure, ScriptRecord, SkippedModule
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import fixture, make_wheel, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

PLUGIN = "def setup(api):\n    api.register_tool('ping', lambda: 'pong')\n"
ENTRY_POINTS = "[sandboxverify.plugins]\npinger = svtest_contents.plugin:setup\n"


def build_wheel(directory: Path, files: dict[str, str], entry_points: str = ENTRY_POINTS) -> Path:
    """A wheel of ``svtest-contents`` 1.0 holding ``files``, built by hand, as some real wheels
    are: what it ships is exactly what the test says, whatever a build backend would do."""
    return make_wheel(
        directory,
        "svtest_contents-1.0-py3-none-any.whl",
        name="svtest_contents",
        version="1.0",
        files={**files, "svtest_contents-1.0.dist-info/entry_points.txt": entry_points},
        metadata="Metadata-Version: 2.1\nName: svtest-contents\nVersion: 1.0\n",
    )


def only(report: Report) -> tuple[Run, Failure]:
    [run] = report.runs
    [failure] = report.failures
    return run, failure


def stages(run: Run) -> dict[str, str]:
    return {stage.name: stage.status for stage in run.stages}


def test_a_module_no_plugin_imports_fails_the_import_of_every_module() -> None:
    report = verify(fixture("broken-import-all"))

    run, failure = only(report)
    assert failure.code == "import_failed"
    assert failure.module == "svfix_broken_import_all.reports.render"
    assert failure.python == run.python
    assert failure.message == (
        "module 'svfix_broken_import_all.reports.render' failed to import: ModuleNotFoundError: "
        "No module named 'svfix_broken_import_all.reports.templates'"
    )
    assert failure.hint is not None and "belongs to this project but is not in the" in failure.hint
    assert failure.details is not None and "from .templates import PAGE" in failure.details
    assert [plugin.ok for plugin in run.plugins] == [True]  # the plugin itself is fine
    assert stages(run) == {
        "build": "passed",
        "venv": "passed",
        "install": "passed",
        "probe": "passed",
        "imports": "failed",
        "scripts": "passed",
    }
    assert run.imports is not None
    assert run.imports.modules == 4
    assert run.imports.imported == (
        "svfix_broken_import_all",
        "svfix_broken_import_all.plugin",
        "svfix_broken_import_all.reports",
    )
    assert run.imports.failed == (
        ImportFailure(
            "svfix_broken_import_all.reports.render",
            "ModuleNotFoundError",
            "No module named 'svfix_broken_import_all.reports.templates'",
        ),
    )


def test_without_import_all_only_the_plugins_are_imported_and_it_passes() -> None:
    report = verify(fixture("broken-import-all"), import_all=False)

    assert report.ok, report.failures
    [run] = report.runs
    assert "imports" not in stages(run)
    assert run.imports is None


def test_modules_allowed_to_fail_or_skipped_are_in_the_record_not_failures() -> None:
    allowed = run_cli(
        [
            "check",
            str(fixture("broken-import-all")),
            "--installer",
            "uv",
            "--import-allow-fail",
            "svfix_broken_import_all.reports",
            "--json",
            "-",
        ]
    )
    skipped = verify(fixture("broken-import-all"), import_skip=("*.reports",))

    assert allowed.code == 0, allowed.stdout + allowed.stderr
    record = allowed.json()["runs"][0]["imports"]
    assert [(f["module"], f["allowed_by"]) for f in record["allowed_failures"]] == [
        ("svfix_broken_import_all.reports.render", "svfix_broken_import_all.reports")
    ]
    assert record["failed"] == []
    assert skipped.ok, skipped.failures
    assert skipped.runs[0].imports is not None
    assert skipped.runs[0].imports.skipped == (
        SkippedModule("svfix_broken_import_all.reports", "--import-skip *.reports"),
        SkippedModule("svfix_broken_import_all.reports.render", "--import-skip *.reports"),
    )


def test_a_console_script_naming_a_missing_function_is_script_failed() -> None:
    report = verify(fixture("broken-console-script"))

    run, failure = only(report)
    assert failure.code == "script_failed"
    assert failure.plugin == "svfix-broken-console-script"
    assert "'svfix-broken-console-script --help' exited with code 1" in failure.message
    assert "cannot import name 'mian'" in failure.message
    assert failure.hint is not None and "did you mean 'main'?" in failure.hint
    assert failure.details is not None and "Traceback" in failure.details
    assert [plugin.ok for plugin in run.plugins] == [True]
    assert stages(run)["imports"] == "passed"  # cli.py itself imports fine
    assert run.scripts is not None
    [script] = run.scripts
    assert script == ScriptRecord(
        name="svfix-broken-console-script",
        value="svfix_broken_console_script.cli:mian",
        group="console_scripts",
        exists=True,
        help="failed",
        exit_code=1,
        seconds=script.seconds,
    )


def test_a_script_that_answers_help_with_its_usage_and_a_non_zero_status_works() -> None:
    """mprof prints its usage and exits 1 for --help, as for any command it does not know;
    robot prints a whole manual, its usage line first, and exits 251: each ran, and works; a
    script that raises is still script_failed (above)."""
    report = verify(fixture("good-script-without-help"))

    assert report.ok, report.failures
    assert report.runs[0].scripts is not None
    answers = {s.name: (s.exists, s.help, s.exit_code) for s in report.runs[0].scripts}
    assert answers == {
        "svfix-count": (True, "usage", 1),
        "svfix-report": (True, "usage", 251),
    }


def test_skip_script_help_still_requires_the_script_to_exist() -> None:
    report = verify(fixture("broken-console-script"), skip_script_help=("svfix-*",))

    assert report.ok, report.failures
    assert report.runs[0].scripts is not None
    [script] = report.runs[0].scripts
    assert (script.exists, script.help, script.exit_code) == (True, "skipped", None)


def test_a_good_console_script_answers_help() -> None:
    report = verify(fixture("good-two-plugins"))

    assert report.ok, report.failures
    assert report.runs[0].scripts is not None
    [script] = report.runs[0].scripts
    assert (script.name, script.help, script.exit_code) == (
        "svfix-two-plugins",
        "passed",
        0,
    )


def test_a_module_that_kills_the_interpreter_is_named_and_the_rest_counted(
    tmp_path: Path,
) -> None:
    wheel = build_wheel(
        tmp_path,
        {
            "svtest_contents/__init__.py": "",
            "svtest_contents/alpha.py": "",
            "svtest_contents/bravo.py": "import os\nprint('bravo dies', flush=True)\nos._exit(3)\n",
            "svtest_contents/charlie.py": "",
            "svtest_contents/plugin.py": PLUGIN,
        },
    )

    run, failure = only(verify(wheel))

    assert failure.code == "import_failed"
    assert failure.module == "svtest_contents.bravo"
    assert failure.message == (
        "importing module 'svtest_contents.bravo' crashed the interpreter: the interpreter "
        "exited with code 3; the remaining 2 module(s) were not checked"
    )
    assert failure.details is not None and "bravo dies" in failure.details
    assert run.imports is not None
    assert run.imports.imported == ("svtest_contents", "svtest_contents.alpha")
    assert run.imports.stopped_at == "svtest_contents.bravo"
    assert run.imports.not_checked == ("svtest_contents.charlie", "svtest_contents.plugin")


def test_a_module_that_hangs_is_a_timeout_naming_it(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path,
        {
            "svtest_contents/__init__.py": "",
            "svtest_contents/plugin.py": PLUGIN,
            "svtest_contents/waits.py": "import time\nwhile True:\n    time.sleep(1)\n",
        },
    )

    run, failure = only(verify(wheel, timeout=3))

    assert failure.code == "timeout"
    assert failure.module == "svtest_contents.waits"
    assert failure.message == (
        "importing module 'svtest_contents.waits' did not finish: the import run was killed "
        "after 3s (--timeout)"
    )
    assert failure.hint is not None and "--import-skip svtest_contents.waits" in failure.hint
    assert run.imports is not None
    assert run.imports.imported == ("svtest_contents", "svtest_contents.plugin")


def test_a_plugin_failure_is_not_reported_again_by_the_import_of_every_module(
    tmp_path: Path,
) -> None:
    missing = "import svtest_not_installed\n"
    wheel = build_wheel(
        tmp_path,
        {
            "svtest_contents/__init__.py": "",
            "svtest_contents/plugin.py": missing + PLUGIN,
            "svtest_contents/helpers.py": missing,
        },
    )

    run, failure = only(verify(wheel))

    assert failure.code == "plugin_load_failed"
    assert run.imports is not None
    assert run.imports.skipped == (
        SkippedModule("svtest_contents.plugin", "plugin 'pinger' failed to load from it"),
    )
    assert run.imports.failed == (
        ImportFailure(
            "svtest_contents.helpers",
            "ModuleNotFoundError",
            "No module named 'svtest_not_installed'",
            reported_by="plugin 'pinger'",
        ),
    )


def test_a_plugin_that_hangs_at_import_does_not_hang_the_import_of_every_module() -> None:
    report = verify(fixture("broken-hangs"), timeout=3)

    assert codes(report) == ["timeout"]
    [run] = report.runs
    assert stages(run)["imports"] == "passed"
    assert run.imports is not None
    assert [s.module for s in run.imports.skipped] == ["svfix_broken_hangs.plugin"]


def test_a_module_imported_from_outside_the_sandbox_is_import_failed(tmp_path: Path) -> None:
    """The wheel's own .pth file reaches into a directory users will not have."""
    outside = tmp_path / "author-checkout"
    outside.mkdir()
    (outside / "svtest_outside_helper.py").write_text("VALUE = 'only on this machine'\n")
    wheel = build_wheel(
        tmp_path,
        {
            "svtest_contents/__init__.py": "import svtest_outside_helper\n",
            "svtest_contents/plugin.py": PLUGIN,
            "svtest_contents.pth": f"{outside}\n",
        },
    )

    # the OS sandbox never shows the directory at all (the import fails, whatever the .pth
    # says): what process isolation reports is the case to test
    report = verify(wheel, isolation="process")

    by_code = {failure.code: failure for failure in report.failures}
    assert sorted(by_code) == ["import_failed", "venv_failed"]
    imported = by_code["import_failed"]
    assert imported.module == "svtest_outside_helper"
    assert imported.message == (
        f"module 'svtest_outside_helper' was imported from {outside}/svtest_outside_helper.py, "
        "outside the sandbox's site-packages; the wheel's own svtest_contents.pth puts that "
        "directory on sys.path"
    )
    assert imported.hint is not None and "remove svtest_contents.pth" in imported.hint
    leak = by_code["venv_failed"]
    assert f"{outside} (from its svtest_contents.pth)" in leak.message
    assert leak.hint is not None and "must not ship a .pth file" in leak.hint
    [run] = report.runs
    assert run.imports is not None
    assert json.dumps(run.imports.to_json()["outside"]) == json.dumps(
        [
            {
                "module": "svtest_outside_helper",
                "file": f"{outside}/svtest_outside_helper.py",
                "pth": "svtest_contents.pth",
                "shipped": True,
            }
        ]
    )
