"""Where keys live in a TOML file: the line of a table, a key or an array element.

The TOML parser knows the values but not their lines; a small scanner that follows TOML's
structure records where each key starts, and a line is only given out for a key the parser
agrees exists. A construct the scanner does not follow yields no lines rather than wrong ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from sandboxverify._toml import tomllib

#: a path into the parsed document: table and key names, array indices
Key = tuple[Union[str, int], ...]


def has_index(items: object, index: int) -> bool:
    return isinstance(items, list) and 0 <= index < len(items)


class Unscannable(Exception):
    """A TOML construct the line scanner does not follow: no lines, rather than wrong ones."""


class Toml:
    """A TOML document parsed twice: by the TOML parser (the truth) and by a line scanner that
    records where each table, key and array element starts (1-based lines)."""

    def __init__(self, path: Path, data: dict[str, Any], lines: dict[Key, int]) -> None:
        self.path = path
        self.data = data
        self._lines = lines

    @classmethod
    def read(cls, path: Path) -> Toml | None:
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        try:
            lines = Scanner(text).scan()
        except Unscannable:
            lines = {}
        return cls(path, data, lines)

    def value(self, key: Key) -> Any:
        value: Any = self.data
        for part in key:
            if (isinstance(part, int) and has_index(value, part)) or (
                isinstance(part, str) and isinstance(value, dict) and part in value
            ):
                value = value[part]
            else:
                return None
        return value

    def line(self, key: Key) -> int | None:
        return self._lines.get(key) if self.value(key) is not None else None


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^,\]\}#\r\n]+")


class Scanner:
    """Follows TOML's structure (tables, arrays of tables, dotted keys, strings of every kind,
    nested arrays and inline tables over several lines, comments) to map keys to lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lineno = 1
        self.lines: dict[Key, int] = {}
        self._arrays: dict[Key, int] = {}

    def scan(self) -> dict[Key, int]:
        table: Key = ()
        while True:
            self._blank(newlines=True)
            if self.pos >= len(self.text):
                return self.lines
            if self._peek("["):
                table = self._header()
            else:
                self._keyval(table)
            self._blank(newlines=False)
            if self.pos < len(self.text) and not self._peek("\n", "\r\n"):
                raise Unscannable(f"line {self.lineno}")

    def _peek(self, *prefixes: str) -> bool:
        return self.text.startswith(prefixes, self.pos)

    def _advance(self, count: int) -> None:
        self.lineno += self.text.count("\n", self.pos, self.pos + count)
        self.pos += count

    def _mark(self, key: Key, line: int) -> None:
        self.lines.setdefault(key, line)

    def _blank(self, *, newlines: bool) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t" or (newlines and char in "\r\n"):
                self._advance(1)
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def _header(self) -> Key:
        line = self.lineno
        array = self._peek("[[")
        self._advance(2 if array else 1)
        names = self._dotted()
        closing = "]]" if array else "]"
        if not self._peek(closing):
            raise Unscannable(f"line {line}: header")
        self._advance(len(closing))
        key: Key = ()
        for index, name in enumerate(names):
            key = (*key, name)
            self._mark(key, line)
            if array and index == len(names) - 1:
                count = self._arrays.get(key, 0)
                self._arrays[key] = count + 1
                key = (*key, count)
            elif key in self._arrays:  # [a.b] after [[a]]: a table in a's last element
                key = (*key, self._arrays[key] - 1)
        self._mark(key, line)
        return key

    def _keyval(self, table: Key) -> None:
        line = self.lineno
        key = (*table, *self._dotted())
        if not self._peek("="):
            raise Unscannable(f"line {line}: key without =")
        self._advance(1)
        self._blank(newlines=False)
        for end in range(len(table) + 1, len(key) + 1):
            self._mark(key[:end], line)
        self._value(key)

    def _dotted(self) -> list[str]:
        names = []
        while True:
            self._blank(newlines=False)
            names.append(self._name())
            self._blank(newlines=False)
            if not self._peek("."):
                return names
            self._advance(1)

    def _name(self) -> str:
        if self._peek('"', "'"):
            start = self.pos
            self._string()
            raw = self.text[start : self.pos]
            try:
                return next(iter(tomllib.loads(f"{raw} = 0")))
            except tomllib.TOMLDecodeError:
                raise Unscannable(f"line {self.lineno}: key {raw}") from None
        match = _BARE.match(self.text, self.pos)
        if match is None:
            raise Unscannable(f"line {self.lineno}: key")
        self._advance(match.end() - self.pos)
        return match.group()

    def _value(self, key: Key) -> None:
        if self._peek('"', "'"):
            self._string()
        elif self._peek("["):
            self._sequence(key, "]", self._element)
        elif self._peek("{"):
            self._sequence(key, "}", self._member)
        else:
            match = _SCALAR.match(self.text, self.pos)
            if match is None or not match.group().strip():
                raise Unscannable(f"line {self.lineno}: value")
            self._advance(len(match.group().rstrip()))

    def _sequence(self, key: Key, closing: str, item: Callable[[Key, int], None]) -> None:
        """An array (items: elements) or an inline table (items: key = value)."""
        self._advance(1)
        index = 0
        while True:
            self._blank(newlines=True)
            if self._peek(closing):
                self._advance(1)
                return
            item(key, index)
            index += 1
            self._blank(newlines=True)
            if self._peek(","):
                self._advance(1)
            elif not self._peek(closing):
                raise Unscannable(f"line {self.lineno}: expected , or {closing}")

    def _element(self, key: Key, index: int) -> None:
        self._mark((*key, index), self.lineno)
        self._value((*key, index))

    def _member(self, key: Key, index: int) -> None:
        self._keyval(key)

    def _string(self) -> None:
        text = self.text
        for quote in ('"""', "'''"):
            if self._peek(quote):
                end = self.pos + 3
                while True:
                    end = text.find(quote, end)
                    if end < 0:
                        raise Unscannable("unterminated string")
                    if quote == "'''" or not _escaped(text, end):
                        break
                    end += 1
                end += 3
                for _ in range(2):  # up to two quotes of the content may touch the closing ones
                    if text.startswith(quote[0], end):
                        end += 1
                self._advance(end - self.pos)
                return
        quote = text[self.pos]
        end = self.pos + 1
        while end < len(text) and text[end] != quote and text[end] != "\n":
            end += 2 if quote == '"' and text[end] == "\\" else 1
        if end >= len(text) or text[end] != quote:
            raise Unscannable(f"line {self.lineno}: unterminated string")
        self._advance(end + 1 - self.pos)


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1
