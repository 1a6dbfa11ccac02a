"""Values that cannot be meant are usage errors before any work: exit 2, one readable line and
a hint, no traceback, nothing built and nothing touched; the same from [tool.sandboxverify]."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.artifacts import hostile
from tests.cli.test_main import assert_usage_error
from tests.helpers import copy_fixture, fixture, run_cli, tree_digest

# each of these would disable the watchdog or is not a number of seconds anyone means
ABSURD_SECONDS = ["inf", "-inf", "1e999", "nan", "-1", "0", "86401", "1e12"]


@pytest.mark.parametrize("value", ABSURD_SECONDS)
@pytest.mark.parametrize("option", ["--timeout", "--install-timeout"])
def test_an_absurd_timeout_is_refused(option: str, value: str, tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    before = tree_digest(tmp_path)
    stderr = assert_usage_error(["check", str(project), option, value], option, "hint:")
    assert "seconds" in stderr
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("value", ["inf", "nan", "0", "1e999"])
def test_an_absurd_timeout_of_a_playbook_run_is_refused(value: str, tmp_path: Path) -> None:
    playbook = tmp_path / "smoke.toml"
    playbook.write_text("[[turns]]\nprompt = 'x'\nactions = [{ say = 'y' }]\n")
    assert_usage_error(["run", str(playbook), "--timeout", value], "--timeout", "hint:")


@pytest.mark.parametrize("value", ["", ",,", " ", "greet,", "greet,,add"])
def test_an_empty_tool_name_is_refused(value: str) -> None:
    assert_usage_error(
        ["check", str(fixture("good-hatch")), "--expect-tools", value],
        "--expect-tools",
        "empty tool name",
        "hint:",
    )


@pytest.mark.parametrize(
    "option", ["--group", "--python", "--hookspecs", "--index-url", "--with", "--smoke"]
)
def test_an_empty_value_is_refused(option: str) -> None:
    assert_usage_error(
        ["check", str(fixture("good-hatch")), option, ""], f"{option} was given an empty value"
    )


@pytest.mark.parametrize("option", ["--plugin", "--dist", "--group", "--trace"])
def test_an_empty_value_of_a_playbook_run_is_refused(option: str, tmp_path: Path) -> None:
    playbook = tmp_path / "smoke.toml"
    playbook.write_text("[[turns]]\nprompt = 'x'\nactions = [{ say = 'y' }]\n")
    assert_usage_error(["run", str(playbook), option, ""], f"{option} was given an empty value")


# --- report paths --------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--junit-xml"])
def test_a_report_path_that_cannot_be_written_is_refused_before_any_work(
    option: str, tmp_path: Path
) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "a-directory").mkdir()
    before = tree_digest(tmp_path)
    for path, fragment in (
        ("/proc/version", "cannot be written"),
        (str(tmp_path / "a-file" / "report"), "cannot create the directory"),
        (str(tmp_path / "a-file" / "deeper" / "report"), "cannot create the directory"),
        (str(tmp_path / "a-directory"), "is a directory"),
        ("", "empty path"),
    ):
        assert_usage_error(["check", str(project), option, path], option, fragment, "hint:")
    assert tree_digest(tmp_path) == before


def _hostile_wheel(directory: Path) -> Path:
    """A wheel refused before anything installs it: the check ends quickly, with exit 1."""
    return hostile.write_wheel(directory, [hostile.stored("../evil.py", b"pwned\n")])


def test_report_directories_are_created(tmp_path: Path) -> None:
    wheel = _hostile_wheel(tmp_path)
    result = run_cli(
        [
            "check",
            str(wheel),
            "--json",
            str(tmp_path / "out" / "deep" / "report.json"),
            "--junit-xml",
            str(tmp_path / "reports" / "junit.xml"),
        ],
        cwd=tmp_path,
    )
    assert result.code == 1, result.stdout + result.stderr
    document = json.loads((tmp_path / "out" / "deep" / "report.json").read_text())
    assert [f["code"] for f in document["failures"]] == ["artifact_invalid"]
    assert "<testsuites" in (tmp_path / "reports" / "junit.xml").read_text()


def test_report_paths_in_the_callers_own_configuration_are_written(tmp_path: Path) -> None:
    """``junit-xml = "reports/junit.xml"`` in one's own configuration, relative to the file."""
    (tmp_path / "dist").mkdir()
    wheel = _hostile_wheel(tmp_path / "dist")
    own = tmp_path / "config.toml"
    own.write_text('junit-xml = "reports/junit.xml"\njson = "reports/check.json"\n')
    env = {**os.environ, "SANDBOXVERIFY_CONFIG": str(own)}
    result = run_cli(["check", str(wheel)], cwd=tmp_path, env=env)
    assert result.code == 1, result.stdout + result.stderr
    assert "<testsuites" in (tmp_path / "reports" / "junit.xml").read_text()
    assert json.loads((tmp_path / "reports" / "check.json").read_text())["ok"] is False


