"""The repository's promises: the README's commands are what CI runs, nothing built is tracked."""

from __future__ import annotations

import re
import subprocess

from tests.helpers import ROOT, readme_commands


def test_readme_starts_with_the_two_commands() -> None:
    run_sample, run_tests = readme_commands()
    assert "sandboxverify check fixtures/" in run_sample
    assert "pytest" in run_tests


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, run_tests = readme_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert run_tests in ci_lines


def test_no_build_outputs_or_environments_are_tracked() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    pattern = re.compile(r"(^|/)(\.venv|venv|build|dist|__pycache__|\.tox|\.nox)/|\.egg-info/")
    assert [path for path in tracked if pattern.search(path)] == []
