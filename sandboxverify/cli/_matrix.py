"""What ``sandboxverify matrix`` does (its options are in ``_commands``): the Python versions a
release's ``requires-python`` allows, as the JSON a GitHub Actions ``strategy.matrix`` takes
(``fromJSON``)."""

from __future__ import annotations

import json
from typing import Any

import click
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from sandboxverify._errors import EXIT_OK, UsageError
from sandboxverify._toml import tomllib
from sandboxverify.artifacts import (
    ArtifactProblem,
    ArtifactsTarget,
    ProjectTarget,
    classify,
    inspect_sdist,
    inspect_wheel,
)
from sandboxverify.cli._options import reject_empty_targets

#: the CPython minor versions released when this sandboxverify was, from the oldest a sandbox
#: runs (3.9): what a matrix can ask actions/setup-python for
CPYTHON_RELEASES = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")


def matrix(targets: tuple[str, ...], systems: tuple[str, ...]) -> int:
    """``sandboxverify matrix``: the JSON matrix on stdout, on one line (fit for
    ``$GITHUB_OUTPUT``)."""
    reject_empty_targets(targets)
    requires_python = _requires_python(targets)
    versions = allowed_versions(requires_python)
    document: dict[str, Any] = {}
    if systems:
        document["os"] = list(dict.fromkeys(systems))
    document["python"] = versions
    click.echo(json.dumps(document))
    return EXIT_OK


def allowed_versions(requires_python: str | None) -> list[str]:
    """The known CPython minor versions of which some release satisfies ``requires_python``."""
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        raise UsageError(
            f"requires-python {requires_python!r} is not a valid version specifier",
            hint="fix requires-python in pyproject.toml (e.g. >=3.10)",
        ) from None
    versions = [
        minor
        for minor in CPYTHON_RELEASES
        if any(allowed.contains(f"{minor}.{patch}", prereleases=False) for patch in range(40))
    ]
    if not versions:
        raise UsageError(
            f"requires-python {requires_python!r} allows none of Python "
            f"{', '.join(CPYTHON_RELEASES)}",
            hint="sandboxes need Python 3.9 or newer; widen requires-python if it is wrong",
        )
    return versions


def _requires_python(targets: tuple[str, ...]) -> str | None:
    target = classify(targets)
    if isinstance(target, ProjectTarget):
        return _from_pyproject(target)
    return _from_artifacts(target)


def _from_pyproject(target: ProjectTarget) -> str | None:
    pyproject = target.path / "pyproject.toml"
    hint = "build the project and pass the wheel or the sdist, whose metadata has it"
    if not pyproject.is_file():
        raise UsageError(
            f"{target.path} has no pyproject.toml to read requires-python from", hint=hint
        )
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {pyproject}: {exc}") from None
    value = project.get("requires-python") if isinstance(project, dict) else None
    if value is None and "requires-python" in project.get("dynamic", []):
        raise UsageError(f"{pyproject}: requires-python is dynamic (set by the build)", hint=hint)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{pyproject}: requires-python must be a string, not {value!r}")
    return value


def _from_artifacts(target: ArtifactsTarget) -> str | None:
    found: set[str | None] = set()
    for path in (*target.wheels, *target.sdists):
        try:
            artifact = inspect_wheel(path) if path in target.wheels else inspect_sdist(path)
        except ArtifactProblem as exc:
            raise UsageError(
                f"cannot read the metadata of {path.name}: {exc}",
                hint="run 'sandboxverify check' on it: it reports every problem",
            ) from None
        found.add(artifact.requires_python)
    if len(found) > 1:
        raise UsageError(
            "the artifacts disagree on Requires-Python: "
            + ", ".join(sorted(repr(value) for value in found)),
            hint="build them from one source tree",
        )
    return found.pop()
