"""Smoke playbooks in TOML: read, check and normalise them on the host, before any sandbox exists.

A playbook scripts the model's side of a session turn by turn (``[[turns]]`` with a ``prompt`` and
``actions``: ``call``, ``parallel`` or ``say``), mocks tools and UI answers (``[mock_tools]``,
``[mock_ui]``) and states what must have happened (``[expect]``). The runtime executes the
normalised spec returned here; this module only validates, so every mistake surfaces up front as a
one-line :class:`ConfigError` naming the file and the place (``turns[1].actions[0].params.id``).

References: ``${name}`` in any string inside ``params`` (at any depth) is replaced at run time by
the value an earlier action captured under ``name``. ``$${`` is a literal ``${`` and no reference
(deliberately simple: ``$$${x}`` is ``$`` followed by a literal ``${x}``). Strings are kept as
written in the spec; the runtime substitutes, this module only checks that every reference names a
capture made by an earlier action (an inner call of a ``parallel`` action captures for the actions
after the whole ``parallel``, not for its siblings).

The normalised spec (a contract with the runtime; JSON-serialisable)::

    {"source": str, "name": str | None, "mock_tools": {...}, "mock_ui": {...},
     "plugins": [str, ...] | None,
     "turns": [{"prompt": str, "where": "turns[0]", "actions": [action, ...]}],
     "expect": {"called": [str], "not_called": [str], "called_before": [[str, str]]}}

    action: {"kind": "call", "where", "tool", "params", "capture", "expect", "expect_error", "text"}
          | {"kind": "parallel", "where", "text", "calls": [call action, ...]}
          | {"kind": "say", "where", "text"}
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxverify._errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

_TOP_KEYS = ("name", "description", "plugins", "mock_tools", "mock_ui", "turns", "expect")
_TURN_KEYS = ("prompt", "actions")
_KINDS = ("call", "say", "parallel")
_CALL_KEYS = ("call", "params", "capture", "expect", "expect_error", "text", "sample")
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
)
_INNER_KEYS = ("call", "params", "capture", "expect", "expect_error", "sample")
_EXPECT_KEYS = ("called", "not_called", "called_before")
_RESULT_KEYS = ("content", "details", "is_error")
_UI_METHODS = (
    "confirm",
    "select",
    "input",
    "editor",
    "elicit",
    "notify",
    "set_status",
    "set_widget",
)
_ELICIT_ACTIONS = ("accept", "decline", "cancel")
_FIRE_AND_FORGET = ("notify", "set_status", "set_widget")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# ``$${`` first, so an escaped reference is never read as one; a bare ``${`` is malformed.
_REFERENCE = re.compile(r"\$\$\{|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}|\$\{")
_SHOWN = 60


_TURN_EXAMPLE = (
    'add [[turns]] with prompt = "..." and actions = [{ call = "tool", params = {...} }, '
    '{ say = "done" }]'
)


@dataclass(frozen=True)
class _Doc:
    """The file being read: every error names it first."""

    source: str

    def fail(self, where: str, message: str, hint: str | None = None) -> ConfigError:
        place = f"{self.source}: {where}: " if where else f"{self.source}: "
        return ConfigError(place + message, hint=hint)


def load_playbook(path: Path) -> dict[str, Any]:
    """The normalised spec of the playbook at ``path``; ConfigError for any problem in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read playbook {path}: {exc.strerror or exc}",
            hint="check the path given for the smoke playbook",
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read playbook {path}: not UTF-8 text ({exc.reason})") from None
    return parse_playbook(text, str(path))


