"""--junit-xml and --github through the real command line, on real fixture packages."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandboxverify.cli._main import run
from tests.helpers import FIXTURES, ROOT, fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

ANNOTATION = re.compile(r"^::error (?P<props>[^:]*)::(?P<message>.*)$", re.MULTILINE)


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runner's environment: a workspace (the repository) and a step summary file."""
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


def annotated(stdout: str) -> list[dict[str, str]]:
    found = []
    for match in ANNOTATION.finditer(stdout):
        props = dict(prop.split("=", 1) for prop in match["props"].split(","))
        props["title"] = props["title"].replace("%3A", ":")
        found.append({**props, "message": match["message"]})
    return found


def _python() -> str:
    return ".".join(map(str, sys.version_info[:3]))


def line_of(path: Path, fragment: str) -> str:
    [number] = [i for i, text in enumerate(path.read_text().splitlines(), 1) if fragment in text]
    return str(number)


def test_a_passing_check_writes_passing_cases_and_a_summary(
    github: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"

    code = run(
        [
            "check",
            str(fixture("good-hatch")),
            "--expect-tools",
            "greet,add",
            "--junit-xml",
            str(junit),
            "--installer",
            "uv",
            "--github",
        ]
    )

    out = capsys.readouterr().out
    assert code == 0, out
    assert "::error" not in out
    root = ET.parse(junit).getroot()
    assert [suite.get("name") for suite in root] == ["build", f"python {_python()}"]
    assert [case.get("name") for case in root.iter("testcase")] == [
        "build",
        "sdist svfix_good_hatch-1.0.0.tar.gz",
        "wheel svfix_good_hatch-1.0.0-py3-none-any.whl",
        "venv",
        "install",
        "probe",
        "plugin greeter (svfix_good_hatch.plugin:setup)",
        "tool greet",
        "tool add",
        "imports",
        "scripts",
    ]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("11", "0", "0")
    assert [suite.get("skipped") for suite in root] == ["0", "0"]
    assert all(len(case) == 0 for case in root.iter("testcase"))  # no failure, no skipped
    summary = github.read_text(encoding="utf-8")
    assert summary.startswith("earlier step\n## sandboxverify passed\n")  # appended
    assert "| greeter | `svfix_good_hatch.plugin:setup` | ok | greet, add |" in summary


def test_a_typo_in_an_entry_point_is_annotated_at_its_line(
    github: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"

    code = run(["check", str(fixture("broken-typo-attr")), "--junit-xml", str(junit)])

    out = capsys.readouterr().out
    assert code == 1
    [annotation] = annotated(out)
    pyproject = fixture("broken-typo-attr") / "pyproject.toml"
    assert annotation["file"] == "fixtures/broken-typo-attr/pyproject.toml"
    assert annotation["line"] == line_of(pyproject, 'typo = "svfix_broken_typo_attr.plugin:setpu"')
    assert annotation["title"].startswith("sandboxverify: plugin_load_failed [")
    assert "has no attribute 'setpu'" in annotation["message"]
    assert "%0Ahint: the entry point names an attribute" in annotation["message"]
    root = ET.parse(junit).getroot()
    failed = [case for case in root.iter("testcase") if case.find("failure") is not None]
    # the text says FAIL probe, and so does the probe case; the plugin's case says why
    assert [case.get("name") for case in failed] == [
        "probe",
        "plugin typo (svfix_broken_typo_attr.plugin:setpu)",
    ]
    assert root.get("failures") == "2"
    summary = github.read_text(encoding="utf-8")
    assert "## sandboxverify failed" in summary
    assert "#### plugin\\_load\\_failed [" in summary


def test_each_broken_llm_plugin_is_annotated_at_its_own_line(
    github: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["check", str(fixture("broken-llm-plugin")), "--host", "llm", "--installer", "uv"])

    out = capsys.readouterr().out
    assert code == 1
    pyproject = fixture("broken-llm-plugin") / "pyproject.toml"
    lines = {a["message"].split("'")[1]: (a["file"], a["line"]) for a in annotated(out)}
    expected = {
        name: ("fixtures/broken-llm-plugin/pyproject.toml", line_of(pyproject, f"{name} = "))
        for name in ("stale", "raises", "typo")
    }
    assert lines == expected


def test_a_failing_playbook_is_annotated_at_the_failing_action(
    github: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    playbook = FIXTURES / "playbooks" / "planner-broken.toml"
    junit = tmp_path / "junit.xml"

    code = run(
        [
            "check",
            str(fixture("planner")),
            "--smoke",
            str(playbook),
            "--junit-xml",
            str(junit),
            "--installer",
            "uv",
        ]
    )

    out = capsys.readouterr().out
    assert code == 1
    [annotation] = annotated(out)
    assert annotation["file"] == "fixtures/playbooks/planner-broken.toml"
    assert annotation["line"] == line_of(playbook, '{ call = "plan_propose"')
    assert annotation["title"].startswith("sandboxverify: smoke_failed [")
    [failed] = [case for case in ET.parse(junit).getroot().iter("testcase") if len(case)]
    assert failed.get("name") == "smoke"
    failure = failed.find("failure")
    assert failure is not None and failure.get("type") == "smoke_failed"
    assert "- **smoke**: planner-broken.toml failed" in github.read_text(encoding="utf-8")


def test_a_module_missing_from_the_wheel_is_annotated_where_it_is_imported(
    github: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["check", str(fixture("broken-import-all")), "--installer", "uv"])

    out = capsys.readouterr().out
    assert code == 1
    [annotation] = annotated(out)
    render = fixture("broken-import-all") / "svfix_broken_import_all" / "reports" / "render.py"
    assert (
        annotation["file"] == "fixtures/broken-import-all/svfix_broken_import_all/reports/render.py"
    )
    assert annotation["line"] == line_of(render, "from .templates import PAGE")
    assert annotation["title"].startswith("sandboxverify: import_failed [")


def test_a_broken_console_script_is_annotated_at_its_declaration(
    github: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["check", str(fixture("broken-console-script")), "--installer", "uv"])

    out = capsys.readouterr().out
    assert code == 1
    [annotation] = annotated(out)
    pyproject = fixture("broken-console-script") / "pyproject.toml"
    assert annotation["file"] == "fixtures/broken-console-script/pyproject.toml"
    assert annotation["line"] == line_of(pyproject, "svfix-broken-console-script = ")
    assert annotation["title"].startswith("sandboxverify: script_failed [")


def test_with_json_on_stdout_the_annotations_go_to_stderr(
    github: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    code = run(["check", str(fixture("broken-typo-attr")), "--json", "-", "--no-import-all"])

    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.lstrip().startswith("{")
    assert "::error" not in captured.out
    assert len(annotated(captured.err)) == 1


def test_no_github_output_unless_asked_or_on_a_runner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    broken = [str(fixture("broken-typo-attr")), "--no-import-all"]

    assert run(["check", *broken]) == 1
    assert "::error" not in capsys.readouterr().out
    assert not summary.exists()

    # asked for explicitly, off a runner
    assert run(["check", *broken, "--github"]) == 1
    assert len(annotated(capsys.readouterr().out)) == 1
    assert summary.read_text(encoding="utf-8").startswith("## sandboxverify failed")


def test_no_github_turns_the_output_off_on_a_runner(
    github: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["check", str(fixture("broken-typo-attr")), "--no-import-all", "--no-github"])

    assert code == 1
    assert "::error" not in capsys.readouterr().out
    assert github.read_text(encoding="utf-8") == "earlier step\n"


def test_a_junit_report_into_a_missing_directory_creates_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-dir" / "junit.xml"

    code = run(["check", str(fixture("good-hatch")), "--junit-xml", str(missing)])

    capsys.readouterr()
    assert code == 0
    assert missing.is_file()
    assert "<testsuite" in missing.read_text(encoding="utf-8")


def test_an_unwritable_step_summary_is_a_usage_error_not_a_crash(
    github: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unwritable = tmp_path / "no-such-dir" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(unwritable))
    out = tmp_path / "report.json"

    code = run(["check", str(fixture("broken-typo-attr")), "--no-import-all", "--json", str(out)])

    captured = capsys.readouterr()
    assert code == 2
    # the failure's annotation was written before; the error gets one of its own, once
    [failure, error] = annotated(captured.out)
    assert failure["title"].startswith("sandboxverify: plugin_load_failed")
    assert error["title"] == "sandboxverify: usage_error"
    assert (
        f"ERROR cannot append the step summary to GITHUB_STEP_SUMMARY={unwritable}" in captured.err
    )
    assert "hint: point GITHUB_STEP_SUMMARY at a writable file, or pass --no-github" in captured.err
    assert "Traceback" not in captured.err
    # the report written before is rewritten with the error: exit 2 is never ok: true
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert [f["code"] for f in report["failures"]] == ["plugin_load_failed"]
    assert report["runs"] and report["error"]["code"] == "usage_error"
