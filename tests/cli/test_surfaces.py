"""Every exit leaves the CI surfaces it was asked for: a usage error, a configuration error or a
bug still writes the JSON report (``ok: false`` and an ``error``), a JUnit file with one failing
case, an ``::error`` annotation and the step summary."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.cli import _check, _commands, _main
from sandboxverify.cli._surfaces import Surfaces, _read_leniently
from tests.helpers import copy_fixture, run_cli


def runner_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of a step on a GitHub runner, and its step summary file."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    env = {
        **os.environ,
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(tmp_path),
    }
    return env, summary


def annotated(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("::error ")]


def junit_cases(path: Path) -> list[tuple[str, str | None]]:
    root = ET.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        failure = case.find("failure")
        cases.append((case.get("name", ""), failure.get("type") if failure is not None else None))
    return cases


def report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_a_missing_target_on_a_runner_leaves_every_surface(tmp_path: Path) -> None:
    """The issue's case: `target: nope/*` printed one line and nothing else."""
    env, summary = runner_env(tmp_path)
    out, junit = tmp_path / "report.json", tmp_path / "junit.xml"

    result = run_cli(
        ["check", "nope/*", "--json", str(out), "--junit-xml", str(junit)], env=env, cwd=tmp_path
    )

    assert result.code == 2, result.stderr
    assert result.stderr.startswith("ERROR target not found: nope/*\n  hint: ")
    [annotation] = annotated(result.stdout)
    assert annotation.startswith("::error title=sandboxverify%3A usage_error::target not found")
    assert "%0Ahint: pass a project directory" in annotation
    document = report(out)  # validated against the schema (conftest.py)
    assert document["ok"] is False
    assert document["target"] == "nope/*"
    assert document["error"]["code"] == "usage_error"
    assert document["error"]["message"] == "target not found: nope/*"
    assert document["error"]["hint"].startswith("pass a project directory")
    assert (document["runs"], document["failures"]) == ([], [])
    assert junit_cases(junit) == [("usage_error", "usage_error")]
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## sandboxverify failed: usage error\n")
    assert "**ERROR** target not found: nope/\\*" in text


def test_the_report_paths_are_found_even_when_other_options_are_wrong(tmp_path: Path) -> None:
    out, junit = tmp_path / "report.json", tmp_path / "junit.xml"

    result = run_cli(
        [
            "check",
            "--expect-tool",  # a typo: no such option
            "greet",
            f"--json={out}",
            "--junit-xml",
            str(junit),
            "--installer",
            "poetry",
        ],
        cwd=tmp_path,
    )

    assert result.code == 2
    assert result.stdout == ""  # not on a runner, no --github: no annotation
    document = report(out)
    assert document["error"]["code"] == "usage_error"
    assert "No such option" in document["error"]["message"]
    assert document["target"] == "."  # 'greet' is the typo's value, not a target
    assert junit_cases(junit) == [("usage_error", "usage_error")]


def test_json_on_stdout_carries_the_error(tmp_path: Path) -> None:
    result = run_cli(["check", "nope", "--json", "--github"], cwd=tmp_path)

    assert result.code == 2
    document = result.json()
    assert document["error"]["code"] == "usage_error"
    # stdout is the JSON: the annotation goes to stderr, with the ERROR line
    assert annotated(result.stderr)
    assert "ERROR target not found: nope" in result.stderr


