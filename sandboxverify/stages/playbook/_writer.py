"""Writing a recorded session as a TOML playbook, in the format people write by hand.

One ``[[turns]]`` per prompt, one action per line (``call`` with ``params``, ``text`` and the
recorded ``result``; ``parallel`` for several calls in one message; ``say`` ending the turn);
``expect_error = true`` where a call's result was an error. Text with line breaks is written as a
multi-line literal string, so a recorded answer reads as it was said. Params TOML cannot hold
(``null``) are written as ``params_json``. The text is parsed back before it is handed out: what
is written is what replays.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sandboxverify.runtime.harness import GENERATED, normalizer
from sandboxverify.stages.playbook._captures import prepare
from sandboxverify.stages.playbook._document import parse_playbook

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


class Unwritable(ValueError):
    """A recorded value TOML and JSON cannot both hold (a non-finite number)."""


def render_playbook(
    recorded: Sequence[Mapping[str, Any]],
    *,
    header: Sequence[str] = (),
    top: Mapping[str, Any] | None = None,
    tables: Mapping[str, Mapping[str, Any]] | None = None,
    comments: Sequence[str] = (),
    normalize: Sequence[str] = (),
    source: str = "recording",
) -> str:
    """The playbook text: ``header`` comment lines, the ``top`` keys (``host``, ``plugins``...),
    ``comments`` (commented-out settings), the ``tables`` ([recording], [mock_tools], ...) that are
    not empty, then the recorded turns, their ids followed with ``normalize`` (``_captures``).
    Checked by parsing it back (``source`` names it)."""
    recorded = _stable(prepare(recorded, normalize), normalize)
    lines = [f"# {line}" if line else "#" for line in header]
    if lines:
        lines.append("")
    for key, value in (top or {}).items():
        if value is not None:
            lines.append(f"{key_text(key)} = {value_text(value)}")
    lines.extend(f"# {line}" for line in comments)
    for name, table in (tables or {}).items():
        entries = {key: value for key, value in table.items() if value not in (None, {}, [])}
        if entries:
            lines += ["", f"[{key_text(name)}]"]
            lines += [f"{key_text(key)} = {value_text(value)}" for key, value in entries.items()]
    for turn in recorded:
        lines += ["", "[[turns]]", f"prompt = {value_text(turn['prompt'])}"]
        if turn.get("request_hash"):
            lines.append(f"request_hash = {value_text(turn['request_hash'])}")
        lines.append("actions = [")
        for action in turn["actions"]:
            lines += _action_lines(action_table(action))
        lines.append("]")
    text = "\n".join(lines).lstrip("\n") + "\n"
    _check_round_trip(text, recorded, source)
    return text


def _stable(turns: list[dict[str, Any]], normalize: Sequence[str]) -> list[dict[str, Any]]:
    """The recording as written: in results, what ``normalize`` masks becomes a stable
    placeholder (as a replay compares them); in what the model said, generated-looking ids too
    (never compared, only read: a refresh diffs only where behaviour changed)."""
    results = normalizer(list(normalize))
    words = normalizer([*normalize, *GENERATED])
    for turn in turns:
        for action in turn["actions"]:
            if action.get("text"):
                action["text"] = words(action["text"])
            for call in action.get("calls") or ([action] if action["kind"] == "call" else []):
                if call.get("result") is not None:
                    call["result"] = results(call["result"])
    return turns


def action_table(action: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded action as the table a playbook author would write."""
    if action["kind"] == "say":
        return {"say": action.get("text") or ""}
    if action["kind"] == "parallel":
        table: dict[str, Any] = {"parallel": [_call_table(call) for call in action["calls"]]}
        if action.get("text"):
            table["text"] = action["text"]
        return table
    table = _call_table(action)
    if action.get("text"):
        table["text"] = action["text"]
    return table


def _action_lines(table: Mapping[str, Any]) -> list[str]:
    """One line per action; the calls of a parallel action one per line inside it."""
    if "parallel" not in table:
        return [f"  {value_text(table)},"]
    rest = "".join(
        f", {key_text(key)} = {value_text(v)}" for key, v in table.items() if key != "parallel"
    )
    calls = [f"      {value_text(call)}," for call in table["parallel"]]
    return ["  { parallel = [", *calls, f"    ]{rest} }},"]


def _call_table(call: Mapping[str, Any]) -> dict[str, Any]:
    table: dict[str, Any] = {"call": call["tool"]}
    params = call.get("params") or {}
    if params:
        if _has_null(params):
            table["params_json"] = json.dumps(params, ensure_ascii=False, sort_keys=False)
        else:
            table["params"] = params
    if call.get("capture"):
        table["capture"] = call["capture"]
    if call.get("is_error"):
        table["expect_error"] = True
    if call.get("result") is not None:
        table["result"] = call["result"]
    return table


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, Mapping):
        return any(_has_null(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_null(item) for item in value)
    return False


# -- TOML values ---------------------------------------------------------------------------


def key_text(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else basic_string(key)


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unwritable(f"{value} has no TOML or JSON form")
        return repr(value)
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = ", ".join(f"{key_text(str(k))} = {value_text(v)}" for k, v in value.items())
        return "{ " + items + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(item) for item in value) + "]"
    raise Unwritable(f"a {type(value).__name__} has no TOML form: {value!r}")


def string_text(text: str) -> str:
    """A multi-line literal string for text with line breaks it can hold as is, else a basic
    string."""
    if "\n" in text and _literal_safe(text):
        return "'''\n" + text + "'''"
    if '"' in text and "'" not in text and "\n" not in text and _literal_safe(text):
        return "'" + text + "'"  # a literal string: no backslashes before every quote
    return basic_string(text)


def _literal_safe(text: str) -> bool:
    if "'''" in text or text.endswith("'"):
        return False
    return not any((ord(ch) < 0x20 and ch not in "\n\t") or ord(ch) == 0x7F for ch in text)


def basic_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _check_round_trip(text: str, recorded: Sequence[Mapping[str, Any]], source: str) -> None:
    """What the file says must be what was recorded, read by the same parser a replay uses."""
    spec = parse_playbook(text, source)
    if len(spec["turns"]) != len(recorded):
        raise RuntimeError(f"{source}: the written playbook lost turns")
    for written, turn in zip(spec["turns"], recorded):
        same = written["prompt"] == turn["prompt"] and len(written["actions"]) == len(
            turn["actions"]
        )
        for got, want in zip(written["actions"], turn["actions"]):
            same = same and got["kind"] == want["kind"]
            if got["kind"] == "say":
                same = same and got["text"] == (want.get("text") or "")
                continue
            wanted = want["calls"] if want["kind"] == "parallel" else [want]
            calls = got["calls"] if got["kind"] == "parallel" else [got]
            same = same and [(c["tool"], c["params"], c.get("result")) for c in calls] == [
                (c["tool"], c.get("params") or {}, c.get("result")) for c in wanted
            ]
        if not same:
            raise RuntimeError(f"{source}: the written playbook does not say what was recorded")
