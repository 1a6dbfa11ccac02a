from __future__ import annotations

from typing import Any

import pytest

from sandboxverify.runtime.harness._validate import SchemaViolation, describe, validate

V = SchemaViolation

# what schema_from_signature makes of: def tool(title: str, steps: list[str] | None = None)
SIGNATURE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "steps": {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
            "default": None,
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}


def messages(instance: object, schema: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v.path, v.message) for v in validate(instance, schema)]


# (schema, valid instance, invalid instance, the one violation of the invalid instance at the root)
KEYWORDS: list[tuple[dict[str, Any], object, object, str]] = [
    ({"type": "string"}, "a", 3, "expected string, got integer 3"),
    ({"type": "integer"}, 3, 3.5, "expected integer, got number 3.5"),
    ({"type": "number"}, 3, "3", 'expected number, got string "3"'),
    ({"type": "boolean"}, False, 0, "expected boolean, got integer 0"),
    ({"type": "null"}, None, 0, "expected null, got integer 0"),
    ({"type": "array"}, (1, 2), {}, "expected array, got object {}"),
    ({"type": "object"}, {}, [], "expected object, got array []"),
    ({"type": ["string", "null"]}, None, 3, "expected string or null, got integer 3"),
    (
        {"type": ["string", "integer", "null"]},
        1,
        [],
        "expected string, integer or null, got array []",
    ),
    ({"type": "string"}, "", b"x", "expected string, got bytes b'x' (not a JSON value)"),
    ({"enum": ["a", "b"]}, "b", "c", 'expected one of "a", "b", got string "c"'),
    ({"enum": ["only"]}, "only", "c", 'expected "only", got string "c"'),
    ({"enum": [1, None]}, 1.0, True, "expected one of 1, null, got boolean true"),
    ({"const": {"a": [1]}}, {"a": (1,)}, {"a": [2]}, 'expected {"a": [1]}, got object {"a": [2]}'),
    ({"const": None}, None, False, "expected null, got boolean false"),
    ({"required": ["a"]}, {"a": 1}, {"b": 1}, "missing required property 'a'"),
    ({"minProperties": 1}, {"a": 1}, {}, "expected at least 1 property, got 0"),
    ({"maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}, "expected at most 1 property, got 2"),
    ({"minItems": 2}, [1, 2], [1], "expected at least 2 items, got 1"),
    ({"maxItems": 1}, [1], [1, 2], "expected at most 1 item, got 2"),
    ({"uniqueItems": True}, [1, True], [1, 1.0], "expected unique items, but item 1 equals item 0"),
    ({"minLength": 2}, "ab", "a", "expected at least 2 characters, got 1"),
    ({"maxLength": 1}, "é", "ab", "expected at most 1 character, got 2"),
    ({"pattern": "^[a-z]+$"}, "abc", "aBc", "string \"aBc\" does not match pattern '^[a-z]+$'"),
    ({"pattern": "b"}, "abc", "xyz", "string \"xyz\" does not match pattern 'b'"),
    ({"minimum": 1}, 1, 0, "expected at least 1, got 0"),
    ({"maximum": 1.5}, 1.5, 2, "expected at most 1.5, got 2"),
    ({"exclusiveMinimum": 0}, 0.1, 0, "expected more than 0, got 0"),
    ({"exclusiveMaximum": 10}, 9, 10, "expected less than 10, got 10"),
    ({"multipleOf": 0.1}, 0.3, 0.35, "expected a multiple of 0.1, got 0.35"),
    ({"multipleOf": 3}, 9, 10, "expected a multiple of 3, got 10"),
    ({"not": {"type": "null"}}, 0, None, "must not be of type null, got null"),
    ({"not": {"enum": [1]}}, 2, 1, "must not match the 'not' schema, got integer 1"),
    ({"allOf": [{"minimum": 0}, {"maximum": 5}]}, 3, 6, "expected at most 5, got 6"),
    (
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        None,
        3,
        "does not match any of the 2 allowed shapes (expected string or null, got integer 3)",
    ),
    (
        {"anyOf": [{"minimum": 5}, {"maximum": 0}, {"type": "string"}]},
        6,
        3,
        "does not match any of the 3 allowed shapes (got integer 3)",
    ),
    (
        {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
        1,
        "1",
        'does not match any of the 2 allowed shapes (expected integer or boolean, got string "1")',
    ),
    (
        {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
        -1,
        1,
        "matches 2 of the 2 allowed shapes (alternatives 0 and 1), but must match exactly one",
    ),
    (
        {"$ref": "#/$defs/Name", "$defs": {"Name": {"type": "string"}}},
        "n",
        1,
        "expected string, got integer 1",
    ),
    (
        {"$ref": "#/definitions/N", "definitions": {"N": {"minimum": 2}}},
        2,
        1,
        "expected at least 2, got 1",
    ),
    ({"additionalProperties": False}, {}, {"x": 1}, "unexpected property 'x'"),
]


@pytest.mark.parametrize(("schema", "valid", "invalid", "message"), KEYWORDS)
def test_each_keyword_accepts_and_rejects(
    schema: dict[str, Any], valid: object, invalid: object, message: str
) -> None:
    assert validate(valid, schema) == []
    assert validate(invalid, schema) == [V("", message)]


def test_bool_is_never_an_integer_or_a_number_but_integral_floats_are_integers() -> None:
    assert messages(True, {"type": "integer"}) == [("", "expected integer, got boolean true")]
    assert messages(False, {"type": "number"}) == [("", "expected number, got boolean false")]
    assert validate(1.0, {"type": "integer"}) == []
    assert validate(3, {"type": "number"}) == []
    # a bool is not measured against numeric bounds either
    assert validate(True, {"minimum": 5}) == []
    assert messages(1, {"enum": [True]}) == [("", "expected true, got integer 1")]


def test_annotations_and_unknown_keywords_are_ignored() -> None:
    schema = {
        "title": "T",
        "description": "d",
        "default": 1,
        "examples": [1],
        "format": "email",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "x",
        "$comment": "c",
        "deprecated": True,
        "readOnly": True,
        "writeOnly": True,
        "x-vendor": {"type": "string"},
    }
    assert validate("not an email", schema) == []


def test_boolean_schemas() -> None:
    assert validate({"anything": [1]}, {"properties": {"a": True}}) == []
    assert messages({"a": 1}, {"properties": {"a": False}}) == [("/a", "no value is allowed here")]
    assert messages([1, 2], {"prefixItems": [True], "items": False}) == [
        ("/1", "no value is allowed here")
    ]


def test_a_wrong_type_gets_only_the_type_message() -> None:
    schema = {"type": "string", "enum": ["a"], "minLength": 2}
    assert messages(3, schema) == [("", "expected string, got integer 3")]


def test_type_specific_keywords_ignore_other_types() -> None:
    schema = {"minLength": 5, "minimum": 5, "minItems": 5, "required": ["x"], "pattern": "z"}
    for instance in ("zzzzz", 5, [1, 2, 3, 4, 5], {"x": 1}, None, True):
        assert validate(instance, schema) == [], instance


def test_properties_pattern_properties_and_additional_properties() -> None:
    schema = {
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"},
    }
    assert validate({"name": "n", "x-a": 1, "other": True}, schema) == []
    assert messages({"name": 1, "x-a": "1", "other": 1}, schema) == [
        ("/name", "expected string, got integer 1"),
        ("/x-a", 'expected integer, got string "1"'),
        ("/other", "expected boolean, got integer 1"),
    ]


def test_did_you_mean_suggests_only_declared_properties_the_instance_lacks() -> None:
    assert messages({"titel": "x"}, SIGNATURE_SCHEMA) == [
        ("", "missing required property 'title'"),
        ("", "unexpected property 'titel' (did you mean 'title'?)"),
    ]
    # "title" is there already: "titel" is an extra, not a typo of it
    assert messages({"title": "x", "titel": "x"}, SIGNATURE_SCHEMA) == [
        ("", "unexpected property 'titel'"),
    ]
    assert messages({"title": "x", "zzz": 1}, SIGNATURE_SCHEMA) == [
        ("", "unexpected property 'zzz'"),
    ]


def test_the_signature_schema() -> None:
    assert validate({"title": "t"}, SIGNATURE_SCHEMA) == []
    assert validate({"title": "t", "steps": None}, SIGNATURE_SCHEMA) == []
    assert validate({"title": "t", "steps": ["a", "b"]}, SIGNATURE_SCHEMA) == []
    assert messages({"steps": "a"}, SIGNATURE_SCHEMA) == [
        ("", "missing required property 'title'"),
        (
            "/steps",
            'does not match any of the 2 allowed shapes (expected array or null, got string "a")',
        ),
    ]
    # only the array alternative takes an array: its own violations say what is wrong, precisely
    assert messages({"title": "t", "steps": ["a", 3]}, SIGNATURE_SCHEMA) == [
        ("/steps/1", "expected string, got integer 3"),
    ]
    assert messages("t", SIGNATURE_SCHEMA) == [("", 'expected object, got string "t"')]


def test_nested_paths_in_document_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
                    "required": ["tool"],
                },
            },
            "name": {"type": "string"},
        },
    }
    instance = {
        "name": 1,
        "steps": [{"tool": "a"}, {"tool": 2, "args": []}, {}],
    }
    assert messages(instance, schema) == [
        ("/name", "expected string, got integer 1"),
        ("/steps/1/tool", "expected string, got integer 2"),
        ("/steps/1/args", "expected object, got array []"),
        ("/steps/2", "missing required property 'tool'"),
    ]