def test_a_configuration_error_still_writes_the_reports_the_files_ask_for(tmp_path: Path) -> None:
    """Report paths from one's own configuration, annotations from the project's."""
    project = copy_fixture("good-hatch", tmp_path)
    (project / "reports").mkdir()
    own = project / "config.toml"
    own.write_text('json = "reports/report.json"\njunit_xml = "reports/junit.xml"\n')
    with (project / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write('\n[tool.sandboxverify]\ngithub = true\nexpect-tool = ["greet"]\n')

    result = run_cli(
        ["check", str(project)], cwd=tmp_path, env={**os.environ, "SANDBOXVERIFY_CONFIG": str(own)}
    )

    assert result.code == 2
    document = report(project / "reports" / "report.json")
    assert document["error"]["code"] == "config_error"
    assert "unknown key 'expect-tool'" in document["error"]["message"]
    assert document["error"]["hint"] == "did you mean 'expect-tools'?"
    assert junit_cases(project / "reports" / "junit.xml") == [("config_error", "config_error")]
    [annotation] = annotated(result.stdout)
    assert "sandboxverify%3A config_error" in annotation


def test_a_report_path_that_is_the_error_is_not_written(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"precious")
    folder = tmp_path / "reports"
    folder.mkdir()

    clobber = run_cli(["check", "--json", str(wheel)], cwd=tmp_path)
    project = copy_fixture("good-hatch", tmp_path)
    nowhere = run_cli(["check", str(project), "--junit-xml", str(folder)], cwd=tmp_path)

    assert (clobber.code, nowhere.code) == (2, 2)
    assert wheel.read_bytes() == b"precious"
    assert list(folder.iterdir()) == []
    assert "is a directory" in nowhere.stderr
    assert len(nowhere.stderr.splitlines()) == 2  # ERROR and its hint, nothing more


def test_a_report_in_a_missing_directory_is_written_there_with_the_error(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "report.json"

    result = run_cli(["check", "nope", "--json", str(out)], cwd=tmp_path)

    assert result.code == 2
    assert report(out)["error"]["code"] == "usage_error"


def test_a_bug_exits_3_with_the_traceback_and_an_internal_error_report(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(*args: object, **_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(_check, "run_check", broken)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    out, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    project = copy_fixture("good-hatch", tmp_path)

    code = _main.run(["check", str(project), "--json", str(out), "--junit-xml", str(junit)])

    captured = capsys.readouterr()
    assert code == 3
    assert "Traceback" in captured.err and "RuntimeError: a bug" in captured.err
    document = report(out)
    assert document["error"]["code"] == "internal_error"
    assert document["error"]["message"] == "internal error in sandboxverify: RuntimeError: a bug"
    assert junit_cases(junit) == [("internal_error", "internal_error")]
    [annotation] = annotated(captured.out)
    assert "sandboxverify%3A internal_error" in annotation


def test_an_interrupt_in_process_writes_an_interrupted_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_check, "run_check", interrupted)
    out = tmp_path / "report.json"

    code = _main.run(["check", str(copy_fixture("good-hatch", tmp_path)), "--json", str(out)])

    assert code == 130
    assert "ERROR interrupted" in capsys.readouterr().err
    assert report(out)["error"]["code"] == "interrupted"


@pytest.mark.parametrize(
    ("args", "asked", "targets"),
    [
        (["pkg", "--json"], {"json_out": "-"}, ["pkg"]),
        (["--json", "--exact", "pkg"], {"json_out": "-"}, ["pkg"]),
        (["--json", "r.json", "pkg"], {"json_out": "r.json"}, ["pkg"]),
        (["--json=r.json", "--junit-xml=j.xml"], {"json_out": "r.json", "junit_xml": "j.xml"}, []),
        (
            ["--junit-xml", "j.xml", "--no-github", "a.whl", "b.tar.gz"],
            {"junit_xml": "j.xml", "github": False},
            ["a.whl", "b.tar.gz"],
        ),
        (["--python", "3.12", "-vq", "--", "--json"], {}, ["--json"]),
        (["--github", "--timeout"], {"github": True}, []),
        (["--junit-xml"], {}, []),  # its value is missing: click says so
        # a typo of an option that takes a value: its value is no target
        (["--expect-tool", "greet", "--json=r.json"], {"json_out": "r.json"}, []),
        (["--expect-tool=greet", "pkg", "--json"], {"json_out": "-"}, ["pkg"]),
        # a typo of a flag takes no value; a value click cannot take is left out
        (["--exactt", "pkg", "--installer", "poetry", "--github"], {"github": True}, ["pkg"]),
    ],
)
def test_click_reads_the_report_options_leniently(
    args: list[str], asked: dict[str, Any], targets: list[str]
) -> None:
    values, positionals = _read_leniently(_commands.check, args)
    found = {
        key: value
        for key, value in values.items()
        if key in ("json_out", "junit_xml", "github") and value is not None
    }
    assert found == asked
    assert list(positionals) == targets


def test_run_and_record_have_their_json_only() -> None:
    run = Surfaces.from_command_line(
        _main.cli, ["run", "smoke.toml", "--json", "r.json", "--junit-xml", "j"]
    )
    assert (run.command, run.json_out, run.junit_out) == ("run", "r.json", None)
    record = Surfaces.from_command_line(_main.cli, ["record", "hi", "-m", "echo", "--json=-"])
    assert (record.command, record.json_out) == ("record", "-")
    assert Surfaces.from_command_line(_main.cli, ["--version"]).json_out is None


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["run", "missing.toml"], "config_error"),
        (["record", "hi", "-o", "s.toml"], "usage_error"),  # no --model
    ],
)
def test_an_error_of_run_or_record_still_writes_its_json(
    tmp_path: Path, command: list[str], code: str
) -> None:
    out = tmp_path / "result.json"
    result = run_cli([*command, "--json", str(out)], cwd=tmp_path)

    assert result.code == 2, result.stderr
    document = report(out)
    assert document["ok"] is False
    assert document["error"]["code"] == code
    assert document["error"]["message"] in result.stderr