@pytest.mark.parametrize(
    "line", ['json = "out.json"', 'junit-xml = "reports/junit.xml"', 'json = "/tmp/x/zz.pth"']
)
def test_the_checked_project_cannot_say_where_sandboxverify_writes(
    line: str, tmp_path: Path
) -> None:
    """A project's [tool.sandboxverify] is untrusted: a report path there could make
    sandboxverify itself write anywhere (a .pth in site-packages runs at the next start)."""
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(f"\n[tool.sandboxverify]\n{line}\n")
    before = tree_digest(tmp_path)
    assert_usage_error(["check", str(project)], "the checked project may not", "hint:")
    assert tree_digest(tmp_path) == before


def test_an_existing_report_is_replaced_and_a_usage_error_is_reported_in_both(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old.json"
    old.write_text("stale\n")
    fresh = tmp_path / "fresh.xml"
    # a usage error found after the report paths were checked: both reports say so
    result = run_cli(
        [
            "check",
            str(fixture("good-hatch")),
            "--json",
            str(old),
            "--junit-xml",
            str(fresh),
            "--python",
            "3.99",
        ]
    )
    assert result.code == 2, result.stderr
    assert json.loads(old.read_text())["error"]["code"] == "usage_error"
    assert 'type="usage_error"' in fresh.read_text()

    wheel = _hostile_wheel(tmp_path)
    assert run_cli(["check", str(wheel), "--json", str(old)], cwd=tmp_path).code == 1
    assert json.loads(old.read_text())["ok"] is False


# --- the same from [tool.sandboxverify] -----------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("timeout = inf", "timeout must be a number of seconds"),
        ("timeout = nan", "timeout must be a number of seconds"),
        ("timeout = 1e999", "timeout must be a number of seconds"),
        ("timeout = -5", "timeout must be a number of seconds"),
        ("install-timeout = 0", "install-timeout must be a number of seconds"),
        ("install_timeout = 100000", "install_timeout must be a number of seconds"),
        ('expect-tools = ""', "expect-tools must be"),
        ('expect-tools = ",,"', "none of them empty"),
        ('expect-tools = ["greet", ""]', "expect-tools must be"),
        ('group = ""', "group must be"),
        ('python = [""]', "python must be"),
        ('index-url = " "', "index-url must be a non-empty string"),
        ('json = ""', "json must be"),
        ('junit-xml = ""', "junit-xml must be a file path"),
        ('json = "/proc/version"', "the checked project may not"),
        ('junit-xml = "pyproject.toml/junit.xml"', "the checked project may not"),
    ],
)
def test_a_bad_config_value_is_refused(line: str, fragment: str, tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(f"\n[tool.sandboxverify]\n{line}\n")
    before = tree_digest(tmp_path)
    assert_usage_error(["check", str(project)], fragment)
    assert tree_digest(tmp_path) == before
