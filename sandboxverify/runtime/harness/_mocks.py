"""Mock tools: static or stateful replacements for a tool's execution.

Environmental tools (``bash``, ``read``, ``write``, ``edit``) exist in every session but are never
executed for real: a call without a mock is ``tool_not_mocked``. A mock value is a string, a
callable taking the params, a full result object, or a list of those consumed in order (one call
too many is ``mocks_exhausted``). A call blocked by a hook consumes nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._results import (
    ResultShapeError,
    ToolResult,
    from_full_result,
    from_return_value,
)

_STRING = {"type": "string"}
_INT = {"type": "integer"}

#: The tools every agent host has that touch the environment; their argument schemas.
ENVIRONMENTAL_TOOLS: dict[str, dict[str, Any]] = {
    "bash": {
        "type": "object",
        "properties": {"command": _STRING, "timeout": {"type": "number"}},
        "required": ["command"],
        "additionalProperties": False,
    },
    "read": {
        "type": "object",
        "properties": {"path": _STRING, "offset": _INT, "limit": _INT},
        "required": ["path"],
        "additionalProperties": False,
    },
    "write": {
        "type": "object",
        "properties": {"path": _STRING, "content": _STRING},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "edit": {
        "type": "object",
        "properties": {"path": _STRING, "old_text": _STRING, "new_text": _STRING},
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    },
}


class MockTools:
    """The session's tool mocks, validated up front, with a per-tool counter for lists."""

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        self._values: dict[str, Any] = dict(config or {})
        self._used: dict[str, int] = {}
        for name, value in self._values.items():
            _check_value(name, value)

    def check_names(self, known: Iterable[str]) -> None:
        """Every mock must name a registered or environmental tool (a typo must not make a
        real call slip through unmocked)."""
        names = sorted(set(known) | set(ENVIRONMENTAL_TOOLS))
        for name in self._values:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise HarnessError(
                    "unknown_mock",
                    f"mock_tools has {name!r}, which is no registered or environmental "
                    f"tool{hint}; known tools: {', '.join(names)}",
                )

    def __contains__(self, name: object) -> bool:
        return name in self._values

    @property
    def names(self) -> list[str]:
        return list(self._values)

    def produce(self, name: str, params: Mapping[str, Any], where: str) -> ToolResult:
        """The mocked result of one call; raises for an exhausted list."""
        value = self._values[name]
        if isinstance(value, list):
            used = self._used.get(name, 0)
            if used >= len(value):
                raise HarnessError(
                    "mocks_exhausted",
                    f"{where}: the mock for {name!r} has {len(value)} entr"
                    f"{'y' if len(value) == 1 else 'ies'}, all used; this is call "
                    f"{used + 1}: add an entry or use a single (static) value",
                )
            self._used[name] = used + 1
            value = value[used]
        if callable(value):
            value = value(dict(params))  # exceptions propagate: the caller reports them
        try:
            return _as_result(value)
        except ResultShapeError as exc:
            raise HarnessError("invalid_mock", f"{where}: the mock for {name!r} {exc}") from None

    def remaining(self) -> dict[str, int]:
        """Unused entries of each stateful mock."""
        return {
            name: len(value) - self._used.get(name, 0)
            for name, value in self._values.items()
            if isinstance(value, list)
        }


def _as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.from_text(value)
    if isinstance(value, Mapping):
        return from_full_result(value)
    if value is None:
        raise ResultShapeError("returned None; return a string or a full result")
    return from_return_value(value)


def _check_value(name: str, value: Any) -> None:
    entries = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        raise HarnessError("invalid_mock", f"the mock for {name!r} is an empty list")
    for entry in entries:
        if callable(entry) or isinstance(entry, (str, ToolResult)):
            continue
        if isinstance(entry, Mapping):
            try:
                from_full_result(entry)
            except ResultShapeError as exc:
                raise HarnessError("invalid_mock", f"the mock for {name!r}: {exc}") from None
            continue
        raise HarnessError(
            "invalid_mock",
            f"the mock for {name!r} is a {type(entry).__name__}; use a string, a callable "
            "taking the params, a full result {'content': [...]}, or a list of those",
        )
