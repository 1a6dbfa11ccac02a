"""The turns of a playbook: each ``[[turns]]`` with its ``prompt`` and ``actions`` (``call``,
``parallel`` or ``say``), in order. What a call captures is known to the actions after it, so the
captures made so far go along from action to action; ``_calls`` reads each call.
"""

from __future__ import annotations

from typing import Any

from sandboxverify.stages.playbook._calls import call_action
from sandboxverify.stages.playbook._values import (
    Doc,
    did_you_mean,
    digest,
    show,
    string,
    unknown_keys,
)

_TURN_KEYS = ("prompt", "actions", "request_hash")
_KINDS = ("call", "say", "parallel")
_ACTION_KEYS = (
    "call",
    "say",
    "parallel",
    "params",
    "capture",
    "expect",
    "expect_error",
    "text",
    "sample",
    "validate",
    "params_json",
    "result",
    "compare_result",
)
_INNER_KEYS = (
    "call",
    "params",
    "capture",
    "expect",
    "expect_error",
    "sample",
    "validate",
    "params_json",
    "result",
    "compare_result",
)


TURN_EXAMPLE = (
    'add [[turns]] with prompt = "..." and actions = [{ call = "tool", params = {...} }, '
    '{ say = "done" }]'
)


def turns(doc: Doc, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(turn, dict) for turn in value):
        raise doc.fail(
            "turns",
            f"must be an array of tables, got {show(value)}",
            hint="write each turn as [[turns]] (double brackets)",
        )
    if not value:
        raise doc.fail("turns", "a playbook needs at least one [[turns]]", hint=TURN_EXAMPLE)
    parsed: list[dict[str, Any]] = []
    captured: list[str] = []  # names captured so far, in order; grows action by action
    for index, turn in enumerate(value):
        parsed.append(_turn(doc, f"turns[{index}]", turn, captured))
    return parsed


def _turn(doc: Doc, where: str, turn: dict[str, Any], captured: list[str]) -> dict[str, Any]:
    unknown_keys(doc, where, turn, _TURN_KEYS)
    if "prompt" not in turn:
        raise doc.fail(where, 'a turn needs a "prompt" (what the user says)')
    prompt = string(doc, f"{where}.prompt", turn["prompt"], non_empty=True)
    actions = turn.get("actions")
    if not isinstance(actions, list) or not actions:
        raise doc.fail(
            f"{where}.actions",
            "a turn needs a non-empty array of actions",
            hint='actions = [{ call = "tool", params = {...} }, { say = "done" }]',
        )
    normalised: list[dict[str, Any]] = []
    for index, action in enumerate(actions):
        place = f"{where}.actions[{index}]"
        if normalised and normalised[-1]["kind"] == "say":
            # The runtime ends the turn at a say: anything after it would never be taken.
            raise doc.fail(
                place,
                f'comes after the "say" at {normalised[-1]["where"]}, which ends the turn',
                hint="make the say the last action, or move this action to the next turn",
            )
        normalised.append(_action(doc, place, action, captured))
    parsed = {"prompt": prompt, "where": where, "actions": normalised}
    if "request_hash" in turn:
        parsed["request_hash"] = digest(doc, f"{where}.request_hash", turn["request_hash"])
    return parsed


def _action(doc: Doc, where: str, action: Any, captured: list[str]) -> dict[str, Any]:
    if not isinstance(action, dict):
        raise doc.fail(
            where,
            f'an action must be a table such as {{ call = "tool" }} or {{ say = "..." }}, '
            f"got {show(action)}",
        )
    unknown_keys(doc, where, action, _ACTION_KEYS)
    kinds = [kind for kind in _KINDS if kind in action]
    if not kinds:
        raise doc.fail(where, 'an action needs "call", "say" or "parallel"')
    if len(kinds) > 1:
        both = " and ".join(f'"{kind}"' for kind in kinds)
        raise doc.fail(
            where,
            f"an action has one of call, say or parallel, this one has {both}",
            hint="split it into separate actions",
        )
    if kinds[0] == "say":
        return _say(doc, where, action)
    if kinds[0] == "parallel":
        return _parallel(doc, where, action, captured)
    result = call_action(doc, where, action, captured)
    captured.extend(result["capture"])  # for the actions after this one
    return result


def _say(doc: Doc, where: str, action: dict[str, Any]) -> dict[str, Any]:
    others = [key for key in action if key != "say"]
    if others:
        raise doc.fail(
            where,
            f'a "say" action takes no other keys, got {others[0]!r}',
            hint='to say something along with a call, give the call "text"',
        )
    return {"kind": "say", "where": where, "text": string(doc, f"{where}.say", action["say"])}


def _parallel(doc: Doc, where: str, action: dict[str, Any], captured: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {"kind": "parallel", "where": where, "text": None, "calls": []}
    for key, value in action.items():  # document order, as everywhere
        if key == "text":
            result["text"] = string(doc, f"{where}.text", value)
        elif key == "parallel":
            result["calls"] = _parallel_calls(doc, f"{where}.parallel", value, captured)
        else:
            raise doc.fail(
                where,
                f'a "parallel" action takes only "parallel" and "text", got {key!r}',
                hint=f"put {key!r} on the calls inside parallel = [...]",
            )
    return result


def _parallel_calls(doc: Doc, where: str, value: Any, captured: list[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise doc.fail(
            where,
            f"must be a non-empty array of calls, got {show(value)}",
            hint='parallel = [{ call = "a" }, { call = "b", params = {...} }]',
        )
    calls: list[dict[str, Any]] = []
    new: dict[str, str] = {}  # name -> the inner call capturing it
    for index, item in enumerate(value):
        place = f"{where}[{index}]"
        # The calls go out in one message: none sees a sibling's capture, so ``captured`` waits.
        call = _inner_call(doc, place, item, captured)
        for name in call["capture"]:
            if name in new:
                raise doc.fail(
                    f"{place}.capture.{name}",
                    f"{name!r} is also captured by {new[name]}, in the same parallel action",
                    hint="use a different name for each capture",
                )
            new[name] = place
        calls.append(call)
    captured.extend(new)  # for the actions after the whole parallel action
    return calls


def _inner_call(doc: Doc, where: str, item: Any, captured: list[str]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise doc.fail(where, f'must be a call table such as {{ call = "tool" }}, got {show(item)}')
    for key in item:
        if key == "text":
            raise doc.fail(
                where,
                '"text" is not allowed inside "parallel"',
                hint='give the message text once, as "text" on the parallel action',
            )
        if key in ("say", "parallel"):
            raise doc.fail(
                where,
                f'{key!r} is not allowed inside "parallel"',
                hint="only calls run in parallel; make it a separate action",
            )
        if key not in _INNER_KEYS:
            raise doc.fail(where, f"unknown key {key!r}", hint=did_you_mean(key, _INNER_KEYS))
    if "call" not in item:
        raise doc.fail(where, 'a call inside "parallel" needs "call"')
    return call_action(doc, where, item, captured)
