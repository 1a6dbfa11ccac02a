"""JSON Schema validation of tool-call arguments: a practical subset, with readable messages.

Every tool call of a playbook is checked against the tool's parameter schema, so this is a plain
recursive walk over schema and instance, with no compilation step (only compiled regular
expressions are cached). The supported keywords are:

- ``type`` (a name or a list of names), ``enum``, ``const``;
- objects: ``properties``, ``required``, ``additionalProperties`` (a boolean or a schema),
  ``patternProperties``, ``minProperties``, ``maxProperties``, ``dependentRequired``,
  ``dependentSchemas`` (and draft 7's ``dependencies``), ``propertyNames``;
- arrays: ``items`` (a schema, or the legacy list form for tuples, with ``additionalItems``),
  ``prefixItems``, ``minItems``, ``maxItems``, ``uniqueItems``, ``contains`` (with
  ``minContains``, ``maxContains``);
- strings: ``minLength``, ``maxLength``, ``pattern`` (Python's ``re.search``);
- numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum`` (the number
  forms), ``multipleOf``;
- combinators: ``anyOf``, ``oneOf``, ``allOf``, ``not``, ``if``/``then``/``else``;
- ``unevaluatedProperties`` and ``unevaluatedItems`` (after everything else applied there);
- ``$ref`` to a JSON pointer into the root schema (``#/$defs/Name``, ``#/definitions/Name``,
  ``#``); its sibling keywords apply too, as in draft 2020-12;
- boolean schemas: ``true`` accepts everything, ``false`` nothing.

Annotations (``title``, ``description``, ``default``, ``format``...) and unknown keywords are
ignored; the dynamic references (``$dynamicRef``, ``$recursiveRef``) are not supported and say
so as a violation: a schema using them fails loudly instead of passing unchecked. ``$id``,
``$anchor``, ``$schema`` and ``$vocabulary`` are not read: a ``$ref`` by URL, URN, relative path
or anchor cannot be resolved (a violation too), nor can a ``#/...`` one inside a subschema with
an ``$id`` of its own (where it would mean that subschema), and every keyword above applies
whatever metaschema ``$schema`` names. The official JSON Schema Test Suite checks all of this
(``tests/runtime/harness/test_validate_suite.py``). Following
draft 2020-12, a float with an integral value (``1.0``) is an ``integer``; Python's ``bool`` is
a ``boolean`` only, never an ``integer`` or a ``number``. Lists and tuples are arrays, mappings
are objects; anything else is not a JSON value and matches no ``type``.
A value of the wrong ``type`` gets the type message only: the other keywords would only repeat it.
A schema that cannot be used (an unresolvable ``$ref``, a bad ``pattern``, a subschema that is not
an object or a boolean) is reported as a violation, never silently skipped.

This module owns ``validate``, ``describe`` and the walk: what applies at any position (``$ref``,
``type``, ``enum``, ``const``, the combinators). The keywords of strings, numbers, arrays and
objects are in ``_keywords``, the unevaluated ones in ``_unevaluated``, ``$ref`` resolution in
``_refs``, JSON types, equality and how messages show values in ``_jsonvalues``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandboxverify.runtime.harness._jsonvalues import (
    SHOWN_CHARS,
    cut,
    has_type,
    json_key,
    json_text,
    show,
    show_plain,
    type_phrase,
)
from sandboxverify.runtime.harness._keywords import ROOT, Found, Here
from sandboxverify.runtime.harness._refs import MISSING, declared_types, resolve
from sandboxverify.runtime.harness._unevaluated import UnevaluatedChecks

#: keywords that change what is valid and that this validator does not implement
UNSUPPORTED = ("$dynamicRef", "$recursiveRef")


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


def validate(instance: object, schema: dict[str, Any]) -> list[SchemaViolation]:
    """All violations of ``schema`` by ``instance`` (an empty list: valid), in document order."""
    found = _Walk(schema).run(instance, schema, ROOT)
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


def _new_base(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` has an ``$id`` that sets a base URI (draft 7's ``"$id": "#name"`` only
    names the subschema)."""
    identifier = schema.get("$id")
    return isinstance(identifier, str) and not identifier.startswith("#")


# -- the walk --------------------------------------------------------------------------------------