def test_document_order_holds_across_all_of_branches() -> None:
    schema = {
        "allOf": [
            {"properties": {"b": {"type": "string"}}},
            {"properties": {"a": {"type": "string"}}},
        ]
    }
    assert messages({"a": 1, "b": 2}, schema) == [
        ("/a", "expected string, got integer 1"),
        ("/b", "expected string, got integer 2"),
    ]


def test_the_same_violation_is_reported_once() -> None:
    schema = {"allOf": [{"type": "string"}, {"type": "string"}]}
    assert messages(1, schema) == [("", "expected string, got integer 1")]


def test_json_pointer_escapes_keys() -> None:
    schema = {"additionalProperties": {"type": "string"}}
    assert messages({"a/b~c": 1}, schema) == [("/a~1b~0c", "expected string, got integer 1")]


def test_items_prefix_items_and_the_legacy_tuple_form() -> None:
    prefix = {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "null"}}
    assert validate(["a", 1, None, None], prefix) == []
    assert messages([1, "a", 0], prefix) == [
        ("/0", "expected string, got integer 1"),
        ("/1", 'expected integer, got string "a"'),
        ("/2", "expected null, got integer 0"),
    ]
    legacy = {"items": [{"type": "string"}], "additionalItems": False}
    assert validate(["a"], legacy) == []
    assert messages([1, 2], legacy) == [
        ("/0", "expected string, got integer 1"),
        ("/1", "no value is allowed here"),
    ]
    # without additionalItems, the legacy form leaves the rest alone
    assert validate(["a", 1, None], {"items": [{"type": "string"}]}) == []


