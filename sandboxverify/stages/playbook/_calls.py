"""One call action: its tool, ``params``, ``capture``, ``expect``, ``expect_error``, ``text``, the
``sample`` answers to a server's sampling requests during the call, ``validate = false`` to
send params that break the tool's schema on purpose, the recorded ``result`` and
``compare_result = false`` to replay the call without comparing its result with it.

References: ``${name}`` in any string inside ``params`` (at any depth) is replaced at run time by
the value an earlier action captured under ``name``. ``$${`` is a literal ``${`` and no reference
(deliberately simple: ``$$${x}`` is ``$`` followed by a literal ``${x}``). Strings are kept as
written in the spec; the runtime substitutes, this module only checks that every reference names a
capture made by an earlier action (an inner call of a ``parallel`` action captures for the actions
after the whole ``parallel``, not for its siblings; ``_turns`` keeps that list).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from sandboxverify.stages.playbook._values import (
    Doc,
    at,
    content_block,
    json_leaf,
    leaves,
    regex,
    show,
    string,
    table,
    unknown_keys,
)

_CALL_KEYS = (
    "call",
    "params",
    "params_json",
    "capture",
    "expect",
    "expect_error",
    "text",
    "sample",
    "validate",
    "result",
    "compare_result",
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ``$${`` first, so an escaped reference is never read as one; a bare ``${`` is malformed.
_REFERENCE = re.compile(r"\$\$\{|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}|\$\{")


def call_action(
    doc: Doc, where: str, action: dict[str, Any], captured: list[str]
) -> dict[str, Any]:
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
            result["tool"] = string(doc, place, value, non_empty=True)
        elif key == "params":
            result["params"] = _params(doc, place, value, captured)
        elif key == "params_json":
            result["params"] = _params(doc, place, _json_params(doc, place, action), captured)
        elif key == "result":
            result["result"] = string(doc, place, value)
        elif key == "capture":
            result["capture"] = _capture(doc, place, value)
        elif key == "expect":
            result["expect"] = regex(doc, place, value)
        elif key == "expect_error":
            result["expect_error"] = _expect_error(doc, place, value)
        elif key == "sample":
            result["sample"] = _samples(doc, place, value)
        elif key in ("validate", "compare_result"):
            if not isinstance(value, bool):
                raise doc.fail(place, f"must be true or false, got {show(value)}")
            result[key] = value
        else:
            result["text"] = string(doc, place, value)
    return result


def _params(doc: Doc, where: str, value: Any, captured: list[str]) -> dict[str, Any]:
    params = table(doc, where, value, hint='params = { name = "value", ... }')
    for place, leaf in leaves(params, where):
        json_leaf(doc, place, leaf)
        if isinstance(leaf, str):
            _references(doc, place, leaf, captured)
    return params


def _json_params(doc: Doc, where: str, action: dict[str, Any]) -> Any:
    """Params as a JSON object, for values TOML cannot write (null)."""
    if "params" in action:
        raise doc.fail(where, 'a call has "params" or "params_json", not both')
    text = string(doc, where, action["params_json"])
    try:
        return json.loads(text)
    except ValueError as exc:
        raise doc.fail(where, f"not a JSON object: {exc}") from None


def _references(doc: Doc, where: str, text: str, captured: list[str]) -> None:
    for match in _REFERENCE.finditer(text):
        if match.group() == "$${":
            continue  # an escaped, literal ``${``
        name = match.group("name")
        if name is None:
            raise doc.fail(
                where,
                f"malformed reference in {show(text)}: write ${{name}} with a capture name",
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


def _capture(doc: Doc, where: str, value: Any) -> dict[str, str]:
    captures = table(doc, where, value, hint="capture = { name = 'regex' }")
    for name, pattern in captures.items():
        place = at(where, name)
        if not _IDENTIFIER.fullmatch(name):
            raise doc.fail(
                place,
                f"capture name {name!r} is not an identifier",
                hint="use letters, digits and _ (not starting with a digit), so ${name} can "
                "refer to it",
            )
        regex(doc, place, pattern)
    return captures


def _expect_error(doc: Doc, where: str, value: Any) -> bool | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if not value:
            raise doc.fail(
                where, "an empty regex matches any error", hint="write expect_error = true"
            )
        return regex(doc, where, value)
    raise doc.fail(
        where, f"must be true, false or a regex the error text must match; got {show(value)}"
    )


def _samples(doc: Doc, where: str, value: Any) -> list[Any]:
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
                f"got {show(item)}",
                hint='sample = "text", or sample = { content = { type = "text", text = "..." } }',
            )
        unknown_keys(doc, place, item, ("content", "model", "role", "stopReason"))
        content_block(doc, f"{place}.content", item["content"])
        for leaf_place, leaf in leaves(item, place):
            json_leaf(doc, leaf_place, leaf)
    return list(items)
