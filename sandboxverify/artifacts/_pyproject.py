"""The sdist's ``pyproject.toml`` (the project's own, as it was packed) validated against its
schema with validate-pyproject: a typo'd ``[project]`` key that a backend ignores (hatchling
builds ``dependecies = [...]`` into a wheel without the dependency), a wrong type, an invalid
requirement or classifier, ``[tool.setuptools]``. trove-classifiers is installed with it, so it
never downloads the classifier list."""

from __future__ import annotations

import difflib
import re
from typing import Any

from sandboxverify._toml import tomllib
from sandboxverify.artifacts._pyproject_validator import pyproject_validator
from sandboxverify.artifacts._rules import Problem

#: the keys of ``[project]`` (PEP 621 and later PEPs), for a did-you-mean
PROJECT_KEYS = (
    "authors",
    "classifiers",
    "dependencies",
    "description",
    "dynamic",
    "entry-points",
    "gui-scripts",
    "import-names",
    "import-namespaces",
    "keywords",
    "license",
    "license-files",
    "maintainers",
    "name",
    "optional-dependencies",
    "readme",
    "requires-python",
    "scripts",
    "urls",
    "version",
)
_UNKNOWN_KEYS = re.compile(r"must not contain \{(?P<keys>[^}]*)\} properties")
_HINT = (
    "fix pyproject.toml: build backends ignore or misread what its schema refuses (validate "
    "it with validate-pyproject)"
)


def pyproject_problems(data: bytes, filename: str) -> list[Problem]:
    """The first schema error in ``data`` (validate-pyproject stops at one), as a problem of
    ``pyproject.toml`` found in ``filename``."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [_problem(f"is not valid TOML: {exc}", filename)]
    validator = pyproject_validator()
    try:
        validator.validate(document)
    except validator.error as exc:
        return [_problem(_explained(str(getattr(exc, "message", exc)), document), filename)]
    except ValueError as exc:  # what validate-pyproject's extra checks raise beside the schema
        return [_problem(str(exc).splitlines()[0], filename)]
    return []


def _problem(message: str, filename: str) -> Problem:
    return Problem(
        f"pyproject.toml (in {filename}): {message}",
        _HINT,
        installable=True,
        rule="pyproject-invalid",
        file="pyproject.toml",
    )


def _explained(message: str, document: dict[str, Any]) -> str:
    """validate-pyproject's message, with the key meant for a misspelled ``[project]`` key."""
    match = _UNKNOWN_KEYS.search(message)
    if not match or not message.startswith("`project`"):
        return message
    keys = [key.strip().strip("'\"") for key in match["keys"].split(",")]
    meant = []
    for key in keys:
        close = difflib.get_close_matches(key, PROJECT_KEYS, n=1)
        if close:
            meant.append(f"{key!r} → {close[0]!r}")
    if not meant:
        return message
    return f"{message} (did you mean {', '.join(meant)}?)"
