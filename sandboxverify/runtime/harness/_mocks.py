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

from sandboxverify.runtime._results import (
    ResultShapeError,
    ToolResult,
    from_full_result,
    from_return_value,
)
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._guards import settle

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


class StatefulValues:
    """Configured values by key: a single value serves every use; a list serves one entry per
    use, in order, and one use too many is ``mocks_exhausted``. Shared by tool mocks and UI
    answers, so both count and fail the same way."""

    def __init__(self, values: Mapping[str, Any] | None, section: str, label: str) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._used: dict[str, int] = {}
        self._section = section  # "mock_tools" / "mock_ui", as the user wrote it
        self._label = label  # how one entry is named in messages: "the mock for", "mock_ui"
        for key, value in self._values.items():
            if isinstance(value, list) and not value:
                raise HarnessError("invalid_mock", f"{label} {key!r} is an empty list")

    def __contains__(self, key: object) -> bool:
        return key in self._values

    @property
    def keys(self) -> list[str]:
        return list(self._values)

    def entries(self, key: str) -> list[Any]:
        value = self._values[key]
        return list(value) if isinstance(value, list) else [value]

    def check_known(self, known: Iterable[str], kind: str) -> None:
        """Every key must name something that exists: a typo must fail, not go unused."""
        names = sorted(set(known))
        for key in self._values:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise HarnessError(
                    "unknown_mock",
                    f"{self._section} has {key!r}, which is no {kind}{hint}; "
                    f"known: {', '.join(names)}",
                )

    def unused(self) -> list[tuple[str, int, int]]:
        """``(key, used, entries)`` of every list with entries no use took."""
        return [
            (key, self._used.get(key, 0), len(value))
            for key, value in self._values.items()
            if isinstance(value, list) and self._used.get(key, 0) < len(value)
        ]

    def take(self, key: str, where: str) -> Any:
        """The value for this use of ``key``."""
        value = self._values[key]
        if not isinstance(value, list):
            return value
        used = self._used.get(key, 0)
        if used >= len(value):
            raise HarnessError(
                "mocks_exhausted",
                f"{where}: {self._label} {key!r} has {len(value)} entr"
                f"{'y' if len(value) == 1 else 'ies'}, all used; this is call {used + 1}: add "
                "an entry or use a single (static) value",
            )
        self._used[key] = used + 1
        return value[used]


class MockTools:
    """The session's tool mocks, validated up front."""

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        self.values = StatefulValues(config, "mock_tools", "the mock for")
        for name in self.values.keys:
            _check_entries(name, self.values.entries(name))

    def check_names(self, registered: Iterable[str]) -> None:
        """Every mock names an environmental tool (``bash``, ``read``...), and none a tool a
        plugin registers: the tool under test always runs for real."""
        registered = set(registered)
        self.values.check_known(
            registered | set(ENVIRONMENTAL_TOOLS), "registered or environmental tool"
        )
        shadowing = sorted(name for name in self.values.keys if name in registered)
        if shadowing:
            raise HarnessError(
                "mock_shadows_tool",
                f"mock_tools has {', '.join(map(repr, shadowing))}, which a plugin registers: "
                "the tool under test always runs for real, so the mock would never answer; "
                "remove the mock (mock only environmental tools: "
                f"{', '.join(ENVIRONMENTAL_TOOLS)}), or stub what the tool itself depends on",
            )

    def __contains__(self, name: object) -> bool:
        return name in self.values

    @property
    def names(self) -> list[str]:
        return self.values.keys

    def produce(self, name: str, params: Mapping[str, Any], where: str) -> ToolResult:
        """The mocked result of one call; raises for an exhausted list."""
        value = self.values.take(name, where)
        if callable(value):
            value = settle(value(dict(params)))  # exceptions propagate: the caller reports them
        try:
            return _as_result(value)
        except ResultShapeError as exc:
            raise HarnessError("invalid_mock", f"{where}: the mock for {name!r} {exc}") from None


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


def _check_entries(name: str, entries: list[Any]) -> None:
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
