"""Text from package code made inert before any surface shows it.

A plugin's error message, a traceback, a tool's name or description, a file name from an archive,
a build log: all of it is the package's, and a terminal, a CI log or a Markdown viewer would
obey what it carries. A carriage return or an escape sequence rewrites a line already shown (a
fake ``PASSED``), an OSC sequence makes a hyperlink or sets the window title, a bidi override
shows text in another order than it is read (Trojan Source). Every renderer passes such text
through :func:`inert`, which shows each of these characters escaped, the way Python writes them
(``\\x1b``, ``\\u202e``): visible, and nothing to obey.
"""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidi embeddings,
#: overrides and isolates (U+202A-U+202E, U+2066-U+2069)
_OTHERS = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ONE_LINE = re.compile(f"[\x00-\x1f{_OTHERS}]")
#: in a block of lines, newlines and tabs stay: they only lay the text out
_BLOCK = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")


def inert(text: object, *, lines: bool = False) -> str:
    """``text`` with every control, line separator and bidi control shown escaped (``\\x1b``,
    ``\\u202e``); ``lines``: a block shown over several lines, whose newlines (``\\r\\n`` too)
    and tabs stay."""
    value = str(text)
    if lines:
        return _BLOCK.sub(_escaped, value.replace("\r\n", "\n"))
    return _ONE_LINE.sub(_escaped, value)


def inert_lines(text: object) -> list[str]:
    """A block's lines, inert (a carriage return, or any other character ``str.splitlines``
    breaks at, stays in its line, escaped: never a line of its own)."""
    return inert(text, lines=True).split("\n")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
