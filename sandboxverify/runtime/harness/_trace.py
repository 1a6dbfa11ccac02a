"""Traces: a session's events as JSONL, and what a recorded trace says (``_replay`` runs one).

A trace starts with ``run_started`` and ends with ``run_completed``; in between are the turns,
every model step, tool call, tool result and UI call. From them a trace rebuilds the playbook
(the model steps) and the answers environmental tools and UI prompts were given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxverify.runtime.harness._actions import Call, Parallel, Say, Turn, call, say
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._mocks import ENVIRONMENTAL_TOOLS
from sandboxverify.runtime.harness._process import ProcessAssertions
from sandboxverify.runtime.harness._ui import INTERACTIVE

TRACE_VERSION = 1


def write_trace(events: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """One JSON object per line, written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for event in events:
            handle.write(json.dumps(event, ensure_ascii=False, sort_keys=True, default=repr) + "\n")
    os.replace(partial, path)
    return path


@dataclass(frozen=True)
class Trace(ProcessAssertions):
    """A recorded run: what it rebuilds (the playbook, the mocks a replay needs) and what can be
    asserted on it without running anything again (``assert_called``, ``assert_not_called``,
    ``assert_called_before``, ``assert_approved``)."""

    events: tuple[dict[str, Any], ...]
    source: str
    _kind = "recorded run"

    def _calls(self) -> list[str]:
        return [str(event["tool_name"]) for event in self.of_type("tool_call")]

    def _tools(self) -> list[str]:
        started = self.events[0]
        names = set(started.get("tools") or ()) | set(started.get("mock_tools") or ())
        return sorted(names | set(ENVIRONMENTAL_TOOLS) | set(self._calls()))

    def _questions(self) -> list[tuple[str, list[Any], Any]]:
        return [
            (str(event["method"]), list(event.get("args") or []), event.get("return_value"))
            for event in self.of_type("ui_call")
        ]

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trace:
        source = str(path)
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise HarnessError("playbook_invalid", f"cannot read trace {source}: {exc}") from None
        events: list[dict[str, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError as exc:
                raise HarnessError(
                    "playbook_invalid", f"{source}:{number}: not a JSON object: {exc}"
                ) from None
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                raise HarnessError(
                    "playbook_invalid", f"{source}:{number}: an event needs a 'type'"
                )
            events.append(event)
        if not events or events[0]["type"] != "run_started":
            raise HarnessError("playbook_invalid", f"{source}: a trace starts with run_started")
        if events[0].get("version") != TRACE_VERSION:
            raise HarnessError(
                "playbook_invalid",
                f"{source}: trace version "
                f"{events[0].get('version')!r} is not supported ({TRACE_VERSION} is)",
            )
        if events[-1]["type"] != "run_completed":
            raise HarnessError(
                "playbook_invalid",
                f"{source}: the trace is incomplete (no "
                "run_completed at the end): the recorded run did not finish",
            )
        return cls(tuple(events), source)

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == type_]

    @property
    def tools(self) -> list[str]:
        return list(self.events[0].get("tools") or [])

    def results(self) -> dict[str, dict[str, Any]]:
        return {event["tool_call_id"]: event for event in self.of_type("tool_result")}

    def turns(self) -> list[Turn]:
        results = self.results()
        prompts = {event["turn"]: event["prompt"] for event in self.of_type("turn_started")}
        steps: dict[int, list[Call | Parallel | Say]] = {turn: [] for turn in prompts}
        for step in self.of_type("model_step"):
            if step.get("stop"):
                steps[step["turn"]].append(say(step.get("text") or ""))
                continue
            calls = []
            for tool_call in step["tool_calls"]:
                recorded = results.get(tool_call["id"], {})
                calls.append(
                    call(
                        tool_call["name"],
                        dict(tool_call["input"]),
                        expect_error=bool(recorded.get("is_error")),
                        validate=tool_call.get("validate", True) is not False,
                    )
                )
            text = step.get("text")
            if len(calls) == 1:
                calls[0].text = text
                steps[step["turn"]].append(calls[0])
            else:
                steps[step["turn"]].append(Parallel(tuple(calls), text))
        return [Turn(prompts[turn], tuple(steps[turn])) for turn in sorted(prompts)]

    def mock_tools(self) -> dict[str, list[dict[str, Any]]]:
        """Recorded results of mocked tools, per tool in call order (stateful mocks)."""
        mocks: dict[str, list[dict[str, Any]]] = {}
        for event in self.of_type("tool_result"):
            if event.get("mocked"):
                mocks.setdefault(event["tool_name"], []).append(
                    {
                        "content": event["content"],
                        "details": event.get("details"),
                        "is_error": bool(event.get("is_error")),
                    }
                )
        return mocks

    def mock_ui(self) -> dict[str, list[Any]]:
        answers: dict[str, list[Any]] = {}
        for event in self.of_type("ui_call"):
            if event["method"] in INTERACTIVE:
                answers.setdefault(event["method"], []).append(event["return_value"])
        return answers


def load_trace(path: str | os.PathLike[str]) -> Trace:
    return Trace.load(path)
