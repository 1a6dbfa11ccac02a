"""Kinds of option value: how each is written on the command line and in ``[tool.sandboxverify]``,
what its JSON Schema is, and which values cannot be meant. One kind checks its values alike
wherever they come from: the command line, the configuration file, a ``CheckOptions`` built by
a caller of the library."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from sandboxverify._frozen import frozen

#: how an option is written: ``--x VALUE``, ``--x``, ``--x/--no-x``, ``-vv``, ``--x [VALUE]``,
#: ``--x NAME VALUE``
Shape = Literal["value", "flag", "toggle", "count", "optional", "pair"]

#: the longest any timeout may be: a day (longer, or infinite, would disable the watchdog)
MAX_TIMEOUT = 86_400.0
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_NON_EMPTY = {"type": "string", "pattern": r"\S"}
#: PEP 508, as far as a pattern goes: a name, extras, then versions, or a URL; a marker
_VERSION = r"(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
_REQUIREMENT = (
    r"^\s*[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\s*(\[[^\]]*\])?\s*"
    rf"(@\s*\S+|\(?\s*{_VERSION}(\s*,\s*{_VERSION})*\s*\)?)?\s*(;.*)?$"
)


class Wrong(ValueError):
    """A value from the configuration file is not what the option takes; the message says what
    it takes (``a number of seconds, ...``)."""


@frozen
class Problem:
    """Why a value cannot be meant, in the command line's words."""

    message: str
    hint: str


class Kind:
    """A text value; every other kind refines it.

    Plain classes, not dataclasses: the command line builds every option at start-up, and a
    dataclass costs its creation each time (``--help`` would pay ~8 ms for the kinds alone)."""

    #: how the command line writes it
    shape: ClassVar[Shape] = "value"
    #: what the command line's word becomes before it is checked
    scalar: ClassVar[type] = str
    #: what the configuration file must hold, said in an error
    expected: ClassVar[str] = "a non-empty string"

    def __init__(self, *, example: str | None = None) -> None:
        #: a value worth showing in a hint: ``--group myapp.plugins``
        self.example = example

    def problem(self, flag: str, value: Any) -> Problem | None:
        """Why ``value`` (one value of ``flag``) cannot be meant, if it cannot."""
        if isinstance(value, str) and not value.strip():
            hint = (
                f"e.g. {flag} {self.example}, or leave the option out"
                if self.example
                else f"give a value, or leave {flag} out"
            )
            return Problem(f"{flag} was given an empty value (an unset variable?)", hint)
        return None

    def from_config(self, value: object, base: Path) -> Any:
        """One value as the configuration file holds it, as the command line would give it;
        raises :class:`Wrong`. ``base``: the file's directory (paths are relative to it)."""
        del base
        if isinstance(value, str) and value.strip():
            return value
        raise Wrong(self.expected)

    def schema(self) -> dict[str, Any]:
        return dict(_NON_EMPTY)


class Names(Kind):
    """Comma lists of names (``--expect-tools a,b``): an empty name is a mistake, never a
    smaller expectation."""

    expected: ClassVar[str] = "names separated by commas, none of them empty"
    _PATTERN: ClassVar[str] = r"^[^,]*[^,\s][^,]*(,[^,]*[^,\s][^,]*)*$"

    def problem(self, flag: str, value: Any) -> Problem | None:
        if isinstance(value, str) and any(not item.strip() for item in value.split(",")):
            return Problem(
                f"{flag} {value!r} has an empty tool name (an unset variable?)",
                f"give comma-separated tool names, e.g. {flag} {self.example or 'add,greet'}; "
                "leave the option out to expect none",
            )
        return None

    def from_config(self, value: object, base: Path) -> Any:
        text = super().from_config(value, base)
        if self.problem("", text) is not None:
            raise Wrong(self.expected)
        return text

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": self._PATTERN}


class Choice(Kind):
    def __init__(self, *, choices: tuple[str, ...]) -> None:
        super().__init__()
        self.choices = choices

    def problem(self, flag: str, value: Any) -> Problem | None:
        if value not in self.choices:
            return Problem(
                f"{flag} {value!r} is not one of {', '.join(self.choices)}",
                f"give one of {', '.join(self.choices)}",
            )
        return None

    def from_config(self, value: object, base: Path) -> Any:
        if value in self.choices:
            return value
        raise Wrong("one of " + ", ".join(self.choices))

    def schema(self) -> dict[str, Any]:
        return {"enum": list(self.choices)}


class Flag(Kind):
    """``--keep``: on when given."""

    shape: ClassVar[Shape] = "flag"
    scalar: ClassVar[type] = bool
    expected: ClassVar[str] = "true or false"

    def problem(self, flag: str, value: Any) -> Problem | None:
        return None

    def from_config(self, value: object, base: Path) -> Any:
        if isinstance(value, bool):
            return value
        raise Wrong(self.expected)

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


class Toggle(Flag):
    """``--cache/--no-cache``: either way, or neither (the default applies)."""

    shape: ClassVar[Shape] = "toggle"


class Whole(Kind):
    """A whole number, at least ``minimum``."""

    scalar: ClassVar[type] = int

    def __init__(self, *, minimum: int = 0) -> None:
        super().__init__()
        self.minimum = minimum

    @property
    def wording(self) -> str:
        return f"a whole number >= {self.minimum}"

    def problem(self, flag: str, value: Any) -> Problem | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            return Problem(f"{flag} {value!r} is not {self.wording}", f"give {self.wording}")
        return None

    def from_config(self, value: object, base: Path) -> Any:
        if self.problem("", value) is None:
            return value
        raise Wrong(self.wording)

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.minimum}