def parse_playbook(text: str, source: str) -> dict[str, Any]:
    """The normalised spec of playbook ``text``; ``source`` names it in the spec and in errors."""
    doc = _Doc(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{source}: invalid TOML: {exc}", hint="fix the syntax at the line and column shown"
        ) from None
    spec: dict[str, Any] = {
        "source": source,
        "name": None,
        "mock_tools": {},
        "mock_ui": {},
        "plugins": None,
        "turns": [],
        "expect": {"called": [], "not_called": [], "called_before": []},
    }
    # Keys in document order, so the first problem reported is the first one in the file.
    for key, value in data.items():
        if key not in _TOP_KEYS:
            raise doc.fail("", f"unknown top-level key {key!r}", hint=_did_you_mean(key, _TOP_KEYS))
        if key == "description":
            _string(doc, key, value)  # allowed for the reader, not part of the spec
        elif key == "name":
            spec["name"] = _string(doc, key, value)
        elif key == "plugins":
            spec["plugins"] = _plugins(doc, value)
        elif key == "mock_tools":
            spec["mock_tools"] = _mock_tools(doc, value)
        elif key == "mock_ui":
            spec["mock_ui"] = _mock_ui(doc, value)
        elif key == "turns":
            spec["turns"] = _turns(doc, value)
        else:
            spec["expect"] = _expect(doc, value)
    if "turns" not in data:
        raise doc.fail("", "a playbook needs at least one [[turns]]", hint=_TURN_EXAMPLE)
    return spec


# -- small helpers -------------------------------------------------------------------------------


