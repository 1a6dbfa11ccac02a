"""What the host side and the runtime agree on: protocol version and entry-point references
(the hosts are in ``hosts._registry``).

Deliberately light (no importlib.metadata): the host imports it at start-up and every plugin-load
process imports it before any plugin code runs.
"""

from __future__ import annotations

import os
import re

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Final

#: Version of the request/result documents exchanged through stdin and the result file.
PROTOCOL = 1

#: the group of a plugin that is an MCP server command line rather than an entry point
SERVER_COMMAND = "server-command"


class EntryPointRef:
    """One entry point, as plain data that survives a trip through JSON.

    A value like a frozen dataclass (equal and hashable by its fields), written out: every
    sandbox process imports it, and importing ``dataclasses`` (with ``inspect``) would add
    milliseconds to the start-up of each.
    """

    def __init__(self, name: str, group: str, value: str) -> None:
        self.name: Final = name
        self.group: Final = group
        self.value: Final = value

    def __repr__(self) -> str:
        return f"EntryPointRef(name={self.name!r}, group={self.group!r}, value={self.value!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntryPointRef):
            return NotImplemented
        return (self.name, self.group, self.value) == (other.name, other.group, other.value)

    def __hash__(self) -> int:
        return hash((self.name, self.group, self.value))

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "group": self.group, "value": self.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryPointRef:
        return cls(name=str(data["name"]), group=str(data["group"]), value=str(data["value"]))

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0].strip()

    @property
    def attribute(self) -> str | None:
        if ":" not in self.value:
            return None
        return self.value.split(":", 1)[1].split("[", 1)[0].strip() or None


def parse_entry_points(text: str) -> list[EntryPointRef]:
    """``entry_points.txt`` (an INI-like file: ``[group]`` then ``name = value`` lines)."""
    found: list[EntryPointRef] = []
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
        elif group is not None and "=" in line:
            name, value = line.split("=", 1)
            found.append(EntryPointRef(name=name.strip(), group=group, value=value.strip()))
    return found


def server_ref(command: str) -> EntryPointRef:
    """An MCP server command line as a plugin named after its program; raises
    :class:`ValueError` for an empty or unparsable command."""
    import shlex  # noqa: PLC0415 - only an MCP server command needs it, not every process

    words = shlex.split(command)
    if not words:
        raise ValueError("the server command is empty")
    return EntryPointRef(name=os.path.basename(words[0]), group=SERVER_COMMAND, value=command)


def name_words(name: str) -> frozenset[str]:
    """The words of a distribution's or module's name, lower case, split at dots, dashes and
    underscores (``pytest_django.plugin``: pytest, django, plugin): what a plugin is named for
    is one of them."""
    return frozenset(word for word in re.split(r"[-_.]+", name.lower()) if word)
