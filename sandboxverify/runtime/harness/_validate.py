"""JSON Schema validation of tool-call arguments: a practical subset, with readable messages.

Every tool call of a playbook is checked against the tool's parameter schema, so this is a plain
recursive walk over schema and instance, with no compilation step (only compiled regular
expressions are cached). The supported keywords are:

- ``type`` (a name or a list of names), ``enum``, ``const``;
- objects: ``properties``, ``required``, ``additionalProperties`` (a boolean or a schema),
  ``patternProperties``, ``minProperties``, ``maxProperties``;
- arrays: ``items`` (a schema, or the legacy list form for tuples, with ``additionalItems``),
  ``prefixItems``, ``minItems``, ``maxItems``, ``uniqueItems``;
- strings: ``minLength``, ``maxLength``, ``pattern`` (Python's ``re.search``);
- numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum`` (the number
  forms), ``multipleOf``;
- combinators: ``anyOf``, ``oneOf``, ``allOf``, ``not``;
- ``$ref`` to a JSON pointer into the root schema (``#/$defs/Name``, ``#/definitions/Name``,
  ``#``); its sibling keywords apply too, as in draft 2020-12;
- boolean schemas: ``true`` accepts everything, ``false`` nothing.

Annotations (``title``, ``description``, ``default``, ``format``...) and unknown keywords are
ignored. Following draft 2020-12, a float with an integral value (``1.0``) is an ``integer``;
Python's ``bool`` is a ``boolean`` only, never an ``integer`` or a ``number``. Lists and tuples
are arrays, mappings are objects; anything else is not a JSON value and matches no ``type``.
A value of the wrong ``type`` gets the type message only: the other keywords would only repeat it.
A schema that cannot be used (an unresolvable ``$ref``, a bad ``pattern``, a subschema that is not
an object or a boolean) is reported as a violation, never silently skipped.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple
from urllib.parse import unquote


@dataclass(frozen=True)
class SchemaViolation:
    """One thing wrong with an instance.

    ``path`` is a JSON pointer to the offending value (``""`` for the root, ``"/steps/0"``);
    ``message`` says what is wrong in JSON terms.
    """

    path: str
    message: str


#: How many violations ``describe`` spells out before summarising the rest.
DESCRIBED = 5
#: Values in messages are cut to about this many characters.
SHOWN_CHARS = 40

_MISSING = object()
_NO_SCHEMAS: dict[str, object] = {}


class _Here(NamedTuple):
    """Where the walk is: the JSON pointer, the position for sorting, the $refs followed here."""

    path: str
    #: indices of keys and items from the root: violations found through allOf, $ref or anyOf
    #: are put back in document order by sorting on it
    order: tuple[int, ...]
    #: the $refs followed at this position without descending into the instance (cycle guard)
    refs: tuple[str, ...]

    def child(self, key: str, index: int) -> _Here:
        escaped = key.replace("~", "~0").replace("/", "~1")
        return _Here(f"{self.path}/{escaped}", (*self.order, index), ())


_ROOT = _Here("", (), ())


class _Found(NamedTuple):
    order: tuple[int, ...]
    path: str
    message: str


def validate(instance: object, schema: dict[str, Any]) -> list[SchemaViolation]:
    """All violations of ``schema`` by ``instance`` (an empty list: valid), in document order."""
    found = _Walk(schema).run(instance, schema, _ROOT)
    if not found:
        return []
    # sort() is stable: at one position, violations keep the order their keywords were checked
    found.sort(key=lambda item: item.order)
    seen: set[tuple[str, str]] = set()
    violations: list[SchemaViolation] = []
    for _, path, message in found:
        # allOf branches and $ref siblings may find the same thing twice
        if (path, message) not in seen:
            seen.add((path, message))
            violations.append(SchemaViolation(path, message))
    return violations


def describe(violations: list[SchemaViolation]) -> str:
    """One readable line: ``"/title: expected string, got integer 3; /: missing ..."``.

    The root is shown as ``/``; after the first five violations, ``(and N more)``. An empty list
    gives an empty string.
    """
    shown = "; ".join(f"{v.path or '/'}: {v.message}" for v in violations[:DESCRIBED])
    rest = len(violations) - DESCRIBED
    return f"{shown} (and {rest} more)" if rest > 0 else shown


# -- the walk --------------------------------------------------------------------------------------


class _Walk:
    """One validation: the root schema (for $ref) and the violations found so far."""

    __slots__ = ("out", "root")

    def __init__(self, root: object) -> None:
        self.root = root
        self.out: list[_Found] = []

    def run(self, instance: object, schema: object, here: _Here) -> list[_Found]:
        self.check(instance, schema, here)
        return self.out

    def violations(self, instance: object, schema: object, here: _Here) -> list[_Found]:
        """What ``schema`` alone says about ``instance``, without reporting it (for anyOf...)."""
        return _Walk(self.root).run(instance, schema, here)

    def report(self, here: _Here, message: str) -> None:
        self.out.append(_Found(here.order, here.path, message))

    def check(self, instance: object, schema: object, here: _Here) -> None:
        if schema is True:
            return
        if schema is False:
            self.report(here, "no value is allowed here")
            return
        if not isinstance(schema, dict):
            self.report(
                here, f"invalid schema: expected an object or a boolean, got {_show(schema)}"
            )
            return
        if not schema:
            return
        if "$ref" in schema:
            self.check_ref(instance, schema["$ref"], here)
        declared = schema.get("type")
        if declared is not None and not _has_type(instance, declared):
            self.report(here, f"expected {_type_phrase(declared)}, got {_show(instance)}")
            return
        if "enum" in schema:
            self.check_enum(instance, schema["enum"], here)
        if "const" in schema and _key(instance) != _key(schema["const"]):
            self.report(here, f"expected {_show_plain(schema['const'])}, got {_show(instance)}")
        if isinstance(instance, str):
            self.check_string(instance, schema, here)
        elif isinstance(instance, (int, float)) and not isinstance(instance, bool):
            self.check_number(instance, schema, here)
        elif isinstance(instance, (list, tuple)):
            self.check_array(instance, schema, here)
        elif isinstance(instance, Mapping):
            self.check_object(instance, schema, here)
        self.check_combinators(instance, schema, here)

    def check_ref(self, instance: object, ref: object, here: _Here) -> None:
        if not isinstance(ref, str):
            self.report(here, f"cannot resolve $ref {_show_plain(ref)}")
            return
        if ref in here.refs:
            # A -> B -> A without descending into the instance would recurse forever
            self.report(here, f"circular $ref {ref!r}")
            return
        target = _resolve(self.root, ref)
        if target is _MISSING:
            self.report(here, f"cannot resolve $ref {ref!r}")
            return
        self.check(instance, target, here._replace(refs=(*here.refs, ref)))

    def check_enum(self, instance: object, allowed: object, here: _Here) -> None:
        if not isinstance(allowed, list):
            self.report(here, f"invalid schema: 'enum' must be an array, got {_show(allowed)}")
            return
        wanted = _key(instance)
        if any(_key(option) == wanted for option in allowed):
            return
        if len(allowed) == 1:
            self.report(here, f"expected {_show_plain(allowed[0])}, got {_show(instance)}")
        else:
            choices = _cut(", ".join(_json_text(option) for option in allowed), 2 * SHOWN_CHARS)
            self.report(here, f"expected one of {choices}, got {_show(instance)}")

    def check_string(self, instance: str, schema: dict[str, Any], here: _Here) -> None:
        length = len(instance)  # code points, as JSON Schema counts them
        least = _number(schema, "minLength")
        if least is not None and length < least:
            self.report(here, f"expected at least {_count(least, 'character')}, got {length}")
        most = _number(schema, "maxLength")
        if most is not None and length > most:
            self.report(here, f"expected at most {_count(most, 'character')}, got {length}")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            compiled = self.compile(pattern, here)
            if compiled is not None and not compiled.search(instance):
                self.report(here, f"{_show(instance)} does not match pattern {pattern!r}")

    def compile(self, pattern: str, here: _Here) -> re.Pattern[str] | None:
        try:
            return _compile(pattern)
        except re.error as exc:
            self.report(here, f"invalid schema: pattern {pattern!r}: {exc}")
            return None

    def check_number(self, instance: float, schema: dict[str, Any], here: _Here) -> None:
        shown = _show_plain(instance)
        bound = _number(schema, "minimum")
        if bound is not None and instance < bound:
            self.report(here, f"expected at least {_show_plain(bound)}, got {shown}")
        bound = _number(schema, "maximum")
        if bound is not None and instance > bound:
            self.report(here, f"expected at most {_show_plain(bound)}, got {shown}")
        # the draft-4 boolean forms are bools, which _number skips: they are ignored
        bound = _number(schema, "exclusiveMinimum")
        if bound is not None and instance <= bound:
            self.report(here, f"expected more than {_show_plain(bound)}, got {shown}")
        bound = _number(schema, "exclusiveMaximum")
        if bound is not None and instance >= bound:
            self.report(here, f"expected less than {_show_plain(bound)}, got {shown}")
        step = _number(schema, "multipleOf")
        if step is not None and step > 0 and not _is_multiple(instance, step):
            self.report(here, f"expected a multiple of {_show_plain(step)}, got {shown}")

    def check_array(
        self, instance: list[Any] | tuple[Any, ...], schema: dict[str, Any], here: _Here
    ) -> None:
        size = len(instance)
        least = _number(schema, "minItems")
        if least is not None and size < least:
            self.report(here, f"expected at least {_count(least, 'item')}, got {size}")
        most = _number(schema, "maxItems")
        if most is not None and size > most:
            self.report(here, f"expected at most {_count(most, 'item')}, got {size}")
        if schema.get("uniqueItems") is True:
            first_at: dict[object, int] = {}
            for index, item in enumerate(instance):
                earlier = first_at.setdefault(_key(item), index)
                if earlier != index:
                    self.report(
                        here, f"expected unique items, but item {index} equals item {earlier}"
                    )
        prefix = schema.get("prefixItems")
        rest = schema.get("items")
        if isinstance(rest, list):  # the legacy tuple form (draft 4 to 2019-09)
            if prefix is None:
                prefix = rest
            rest = schema.get("additionalItems")
        if not isinstance(prefix, list):
            prefix = []
        if not prefix and rest is None:
            return
        for index, item in enumerate(instance):
            if index < len(prefix):
                item_schema = prefix[index]
            elif rest is not None:
                item_schema = rest
            else:
                break
            self.check(item, item_schema, here.child(str(index), index))

    def check_object(
        self, instance: Mapping[Any, Any], schema: dict[str, Any], here: _Here
    ) -> None:
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if name not in instance:
                    self.report(here, f"missing required property {name!r}")
        size = len(instance)
        least = _number(schema, "minProperties")
        if least is not None and size < least:
            self.report(here, f"expected at least {_count(least, 'property')}, got {size}")
        most = _number(schema, "maxProperties")
        if most is not None and size > most:
            self.report(here, f"expected at most {_count(most, 'property')}, got {size}")
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            properties = _NO_SCHEMAS
        patterns = schema.get("patternProperties")
        if not isinstance(patterns, dict):
            patterns = _NO_SCHEMAS
        extra = schema.get("additionalProperties", True)
        if not properties and not patterns and extra is True:
            return
        unexpected: list[str] = []
        for index, (key, value) in enumerate(instance.items()):
            name = key if isinstance(key, str) else str(key)
            known = name in properties
            if known:
                self.check(value, properties[name], here.child(name, index))
            for pattern, pattern_schema in patterns.items():
                compiled = self.compile(pattern, here)
                if compiled is not None and compiled.search(name):
                    known = True
                    self.check(value, pattern_schema, here.child(name, index))
            if known or extra is True:
                continue
            if extra is False:
                unexpected.append(name)
            else:
                self.check(value, extra, here.child(name, index))
        if unexpected:
            # suggest only declared properties the instance lacks: those are what a typo misses
            absent = [name for name in properties if name not in instance]
            for name in unexpected:
                close = difflib.get_close_matches(name, absent, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.report(here, f"unexpected property {name!r}{hint}")

    def check_combinators(self, instance: object, schema: dict[str, Any], here: _Here) -> None:
        every = schema.get("allOf")
        if isinstance(every, list):
            for sub in every:
                self.check(instance, sub, here)
        some = schema.get("anyOf")
        if isinstance(some, list):
            failures: list[list[_Found]] = []
            for sub in some:
                found = self.violations(instance, sub, here)
                if not found:
                    break  # the first match settles it
                failures.append(found)
            else:
                self.no_match(instance, some, failures, here)
        one = schema.get("oneOf")
        if isinstance(one, list):
            failures = [self.violations(instance, sub, here) for sub in one]
            matched = [index for index, found in enumerate(failures) if not found]
            if not matched:
                self.no_match(instance, one, failures, here)
            elif len(matched) > 1:
                which = " and ".join(str(index) for index in matched)
                self.report(
                    here,
                    f"matches {len(matched)} of the {len(one)} allowed shapes"
                    f" (alternatives {which}), but must match exactly one",
                )
        if "not" in schema and not self.violations(instance, schema["not"], here):
            types = _declared_types(schema["not"], self.root)
            if types is not None:
                self.report(
                    here, f"must not be of type {_type_phrase(types)}, got {_show(instance)}"
                )
            else:
                self.report(here, f"must not match the 'not' schema, got {_show(instance)}")

    def no_match(
        self, instance: object, alternatives: list[Any], failures: list[list[_Found]], here: _Here
    ) -> None:
        """Say why no alternative of anyOf/oneOf matches: briefly, and pointing at the cause.

        When every alternative rejects the value's type, list the types. When exactly one accepts
        the type, its own (deeper) violations are the useful ones: ``/steps/1: expected string``.
        Else say how many shapes there were.
        """
        if not alternatives:
            self.report(here, "invalid schema: no alternatives to match")
            return
        fitting: list[int] = []
        wanted: list[str] = []
        for index, alternative in enumerate(alternatives):
            types = _declared_types(alternative, self.root)
            if types is not None and not _has_type(instance, types):
                wanted.extend(name for name in types if name not in wanted)
            else:
                fitting.append(index)
        if len(fitting) == 1:
            self.out.extend(failures[fitting[0]])
            return
        if len(alternatives) == 1:
            shapes = "the only allowed shape"
        else:
            shapes = f"any of the {len(alternatives)} allowed shapes"
        if fitting:
            detail = f"got {_show(instance)}"
        else:
            detail = f"expected {_type_phrase(wanted)}, got {_show(instance)}"
        self.report(here, f"does not match {shapes} ({detail})")


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _number(schema: dict[str, Any], keyword: str) -> float | None:
    """A keyword's numeric value; None when absent or not a number (a schema mistake: ignored)."""
    value = schema.get(keyword)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def _is_multiple(value: float, step: float) -> bool:
    if not (math.isfinite(value) and math.isfinite(step)):
        return False
    # Exact arithmetic on the shortest decimal spelling, so 0.3 is a multiple of 0.1 as the
    # JSON text says (binary floats would give 0.3 / 0.1 = 2.9999999999999996).
    return _fraction(value) % _fraction(step) == 0