def _did_you_mean(key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"


def _unknown_keys(doc: _Doc, where: str, table: Mapping[str, Any], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            raise doc.fail(where, f"unknown key {key!r}", hint=_did_you_mean(key, known))


def _show(value: Any) -> str:
    """A value for a one-line message: repr escapes newlines; long values are cut."""
    shown = repr(value)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."


def _at(where: str, key: str) -> str:
    """``where.key``, quoting keys TOML would quote (a tool named ``my.tool``)."""
    return f"{where}.{key}" if _BARE_KEY.fullmatch(key) else f"{where}.{json.dumps(key)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int in Python


def _string(doc: _Doc, where: str, value: Any, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise doc.fail(where, f"must be a string, got {_show(value)}")
    if non_empty and not value.strip():
        raise doc.fail(where, "must not be empty")
    return value


def _table(doc: _Doc, where: str, value: Any, hint: str | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise doc.fail(where, f"must be a table, got {_show(value)}", hint=hint)
    return value


def _strings(doc: _Doc, where: str, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise doc.fail(where, f"must be an array of strings, got {_show(value)}")
    return [_string(doc, f"{where}[{i}]", item, non_empty=True) for i, item in enumerate(value)]


def _regex(doc: _Doc, where: str, value: Any) -> str:
    pattern = _string(doc, where, value)
    try:
        # A FutureWarning about a possible future meaning is no error; it must not be printed.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as exc:
        raise doc.fail(
            where,
            f"bad regex {pattern!r}: {exc}",
            hint="this is a Python regular expression (re module); escape literal characters "
            "with a backslash (in TOML, a 'literal string' keeps backslashes as written)",
        ) from None
    return pattern


def _leaves(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every non-container value under ``value`` with its place, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, _at(where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{where}[{index}]")
    else:
        yield where, value


def _json_leaf(doc: _Doc, where: str, value: Any) -> None:
    """The spec is JSON: TOML dates/times and non-finite floats have no JSON form."""
    if isinstance(value, (datetime.date, datetime.time)):
        raise doc.fail(
            where,
            f"a TOML date/time ({value.isoformat()}) cannot be passed on as JSON",
            hint="quote it to pass it as a string",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise doc.fail(where, f"{value} cannot be passed on as JSON", hint="use a finite number")


# -- top level -----------------------------------------------------------------------------------


def _plugins(doc: _Doc, value: Any) -> list[str]:
    plugins = _strings(doc, "plugins", value)
    if not plugins:
        raise doc.fail(
            "plugins",
            "must list at least one plugin",
            hint='leave "plugins" out to use the default, or list "pkg.mod:setup" or '
            "entry-point names",
        )
    return plugins


def _mock_tools(doc: _Doc, value: Any) -> dict[str, Any]:
    table = _table(doc, "mock_tools", value, hint='write [mock_tools] with tool = "result text"')
    # The keys are tool names, checked against the registered tools by the runtime.
    return {name: _mock_tool(doc, _at("mock_tools", name), mock) for name, mock in table.items()}


_MOCK_TOOL_SHAPES = (
    'a string, a result table { content = [{ type = "text", text = "..." }], details = ..., '
    "is_error = false }, or a non-empty array of those (used in order)"
)


def _mock_tool(doc: _Doc, where: str, value: Any) -> Any:
    if isinstance(value, list):
        if not value:
            raise doc.fail(where, "an empty array mocks no call", hint=f"use {_MOCK_TOOL_SHAPES}")
        return [_mock_result(doc, f"{where}[{i}]", item) for i, item in enumerate(value)]
    return _mock_result(doc, where, value)


def _mock_result(doc: _Doc, where: str, value: Any) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise doc.fail(where, f"must be {_MOCK_TOOL_SHAPES}; got {_show(value)}")
    _unknown_keys(doc, where, value, _RESULT_KEYS)
    if "content" not in value:
        raise doc.fail(
            where,
            'a result table needs "content"',
            hint='content = [{ type = "text", text = "..." }]',
        )
    content = value["content"]
    if not isinstance(content, list) or not content:
        raise doc.fail(
            f"{where}.content",
            f"must be a non-empty array of content blocks, got {_show(content)}",
            hint='content = [{ type = "text", text = "..." }]',
        )
    for index, block in enumerate(content):
        _content_block(doc, f"{where}.content[{index}]", block)
    if "is_error" in value and not isinstance(value["is_error"], bool):
        raise doc.fail(
            f"{where}.is_error", f"must be true or false, got {_show(value['is_error'])}"
        )
    for place, leaf in _leaves(value, where):
        _json_leaf(doc, place, leaf)
    return value


def _content_block(doc: _Doc, where: str, block: Any) -> None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise doc.fail(
            where, f'a content block must be a table with a string "type", got {_show(block)}'
        )
    # Other block types (images...) go through unchanged; the runtime knows what to make of them.
    if block["type"] == "text" and not isinstance(block.get("text"), str):
        raise doc.fail(where, 'a "text" block needs a string "text"')


def _mock_ui(doc: _Doc, value: Any) -> dict[str, Any]:
    table = _table(doc, "mock_ui", value, hint="write [mock_ui] with confirm = true, ...")
    _unknown_keys(doc, "mock_ui", table, _UI_METHODS)
    return {method: _ui_value(doc, f"mock_ui.{method}", method, v) for method, v in table.items()}


_UI_ANSWERS = {
    "confirm": "true or false",
    "select": "an index (integer >= 0) or an item (string)",
    "input": "a string",
    "editor": "a string",
    "elicit": '"accept", "decline", "cancel", a table of content to accept, or '
    '{ action = "...", content = { ... } }',
}


def _ui_value(doc: _Doc, where: str, method: str, value: Any) -> Any:
    if method in _FIRE_AND_FORGET:
        if value != "collect":
            raise doc.fail(
                where,
                f'the only value is "collect" (its calls are always collected), got {_show(value)}',
            )
        return value
    if isinstance(value, list):
        if not value:
            raise doc.fail(
                where,
                "an empty array answers nothing",
                hint=f"give at least one answer: {_UI_ANSWERS[method]}",
            )
        return [_ui_answer(doc, f"{where}[{i}]", method, item) for i, item in enumerate(value)]
    return _ui_answer(doc, where, method, value)


def _ui_answer(doc: _Doc, where: str, method: str, value: Any) -> Any:
    # One answer per call, so a select list may mix indexes and items: each stands alone.
    fits = {
        "confirm": isinstance(value, bool),
        "select": isinstance(value, str) or (_is_int(value) and value >= 0),
        "input": isinstance(value, str),
        "editor": isinstance(value, str),
        "elicit": value in _ELICIT_ACTIONS or isinstance(value, dict),
    }[method]
    if method == "elicit" and isinstance(value, dict):
        _elicit_answer(doc, where, value)
    if not fits:
        raise doc.fail(
            where,
            f"must be {_UI_ANSWERS[method]}, or a non-empty array of those; got {_show(value)}",
        )
    return value


def _elicit_answer(doc: _Doc, where: str, value: dict[str, Any]) -> None:
    """Content to accept (any table without "action"), or a full answer."""
    for place, leaf in _leaves(value, where):
        _json_leaf(doc, place, leaf)
    if "action" not in value:
        return
    _unknown_keys(doc, where, value, ("action", "content"))
    if value["action"] not in _ELICIT_ACTIONS:
        raise doc.fail(
            f"{where}.action",
            f'must be "accept", "decline" or "cancel", got {_show(value["action"])}',
        )
    if "content" in value and not isinstance(value["content"], dict):
        raise doc.fail(f"{where}.content", f"must be a table, got {_show(value['content'])}")


def _samples(doc: _Doc, where: str, value: Any) -> list[Any]:
    """What the model answers a server's sampling requests during the call, in order."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise doc.fail(where, "an empty array answers nothing", hint='sample = "the answer"')
    for index, item in enumerate(items):
        place = f"{where}[{index}]" if isinstance(value, list) else where
        if isinstance(item, str):
            continue
        if not isinstance(item, dict) or not isinstance(item.get("content"), dict):
            raise doc.fail(
                place,
                "a sample answer is text or a sampling result table with a content table, "
                f"got {_show(item)}",
                hint='sample = "text", or sample = { content = { type = "text", text = "..." } }',
            )
        _unknown_keys(doc, place, item, ("content", "model", "role", "stopReason"))
        _content_block(doc, f"{place}.content", item["content"])
        for leaf_place, leaf in _leaves(item, place):
            _json_leaf(doc, leaf_place, leaf)
    return list(items)


def _expect(doc: _Doc, value: Any) -> dict[str, Any]:
    table = _table(doc, "expect", value, hint='write [expect] with called = ["tool", ...]')
    _unknown_keys(doc, "expect", table, _EXPECT_KEYS)
    result: dict[str, Any] = {"called": [], "not_called": [], "called_before": []}
    for key, item in table.items():
        where = f"expect.{key}"
        result[key] = (
            _pairs(doc, where, item) if key == "called_before" else _strings(doc, where, item)
        )
    # Both would make the run fail whatever the plugin does.
    for index, tool in enumerate(result["not_called"]):
        if tool in result["called"]:
            raise doc.fail(
                f"expect.not_called[{index}]",
                f"{tool!r} is also in expect.called",
                hint="a tool cannot be both called and not called; remove one",
            )
    return result


def _pairs(doc: _Doc, where: str, value: Any) -> list[list[str]]:
    hint = 'called_before = [["first_tool", "second_tool"], ...]'
    if not isinstance(value, list):
        raise doc.fail(
            where, f"must be an array of [first, second] pairs, got {_show(value)}", hint=hint
        )
    pairs: list[list[str]] = []
    for index, pair in enumerate(value):
        place = f"{where}[{index}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise doc.fail(
                place, f"must be a pair of tool names [first, second], got {_show(pair)}", hint=hint
            )
        pairs.append(_strings(doc, place, pair))
    return pairs


# -- turns and actions ---------------------------------------------------------------------------


def _turns(doc: _Doc, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(turn, dict) for turn in value):
        raise doc.fail(
            "turns",
            f"must be an array of tables, got {_show(value)}",
            hint="write each turn as [[turns]] (double brackets)",
        )
    if not value:
        raise doc.fail("turns", "a playbook needs at least one [[turns]]", hint=_TURN_EXAMPLE)
    turns: list[dict[str, Any]] = []
    captured: list[str] = []  # names captured so far, in order; grows action by action
    for index, turn in enumerate(value):
        turns.append(_turn(doc, f"turns[{index}]", turn, captured))
    return turns


def _turn(doc: _Doc, where: str, turn: dict[str, Any], captured: list[str]) -> dict[str, Any]:
    _unknown_keys(doc, where, turn, _TURN_KEYS)
    if "prompt" not in turn:
        raise doc.fail(where, 'a turn needs a "prompt" (what the user says)')
    prompt = _string(doc, f"{where}.prompt", turn["prompt"], non_empty=True)
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
    return {"prompt": prompt, "where": where, "actions": normalised}


def _action(doc: _Doc, where: str, action: Any, captured: list[str]) -> dict[str, Any]:
    if not isinstance(action, dict):
        raise doc.fail(
            where,
            f'an action must be a table such as {{ call = "tool" }} or {{ say = "..." }}, '
            f"got {_show(action)}",
        )
    _unknown_keys(doc, where, action, _ACTION_KEYS)
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
    result = _call(doc, where, action, captured)
    captured.extend(result["capture"])  # for the actions after this one
    return result


def _say(doc: _Doc, where: str, action: dict[str, Any]) -> dict[str, Any]:
    others = [key for key in action if key != "say"]
    if others:
        raise doc.fail(
            where,
            f'a "say" action takes no other keys, got {others[0]!r}',
            hint='to say something along with a call, give the call "text"',
        )
    return {"kind": "say", "where": where, "text": _string(doc, f"{where}.say", action["say"])}


def _parallel(doc: _Doc, where: str, action: dict[str, Any], captured: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {"kind": "parallel", "where": where, "text": None, "calls": []}
    for key, value in action.items():  # document order, as everywhere
        if key == "text":
            result["text"] = _string(doc, f"{where}.text", value)
        elif key == "parallel":
            result["calls"] = _parallel_calls(doc, f"{where}.parallel", value, captured)
        else:
            raise doc.fail(
                where,
                f'a "parallel" action takes only "parallel" and "text", got {key!r}',
                hint=f"put {key!r} on the calls inside parallel = [...]",
            )
    return result


def _parallel_calls(doc: _Doc, where: str, value: Any, captured: list[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise doc.fail(
            where,
            f"must be a non-empty array of calls, got {_show(value)}",
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


def _inner_call(doc: _Doc, where: str, item: Any, captured: list[str]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise doc.fail(
            where, f'must be a call table such as {{ call = "tool" }}, got {_show(item)}'
        )
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
            raise doc.fail(where, f"unknown key {key!r}", hint=_did_you_mean(key, _INNER_KEYS))
    if "call" not in item:
        raise doc.fail(where, 'a call inside "parallel" needs "call"')
    return _call(doc, where, item, captured)


def _call(doc: _Doc, where: str, action: dict[str, Any], captured: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "kind": "call",
        "where": where,
        "tool": "",
        "params": {},
        "capture": {},
        "expect": None,
        "expect_error": False,
        "text": None,
    }
    # Fields in document order, so the first problem reported is the first one written.
    for key, value in action.items():
        place = f"{where}.{key}"
        if key == "call":
            result["tool"] = _string(doc, place, value, non_empty=True)
        elif key == "params":
            result["params"] = _params(doc, place, value, captured)
        elif key == "capture":
            result["capture"] = _capture(doc, place, value)
        elif key == "expect":
            result["expect"] = _regex(doc, place, value)
        elif key == "expect_error":
            result["expect_error"] = _expect_error(doc, place, value)
        elif key == "sample":
            result["sample"] = _samples(doc, place, value)
        else:
            result["text"] = _string(doc, place, value)
    return result


def _params(doc: _Doc, where: str, value: Any, captured: list[str]) -> dict[str, Any]:
    params = _table(doc, where, value, hint='params = { name = "value", ... }')
    for place, leaf in _leaves(params, where):
        _json_leaf(doc, place, leaf)
        if isinstance(leaf, str):
            _references(doc, place, leaf, captured)
    return params


def _references(doc: _Doc, where: str, text: str, captured: list[str]) -> None:
    for match in _REFERENCE.finditer(text):
        if match.group() == "$${":
            continue  # an escaped, literal ``${``
        name = match.group("name")
        if name is None:
            raise doc.fail(
                where,
                f"malformed reference in {_show(text)}: write ${{name}} with a capture name",
                hint="write $${ for a literal ${",
            )
        if name not in captured:
            raise doc.fail(
                where,
                f"${{{name}}} is not captured by any earlier action",
                hint=_captured_hint(name, captured),
            )


def _captured_hint(name: str, captured: list[str]) -> str:
    if not captured:
        return f"no earlier action captures anything; add capture = {{ {name} = 'regex' }} to one"
    so_far = f"captured so far: {', '.join(dict.fromkeys(captured))}"
    close = difflib.get_close_matches(name, captured, n=1)
    return f"did you mean ${{{close[0]}}}? {so_far}" if close else so_far


def _capture(doc: _Doc, where: str, value: Any) -> dict[str, str]:
    table = _table(doc, where, value, hint="capture = { name = 'regex' }")
    for name, pattern in table.items():
        place = _at(where, name)
        if not _IDENTIFIER.fullmatch(name):
            raise doc.fail(
                place,
                f"capture name {name!r} is not an identifier",
                hint="use letters, digits and _ (not starting with a digit), so ${name} can "
                "refer to it",
            )
        _regex(doc, place, pattern)
    return table


def _expect_error(doc: _Doc, where: str, value: Any) -> bool | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _regex(doc, where, value)
    raise doc.fail(
        where, f"must be true, false or a regex the error text must match; got {_show(value)}"
    )
