"""shellcheck every shell script of the GitHub Action and the workflows, as the runner runs it.

Each ``run:`` of a step whose shell is bash (GitHub's default on Linux and macOS runners) is
written to a file and checked with ``shellcheck --shell bash``; a finding is printed with the
step it is in. Usage: ``python .ci/shellcheck_scripts.py action.yml .github/workflows/*.yml``
(exit 1 on any finding, 2 when shellcheck is missing).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml


def scripts(path: Path) -> Iterator[tuple[str, str]]:
    """(where, script) for each bash ``run:`` in an action (runs.steps) or a workflow (jobs)."""
    document: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "runs" in document:
        groups = {"": document["runs"].get("steps", [])}
        default_shell = None
    else:
        groups = {name: job.get("steps", []) for name, job in document.get("jobs", {}).items()}
        default_shell = (document.get("defaults") or {}).get("run", {}).get("shell")
    for job, steps in groups.items():
        for index, step in enumerate(steps):
            if "run" not in step:
                continue
            shell = step.get("shell", default_shell) or "bash"
            if not str(shell).startswith("bash"):
                continue
            name = step.get("name") or step.get("id") or f"step {index + 1}"
            yield f"{path}: {job + ': ' if job else ''}{name}", str(step["run"])


def main(paths: list[str]) -> int:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        print("shellcheck is not installed (apt-get install shellcheck)", file=sys.stderr)
        return 2
    found = 0
    checked = 0
    with tempfile.TemporaryDirectory() as temp:
        for path in map(Path, paths):
            for where, script in scripts(path):
                checked += 1
                file = Path(temp) / f"script_{checked}.sh"
                file.write_text(script, encoding="utf-8")
                completed = subprocess.run(
                    # SC1091: a script sourcing a file it creates (.venv/bin/activate) can't be
                    # followed before it runs
                    [shellcheck, "--shell=bash", "--exclude=SC1091", "--format=gcc", str(file)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if completed.returncode != 0:
                    found += 1
                    print(f"== {where}")
                    print(completed.stdout.replace(str(file), "run"), end="")
                    print(completed.stderr, end="", file=sys.stderr)
    print(f"shellcheck: {checked} script(s) checked, {found} with findings")
    return 1 if found or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
