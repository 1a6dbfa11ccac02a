"""The JSON Schema of ``[tool.sandboxverify]``, from the options table: what ships as
``schemas/config.schema.json`` (a test holds the file to it; ``python -m
sandboxverify.options._schema`` writes it anew)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandboxverify.options._option import Option
from sandboxverify.options._table import options_of
from sandboxverify.options._trust import ProjectRule

SCHEMA_PATH = Path(__file__).parent.parent / "schemas" / "config.schema.json"
_ID = (
    "https://raw.githubusercontent.com/sandboxverify/sandboxverify/main/sandboxverify/schemas/"
    "config.schema.json"
)


def _caller_only() -> list[str]:
    """The keys of ``check`` a project's file may not set at all."""
    return [option.config_key for option in options_of("check") if option.project is False]


def config_schema() -> dict[str, Any]:
    """Every option of ``check`` as a key, in both spellings (``-`` and ``_``)."""
    properties: dict[str, Any] = {}
    aliases: dict[str, Any] = {}
    for option in options_of("check"):
        if option.project is False:  # only the caller may set it: not a key of the project's file
            continue
        properties[option.config_key] = {
            "description": f"{option.flag}: {option.help_for('check')}",
            **_value_schema(option),
        }
        if "-" in option.config_key:
            aliases[option.config_key.replace("-", "_")] = {
                "$ref": f"#/properties/{option.config_key}"
            }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _ID,
        "title": "[tool.sandboxverify] in pyproject.toml",
        "description": "The options of `sandboxverify check` a checked project may set, same names "
        "(- or _); the command line wins. Paths are relative to the pyproject.toml and stay inside "
        "the project. Keys that would widen what the project's code reaches or where "
        f"sandboxverify writes ({', '.join(_caller_only())}) come only from the command line or "
        "the caller's own configuration. Unknown keys are a configuration error.",
        "type": "object",
        "properties": {**properties, **aliases},
        "additionalProperties": False,
    }


def _value_schema(option: Option) -> dict[str, Any]:
    one = option.kind.schema()
    if isinstance(option.project, ProjectRule):
        one = option.project.schema(one)
    if not option.multiple:
        return one
    return {"oneOf": [one, {"type": "array", "items": one}]}


def render() -> str:
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_PATH.write_text(render(), encoding="utf-8")
