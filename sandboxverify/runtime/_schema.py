"""JSON Schema for a tool's parameters, derived from the tool function's signature."""

from __future__ import annotations

import enum
import inspect
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Callable

JsonSchema = dict[str, Any]

#: The parameter through which a tool receives its call context; never part of the schema.
CONTEXT_PARAMETER = "ctx"

_SCALARS: dict[Any, JsonSchema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string"},
}

if sys.version_info >= (3, 10):
    from types import UnionType

    _UNION_TYPES: tuple[Any, ...] = (typing.Union, UnionType)
else:  # pragma: no cover - exercised on 3.9 sandboxes only
    _UNION_TYPES = (typing.Union,)


def schema_from_signature(fn: Callable[..., Any], *, tool_name: str) -> JsonSchema:
    """An object schema with one property per keyword parameter of ``fn``.

    Parameters without a default are required; ``ctx`` is skipped; ``**kwargs`` allows extra
    properties. A positional-only parameter cannot receive a keyword argument, so it is an error.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool {tool_name!r}: cannot read the signature of {fn!r}: {exc}") from exc
    hints = _type_hints(fn)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    extra_allowed = False
    for parameter in signature.parameters.values():
        if parameter.name == CONTEXT_PARAMETER:
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            extra_allowed = True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"tool {tool_name!r}: parameter {parameter.name!r} is positional-only, "
                "but tools receive their arguments as keywords"
            )
        annotation = hints.get(parameter.name, parameter.annotation)
        schema = type_schema(annotation)
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
        elif _is_json_value(parameter.default):
            schema = {**schema, "default": parameter.default}
        properties[parameter.name] = schema
    result: JsonSchema = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    result["additionalProperties"] = extra_allowed
    return result


def wants_context(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` declares the ``ctx`` parameter."""
    try:
        return CONTEXT_PARAMETER in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def type_schema(annotation: Any) -> JsonSchema:
    """The JSON Schema for one type annotation; ``{}`` (anything) when it cannot be mapped."""
    if annotation is inspect.Parameter.empty or annotation is Any or isinstance(annotation, str):
        return {}
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in _UNION_TYPES:
        options = [type_schema(arg) for arg in args]
        if any(option == {} for option in options):
            return {}
        return {"anyOf": options}
    if origin is typing.Annotated:
        return type_schema(args[0])
    container = origin or annotation
    if inspect.isclass(container):
        if issubclass(container, (str, bytes)):
            return {"type": "string"}
        if issubclass(container, Mapping) or container is dict:
            schema: JsonSchema = {"type": "object"}
            if len(args) == 2 and type_schema(args[1]):
                schema["additionalProperties"] = type_schema(args[1])
            return schema
        if issubclass(container, tuple) and args and args[-1] is not Ellipsis:
            return {
                "type": "array",
                "prefixItems": [type_schema(arg) for arg in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if issubclass(container, (Sequence, set, frozenset)) or container in (list, tuple, set):
            schema = {"type": "array"}
            if args and type_schema(args[0]):
                schema["items"] = type_schema(args[0])
            return schema
    return {}


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations; when the whole set cannot be resolved (``list[str] | None`` as a
    string on Python 3.9), each parameter is resolved on its own so one bad hint costs only its
    own schema."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target)
    except Exception:
        pass
    annotations = getattr(target, "__annotations__", None) or {}
    namespace = getattr(target, "__globals__", {})
    resolved: dict[str, Any] = {}
    for name, annotation in annotations.items():
        if not isinstance(annotation, str):
            resolved[name] = annotation
            continue
        try:
            resolved[name] = eval(annotation, dict(namespace))
        except Exception:  # unresolvable on this Python: the parameter accepts anything
            continue
    return resolved


def _is_json_value(value: object) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_json_value(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_value(v) for k, v in value.items())
    return False