def test_ref_to_defs_recursion_and_siblings() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/Node",
        "required": ["value"],
    }
    assert validate({"value": 1, "next": {"value": 2, "next": {}}}, schema) == []
    assert messages({"next": {"next": {"value": "3"}}}, schema) == [
        ("", "missing required property 'value'"),
        ("/next/next/value", 'expected integer, got string "3"'),
    ]
    assert messages({"value": 1, "nxt": {}}, schema) == [
        ("", "unexpected property 'nxt' (did you mean 'next'?)"),
    ]


def test_unresolvable_and_circular_refs_are_violations_not_silence() -> None:
    schema = {"properties": {"a": {"$ref": "#/$defs/Nope"}}}
    assert messages({"a": 1}, schema) == [("/a", "cannot resolve $ref '#/$defs/Nope'")]
    assert validate({"b": 1}, schema) == []  # only where it is used
    circular = {
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
        "$ref": "#/$defs/A",
    }
    assert messages(1, circular) == [("", "circular $ref '#/$defs/A'")]
    # remote references are out of scope: tool schemas are self-contained
    assert messages(1, {"$ref": "other.json#/x"}) == [("", "cannot resolve $ref 'other.json#/x'")]
    assert messages(1, {"$ref": 5}) == [("", "cannot resolve $ref 5")]


MISSING_REF = {"$ref": "#/$defs/Nope"}


