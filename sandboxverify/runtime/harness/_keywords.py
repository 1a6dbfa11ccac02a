"""The schema keywords of each instance type: strings, numbers, arrays and objects.

:class:`KeywordChecks` holds them as methods of the validator's walk (``_validate._Walk``), which
calls the family that fits the instance and lends back ``check`` to descend into items and
property values. Here too are the walk's position (:class:`Here`) and what it finds
(:class:`Found`). A numeric keyword that is not a number is a schema mistake and is ignored; a
``pattern`` that does not compile is reported.

Arrays: ``items``, ``prefixItems``, ``additionalItems``, ``contains`` (with ``minContains`` and
``maxContains``), ``minItems``, ``maxItems``, ``uniqueItems``. Objects: ``properties``,
``patternProperties``, ``additionalProperties``, ``required``, ``dependentRequired``,
``dependentSchemas`` (and draft 7's ``dependencies``, either form), ``propertyNames``,
``minProperties``, ``maxProperties``.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, NamedTuple

from sandboxverify.runtime.harness._jsonvalues import count, json_key, show, show_plain

_NO_SCHEMAS: dict[str, object] = {}


class Here(NamedTuple):
    """Where the walk is: the JSON pointer, the position for sorting, the $refs followed here."""

    path: str
    #: indices of keys and items from the root: violations found through allOf, $ref or anyOf
    #: are put back in document order by sorting on it
    order: tuple[int, ...]
    #: the $refs followed at this position without descending into the instance (cycle guard)
    refs: tuple[str, ...]
    #: within a subschema with an ``$id`` of its own, where ``#/...`` means that subschema
    embedded: bool = False

    def child(self, key: str, index: int) -> Here:
        escaped = key.replace("~", "~0").replace("/", "~1")
        return Here(f"{self.path}/{escaped}", (*self.order, index), (), self.embedded)


ROOT = Here("", (), ())


class Found(NamedTuple):
    order: tuple[int, ...]
    path: str
    message: str


class KeywordChecks:
    """The keyword families of one instance type, mixed into the walk.

    The walk provides ``check`` (one instance against one subschema) and keeps the violations
    found in ``out``.
    """

    __slots__ = ()

    out: list[Found]
    #: what of ``out`` says a schema cannot be used
    refused: list[Found]

    def check(self, instance: object, schema: object, here: Here) -> None:
        raise NotImplementedError  # the walk's own

    def violations(self, instance: object, schema: object, here: Here) -> list[Found]:
        raise NotImplementedError  # the walk's own

    def report(self, here: Here, message: str) -> None:
        self.out.append(Found(here.order, here.path, message))

    def refuse(self, here: Here, message: str) -> None:
        """Report that the schema cannot be used here (``invalid schema: ...``, an unresolvable
        ``$ref``): a violation whatever the instance, wherever the walk meets it."""
        found = Found(here.order, here.path, message)
        self.out.append(found)
        self.refused.append(found)

    def check_string(self, instance: str, schema: dict[str, Any], here: Here) -> None:
        length = len(instance)  # code points, as JSON Schema counts them
        least = _number(schema, "minLength")
        if least is not None and length < least:
            self.report(here, f"expected at least {count(least, 'character')}, got {length}")
        most = _number(schema, "maxLength")
        if most is not None and length > most:
            self.report(here, f"expected at most {count(most, 'character')}, got {length}")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            compiled = self.compile(pattern, here)
            if compiled is not None and not compiled.search(instance):
                self.report(here, f"{show(instance)} does not match pattern {pattern!r}")

    def compile(self, pattern: str, here: Here) -> re.Pattern[str] | None:
        try:
            return _compile(pattern)
        except re.error as exc:
            self.refuse(here, f"invalid schema: pattern {pattern!r}: {exc}")
            return None

    def check_number(self, instance: float, schema: dict[str, Any], here: Here) -> None:
        shown = show_plain(instance)
        bound = _number(schema, "minimum")
        if bound is not None and instance < bound:
            self.report(here, f"expected at least {show_plain(bound)}, got {shown}")
        bound = _number(schema, "maximum")
        if bound is not None and instance > bound:
            self.report(here, f"expected at most {show_plain(bound)}, got {shown}")
        # the draft-4 boolean forms are bools, which _number skips: they are ignored
        bound = _number(schema, "exclusiveMinimum")
        if bound is not None and instance <= bound:
            self.report(here, f"expected more than {show_plain(bound)}, got {shown}")
        bound = _number(schema, "exclusiveMaximum")
        if bound is not None and instance >= bound:
            self.report(here, f"expected less than {show_plain(bound)}, got {shown}")
        step = _number(schema, "multipleOf")
        if step is not None and step > 0 and not _is_multiple(instance, step):
            self.report(here, f"expected a multiple of {show_plain(step)}, got {shown}")

    def check_array(
        self, instance: list[Any] | tuple[Any, ...], schema: dict[str, Any], here: Here
    ) -> None:
        size = len(instance)
        least = _number(schema, "minItems")
        if least is not None and size < least:
            self.report(here, f"expected at least {count(least, 'item')}, got {size}")
        most = _number(schema, "maxItems")
        if most is not None and size > most:
            self.report(here, f"expected at most {count(most, 'item')}, got {size}")
        if schema.get("uniqueItems") is True:
            first_at: dict[object, int] = {}
            for index, item in enumerate(instance):
                earlier = first_at.setdefault(json_key(item), index)
                if earlier != index:
                    self.report(
                        here, f"expected unique items, but item {index} equals item {earlier}"
                    )
        if "contains" in schema:
            self.check_contains(instance, schema, here)
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

    def check_contains(
        self, instance: list[Any] | tuple[Any, ...], schema: dict[str, Any], here: Here
    ) -> None:
        matching = sum(
            1
            for index, item in enumerate(instance)
            if not self.violations(item, schema["contains"], here.child(str(index), index))
        )
        least = _number(schema, "minContains")
        least = 1 if least is None else least
        most = _number(schema, "maxContains")
        if matching < least:
            if least == 1:
                self.report(here, "expected an item matching 'contains', got none")
            else:
                self.report(
                    here,
                    f"expected at least {count(least, 'item')} matching 'contains', got {matching}",
                )
        if most is not None and matching > most:
            self.report(
                here, f"expected at most {count(most, 'item')} matching 'contains', got {matching}"
            )

    def check_object(self, instance: Mapping[Any, Any], schema: dict[str, Any], here: Here) -> None:
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if name not in instance:
                    self.report(here, f"missing required property {name!r}")
        self.check_dependencies(instance, schema, here)
        names = schema.get("propertyNames")
        if names is not None:
            for key in instance:
                for found in self.violations(str(key), names, here):
                    if found not in self.refused:  # reported as it is
                        self.report(here, f"property name {str(key)!r}: {found.message}")
        size = len(instance)
        least = _number(schema, "minProperties")
        if least is not None and size < least:
            self.report(here, f"expected at least {count(least, 'property')}, got {size}")
        most = _number(schema, "maxProperties")
        if most is not None and size > most:
            self.report(here, f"expected at most {count(most, 'property')}, got {size}")
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

    def check_dependencies(
        self, instance: Mapping[Any, Any], schema: dict[str, Any], here: Here
    ) -> None:
        """``dependentRequired``, ``dependentSchemas`` and draft 7's ``dependencies`` (a list is
        required names, anything else a schema): what a present property brings with it."""
        for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
            table = schema.get(keyword)
            if not isinstance(table, dict):
                continue
            for trigger, needs in table.items():
                if trigger not in instance:
                    continue
                if isinstance(needs, list):
                    for name in needs:
                        if name not in instance:
                            self.report(
                                here, f"missing property {name!r}, required when {trigger!r} is"
                            )
                else:
                    self.check(instance, needs, here)


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
