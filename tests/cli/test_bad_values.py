"""Values that cannot be meant are usage errors before any work: exit 2, one readable line and
a hint, no traceback, nothing built and nothing touched; the same from [tool.sandboxverify]."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_main import assert_usage_error
from tests.helpers import copy_fixture, fixture, tree_digest

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
    ],
)
def test_a_bad_config_value_is_refused(line: str, fragment: str, tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(f"\n[tool.sandboxverify]\n{line}\n")
    before = tree_digest(tmp_path)
    assert_usage_error(["check", str(project)], fragment)
    assert tree_digest(tmp_path) == before
