"""Reading one value of a playbook: its type, its keys, its regexes, its JSON form.

Every check takes the :class:`Doc` being read and the place of the value (``turns[1].prompt``),
so each mistake is one :class:`ConfigError` naming the file and the place. The document, mocks and
turns parsers share them.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import re
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from sandboxverify._errors import ConfigError
from sandboxverify._frozen import frozen

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHOWN = 60


@frozen
class Doc:
    """The file being read: every error names it first."""

    source: str

    def fail(self, where: str, message: str, hint: str | None = None) -> ConfigError:
        place = f"{self.source}: {where}: " if where else f"{self.source}: "
        return ConfigError(place + message, hint=hint)


def did_you_mean(key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"


def unknown_keys(doc: Doc, where: str, table: Mapping[str, Any], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            raise doc.fail(where, f"unknown key {key!r}", hint=did_you_mean(key, known))


def show(value: Any) -> str:
    """A value for a one-line message: repr escapes newlines; long values are cut."""
    shown = repr(value)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."


def at(where: str, key: str) -> str:
    """``where.key``, quoting keys TOML would quote (a tool named ``my.tool``)."""
    return f"{where}.{key}" if _BARE_KEY.fullmatch(key) else f"{where}.{json.dumps(key)}"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int in Python


def string(doc: Doc, where: str, value: Any, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise doc.fail(where, f"must be a string, got {show(value)}")
    if non_empty and not value.strip():
        raise doc.fail(where, "must not be empty")
    return value


def table(doc: Doc, where: str, value: Any, hint: str | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise doc.fail(where, f"must be a table, got {show(value)}", hint=hint)
    return value


def strings(doc: Doc, where: str, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise doc.fail(where, f"must be an array of strings, got {show(value)}")
    return [string(doc, f"{where}[{i}]", item, non_empty=True) for i, item in enumerate(value)]


def regex(doc: Doc, where: str, value: Any) -> str:
    """A Python regex that checks something: an empty one matches every text."""
    pattern = string(doc, where, value)
    if not pattern:
        raise doc.fail(
            where,
            "an empty regex matches any text, so it checks nothing",
            hint="write a regex the text must match, or leave the key out",
        )
    try:
        # A FutureWarning about a possible future meaning is no error; it must not be printed.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as exc:
        raise doc.fail(
            where,
            f"bad regex {pattern!r}: {exc}",
            hint="this is a Python regular expression (re module); escape literal characters "
            "with a backslash (in TOML, a 'literal string' keeps backslashes as written)",
        ) from None
    return pattern


def leaves(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every non-container value under ``value`` with its place, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, at(where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{where}[{index}]")
    else:
        yield where, value


def json_leaf(doc: Doc, where: str, value: Any) -> None:
    """The spec is JSON: TOML dates/times and non-finite floats have no JSON form."""
    if isinstance(value, (datetime.date, datetime.time)):
        raise doc.fail(
            where,
            f"a TOML date/time ({value.isoformat()}) cannot be passed on as JSON",
            hint="quote it to pass it as a string",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise doc.fail(where, f"{value} cannot be passed on as JSON", hint="use a finite number")


def content_block(doc: Doc, where: str, block: Any) -> None:
    """One MCP content block, in a mocked tool result or in a sampling answer."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise doc.fail(
            where, f'a content block must be a table with a string "type", got {show(block)}'
        )
    # Other block types (images...) go through unchanged; the runtime knows what to make of them.
    if block["type"] == "text" and not isinstance(block.get("text"), str):
        raise doc.fail(where, 'a "text" block needs a string "text"')


def digest(doc: Doc, where: str, value: Any) -> str:
    """A digest a recording wrote: 16 hexadecimal digits."""
    if not isinstance(value, str) or len(value) != 16 or value.strip("0123456789abcdef"):
        raise doc.fail(
            where,
            f"must be 16 hexadecimal digits (as a recording writes it), got {show(value)}",
            hint="leave it as 'sandboxverify record' wrote it, or remove it",
        )
    return value
