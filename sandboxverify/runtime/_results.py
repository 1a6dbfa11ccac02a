"""Tool results: what a tool (or its mock) returned, in one shape.

A result has ``content`` blocks (``{"type": "text", "text": ...}``), ``details`` (any JSON value)
and ``is_error``; ``text`` joins the text blocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolResult:
    content: tuple[dict[str, Any], ...] = ()
    details: Any = None
    is_error: bool = False

    @property
    def text(self) -> str:
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "content": [dict(block) for block in self.content],
            "details": self.details,
            "is_error": self.is_error,
        }

    @classmethod
    def from_text(cls, text: str, *, is_error: bool = False, details: Any = None) -> ToolResult:
        return cls(content=({"type": "text", "text": text},), details=details, is_error=is_error)


def excerpt(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters; a cut says so and how long the whole was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text)} characters in all]"


class ResultShapeError(ValueError):
    """A value that cannot be a tool result; the message says what would be."""


def from_return_value(value: Any) -> ToolResult:
    """What a real tool returned: a string, a ``ToolResult`` or any JSON-serialisable value."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.from_text(value)
    if value is None:
        return ToolResult.from_text("")
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ResultShapeError(
            f"returned a {type(value).__name__}, which is not a string or JSON-serialisable ({exc})"
        ) from None
    return ToolResult.from_text(text, details=value)


def from_full_result(value: Mapping[str, Any]) -> ToolResult:
    """A full result object: ``{"content": [blocks], "details": ..., "is_error": bool}``."""
    unknown = set(value) - {"content", "details", "is_error"}
    if unknown:
        raise ResultShapeError(
            f"a full result has content, details and is_error; unexpected {sorted(unknown)}"
        )
    content = value.get("content")
    if not isinstance(content, (list, tuple)) or not content:
        raise ResultShapeError("a full result needs 'content': a non-empty list of blocks")
    blocks: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ResultShapeError("each content block must be a dict with a 'type'")
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise ResultShapeError("a text block needs a string 'text'")
        blocks.append(dict(block))
    is_error = value.get("is_error", False)
    if not isinstance(is_error, bool):
        raise ResultShapeError("'is_error' must be true or false")
    return ToolResult(content=tuple(blocks), details=value.get("details"), is_error=is_error)
