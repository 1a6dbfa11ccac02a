"""The playbook as a document: reading the file and the TOML, the top-level keys in the order they
are written, ``plugins`` and ``[expect]``; mocks and turns are read by their own modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandboxverify._errors import ConfigError
from sandboxverify._toml import tomllib
from sandboxverify.stages.playbook import _replay
from sandboxverify.stages.playbook._mocks import mock_tools, mock_ui
from sandboxverify.stages.playbook._turns import TURN_EXAMPLE, turns
from sandboxverify.stages.playbook._values import (
    Doc,
    did_you_mean,
    show,
    string,
    strings,
    table,
    unknown_keys,
)

_TOP_KEYS = (
    "name",
    "description",
    "plugins",
    "mock_tools",
    "mock_ui",
    "turns",
    "expect",
    "host",
    "compare_results",
    "normalize",
    "recording",
    "has_ui",
)
_EXPECT_KEYS = ("called", "not_called", "called_before", "approved")


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
    doc = Doc(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{source}: invalid TOML: {exc}", hint="fix the syntax at the line and column shown"
        ) from None
    spec: dict[str, Any] = {
        "source": source,
        # what plugin files named relative to the playbook are relative to
        "base": str(Path(source).parent.resolve()),
        "name": None,
        "mock_tools": {},
        "mock_ui": {},
        "plugins": None,
        "turns": [],
        "expect": {"called": [], "not_called": [], "called_before": [], "approved": []},
    }
    # Keys in document order, so the first problem reported is the first one in the file.
    for key, value in data.items():
        if key not in _TOP_KEYS:
            raise doc.fail("", f"unknown top-level key {key!r}", hint=did_you_mean(key, _TOP_KEYS))
        if key == "description":
            string(doc, key, value)  # allowed for the reader, not part of the spec
        elif key == "name":
            spec["name"] = string(doc, key, value)
        elif key == "plugins":
            spec["plugins"] = _plugins(doc, value)
        elif key == "mock_tools":
            spec["mock_tools"] = mock_tools(doc, value)
        elif key == "mock_ui":
            spec["mock_ui"] = mock_ui(doc, value)
        elif key == "turns":
            spec["turns"] = turns(doc, value)
        elif key == "host":
            spec["host"] = _replay.host(doc, value)
        elif key == "compare_results":
            spec["compare_results"] = _replay.compare_results(doc, value)
        elif key == "normalize":
            spec["normalize"] = _replay.normalize(doc, value)
        elif key == "recording":
            spec["recording"] = _replay.recording(doc, value)
        elif key == "has_ui":
            if not isinstance(value, bool):
                raise doc.fail("has_ui", f"must be true or false, got {show(value)}")
            spec["has_ui"] = value
        else:
            spec["expect"] = _expect(doc, value)
    if "turns" not in data:
        raise doc.fail("", "a playbook needs at least one [[turns]]", hint=TURN_EXAMPLE)
    return spec


def _plugins(doc: Doc, value: Any) -> list[str]:
    plugins = strings(doc, "plugins", value)
    if not plugins:
        raise doc.fail(
            "plugins",
            "must list at least one plugin",
            hint='leave "plugins" out to use the default, or list "pkg.mod:setup" or '
            "entry-point names",
        )
    return plugins


def _expect(doc: Doc, value: Any) -> dict[str, Any]:
    expected = table(doc, "expect", value, hint='write [expect] with called = ["tool", ...]')
    unknown_keys(doc, "expect", expected, _EXPECT_KEYS)
    result: dict[str, Any] = {"called": [], "not_called": [], "called_before": [], "approved": []}
    for key, item in expected.items():
        where = f"expect.{key}"
        result[key] = (
            _pairs(doc, where, item) if key == "called_before" else strings(doc, where, item)
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


def _pairs(doc: Doc, where: str, value: Any) -> list[list[str]]:
    hint = 'called_before = [["first_tool", "second_tool"], ...]'
    if not isinstance(value, list):
        raise doc.fail(
            where, f"must be an array of [first, second] pairs, got {show(value)}", hint=hint
        )
    pairs: list[list[str]] = []
    for index, pair in enumerate(value):
        place = f"{where}[{index}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise doc.fail(
                place, f"must be a pair of tool names [first, second], got {show(pair)}", hint=hint
            )
        first, second = strings(doc, place, pair)
        if first == second:
            raise doc.fail(
                place,
                f"{first!r} cannot be called before itself",
                hint="name two different tools: [first, second]",
            )
        pairs.append([first, second])
    return pairs