class Count(Whole):
    """``-vv``: how many times it was given."""

    shape: ClassVar[Shape] = "count"


class Seconds(Kind):
    """A timeout: a finite number of seconds, more than 0 and at most a day (``inf``, ``nan``
    or ``1e999`` would disable the watchdog)."""

    scalar: ClassVar[type] = float
    expected: ClassVar[str] = (
        f"a number of seconds, more than 0 and at most {MAX_TIMEOUT:g} (a day)"
    )

    def problem(self, flag: str, value: Any) -> Problem | None:
        problem = timeout_problem(value)
        if problem is None:
            return None
        return Problem(
            f"{flag} {value:g} {problem}",
            f"give seconds between 0 and {MAX_TIMEOUT:g}, e.g. {flag} 120",
        )

    def from_config(self, value: object, base: Path) -> Any:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and timeout_problem(float(value)) is None:  # type: ignore[arg-type]
            return float(value)  # type: ignore[arg-type]
        raise Wrong(self.expected)

    def schema(self) -> dict[str, Any]:
        return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT}


def timeout_problem(seconds: float) -> str | None:
    """Why a timeout is not usable, if it is not: the watchdog needs a finite, positive, sane
    number of seconds."""
    if not math.isfinite(seconds):
        return "is not a finite number of seconds"
    if seconds <= 0:
        return "must be more than 0 seconds"
    if seconds > MAX_TIMEOUT:
        return f"is more than a day ({MAX_TIMEOUT:g} seconds)"
    return None


class FilePath(Kind):
    """A file; in the configuration file, relative to it."""

    expected: ClassVar[str] = "a file path"

    def from_config(self, value: object, base: Path) -> Any:
        return relative(base, super().from_config(value, base))


class Location(FilePath):
    """A directory or a URL (``--find-links``); a path in the configuration file is relative
    to it, a URL stays as it is."""


class ReportFile(FilePath):
    """Where a report goes (``--junit-xml``)."""

    def problem(self, flag: str, value: Any) -> Problem | None:
        if isinstance(value, str) and not value.strip():
            return Problem(
                f"{flag} was given an empty path (an unset variable?)",
                f"give the report a file ({flag} report-file), or leave the option out",
            )
        return None


class ReportPath(ReportFile):
    """``--json [FILE]``: a file, or standard output (``-``, or the option given bare; ``true``
    in the configuration file)."""

    shape: ClassVar[Shape] = "optional"
    expected: ClassVar[str] = 'a file path, "-" or true'

    def from_config(self, value: object, base: Path) -> Any:
        if value is True or value == "-":
            return "-"
        return super().from_config(value, base)

    def schema(self) -> dict[str, Any]:
        return {"oneOf": [{"const": True}, dict(_NON_EMPTY)]}


class Requirement(Kind):
    """A requirement string (``--with pytest``): never an installer option in disguise."""

    expected: ClassVar[str] = "a requirement, e.g. 'pytest' or 'llm>=0.26'"

    def problem(self, flag: str, value: Any) -> Problem | None:
        empty = super().problem(flag, value)
        if empty is not None:
            return empty
        from packaging.requirements import InvalidRequirement  # noqa: PLC0415
        from packaging.requirements import Requirement as Parsed  # noqa: PLC0415

        try:
            Parsed(value)
        except InvalidRequirement as exc:
            return Problem(
                f"{flag} {value!r} is not a requirement: {str(exc).splitlines()[0]}",
                f"e.g. {flag} {self.example or 'pytest'} or {flag} 'llm>=0.26'",
            )
        return None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": _REQUIREMENT}


class Assignment(Kind):
    """``GROUP=MODULE`` (``--hookspecs``)."""

    expected: ClassVar[str] = "GROUP=MODULE"

    def __init__(self, *, hint: str) -> None:
        super().__init__()
        self.hint = hint

    def problem(self, flag: str, value: Any) -> Problem | None:
        empty = super().problem(flag, value)
        if empty is not None:
            return empty
        group, _, module = str(value).partition("=")
        if not group.strip() or not module.strip() or " " in module.strip():
            return Problem(f"{flag} {value!r}: expected {self.expected}", self.hint)
        return None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": r"^[^=]*[^=\s][^=]*=\s*\S+\s*$"}


class GroupName(Kind):
    """An entry-point group, ``NAME`` or ``NAME:callable`` (its entry points must name
    callables)."""

    expected: ClassVar[str] = "a group name, or NAME:callable"

    def problem(self, flag: str, value: Any) -> Problem | None:
        empty = super().problem(flag, value)
        if empty is not None:
            return empty
        name, _, suffix = str(value).partition(":")
        if suffix and suffix != "callable":
            return Problem(
                f"{flag} {value!r}: unknown suffix {suffix!r}",
                "a group is NAME, or NAME:callable when its entry points must name callables",
            )
        if not name.strip():
            return Problem(
                f"{flag} {value!r}: the group name is empty", f"e.g. {flag} {self.example}"
            )
        return None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": r"^[^:]*[^:\s][^:]*(:callable)?$"}


class Pair(Kind):
    """``--option NAME VALUE``."""

    shape: ClassVar[Shape] = "pair"

    def problem(self, flag: str, value: Any) -> Problem | None:
        return None


def relative(base: Path, value: str) -> str:
    """A path from the configuration file, relative to the file; URLs stay as they are."""
    if _URL.match(value) or Path(value).is_absolute():
        return value
    return str(base / value)


def split_commas(values: Sequence[str]) -> tuple[str, ...]:
    """``--expect-tools a,b --expect-tools c`` (or a list of such strings) as ``(a, b, c)``."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())
