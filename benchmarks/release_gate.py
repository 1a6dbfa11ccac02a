"""Side by side: what twine check, check-wheel-contents, pydistcheck, validate-pyproject and
check-manifest report, next to sandboxverify, on the defect fixtures and on real sdists.

The tools are installed into a scratch virtual environment at run time (they are no dependencies
of sandboxverify). Each fixture is copied into a fresh git repository (check-manifest compares the
sdist with git; so does sandboxverify in a git checkout), built once (``uv build``: the sdist,
then the wheel from it), and every tool looks at what it reads: twine, check-wheel-contents and
pydistcheck at the built files, validate-pyproject at ``pyproject.toml``, check-manifest and
sandboxverify at the project. A real sdist is given to each tool that reads built files, and to
``sandboxverify check`` as it is (which builds its wheel from it).

    python benchmarks/release_gate.py [--real SDIST ...] [--write-readme]

``--write-readme`` replaces the table between the README's ``release-gate-table`` markers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = (
    "twine",
    "check-wheel-contents",
    "pydistcheck",
    "validate-pyproject[all]",
    "check-manifest",
)
COLUMNS = (
    "twine check",
    "check-wheel-contents",
    "pydistcheck",
    "validate-pyproject",
    "check-manifest",
    "sandboxverify",
)
#: the defects of the issue, each as a fixture, and what the row calls it
DEFECTS = (
    ("defect-license-expression-early", "License-Expression under Metadata-Version 2.1"),
    ("defect-readme-rst", "a README PyPI cannot render"),
    ("defect-bytecode-wheel", "a .pyc file in the wheel"),
    ("defect-duplicate-files", "a duplicate file in the wheel"),
    ("defect-junk-sdist", "junk in the sdist (.github/, .readthedocs.yaml)"),
    ("defect-pyproject-typo", "a typo'd key in [project]"),
    ("broken-sdist-excludes-module", "a module git tracks missing from the sdist"),
    ("broken-typo-attr", "an entry point with a typo (a plugin that cannot load)"),
    ("broken-undeclared-dep", "a dependency used but not declared"),
    ("good-hatch", "a good package"),
)
MARKERS = ("<!-- release-gate-table -->", "<!-- /release-gate-table -->")


@dataclass(frozen=True)
class Verdict:
    caught: bool
    detail: str

    def cell(self) -> str:
        return (
            f"**caught**: {self.detail}"
            if self.caught
            else f"passes{self.detail and ': '}{self.detail}"
        )


def run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    plain = {**(env or os.environ), "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        list(argv), cwd=cwd, env=plain, capture_output=True, text=True, timeout=1800, check=False
    )
    return done.returncode, done.stdout + done.stderr


def scratch_tools(root: Path) -> Path:
    """A virtual environment with the five tools; its bin directory."""
    venv.EnvBuilder(with_pip=True).create(root)
    bin_dir = root / "bin"
    code, out = run([str(bin_dir / "python"), "-m", "pip", "install", "-q", *TOOLS], root)
    if code:
        sys.exit(f"installing the tools failed:\n{out}")
    return bin_dir


def git_project(name: str, work: Path) -> Path:
    project = work / name
    shutil.copytree(ROOT / "fixtures" / name, project)
    config = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "fixture"]):
        run(["git", *config, *args], project)
    return project


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CHECKING = re.compile(r"^Checking \S+: (PASSED|FAILED)?[, ]*(with warnings)?\s*")


def first_lines(text: str, pattern: str) -> str:
    plain = _ANSI.sub("", text)
    found = [
        " ".join(re.sub(r"^.*?\b(ERROR|WARNING)\b", r"\1", _CHECKING.sub("", line)).split())
        for line in plain.splitlines()
        if re.search(pattern, line)
    ]
    shown = "; ".join(dict.fromkeys(found))
    return shown[:140] + ("…" if len(shown) > 140 else "")


def twine(bin_dir: Path, files: Sequence[Path], cwd: Path) -> Verdict:
    code, out = run([str(bin_dir / "twine"), "check", "--strict", *map(str, files)], cwd)
    return Verdict(code != 0, first_lines(out, r"ERROR|WARNING|InvalidDistribution"))


def wheel_contents(bin_dir: Path, files: Sequence[Path], cwd: Path) -> Verdict:
    wheels = [str(f) for f in files if f.name.endswith(".whl")]
    if not wheels:
        return Verdict(False, "(no wheel)")
    code, out = run([str(bin_dir / "check-wheel-contents"), *wheels], cwd)
    codes = sorted(set(re.findall(r"\b([WE]\d{3})\b", out)))
    return Verdict(code != 0, ", ".join(codes))


def pydistcheck(bin_dir: Path, files: Sequence[Path], cwd: Path) -> Verdict:
    code, out = run([str(bin_dir / "pydistcheck"), *map(str, files)], cwd)
    kinds = sorted(set(re.findall(r"\[([a-z-]+)\]", out)))
    return Verdict(code != 0, ", ".join(kinds))


def validate_pyproject(bin_dir: Path, pyproject: Path | None, cwd: Path) -> Verdict:
    if pyproject is None:
        return Verdict(False, "(not run)")
    code, _ = run([str(bin_dir / "validate-pyproject"), str(pyproject)], cwd)
    return Verdict(code != 0, "schema error" if code else "")


def check_manifest(bin_dir: Path, project: Path | None) -> Verdict:
    if project is None:
        return Verdict(False, "(needs the project)")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    code, out = run([str(bin_dir / "check-manifest"), "."], project, env)
    if code == 0:
        return Verdict(False, "")
    missing = re.findall(r"^\s{2}(\S+)$", out, re.MULTILINE)
    return Verdict(True, "missing from sdist: " + ", ".join(missing[:3]))


def sandboxverify(targets: Sequence[Path], cwd: Path) -> Verdict:
    report = cwd / "sandboxverify.json"
    argv = [sys.executable, "-m", "sandboxverify", "check", *map(str, targets), "-q"]
    code, _ = run([*argv, "--json", str(report)], cwd)
    if not report.is_file():
        return Verdict(True, f"exit {code}")
    document = json.loads(report.read_text(encoding="utf-8"))
    failures = [f["rule"] or f["code"] for f in document["failures"]]
    warnings = [w["code"] for w in document["warnings"] if w["code"] != "no-os-sandbox"]
    detail = ", ".join(dict.fromkeys(failures))
    if warnings:
        detail += (" · " if detail else "") + "warning " + ", ".join(dict.fromkeys(warnings))
    return Verdict(bool(failures) or bool(warnings), detail)


def fixture_row(name: str, bin_dir: Path, work: Path) -> list[Verdict]:
    project = git_project(name, work)
    built = work / f"{name}-dist"
    code, _ = run(["uv", "build", "--out-dir", str(built), str(project)], work)
    # uv leaves a .gitignore beside them: the sdist and the wheel only
    files = sorted([*built.glob("*.tar.gz"), *built.glob("*.whl")]) if code == 0 else []
    return [
        twine(bin_dir, files, work) if files else Verdict(False, "(build failed)"),
        wheel_contents(bin_dir, files, work),
        pydistcheck(bin_dir, files, work) if files else Verdict(False, "(build failed)"),
        validate_pyproject(bin_dir, project / "pyproject.toml", work),
        check_manifest(bin_dir, project),
        sandboxverify([project], work),
    ]


def real_row(sdist: Path, bin_dir: Path, work: Path) -> list[Verdict]:
    return [
        twine(bin_dir, [sdist], work),
        wheel_contents(bin_dir, [sdist], work),
        pydistcheck(bin_dir, [sdist], work),
        validate_pyproject(bin_dir, None, work),
        check_manifest(bin_dir, None),
        sandboxverify([sdist], work),
    ]


def table(rows: Sequence[tuple[str, list[Verdict]]]) -> str:
    lines = [
        "| case | " + " | ".join(COLUMNS) + " |",
        "| --- |" + " --- |" * len(COLUMNS),
    ]
    for label, verdicts in rows:
        cells = [verdict.cell().replace("|", "/") for verdict in verdicts]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_readme(text: str) -> None:
    readme = ROOT / "README.md"
    content = readme.read_text(encoding="utf-8")
    start, end = MARKERS
    head, _, rest = content.partition(start)
    _, _, tail = rest.partition(end)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", nargs="*", default=[], type=Path, help="real sdists")
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="release-gate-") as scratch:
        work = Path(scratch)
        bin_dir = scratch_tools(work / "tools")
        rows = [(label, fixture_row(name, bin_dir, work)) for name, label in DEFECTS]
        rows += [
            (f"real: `{sdist.name}`", real_row(sdist.resolve(), bin_dir, work))
            for sdist in args.real
        ]
    text = table(rows)
    print(text)
    if args.write_readme:
        write_readme(text)


if __name__ == "__main__":
    main()
