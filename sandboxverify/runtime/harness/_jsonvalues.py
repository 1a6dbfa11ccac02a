"""JSON values as the schema validator sees them: types, JSON equality, how messages show them.

Following draft 2020-12, a float with an integral value (``1.0``) is an ``integer``; Python's
``bool`` is a ``boolean`` only, never an ``integer`` or a ``number``. Lists and tuples are arrays,
mappings are objects; anything else is not a JSON value and matches no ``type``. Messages show a
value with its JSON type (``integer 3``, ``string "abc"``), cut to about :data:`SHOWN_CHARS`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

#: Values in messages are cut to about this many characters.
SHOWN_CHARS = 40


# -- JSON types and equality -----------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def has_type(instance: object, declared: object) -> bool:
    """Whether ``instance`` is of the ``type`` a schema declares (a name or a list of names)."""
    if isinstance(declared, str):
        return _is_type(instance, declared)
    if isinstance(declared, list):
        return any(isinstance(name, str) and _is_type(instance, name) for name in declared)
    return True  # a malformed "type" constrains nothing


def _is_type(instance: object, name: str) -> bool:
    if name == "string":
        return isinstance(instance, str)
    if name == "object":
        return isinstance(instance, Mapping)
    if name == "integer":
        if isinstance(instance, float):
            return instance.is_integer()  # draft 2020-12: 1.0 is an integer
        return isinstance(instance, int) and not isinstance(instance, bool)
    if name == "number":
        return _is_number(instance)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "array":
        return isinstance(instance, (list, tuple))
    if name == "null":
        return instance is None
    return False  # unknown type names ("int", "any") match nothing


def _json_type(value: object) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return None


def json_key(value: object) -> object:
    """A hashable stand-in with JSON equality, for enum, const and uniqueItems.

    ``1`` equals ``1.0`` but not ``true``; a list equals a tuple with the same items; object key
    order does not matter.
    """
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)  # 1 and 1.0 are equal and hash alike
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ("array", tuple(json_key(item) for item in value))
    if isinstance(value, Mapping):
        return ("object", frozenset((str(k), json_key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("python", id(value))
    return ("python", value)


# -- values in messages ----------------------------------------------------------------------------


def type_phrase(declared: object) -> str:
    """``string``, ``string or null``, ``string, integer or null``."""
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        return show_plain(declared)
    texts = [str(name) for name in names]
    if len(texts) == 1:
        return texts[0]
    return f"{', '.join(texts[:-1])} or {texts[-1]}"


def show(value: object) -> str:
    """The value with its JSON type: ``integer 3``, ``string "abc"``, ``null``."""
    kind = _json_type(value)
    if kind == "null":
        return "null"
    if kind is None:
        return f"{type(value).__qualname__} {cut(repr(value), SHOWN_CHARS)} (not a JSON value)"
    return f"{kind} {show_plain(value)}"


def show_plain(value: object) -> str:
    """The value as (shortened) JSON text, without its type: ``3``, ``"abc"``."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        value = value[:SHOWN_CHARS]  # don't serialise a megabyte to show forty characters
    return cut(json_text(value), SHOWN_CHARS)


def json_text(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(value)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def count(number: object, noun: str) -> str:
    """``1 item``, ``3 items``, ``2 properties``."""
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{show_plain(number)} {noun if number == 1 else plural}"