@pytest.mark.parametrize(
    "schema",
    [
        {"not": MISSING_REF},
        {"anyOf": [MISSING_REF, {"type": "integer"}]},
        {"oneOf": [{"type": "integer"}, MISSING_REF]},
        {"if": MISSING_REF, "then": {"type": "integer"}, "else": {"type": "string"}},
        {"contains": MISSING_REF, "minContains": 0},
        {"unevaluatedProperties": False, "anyOf": [MISSING_REF, {"type": "integer"}]},
    ],
    ids=["not", "anyOf", "oneOf", "if", "contains", "unevaluated"],
)
def test_a_schema_that_cannot_be_used_is_reported_where_only_its_match_counts(
    schema: dict[str, Any],
) -> None:
    """Inside not, anyOf, oneOf, if or contains an unresolvable $ref used to make its subschema
    fail to match and nothing more: a `not` passed everything, an alternative was skipped."""
    instance = [1] if "contains" in schema else 1
    found = [message for _, message in messages(instance, schema)]
    assert "cannot resolve $ref '#/$defs/Nope'" in found


def test_a_broken_subschema_is_reported_once_and_only_where_it_applies() -> None:
    broken = "invalid schema: pattern '(': missing ), unterminated subpattern at position 0"
    assert messages({"ab": 1}, {"propertyNames": {"pattern": "("}}) == [("", broken)]
    assert messages("a", {"anyOf": [{"pattern": "("}, {"type": "string"}]}) == [("", broken)]
    # a pattern applies to strings only: the alternative matches a number, broken or not
    assert messages(1, {"anyOf": [{"pattern": "("}, {"type": "string"}]}) == []


def test_a_local_ref_inside_a_subschema_with_its_own_id_is_refused() -> None:
    """There ``#/$defs/Name`` means that subschema's $defs: resolved against the root, the
    value was checked against another schema of the same name."""
    inner = {
        "$id": "https://example.com/inner.json",
        "$defs": {"Name": {"type": "integer"}},
        "$ref": "#/$defs/Name",
    }
    schema = {"$defs": {"Name": {"type": "string"}}, "properties": {"a": inner}}
    refused = ("/a", "cannot resolve $ref '#/$defs/Name' inside a subschema with its own $id")
    assert messages({"a": "text"}, schema) == [refused]
    assert messages({"a": 1}, schema) == [refused]
    # the root's own $id, and draft 7's "$id": "#name" naming a subschema, change no base
    assert validate(1, {**inner, "$defs": {"Name": {"type": "integer"}}}) == []
    named = {"definitions": {"N": {"type": "integer"}}, "properties": {"a": {"$id": "#a"}}}
    named["properties"]["a"]["$ref"] = "#/definitions/N"
    assert validate({"a": 1}, named) == []


def test_any_of_with_refs_names_the_referenced_types() -> None:
    schema = {
        "$defs": {"Step": {"type": "object", "required": ["tool"]}},
        "anyOf": [{"$ref": "#/$defs/Step"}, {"type": "null"}],
    }
    assert validate(None, schema) == []
    assert messages(3, schema) == [
        ("", "does not match any of the 2 allowed shapes (expected object or null, got integer 3)")
    ]
    assert messages({}, schema) == [("", "missing required property 'tool'")]


def test_broken_schemas_are_reported() -> None:
    assert messages("a", {"pattern": "("}) == [
        ("", "invalid schema: pattern '(': missing ), unterminated subpattern at position 0")
    ]
    assert messages(1, {"properties": {}, "allOf": [[]]}) == [
        ("", "invalid schema: expected an object or a boolean, got array []")
    ]
    assert messages(1, {"anyOf": []}) == [("", "invalid schema: no alternatives to match")]


def test_long_values_are_cut() -> None:
    [violation] = validate("x" * 1000, {"type": "integer"})
    assert violation.message == f'expected integer, got string "{"x" * 36}...'
    [violation] = validate(list(range(100)), {"type": "object"})
    assert violation.message.startswith("expected object, got array [0, 1, 2,")
    assert violation.message.endswith("...")
    assert len(violation.message) < 80


def test_describe() -> None:
    assert describe([]) == ""
    assert (
        describe(
            [
                V("/title", "expected string, got integer 3"),
                V("", "missing required property 'steps'"),
            ]
        )
        == "/title: expected string, got integer 3; /: missing required property 'steps'"
    )
    many = [V(f"/{i}", "bad") for i in range(7)]
    assert describe(many) == "/0: bad; /1: bad; /2: bad; /3: bad; /4: bad (and 2 more)"
    assert describe(many[:5]) == "/0: bad; /1: bad; /2: bad; /3: bad; /4: bad"


