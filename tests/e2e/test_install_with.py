"""``--with``: the application that loads the plugins, installed next to the wheel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_main import assert_usage_error
from tests.helpers import fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def test_the_host_application_is_installed_only_when_asked(tmp_path: Path) -> None:
    # broken-undeclared-dep imports click without declaring it; an application that provides
    # click to its plugins is what --with stands for
    without = run_cli(["check", str(fixture("broken-undeclared-dep")), "--installer", "uv"])
    assert without.code == 1, without.stdout + without.stderr
    assert "No module named 'click'" in without.stdout

    report_path = tmp_path / "report.json"
    given = run_cli(
        [
            "check",
            str(fixture("broken-undeclared-dep")),
            "--installer",
            "uv",
            "--with",
            "click>=8",
            "--json",
            str(report_path),
        ]
    )
    assert given.code == 0, given.stdout + given.stderr
    report = json.loads(report_path.read_text())
    assert report["with"] == ["click>=8"]
    assert [tool["name"] for tool in report["runs"][0]["tools"]] == ["bold"]


@pytest.mark.parametrize("requirement", ["--index-url=https://example.invalid", "not a req!"])
def test_with_takes_requirements_never_installer_options(requirement: str) -> None:
    stderr = assert_usage_error(["check", str(fixture("good-hatch")), "--with", requirement])
    assert stderr.startswith(f"ERROR --with {requirement!r} is not a requirement")