class _Walk(UnevaluatedChecks):
    """One validation: the root schema (for $ref) and the violations found so far.

    What applies at any position is here (``$ref``, ``type``, ``enum``, ``const``, the
    combinators); the keywords of strings, numbers, arrays and objects come from
    :class:`KeywordChecks`.
    """

    __slots__ = ("out", "refused", "root")

    def __init__(self, root: object) -> None:
        self.root = root
        self.out: list[Found] = []
        self.refused: list[Found] = []

    def run(self, instance: object, schema: object, here: Here) -> list[Found]:
        self.check(instance, schema, here)
        return self.out

    def violations(self, instance: object, schema: object, here: Here) -> list[Found]:
        """What ``schema`` alone says about ``instance``, without reporting it (for anyOf...).

        Except a part of it that cannot be used: that is reported wherever it is met, or an
        unresolvable ``$ref`` in an ``anyOf`` alternative, a ``not`` or an ``if`` would only
        make it fail to match, and the instance could pass unchecked."""
        walk = _Walk(self.root)
        found = walk.run(instance, schema, here)
        self.out.extend(walk.refused)
        self.refused.extend(walk.refused)
        return found

    def check(self, instance: object, schema: object, here: Here) -> None:
        if schema is True:
            return
        if schema is False:
            self.report(here, "no value is allowed here")
            return
        if not isinstance(schema, dict):
            self.refuse(
                here, f"invalid schema: expected an object or a boolean, got {show(schema)}"
            )
            return
        if not schema:
            return
        for keyword in UNSUPPORTED:
            if keyword in schema:
                self.refuse(
                    here,
                    f"invalid schema: {keyword!r} is not supported by the harness's validator; "
                    "call with validate=False to send the arguments unchecked",
                )
        if _new_base(schema) and schema is not self.root:
            here = here._replace(embedded=True)
        if "$ref" in schema:
            self.check_ref(instance, schema["$ref"], here)
        declared = schema.get("type")
        if declared is not None and not has_type(instance, declared):
            self.report(here, f"expected {type_phrase(declared)}, got {show(instance)}")
            return
        if "enum" in schema:
            self.check_enum(instance, schema["enum"], here)
        if "const" in schema and json_key(instance) != json_key(schema["const"]):
            self.report(here, f"expected {show_plain(schema['const'])}, got {show(instance)}")
        if isinstance(instance, str):
            self.check_string(instance, schema, here)
        elif isinstance(instance, (int, float)) and not isinstance(instance, bool):
            self.check_number(instance, schema, here)
        elif isinstance(instance, (list, tuple)):
            self.check_array(instance, schema, here)
        elif isinstance(instance, Mapping):
            self.check_object(instance, schema, here)
        self.check_combinators(instance, schema, here)
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            self.check_unevaluated(instance, schema, here)

    def check_ref(self, instance: object, ref: object, here: Here) -> None:
        if not isinstance(ref, str):
            self.refuse(here, f"cannot resolve $ref {show_plain(ref)}")
            return
        if here.embedded:
            # its base URI is the subschema's $id, which the validator does not read: resolving
            # against the root could check the value against another schema of the same name
            self.refuse(here, f"cannot resolve $ref {ref!r} inside a subschema with its own $id")
            return
        if ref in here.refs:
            # A -> B -> A without descending into the instance would recurse forever
            self.refuse(here, f"circular $ref {ref!r}")
            return
        target = resolve(self.root, ref)
        if target is MISSING:
            self.refuse(here, f"cannot resolve $ref {ref!r}")
            return
        self.check(instance, target, here._replace(refs=(*here.refs, ref)))

    def check_enum(self, instance: object, allowed: object, here: Here) -> None:
        if not isinstance(allowed, list):
            self.refuse(here, f"invalid schema: 'enum' must be an array, got {show(allowed)}")
            return
        wanted = json_key(instance)
        if any(json_key(option) == wanted for option in allowed):
            return
        if len(allowed) == 1:
            self.report(here, f"expected {show_plain(allowed[0])}, got {show(instance)}")
        else:
            choices = cut(", ".join(json_text(option) for option in allowed), 2 * SHOWN_CHARS)
            self.report(here, f"expected one of {choices}, got {show(instance)}")

    def check_combinators(self, instance: object, schema: dict[str, Any], here: Here) -> None:
        every = schema.get("allOf")
        if isinstance(every, list):
            for sub in every:
                self.check(instance, sub, here)
        some = schema.get("anyOf")
        if isinstance(some, list):
            failures: list[list[Found]] = []
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
        if "if" in schema:
            branch = "then" if not self.violations(instance, schema["if"], here) else "else"
            if branch in schema:
                self.check(instance, schema[branch], here)
        if "not" in schema and not self.violations(instance, schema["not"], here):
            types = declared_types(schema["not"], self.root)
            if types is not None:
                self.report(here, f"must not be of type {type_phrase(types)}, got {show(instance)}")
            else:
                self.report(here, f"must not match the 'not' schema, got {show(instance)}")

    def no_match(
        self, instance: object, alternatives: list[Any], failures: list[list[Found]], here: Here
    ) -> None:
        """Say why no alternative of anyOf/oneOf matches: briefly, and pointing at the cause.

        When every alternative rejects the value's type, list the types. When exactly one accepts
        the type, its own (deeper) violations are the useful ones: ``/steps/1: expected string``.
        Else say how many shapes there were.
        """
        if not alternatives:
            self.refuse(here, "invalid schema: no alternatives to match")
            return
        fitting: list[int] = []
        wanted: list[str] = []
        for index, alternative in enumerate(alternatives):
            types = declared_types(alternative, self.root)
            if types is not None and not has_type(instance, types):
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
            detail = f"got {show(instance)}"
        else:
            detail = f"expected {type_phrase(wanted)}, got {show(instance)}"
        self.report(here, f"does not match {shapes} ({detail})")
