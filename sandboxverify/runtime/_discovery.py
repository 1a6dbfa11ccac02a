"""Finding a distribution's own entry points with ``importlib.metadata``."""

from __future__ import annotations

import re
from importlib import metadata

from sandboxverify.runtime._protocol import EntryPointRef


def canonical_name(name: str) -> str:
    """PEP 503 normalisation: ``Foo_Bar.baz`` and ``foo-bar-baz`` are the same project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def find_distribution(name: str) -> metadata.Distribution | None:
    """The installed distribution called ``name`` (first on ``sys.path`` wins, like imports)."""
    wanted = canonical_name(name)
    for dist in metadata.distributions():
        dist_name = dist.metadata["Name"]
        if dist_name is not None and canonical_name(dist_name) == wanted:
            return dist
    return None


def entry_points_of(dist: metadata.Distribution, groups: list[str]) -> list[EntryPointRef]:
    """The distribution's entry points in ``groups``, in declaration order."""
    return [
        EntryPointRef(name=ep.name, group=ep.group, value=ep.value)
        for ep in dist.entry_points
        if ep.group in groups
    ]


def declared_groups(dist: metadata.Distribution) -> list[str]:
    return sorted({ep.group for ep in dist.entry_points})


def others_in_groups(dist_name: str, groups: list[str]) -> list[dict[str, str]]:
    """Entry points other distributions declare in ``groups`` (ignored, but worth telling)."""
    wanted = canonical_name(dist_name)
    found: list[dict[str, str]] = []
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or "?"
        if canonical_name(name) == wanted:
            continue
        found.extend(
            {"name": ep.name, "group": ep.group, "dist": name}
            for ep in dist.entry_points
            if ep.group in groups
        )
    return found


def installed_distributions() -> list[dict[str, str]]:
    """Every distribution installed in the environment, as the report's ``installed`` lists it."""
    found = {
        canonical_name(dist.metadata["Name"]): {
            "name": dist.metadata["Name"],
            "version": dist.version,
        }
        for dist in metadata.distributions()
        if dist.metadata["Name"]
    }
    return [found[name] for name in sorted(found)]
