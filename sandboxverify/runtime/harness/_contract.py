"""The contract run: where a live model's choices left the recorded playbook, step by step.

Both sides are turns of actions (the playbook's normalised spec, and a live session read back by
``_record.recorded_turns``). Step *n* of a turn matches when both end the turn (``say``: the words
may differ), or both call the same tools with the same arguments; the calls of one message may
come in any order, and a ``${name}`` reference in a recorded argument matches any text (it stands
for a value captured from an earlier result). Every step that does not match is a divergence
naming the turn, the step, what was recorded and what the live model did (and, call by call,
the recorded calls it did not make and the ones it made instead). Where one side ended the turn
and the other did not, the steps after it no longer line up: the turn reports that one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_REFERENCE = re.compile(r"\$\$\{|\$\{[A-Za-z_][A-Za-z0-9_]*\}")
_SHOWN = 160


def divergences(
    recorded: Sequence[Mapping[str, Any]],
    live: Sequence[Mapping[str, Any]],
    *,
    stopped: str | None = None,
) -> list[dict[str, Any]]:
    """Each step where ``live`` differs from ``recorded``; ``stopped`` says why the live run
    ended early (a failure), for the steps it never reached."""
    found: list[dict[str, Any]] = []
    missing = f"nothing: the live run stopped ({stopped})" if stopped else "nothing"
    for index, turn in enumerate(recorded):
        number = index + 1
        live_actions = list(live[index]["actions"]) if index < len(live) else []
        actions = list(turn["actions"])
        for step in range(max(len(actions), len(live_actions))):
            want = actions[step] if step < len(actions) else None
            got = live_actions[step] if step < len(live_actions) else None
            if want is not None and got is not None and same_step(want, got):
                continue
            if got is None and want is not None:
                shown_live = missing if stopped else "nothing: the turn had ended"
            else:
                shown_live = describe(got)
            found.append(
                {
                    "turn": number,
                    "step": step + 1,
                    "prompt": turn["prompt"],
                    "recorded": describe(want) if want is not None else "nothing: the turn ended",
                    "live": shown_live,
                    **_calls_apart(want, got),
                }
            )
            if got is None or want is None or "say" in (want["kind"], got["kind"]):
                break  # one side ended the turn: the steps after it no longer line up
        if stopped and index >= len(live) - 1:
            break
    return found


def same_step(want: Mapping[str, Any], got: Mapping[str, Any]) -> bool:
    if want["kind"] == "say" or got["kind"] == "say":
        return bool(want["kind"] == got["kind"])
    missing, extra = _unmatched(want, got)
    return not missing and not extra


def _unmatched(
    want: Mapping[str, Any], got: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The recorded calls the live step did not make, and the live calls not recorded."""
    left = list(calls_of(got))
    missing = []
    for call in calls_of(want):
        match = next((c for c in left if _same_call(call, c)), None)
        if match is None:
            missing.append(call)
        else:
            left.remove(match)
    return missing, left


def _calls_apart(want: Mapping[str, Any] | None, got: Mapping[str, Any] | None) -> dict[str, Any]:
    """Call by call, for two steps that both call tools: what was not made, what came instead."""
    if want is None or got is None or "say" in (want["kind"], got["kind"]):
        return {}
    missing, extra = _unmatched(want, got)
    return {"not_made": [_call_text(c) for c in missing], "instead": [_call_text(c) for c in extra]}


def calls_of(action: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(action["calls"]) if action["kind"] == "parallel" else [action]


def _same_call(want: Mapping[str, Any], got: Mapping[str, Any]) -> bool:
    return bool(want["tool"] == got["tool"]) and same_value(
        want.get("params") or {}, got.get("params") or {}
    )


def same_value(want: Any, got: Any) -> bool:
    """JSON equality, where a recorded string's ``${name}`` matches any text."""
    if isinstance(want, str):
        if not isinstance(got, str):
            return False
        return want == got if "${" not in want else _pattern(want).fullmatch(got) is not None
    if isinstance(want, Mapping):
        return (
            isinstance(got, Mapping)
            and set(want) == set(got)
            and all(same_value(want[key], got[key]) for key in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(want) == len(got)
            and all(same_value(a, b) for a, b in zip(want, got))
        )
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    return bool(want == got)


def _pattern(text: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    for match in _REFERENCE.finditer(text):
        parts.append(re.escape(text[position : match.start()]))
        parts.append(re.escape("${") if match.group() == "$${" else "(.+?)")
        position = match.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts), re.S)


def describe(action: Mapping[str, Any] | None) -> str:
    if action is None:
        return "nothing"
    if action["kind"] == "say":
        return f"say {_cut(json.dumps(action.get('text') or '', ensure_ascii=False))}"
    shown = [_call_text(call) for call in calls_of(action)]
    return ("call " if len(shown) == 1 else "parallel calls ") + ", ".join(shown)


def _call_text(call: Mapping[str, Any]) -> str:
    params = json.dumps(call.get("params") or {}, sort_keys=True, ensure_ascii=False)
    return f"{call['tool']}({_cut(params)})"


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
