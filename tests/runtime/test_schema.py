from __future__ import annotations

import enum
from typing import Any, Dict, List, Literal, Optional, Tuple

from sandboxverify.runtime._schema import schema_from_signature, type_schema


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_scalars_containers_and_unions() -> None:
    assert type_schema(str) == {"type": "string"}
    assert type_schema(int) == {"type": "integer"}
    assert type_schema(float) == {"type": "number"}
    assert type_schema(bool) == {"type": "boolean"}
    assert type_schema(List[int]) == {"type": "array", "items": {"type": "integer"}}
    assert type_schema(list) == {"type": "array"}
    assert type_schema(Dict[str, int]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert type_schema(Optional[str]) == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert type_schema(Literal["a", "b"]) == {"enum": ["a", "b"]}
    assert type_schema(Colour) == {"enum": ["red", "blue"]}
    assert type_schema(Tuple[int, str])["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert type_schema(Any) == {}
    assert type_schema(Optional[Any]) == {}


def test_signature_required_defaults_kwargs_and_ctx() -> None:
    def tool(
        query: str,
        limit: int = 10,
        *,
        tags: Optional[List[str]] = None,
        ctx: Any = None,
        **extra: Any,
    ) -> None: ...

    assert schema_from_signature(tool, tool_name="t") == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["query"],
        "additionalProperties": True,
    }


def test_unresolvable_hints_cost_only_their_own_parameter() -> None:
    def tool(a: int, b: "NoSuchType") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    schema = schema_from_signature(tool, tool_name="t")
    assert schema["properties"] == {"a": {"type": "integer"}, "b": {}}


def test_callable_objects() -> None:
    class Tool:
        def __call__(self, text: str) -> str:
            return text

    assert schema_from_signature(Tool(), tool_name="t")["properties"] == {
        "text": {"type": "string"}
    }
