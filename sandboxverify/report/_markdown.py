"""GitHub-flavoured Markdown from untrusted text: tables, escaped text and code spans, and a
budget no summary outgrows. Shared by the step summary of a check and of a merge."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sandboxverify.report._inert import inert, inert_lines


def table_lines(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, align: Sequence[str] | None = None
) -> list[str]:
    """A GitHub-flavoured table of cells already escaped (``escaped``, ``code_span``)."""
    lines = [table_row(header), table_row(align or ["---"] * len(header))]
    return [*lines, *(table_row(row) for row in rows), ""]


def table_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


#: Markdown and HTML syntax; a backslash makes any of them literal in GitHub-flavoured Markdown
_SYNTAX = re.compile(r"([\\`*_{}\[\]<>#!|~&])")
_BLOCK_START = re.compile(r"^([-+=]|\d+(?=[.)]))")


def escaped(text: str) -> str:
    """Plain text on one line, safe inside a line and in a table cell (``|`` escaped too)."""
    return _SYNTAX.sub(r"\\\1", inert(" ".join(str(text).split())))


def escaped_lines(text: str) -> str:
    """Plain text over several lines, kept as lines within one paragraph."""
    joined = "<br>".join(escaped(line) for line in inert_lines(str(text).rstrip("\r\n")))
    # a list item or a heading underline when it starts a line: make its marker literal
    return _BLOCK_START.sub(lambda m: m[0] + "\\" if m[0].isdigit() else "\\" + m[0], joined)


def code_span(text: str) -> str:
    """An inline code span that holds any text, also in a table cell."""
    flat = inert(" ".join(str(text).split())).replace("|", "\\|")
    fence = "`" * (longest_backticks([flat]) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def within_budget(text: str, budget: int) -> str:
    """At most ``budget`` bytes, cut at a line (only thousands of plugins get here)."""
    if len(text.encode()) <= budget:
        return text
    cut = text.encode()[:budget].decode(errors="ignore").rsplit("\n", 1)[0]
    return cut + "\n\n*The summary is cut short here: the JSON report has everything.*\n"


def longest_backticks(lines: Iterable[str]) -> int:
    return max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
