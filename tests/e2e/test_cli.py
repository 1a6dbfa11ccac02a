"""The command line end to end: exit codes, the JSON report, config, interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, copy_fixture, fixture, run_cli, without_the_fallback_warning

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def test_passing_check_exits_0_with_a_readable_report() -> None:
    result = run_cli(["check", str(fixture("good-hatch")), "--expect-tools", "greet,add"])

    assert result.code == 0, result.stderr
    lines = without_the_fallback_warning(result.stdout.splitlines())
    # one plain line per finished stage, as each finishes (no escape codes: not a terminal);
    # probe, imports and scripts run at the same time, so they finish in any order
    assert lines[0].split()[:2] == ["ok", "build"]
    assert [line.split()[0] for line in lines[1:6]] == ["ok"] * 5
    assert [line.split()[2] for line in lines[1:3]] == ["venv", "install"]
    assert sorted(line.split()[2] for line in lines[3:6]) == ["imports", "probe", "scripts"]
    assert "\x1b[" not in result.stdout
    assert any("greeter" in line and "greet, add" in line for line in lines)
    assert lines[-1].startswith("PASSED: 1 plugin(s) registering 2 tool(s)")


def test_failing_check_exits_1_and_prints_code_message_and_hint() -> None:
    result = run_cli(["check", str(fixture("broken-typo-attr"))])

    assert result.code == 1
    assert "FAILED plugin_load_failed" in result.stdout
    assert "has no attribute 'setpu'" in result.stdout
    assert "hint: the entry point names an attribute" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("FAILED: 1 failure(s)")


def test_json_report_v1_on_stdout_with_text_on_stderr() -> None:
    result = run_cli(["check", str(fixture("broken-undeclared-dep")), "--json"])

    assert result.code == 1
    report = result.json()
    assert report["version"] == 1
    assert report["ok"] is False
    assert report["target"] == str(fixture("broken-undeclared-dep"))
    assert {a["kind"] for a in report["artifacts"]} == {"sdist", "wheel"}
    [run] = report["runs"]
    assert set(run) >= {"python", "ok", "stages", "plugins", "tools", "smoke", "imports", "scripts"}
    assert [s["name"] for s in run["stages"]] == [
        "build",
        "venv",
        "install",
        "probe",
        "imports",
        "scripts",
    ]
    assert {s["status"] for s in run["stages"]} <= {"passed", "failed", "skipped"}
    [plugin] = run["plugins"]
    assert plugin["name"] == "styled"
    assert plugin["ok"] is False
    assert plugin["error"]["type"] == "ModuleNotFoundError"
    assert "No module named 'click'" in plugin["error"]["message"]
    assert "import click" in plugin["error"]["traceback"]
    [failure] = report["failures"]
    assert set(failure) >= {"code", "message", "python", "plugin", "tool"}
    assert failure["code"] == "plugin_load_failed"
    assert failure["plugin"] == "styled"
    assert failure["python"] == run["python"]
    assert "FAILED plugin_load_failed" in result.stderr  # the text report moved to stderr


def test_json_report_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_cli(["check", str(fixture("good-flit")), "--json", str(out), "-q"])

    assert result.code == 0, result.stderr
    assert json.loads(out.read_text())["ok"] is True


def test_options_come_from_pyproject_and_the_command_line_wins(tmp_path: Path) -> None:
    project = copy_fixture("good-two-plugins", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(
            '\n[tool.sandboxverify]\nexpect_tools = ["alpha_ping"]\nexact = true\n'
            "expect-plugins = 2\n"
        )

    from_file = run_cli(["check", str(project), "--json"])
    overridden = run_cli(
        ["check", str(project), "--json", "--expect-tools", "alpha_ping,beta_ping"]
    )

    assert from_file.code == 1
    assert [f["code"] for f in from_file.json()["failures"]] == ["tool_unexpected"]
    assert overridden.code == 0, overridden.stderr


def test_keep_prints_where_the_sandbox_is() -> None:
    result = run_cli(["check", str(fixture("good-flit")), "--keep"])
    try:
        assert result.code == 0
        kept = [line for line in result.stdout.splitlines() if line.startswith("kept: ")]
        assert len(kept) == 1
        workdir = Path(kept[0][len("kept: ") :])
        assert (workdir / "dist").is_dir()
        assert any(workdir.glob("py*/venv"))
    finally:
        for line in result.stdout.splitlines():
            if line.startswith("kept: "):
                subprocess.run(["rm", "-rf", line[len("kept: ") :]], check=True)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_interrupt_stops_every_process_and_removes_temporary_files(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    _interrupt_while_a_plugin_hangs(tmp_path, sig, code, settle=0.5)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupt_just_as_the_probe_starts_is_honoured_at_once(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """The signal lands while processes are being started and waited for; it was once held
    until --timeout ran out (the main thread blocked in a wait no signal could wake)."""
    _interrupt_while_a_plugin_hangs(tmp_path, sig, code, settle=0.0)


def _interrupt_while_a_plugin_hangs(
    tmp_path: Path, sig: signal.Signals, code: int, *, settle: float
) -> None:
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    env = {**os.environ, "TMPDIR": str(temp_root)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # Ctrl-C as a terminal delivers it: a test run started in the background (`&` in a
            # script) hands its children SIGINT ignored, and Python then keeps it ignored
            "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from sandboxverify.cli import main; sys.argv[0] = 'sandboxverify'; main()",
            "check",
            str(fixture("broken-hangs")),
            "--timeout",
            "600",
            "--json",
            str(tmp_path / "report.json"),
            "--junit-xml",
            str(tmp_path / "junit.xml"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    # wait until the hanging plugin is being loaded inside the sandbox
    deadline = time.monotonic() + 120
    load_logs: list[Path] = []
    while time.monotonic() < deadline and not load_logs:
        load_logs = list(temp_root.glob("sandboxverify-*/py*/logs/load-*.log"))
        time.sleep(0.005 if not settle else 0.1)
    assert load_logs, "the probe never started"
    sandbox_root = load_logs[0].parents[2]
    time.sleep(settle)

    proc.send_signal(sig)
    # far below --timeout: an interrupt held until the plugin's timeout fails here
    _, stderr = proc.communicate(timeout=120)

    assert proc.returncode == code
    assert "removed the temporary files" in stderr
    assert "Traceback" not in stderr
    assert list(temp_root.iterdir()) == []
    # the reports asked for are there, saying why the check has no verdict
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert report["error"]["code"] == ("terminated" if sig == signal.SIGTERM else "interrupted")
    assert "<failure" in (tmp_path / "junit.xml").read_text(encoding="utf-8")
    survivors = subprocess.run(
        ["pgrep", "-f", str(sandbox_root)], capture_output=True, text=True, check=False
    )
    assert survivors.stdout.strip() == ""


def test_python_dash_m_and_the_console_script_agree() -> None:
    script = Path(sys.executable).parent / "sandboxverify"
    completed = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0
    assert completed.stdout == run_cli(["--version"]).stdout


def test_the_readme_sample_command_works_from_the_repository_root() -> None:
    result = run_cli(["check", "fixtures/good-hatch", "--expect-tools", "greet,add"], cwd=ROOT)
    assert result.code == 0, result.stdout + result.stderr
