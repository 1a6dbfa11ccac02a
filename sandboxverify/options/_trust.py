"""What the checked project's own ``[tool.sandboxverify]`` may ask for.

The project is untrusted (a pull request from a stranger is checked in CI with ``check .``): its
configuration may describe the package and make the check stricter, never widen what package code
reaches or where sandboxverify writes. Each option of ``check`` says which it is
(``Option.project``): allowed, refused (it only widens), or allowed within a rule; the rules are
here. Whatever the project may not ask for comes from the command line or the caller's own
configuration (:func:`user_config_path`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: the longest a plugin load may take when the project's file asks (the command line may ask more)
PROJECT_MAX_TIMEOUT = 600.0
#: the longest a build or install step may take when the project's file asks
PROJECT_MAX_INSTALL_TIMEOUT = 3_600.0
#: the caller's own configuration file, when not in the default place
USER_CONFIG_ENV = "SANDBOXVERIFY_CONFIG"


class ProjectRule:
    """Which values of an option the project's file may not ask for, and the same as JSON Schema
    (the shipped schema describes the project's table, so it refuses them too)."""

    def __init__(
        self, why: Callable[[Any], str | None], schema: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> None:
        self._why = why
        self._schema = schema

    def __call__(self, value: Any) -> str | None:
        """Why ``value`` may not come from the project's file, or ``None`` when it may."""
        return self._why(value)

    def schema(self, allowed: dict[str, Any]) -> dict[str, Any]:
        """``allowed`` (what the option takes) narrowed to what the project may ask for."""
        return self._schema(allowed)


def user_config_path() -> Path:
    """The caller's own configuration: ``$SANDBOXVERIFY_CONFIG``, else ``config.toml`` in the user
    configuration directory (``$XDG_CONFIG_HOME/sandboxverify``, ``~/.config/sandboxverify``;
    ``%APPDATA%\\sandboxverify`` on Windows)."""
    given = os.environ.get(USER_CONFIG_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.environ.get("APPDATA")
    root = Path(base) if base else Path.home() / ".config"
    return root / "sandboxverify" / "config.toml"


def _versions_only(spec: Any) -> str | None:
    text = str(spec)
    if os.sep in text or "/" in text or text.startswith((".", "~")):
        return "an interpreter given by path"
    return None


#: ``--python``: a version, ``min`` or ``all``; an interpreter by path would run the project's own
#: program outside any sandbox
VERSIONS_ONLY = ProjectRule(
    _versions_only,
    lambda allowed: {"allOf": [allowed, {"pattern": r"^(?![.~])[^/\\]*$"}]},
)
#: ``--isolation``: ``strict`` or ``auto``; ``process`` would drop the OS sandbox
NOT_WEAKER_ISOLATION = ProjectRule(
    lambda choice: "process isolation (it drops the OS sandbox)" if choice == "process" else None,
    lambda allowed: {"enum": [choice for choice in allowed["enum"] if choice != "process"]},
)


def _names_and_versions(requirement: Any) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

    try:
        parsed = Requirement(str(requirement))
    except InvalidRequirement:
        return None  # the option's own check refuses it, in its own words
    return f"a direct reference ({parsed.url})" if parsed.url else None


#: ``--with``: a name with versions, extras and markers; a direct reference (``name @ URL``) would
#: have the trusted installer fetch, and perhaps build, whatever the project points at
NAMES_AND_VERSIONS = ProjectRule(
    _names_and_versions, lambda allowed: {"allOf": [allowed, {"not": {"pattern": "@"}}]}
)


def at_most(limit: float) -> ProjectRule:
    """A timeout of at most ``limit`` seconds: the project may not hold a CI job for a day."""
    return ProjectRule(
        lambda seconds: f"more than {limit:g} seconds" if float(seconds) > limit else None,
        lambda allowed: {**allowed, "maximum": limit},
    )


def inside_project(path: Any, project: Path) -> str | None:
    """A file the project names must be the project's: resolved (links followed) inside it."""
    resolved = Path(str(path)).resolve()
    root = project.resolve()
    if resolved != root and root not in resolved.parents:
        return f"a path outside the project ({resolved})"
    return None