def _fraction(number: float) -> Fraction:
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _resolve(root: object, ref: str) -> object:
    """The part of the root schema a local ``$ref`` points at, or ``_MISSING``."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return _MISSING  # remote references are out of scope: tool schemas are self-contained
    node = root
    for token in ref[2:].split("/"):
        name = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and name in node:
            node = node[name]
        elif isinstance(node, list) and name.isdigit() and int(name) < len(node):
            node = node[int(name)]
        else:
            return _MISSING
    return node


def _declared_types(schema: object, root: object) -> list[str] | None:
    """The ``type`` names a schema declares (following ``$ref``), or None when it declares none."""
    for _ in range(16):  # a bounded walk: circular references are reported elsewhere
        if not isinstance(schema, dict):
            return None
        declared = schema.get("type")
        if isinstance(declared, str):
            return [declared]
        if isinstance(declared, list):
            return [str(name) for name in declared]
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return None
        schema = _resolve(root, ref)
    return None


# -- JSON types and values -------------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_type(instance: object, declared: object) -> bool:
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


def _key(value: object) -> object:
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
        return ("array", tuple(_key(item) for item in value))
    if isinstance(value, Mapping):
        return ("object", frozenset((str(k), _key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("python", id(value))
    return ("python", value)


def _type_phrase(declared: object) -> str:
    """``string``, ``string or null``, ``string, integer or null``."""
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        return _show_plain(declared)
    texts = [str(name) for name in names]
    if len(texts) == 1:
        return texts[0]
    return f"{', '.join(texts[:-1])} or {texts[-1]}"


def _show(value: object) -> str:
    """The value with its JSON type: ``integer 3``, ``string "abc"``, ``null``."""
    kind = _json_type(value)
    if kind == "null":
        return "null"
    if kind is None:
        return f"{type(value).__qualname__} {_cut(repr(value), SHOWN_CHARS)} (not a JSON value)"
    return f"{kind} {_show_plain(value)}"


def _show_plain(value: object) -> str:
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        value = value[:SHOWN_CHARS]  # don't serialise a megabyte to show forty characters
    return _cut(_json_text(value), SHOWN_CHARS)


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _count(number: object, noun: str) -> str:
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{_show_plain(number)} {noun if number == 1 else plural}"
