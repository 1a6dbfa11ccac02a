"""What a playbook mocks: tool results (``[mock_tools]``) and the answers of the UI (``[mock_ui]``).

Tool names are kept as written; the runtime checks them against the registered tools.
"""

from __future__ import annotations

from typing import Any

from sandboxverify.stages.playbook._values import (
    Doc,
    at,
    content_block,
    is_int,
    json_leaf,
    leaves,
    show,
    table,
    unknown_keys,
)

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


def mock_tools(doc: Doc, value: Any) -> dict[str, Any]:
    mocks = table(doc, "mock_tools", value, hint='write [mock_tools] with tool = "result text"')
    # The keys are tool names, checked against the registered tools by the runtime.
    return {name: _mock_tool(doc, at("mock_tools", name), mock) for name, mock in mocks.items()}


_MOCK_TOOL_SHAPES = (
    'a string, a result table { content = [{ type = "text", text = "..." }], details = ..., '
    "is_error = false }, or a non-empty array of those (used in order)"
)


def _mock_tool(doc: Doc, where: str, value: Any) -> Any:
    if isinstance(value, list):
        if not value:
            raise doc.fail(where, "an empty array mocks no call", hint=f"use {_MOCK_TOOL_SHAPES}")
        return [_mock_result(doc, f"{where}[{i}]", item) for i, item in enumerate(value)]
    return _mock_result(doc, where, value)


def _mock_result(doc: Doc, where: str, value: Any) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise doc.fail(where, f"must be {_MOCK_TOOL_SHAPES}; got {show(value)}")
    unknown_keys(doc, where, value, _RESULT_KEYS)
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
            f"must be a non-empty array of content blocks, got {show(content)}",
            hint='content = [{ type = "text", text = "..." }]',
        )
    for index, block in enumerate(content):
        content_block(doc, f"{where}.content[{index}]", block)
    if "is_error" in value and not isinstance(value["is_error"], bool):
        raise doc.fail(f"{where}.is_error", f"must be true or false, got {show(value['is_error'])}")
    for place, leaf in leaves(value, where):
        json_leaf(doc, place, leaf)
    return value


def mock_ui(doc: Doc, value: Any) -> dict[str, Any]:
    answers = table(doc, "mock_ui", value, hint="write [mock_ui] with confirm = true, ...")
    unknown_keys(doc, "mock_ui", answers, _UI_METHODS)
    return {method: _ui_value(doc, f"mock_ui.{method}", method, v) for method, v in answers.items()}


_UI_ANSWERS = {
    "confirm": "true or false",
    "select": "an index (integer >= 0) or an item (string)",
    "input": "a string",
    "editor": "a string",
    "elicit": '"accept", "decline", "cancel", a table of content to accept, or '
    '{ action = "...", content = { ... } }',
}


def _ui_value(doc: Doc, where: str, method: str, value: Any) -> Any:
    if method in _FIRE_AND_FORGET:
        if value != "collect":
            raise doc.fail(
                where,
                f'the only value is "collect" (its calls are always collected), got {show(value)}',
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


def _ui_answer(doc: Doc, where: str, method: str, value: Any) -> Any:
    # One answer per call, so a select list may mix indexes and items: each stands alone.
    fits = {
        "confirm": isinstance(value, bool),
        "select": isinstance(value, str) or (is_int(value) and value >= 0),
        "input": isinstance(value, str),
        "editor": isinstance(value, str),
        "elicit": value in _ELICIT_ACTIONS or isinstance(value, dict),
    }[method]
    if method == "elicit" and isinstance(value, dict):
        _elicit_answer(doc, where, value)
    if not fits:
        raise doc.fail(
            where,
            f"must be {_UI_ANSWERS[method]}, or a non-empty array of those; got {show(value)}",
        )
    return value


def _elicit_answer(doc: Doc, where: str, value: dict[str, Any]) -> None:
    """Content to accept (any table without "action"), or a full answer."""
    for place, leaf in leaves(value, where):
        json_leaf(doc, place, leaf)
    if "action" not in value:
        return
    unknown_keys(doc, where, value, ("action", "content"))
    if value["action"] not in _ELICIT_ACTIONS:
        raise doc.fail(
            f"{where}.action",
            f'must be "accept", "decline" or "cancel", got {show(value["action"])}',
        )
    if "content" in value and not isinstance(value["content"], dict):
        raise doc.fail(f"{where}.content", f"must be a table, got {show(value['content'])}")