def test_violations_are_frozen_values() -> None:
    violation = V("/a", "m")
    with pytest.raises(AttributeError):
        violation.path = "/b"  # type: ignore[misc]
    assert violation == V("/a", "m")


# (schema, valid instances, (invalid instance, its violations))
APPLICATORS: list[tuple[str, dict[str, Any], list[object], object, list[tuple[str, str]]]] = [
    (
        "contains",
        {"contains": {"type": "integer"}},
        [[1], ["a", 2]],
        ["a", "b"],
        [("", "expected an item matching 'contains', got none")],
    ),
    (
        "min-max-contains",
        {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
        [[1, 1], [1, 0, 1, 1]],
        [1, 1, 1, 1],
        [("", "expected at most 3 items matching 'contains', got 4")],
    ),
    (
        "dependent-required",
        {"dependentRequired": {"card": ["cvc", "expiry"]}},
        [{}, {"card": 1, "cvc": 2, "expiry": 3}],
        {"card": 1, "cvc": 2},
        [("", "missing property 'expiry', required when 'card' is")],
    ),
    (
        "dependent-schemas",
        {"dependentSchemas": {"card": {"required": ["cvc"]}}},
        [{"cvc": 1}, {"card": 1, "cvc": 2}],
        {"card": 1},
        [("", "missing required property 'cvc'")],
    ),
    (
        "dependencies",
        {"dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}}}},
        [{"a": 1, "b": 2}, {"c": 1, "d": "x"}],
        {"a": 1, "c": 1, "d": 3},
        [
            ("", "missing property 'b', required when 'a' is"),
            ("/d", "expected string, got integer 3"),
        ],
    ),
    (
        "if-then-else",
        {
            "if": {"properties": {"kind": {"const": "card"}}},
            "then": {"required": ["number"]},
            "else": {"required": ["iban"]},
        },
        [{"kind": "card", "number": "1"}, {"kind": "bank", "iban": "x"}],
        {"kind": "bank", "number": "1"},
        [("", "missing required property 'iban'")],
    ),
    (
        "property-names",
        {"propertyNames": {"pattern": "^[a-z]+$"}},
        [{"ab": 1}],
        {"ab": 1, "Bad": 2},
        [("", "property name 'Bad': string \"Bad\" does not match pattern '^[a-z]+$'")],
    ),
    (
        "unevaluated-properties",
        {
            "properties": {"a": {}},
            "allOf": [{"properties": {"b": {}}}],
            "anyOf": [{"properties": {"c": {"type": "string"}}}, {"required": ["zzz"]}],
            "unevaluatedProperties": False,
        },
        [{"a": 1, "b": 2, "c": "x"}],
        {"a": 1, "b": 2, "c": "x", "d": 4},
        [("", "unexpected property 'd' (unevaluatedProperties)")],
    ),
    (
        "unevaluated-properties-through-ref-and-if",
        {
            "$defs": {"base": {"properties": {"id": {"type": "integer"}}}},
            "$ref": "#/$defs/base",
            "if": {"properties": {"id": {"const": 1}}},
            "then": {"properties": {"one": {}}},
            "unevaluatedProperties": {"type": "string"},
        },
        [{"id": 1, "one": 5, "note": "x"}],
        {"id": 2, "one": 5},
        [("/one", "expected string, got integer 5")],
    ),
    (
        "unevaluated-items",
        {"prefixItems": [{"type": "string"}], "contains": {"const": 0}, "unevaluatedItems": False},
        [["a", 0, 0]],
        ["a", 0, 1],
        [("", "unexpected item 2 (unevaluatedItems)")],
    ),
]


@pytest.mark.parametrize(
    ("schema", "valid", "invalid", "expected"),
    [entry[1:] for entry in APPLICATORS],
    ids=[entry[0] for entry in APPLICATORS],
)
def test_contains_dependencies_conditionals_property_names_and_unevaluated(
    schema: dict[str, Any], valid: list[object], invalid: object, expected: list[tuple[str, str]]
) -> None:
    for instance in valid:
        assert validate(instance, schema) == [], instance
    assert messages(invalid, schema) == expected


def test_keywords_it_cannot_apply_fail_loudly() -> None:
    schema = {"$dynamicRef": "#node", "properties": {"a": {"type": "string"}}}
    [violation] = validate({"a": "x"}, schema)
    assert "'$dynamicRef' is not supported" in violation.message
    assert "validate=False" in violation.message
