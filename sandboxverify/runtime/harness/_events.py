"""What happened in a session, as records, with the queries tests assert on.

Every record carries the tool-call id and where in the playbook it happened (turn and action,
1-based). ``Events.all`` is the complete ordered stream of JSON-ready events; a trace file is that
stream between ``run_started`` and ``run_completed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandboxverify.runtime._results import ToolResult


@dataclass(frozen=True)
class Event:
    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}


@dataclass(frozen=True)
class ToolCallRecord:
    tool_name: str
    input: dict[str, Any]
    tool_call_id: str
    turn: int
    action: int
    blocked: bool = False
    block_reason: str | None = None
    blocked_by: str | None = None


@dataclass(frozen=True)
class ToolResultRecord:
    tool_name: str
    tool_call_id: str
    result: ToolResult
    mocked: bool
    blocked: bool
    turn: int
    action: int
    seconds: float = 0.0

    @property
    def text(self) -> str:
        return self.result.text

    @property
    def content(self) -> tuple[dict[str, Any], ...]:
        return self.result.content

    @property
    def details(self) -> Any:
        return self.result.details

    @property
    def is_error(self) -> bool:
        return self.result.is_error


@dataclass(frozen=True)
class UICallRecord:
    method: str
    args: list[Any]
    return_value: Any
    tool_call_id: str | None
    turn: int | None
    action: int | None


@dataclass(frozen=True)
class Message:
    role: str  # "user", "assistant" or "tool"
    text: str | None
    turn: int
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False


@dataclass
class Events:
    """The assertion surface: collected passively while a session runs."""

    all: list[Event] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    tool_results: list[ToolResultRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    ui: list[UICallRecord] = field(default_factory=list)

    def tool_calls_for(self, name: str) -> list[ToolCallRecord]:
        return [record for record in self.tool_calls if record.tool_name == name]

    def blocked_calls(self) -> list[ToolCallRecord]:
        return [record for record in self.tool_calls if record.blocked]

    def tool_results_for(self, name: str) -> list[ToolResultRecord]:
        return [record for record in self.tool_results if record.tool_name == name]

    def ui_calls_for(self, method: str) -> list[UICallRecord]:
        return [record for record in self.ui if record.method == method]

    def emit(self, type_: str, **data: Any) -> None:
        self.all.append(Event(type_, data))
