"""What a recorded session adds to a playbook, and how it is replayed.

Top-level keys: ``host`` (how ``sandboxverify run`` loads the plugins unless ``--host`` says
otherwise: ``native``, ``llm`` or ``mcp``), ``compare_results`` (``false``: never compare
the calls' results with their recorded ``result``; a replay compares them by default),
``normalize`` (regexes masked on both sides before results are compared: ids, times) and
``[recording]`` (the model the session was recorded with, its system prompt and options: what
``run --live`` uses again; the digests of the tools and settings it was recorded with). A
mocks file for ``sandboxverify record`` is a playbook, or just its ``[mock_tools]`` and
``[mock_ui]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandboxverify._errors import ConfigError
from sandboxverify._toml import tomllib
from sandboxverify.runtime.hosts import SESSION_HOSTS
from sandboxverify.stages.playbook._mocks import mock_tools, mock_ui
from sandboxverify.stages.playbook._values import (
    Doc,
    did_you_mean,
    digest,
    json_leaf,
    leaves,
    regex,
    show,
    string,
    table,
    unknown_keys,
)

_RECORDING_KEYS = ("model", "system", "options", "tools_hash", "settings_hash")


def host(doc: Doc, value: Any) -> str:
    chosen = string(doc, "host", value)
    if chosen not in SESSION_HOSTS:
        raise doc.fail(
            "host",
            f"must be one of {', '.join(SESSION_HOSTS)}, got {show(value)}",
            hint=did_you_mean(chosen, SESSION_HOSTS),
        )
    return chosen


def compare_results(doc: Doc, value: Any) -> bool:
    if not isinstance(value, bool):
        raise doc.fail("compare_results", f"must be true or false, got {show(value)}")
    return value


def normalize(doc: Doc, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise doc.fail(
            "normalize",
            f"must be an array of regexes, got {show(value)}",
            hint="normalize = ['PLAN-[0-9a-f]+', '\\d{4}-\\d\\d-\\d\\dT[0-9:.]+']",
        )
    patterns = [regex(doc, f"normalize[{i}]", item) for i, item in enumerate(value)]
    for index, pattern in enumerate(patterns):
        if not pattern:
            raise doc.fail(f"normalize[{index}]", "an empty regex masks nothing")
    return patterns


def recording(doc: Doc, value: Any) -> dict[str, Any]:
    recorded = table(doc, "recording", value, hint='[recording] with model = "..."')
    unknown_keys(doc, "recording", recorded, _RECORDING_KEYS)
    result: dict[str, Any] = {"model": None, "system": None, "options": {}}
    for key, item in recorded.items():
        if key == "options":
            result[key] = table(
                doc, "recording.options", item, hint="options = { temperature = 0 }"
            )
            for place, leaf in leaves(item, "recording.options"):
                json_leaf(doc, place, leaf)
        elif key.endswith("_hash"):
            result[key] = digest(doc, f"recording.{key}", item)
        else:
            result[key] = string(doc, f"recording.{key}", item, non_empty=key == "model")
    return result


def load_mocks(path: Path) -> dict[str, Any]:
    """``{"mock_tools": ..., "mock_ui": ...}`` of a mocks file (any other key is ignored, so a
    playbook serves as one); ConfigError for a file that cannot be read or a malformed mock."""
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read mocks file {source}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not a TOML file: {exc}") from None
    doc = Doc(source)
    if "mock_tools" not in data and "mock_ui" not in data:
        raise doc.fail(
            "",
            "has neither [mock_tools] nor [mock_ui]",
            hint='write [mock_tools] with bash = "ok", and [mock_ui] with confirm = true',
        )
    return {
        "mock_tools": mock_tools(doc, data["mock_tools"]) if "mock_tools" in data else {},
        "mock_ui": mock_ui(doc, data["mock_ui"]) if "mock_ui" in data else {},
    }
