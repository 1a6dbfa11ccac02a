"""The sdist compared with the files git tracks, when the project is a git checkout (as
check-manifest compares them): a tracked module of a package the wheel installs that the sdist
lacks is missing from every wheel built from that sdist (an error); other tracked files the sdist
lacks are a warning (tests and docs left out on purpose look the same)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sandboxverify.artifacts._archives import UnsafeArchive, open_tar
from sandboxverify.artifacts._hygiene import junk_paths
from sandboxverify.artifacts._rules import Problem, few
from sandboxverify.sandbox import Command, RunContext, Workspace

#: what no sdist needs, as check-manifest ignores it by default (and sdist metadata)
_IGNORED_NAMES = frozenset(
    {
        ".gitignore",
        ".gitattributes",
        ".gitmodules",
        ".git-blame-ignore-revs",
        ".mailmap",
        ".editorconfig",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "Jenkinsfile",
        "PKG-INFO",
        "setup.cfg",
    }
)
#: where a package's code lives in a project (flat, src and lib layouts)
_SOURCE_ROOTS = ("", "src/", "lib/", "python/")
#: git never runs what the checked project's own configuration names (fsmonitor, hooks)
_SAFE_GIT = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


def tracked_files(project: Path, workspace: Workspace, ctx: RunContext) -> list[str] | None:
    """The files git tracks under ``project`` (relative to it), or ``None`` when it is no git
    checkout (or git is missing, or refuses the repository)."""
    log = workspace.logs / "git-ls-files.log"
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workspace.root / "tmp"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    argv = ["git", *_SAFE_GIT, "ls-files", "-z", "--cached", "--", "."]
    command = Command(argv, env, project, ctx.install_timeout, log, "git ls-files")
    outcome = ctx.run(command)
    if not outcome.ok:
        return None
    try:
        names = log.read_bytes().decode("utf-8", "surrogateescape").split("\0")
    except OSError:
        return None
    return [name for name in names if name and (project / name).is_file()]


def sdist_members(path: Path) -> list[str] | None:
    """The sdist's files, without its top-level directory."""
    try:
        with open_tar(path) as (_, members):
            return [m.name.split("/", 1)[1] for m in members if m.isfile() and "/" in m.name]
    except (UnsafeArchive, OSError, EOFError, ValueError):
        return None  # its own inspection reported it


def vcs_problems(
    sdist_name: str, members: Sequence[str], tracked: Sequence[str], packages: Sequence[str]
) -> list[Problem]:
    """What git tracks that the sdist lacks: modules of ``packages`` (the wheel's top-level
    names) as an error, anything else as a warning."""
    present = set(members)
    junk = set(junk_paths(tracked))
    missing = [
        path
        for path in tracked
        if path not in present
        and Path(path).name not in _IGNORED_NAMES
        and not any(path == j or path.startswith(j) for j in junk)
    ]
    modules = [path for path in missing if _is_module_of(path, packages)]
    others = [path for path in missing if path not in modules]
    found: list[Problem] = []
    if modules:
        found.append(
            Problem(
                f"{sdist_name}: modules tracked in git are missing from the sdist, so every wheel "
                f"built from it lacks them: {few(modules)}",
                "include them in the sdist (setuptools: MANIFEST.in or package discovery; "
                "hatchling: [tool.hatch.build.targets.sdist] include/exclude), then rebuild",
                installable=True,
                rule="sdist-missing-module",
                file=sdist_name,
            )
        )
    if others:
        found.append(
            Problem(
                f"{sdist_name}: files tracked in git are missing from the sdist: {few(others)}",
                "include them (MANIFEST.in, [tool.hatch.build.targets.sdist] include) if "
                "building or testing from the sdist needs them; else this is by design",
                installable=True,
                rule="sdist-missing-files",
                file=sdist_name,
            )
        )
    return found


def _is_module_of(path: str, packages: Sequence[str]) -> bool:
    if not path.endswith(".py"):
        return False
    return any(
        path.startswith(f"{root}{package}/") or path == f"{root}{package}.py"
        for root in _SOURCE_ROOTS
        for package in packages
    )
