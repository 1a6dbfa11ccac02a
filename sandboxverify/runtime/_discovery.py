"""Finding a distribution's own entry points with ``importlib.metadata``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any


@dataclass(frozen=True)
class EntryPointRef:
    """One entry point, as plain data that survives a trip through JSON."""

    name: str
    group: str
    value: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "group": self.group, "value": self.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryPointRef:
        return cls(name=str(data["name"]), group=str(data["group"]), value=str(data["value"]))

    def load(self) -> Any:
        return metadata.EntryPoint(name=self.name, value=self.value, group=self.group).load()

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0].strip()

    @property
    def attribute(self) -> str | None:
        if ":" not in self.value:
            return None
        return self.value.split(":", 1)[1].split("[", 1)[0].strip() or None


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
