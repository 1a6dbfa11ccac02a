"""The harness's schema validator against the official JSON Schema Test Suite, and `jsonschema`.

Every case of the suite's files (``json-schema-test-suite/``, see its README for which and why)
is validated three ways: by our validator, by the suite's expected verdict and by ``jsonschema``.
Where our validator implements the keywords, the three agree. What it deliberately does not
implement is listed below with the reason, and there it must refuse the schema (a violation
saying it cannot use it) wherever its verdict would differ: never a verdict that is silently
wrong.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest

from sandboxverify.runtime.harness._validate import validate

SUITE = Path(__file__).parent / "json-schema-test-suite" / "tests"
#: the files run, relative to SUITE
FILES = sorted(
    str(path.relative_to(SUITE)) for path in SUITE.rglob("*.json") if path.parent.name != "optional"
) + [
    f"draft2020-12/optional/{name}.json"
    for name in (
        "anchor",
        "bignum",
        "cross-draft",
        "dependencies-compatibility",
        "dynamicRef",
        "float-overflow",
        "id",
        "no-schema",
        "non-bmp-regex",
        "refOfUnknownKeyword",
        "unknownKeyword",
    )
]

_BASE_URIS = "$id: a $ref by URL, URN, relative path or $anchor resolves against base URIs"
_REMOTE = "a remote $ref: tool schemas are self-contained, the validator resolves #/... only"
#: what the validator does not implement, by file or by ``file#group``: refused where it matters
REFUSED = {
    "draft2020-12/anchor.json": "$anchor: a $ref names a JSON pointer (#/$defs/Name)",
    "draft2020-12/defs.json": "checking a schema against its metaschema by URL: " + _REMOTE,
    "draft2020-12/dynamicRef.json": "$dynamicRef and $dynamicAnchor (dynamic scopes)",
    "draft2020-12/optional/dynamicRef.json": "$dynamicRef and $dynamicAnchor (dynamic scopes)",
    "draft2020-12/refRemote.json": _REMOTE,
    "draft2020-12/optional/cross-draft.json": _REMOTE,
    "draft2020-12/pattern.json#pattern with Unicode property escape requires unicode mode": (
        "pattern is Python's re, which has no \\p{...}"
    ),
    "draft2020-12/patternProperties.json#patternProperties with Unicode property escape": (
        "pattern is Python's re, which has no \\p{...}"
    ),
    "draft2020-12/ref.json#remote ref, containing refs itself": _REMOTE,
    **{
        f"draft2020-12/ref.json#{group}": _BASE_URIS
        for group in (
            "Recursive references between schemas",
            "refs with relative uris and defs",
            "relative refs with absolute uris and defs",
            "$id must be resolved against nearest parent, not just immediate parent",
            "order of evaluation: $id and $ref",
            "order of evaluation: $id and $anchor and $ref",
            "order of evaluation: $id and $ref on nested schema",
            "simple URN base URI with $ref via the URN",
            "URN base URI with URN and JSON pointer ref",
            "URN base URI with URN and anchor ref",
            "URN ref with nested pointer ref",
            "ref to if",
            "ref to then",
            "ref to else",
            "ref with absolute-path-reference",
        )
    },
    # identifiers in places that are not schemas must not be taken for identifiers: ours takes
    # none for one, and must say so inside anyOf too
    "draft2020-12/optional/anchor.json#$anchor inside an enum is not a real identifier": (
        "$anchor: a $ref names a JSON pointer (#/$defs/Name)"
    ),
    "draft2020-12/optional/id.json#$id inside an enum is not a real identifier": _BASE_URIS,
    "draft2020-12/optional/unknownKeyword.json#"
    "$id inside an unknown keyword is not a real identifier": _BASE_URIS,
    "draft2020-12/unevaluatedItems.json#unevaluatedItems with $dynamicRef": "$dynamicRef",
    "draft2020-12/unevaluatedProperties.json#unevaluatedProperties with $dynamicRef": (
        "$dynamicRef"
    ),
}
#: ignored as documented, which can only make the verdict stricter (never a false pass)
STRICTER = {
    "draft2020-12/vocabulary.json": (
        "$schema and $vocabulary are not read: every keyword the validator knows applies, "
        "whatever metaschema a schema names"
    ),
}
#: where ``jsonschema``'s verdict is not the suite's, the validator class that gives it
JSONSCHEMA_AS = {
    # jsonschema's 2020-12 validator ignores draft 7's dependencies, which ours implements
    "draft2020-12/optional/dependencies-compatibility.json": jsonschema.Draft7Validator,
}
#: how a violation says the schema cannot be used
REFUSAL = re.compile(r"^(invalid schema: |cannot resolve \$ref |circular \$ref )")


class Case(NamedTuple):
    description: str
    data: Any
    valid: bool


class Group(NamedTuple):
    file: str
    description: str
    schema: Any
    cases: tuple[Case, ...]

    @property
    def key(self) -> str:
        return f"{self.file}#{self.description}"


@cache
def groups() -> tuple[Group, ...]:
    found = []
    for file in FILES:
        for group in json.loads((SUITE / file).read_text(encoding="utf-8")):
            cases = tuple(Case(c["description"], c["data"], c["valid"]) for c in group["tests"])
            found.append(Group(file, group["description"], group["schema"], cases))
    return tuple(found)


def jsonschema_verdict(group: Group, case: Case) -> bool:
    default = (
        jsonschema.Draft7Validator if "draft7" in group.file else jsonschema.Draft202012Validator
    )
    validator = JSONSCHEMA_AS.get(group.file, default)
    return bool(validator(group.schema).is_valid(case.data))


def refusal(violations: list[str]) -> bool:
    return any(REFUSAL.match(message) for message in violations)


@pytest.mark.parametrize("group", groups(), ids=lambda group: group.key)
def test_the_validator_agrees_with_the_suite(group: Group) -> None:
    reason = REFUSED.get(group.file) or REFUSED.get(group.key)
    stricter = STRICTER.get(group.file) or STRICTER.get(group.key)
    wrong: list[str] = []
    refused = 0
    for case in group.cases:
        violations = [v.message for v in validate(case.data, group.schema)]
        ours = not violations
        if reason is not None:
            # unsupported: a refusal, or the suite's verdict if what is missing did not matter
            refused += refusal(violations)
            if not refusal(violations) and ours != case.valid:
                wrong.append(f"{case.description}: valid={ours}, unrefused ({reason})")
            continue
        if refusal(violations):
            wrong.append(f"{case.description}: refused: {violations}")
        elif stricter is not None and ours != case.valid:
            if ours:  # stricter is fine, a pass the suite rejects is not
                wrong.append(f"{case.description}: valid=True, the suite says False")
        elif ours != case.valid:
            wrong.append(f"{case.description}: valid={ours}, the suite says {case.valid}")
        elif jsonschema_verdict(group, case) != case.valid:
            wrong.append(f"{case.description}: jsonschema says {not case.valid}")
    assert not wrong, f"{group.key}:\n" + "\n".join(wrong)
    if reason is not None:
        assert refused, f"{group.key} is listed as unsupported ({reason}) but nothing was refused"


def test_every_listed_exception_names_a_file_or_group_of_the_suite() -> None:
    known = {group.file for group in groups()} | {group.key for group in groups()}
    assert [name for name in (*REFUSED, *STRICTER, *JSONSCHEMA_AS) if name not in known] == []


def test_the_suite_runs_most_of_every_implemented_keyword() -> None:
    """A guard against an excerpt that shrank: the cases run per file, unsupported ones apart."""
    run: Counter[str] = Counter()
    for group in groups():
        if REFUSED.get(group.file) is None and REFUSED.get(group.key) is None:
            run[group.file] += len(group.cases)
    assert sum(run.values()) > 1200
    for keyword in (
        "type",
        "enum",
        "const",
        "properties",
        "additionalProperties",
        "items",
        "prefixItems",
        "contains",
        "unevaluatedProperties",
        "unevaluatedItems",
        "ref",
        "oneOf",
        "if-then-else",
    ):
        assert run[f"draft2020-12/{keyword}.json"] >= 10, keyword
