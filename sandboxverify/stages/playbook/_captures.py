"""Recorded arguments as playbook params, with the ids a model copied from earlier results made
into captures, so the recording replays against new ids.

A model that proposes a plan and then approves it passes the id ``PLAN-1a2b3c4d`` it read in a
result; replayed literally, the approval would name a plan that no longer exists (the new run
made ``PLAN-9f8e7d6c``). With ``normalize`` patterns (what changes from run to run), the first
match of a pattern in a real call's result is a value to follow: where a later call's argument
contains it, the argument says ``${id_1}`` and the earlier call gets
``capture = { id_1 = "<pattern>" }``. Nothing else changes; a ``${`` a model wrote itself is kept
literal (``$${``). The calls of one message see none of each other's captures, as in a playbook.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any


def prepare(
    recorded: Sequence[Mapping[str, Any]], normalize: Sequence[str]
) -> list[dict[str, Any]]:
    """A copy of the recorded turns whose calls have playbook ``params`` and ``capture``."""
    turns: list[dict[str, Any]] = copy.deepcopy([dict(turn) for turn in recorded])
    patterns = [re.compile(pattern) for pattern in normalize]
    follow = _Follow()
    for turn in turns:
        for action in turn["actions"]:
            if action["kind"] == "say":
                continue
            calls = action["calls"] if action["kind"] == "parallel" else [action]
            for call in calls:
                call["capture"] = {}
                call["params"] = follow.refer(literal_params(call.get("params") or {}))
            for call in calls:  # after the whole message: siblings share no captures
                if call.get("result") is not None and not call.get("mocked"):
                    follow.offer(call, call["result"], patterns)
    return turns


def literal_params(value: Any) -> Any:
    """Recorded arguments as playbook params: a ``${`` in a string is literal (``$${``)."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, Mapping):
        return {key: literal_params(item) for key, item in value.items()}
    if isinstance(value, list):
        return [literal_params(item) for item in value]
    return value


class _Follow:
    """Values seen in results, the call that can capture each, and the names given so far."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[dict[str, Any], str]] = {}  # value -> (call, pattern)
        self._names: dict[str, str] = {}  # value -> capture name, once referred to

    def offer(self, call: dict[str, Any], text: str, patterns: Sequence[re.Pattern[str]]) -> None:
        for pattern in patterns:
            match = pattern.search(text)
            if match is None:
                continue
            value = match.group(1) if match.groups() else match.group(0)
            # ``${`` would be read as a reference; a value already followed keeps its source
            if len(value) >= 4 and "$" not in value and value not in self._values:
                self._values[value] = (call, pattern.pattern)

    def refer(self, value: Any) -> Any:
        if isinstance(value, str):
            if not self._values:
                return value
            # one pass, longest first: a reference put in is never searched again
            seen = sorted(self._values, key=len, reverse=True)
            either = re.compile("|".join(re.escape(item) for item in seen))
            return either.sub(lambda match: "${" + self._name(match.group()) + "}", value)
        if isinstance(value, Mapping):
            return {key: self.refer(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.refer(item) for item in value]
        return value

    def _name(self, value: str) -> str:
        if value not in self._names:
            self._names[value] = f"id_{len(self._names) + 1}"
            call, pattern = self._values[value]
            call["capture"][self._names[value]] = pattern
        return self._names[value]
