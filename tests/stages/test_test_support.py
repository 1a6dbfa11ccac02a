"""Test support not named as a test: a module no entry point reaches, whose import fails only
inside test machinery, is test code; any other failure of it is judged as any module's."""

from __future__ import annotations

from typing import Any

import pytest

from sandboxverify.stages._excuses import settle, triage
from sandboxverify.stages._extras import ExtraRun, parse_extras
from sandboxverify.stages._test_support import is_test_machinery, machinery_failed_in

METADATA = """\
Metadata-Version: 2.1
Name: svtest-dialect
Version: 1.0
Requires-Dist: sqlalchemy
Provides-Extra: migrations
Requires-Dist: alembic; extra == "migrations"
Provides-Extra: test
Requires-Dist: pytest; extra == "test"
Requires-Dist: hypothesis; extra == "test"
"""
EXTRAS = parse_extras(METADATA, "svtest-dialect", (3, 11, 7))
OWN = {"dialect"}
#: where the runtime's own frames lead into the module imported
RUNTIME = [
    {"module": "sandboxverify.runtime._imports", "imports": []},
    {"module": "importlib", "imports": []},
]


def failed(
    module: str, *way: tuple[str, list[str]], missing: Any = (), names: Any = (), **more: Any
) -> dict[str, Any]:
    """A module's failure, ``way``: each frame from the module's own in, and what its
    failing statement imports."""
    frames = [*RUNTIME, *({"module": m, "imports": i} for m, i in way)]
    cause = {"missing": list(missing), "names": [list(n) for n in names], "frames": frames}
    error = {"type": "ImportError", "message": "…", "traceback": ""}
    return {"module": module, "ok": False, "error": error, "cause": cause, **more}


def sort(*items: dict[str, Any]) -> Any:
    return triage(items, own=OWN, extras=EXTRAS, installed=["sqlalchemy"], modules=())


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pytest", True),
        ("_pytest.fixtures", True),
        ("pytest_asyncio", True),
        ("hypothesis.strategies", True),
        ("alembic.testing", True),
        ("sqlalchemy.testing.requirements", True),
        ("django.test", True),
        ("django.test.utils", True),
        ("numpy.testing", True),
        ("twisted.internet.testing", True),
        ("oslo_db.tests", True),
        ("flask_sqlalchemy.testutils", True),
        ("dialect.testing", False),  # the wheel's own: judged as a module of its own
        ("sqlalchemy", False),
        ("sqlalchemy.engine", False),
        ("requests", False),
        ("testing", False),  # a distribution named so is no other's test machinery
        ("attest", False),
        ("pandas.contest", False),
    ],
)
def test_test_machinery_is_a_test_framework_or_another_distribution_s_testing_package(
    name: str, expected: bool
) -> None:
    assert is_test_machinery(name, OWN) is expected


def test_test_support_fails_only_inside_test_machinery() -> None:
    found = sort(
        # a dialect's test-suite requirements: the other distribution, whose test package it
        # imports, is not installed (no extra declares it)
        failed(
            "dialect.requirements",
            ("dialect.requirements", ["otherorm.testing.requirements"]),
            missing=["otherorm"],
        ),
        # a test framework, imported by a fixtures module no pytest11 entry point names
        failed("dialect.fixtures", ("dialect.fixtures", ["pytest"]), missing=["pytest"]),
        # the other distribution's testing package raised inside (Django's settings, say)
        failed(
            "dialect.testcase",
            ("dialect.testcase", ["sqlalchemy.testing"]),
            ("sqlalchemy.testing", ["sqlalchemy.testing.config"]),
            ("sqlalchemy.testing.config", []),
        ),
        # through a module of its own that imports the test framework
        failed(
            "dialect.provision",
            ("dialect.provision", ["dialect", "dialect.helpers"]),
            ("dialect.helpers", ["hypothesis", "hypothesis.strategies"]),
            missing=["hypothesis"],
        ),
        # a name the other distribution's test machinery no longer has
        failed(
            "dialect.suite",
            ("dialect.suite", ["sqlalchemy.testing.suite", "sqlalchemy.testing.suite.gone"]),
            names=[["sqlalchemy.testing.suite", "gone"]],
        ),
    )

    assert {m: (e.reason, e.detail) for m, e in found.excused.items()} == {
        module: (
            "test",
            f"test support for its application's test suite: imports {what}, "
            "which only test runs have",
        )
        for module, what in [
            ("dialect.requirements", "otherorm.testing.requirements"),
            ("dialect.fixtures", "pytest"),
            ("dialect.testcase", "sqlalchemy.testing"),
            ("dialect.provision", "hypothesis"),
            ("dialect.suite", "sqlalchemy.testing.suite"),
        ]
    }
    assert found.needs == {} and found.unmapped == ()


def test_any_other_failure_of_a_module_not_named_as_a_test_is_judged_as_today() -> None:
    found = sort(
        # an undeclared dependency users would need
        failed("dialect.compat", ("dialect.compat", ["requests"]), missing=["requests"]),
        # its own code raised, after the test machinery imported
        failed("dialect.broken", ("dialect.broken", [])),
        # a plugin reaches it: its users meet the failure
        failed(
            "dialect.base",
            ("dialect.base", ["pytest"]),
            missing=["pytest"],
            reached_by="sqlalchemy.dialects:svtest",
        ),
        # one statement imports a dependency and a test framework; the dependency is missing
        failed("dialect.both", ("dialect.both", ["requests", "pytest"]), missing=["requests"]),
        # the other distribution's own package failed before its testing package was reached
        failed(
            "dialect.early",
            ("dialect.early", ["sqlalchemy.testing"]),
            ("sqlalchemy", ["sqlalchemy.engine"]),
            ("sqlalchemy.engine", []),
        ),
        # through another distribution's code that imports a test framework
        failed(
            "dialect.via",
            ("dialect.via", ["requests"]),
            ("requests", ["pytest"]),
            missing=["pytest"],
        ),
        # the wheel's top-level package: what its users import, whatever it imports
        failed("dialect", ("dialect", ["pytest"]), missing=["pytest"]),
        # a module of the wheel's own it imports is missing: the wheel left it out
        failed("dialect.gone", ("dialect.gone", ["dialect.testing"]), missing=["dialect.testing"]),
    )

    assert found.excused == {}
    assert set(found.unmapped) == {"dialect.compat", "dialect.both"}


def test_what_a_users_extra_declares_is_tried_with_it_first_and_judged_again_there() -> None:
    """alembic comes with the ``migrations`` extra: with it, the module either imports (the
    extra excuses it) or still fails only inside test machinery (pytest, which alembic's
    testing package needs): test support still."""
    found = sort(
        failed(
            "dialect.requirements",
            ("dialect.requirements", ["alembic.testing"]),
            missing=["alembic"],
        )
    )
    assert dict(found.needs) == {"dialect.requirements": "migrations"} and found.excused == {}

    still = failed(
        "dialect.requirements",
        ("dialect.requirements", ["alembic.testing"]),
        ("alembic.testing", ["pytest"]),
        missing=["pytest"],
    )
    run = ExtraRun(
        "migrations",
        "svtest-dialect[migrations]",
        ("dialect.requirements",),
        (),
        True,
        results={"dialect.requirements": still},
    )
    settled = settle(found, [run], dist="svtest-dialect", python="3.11", extras=EXTRAS)

    assert [(e.module, e.reason) for e in settled.excused] == [("dialect.requirements", "test")]
    assert settled.failures == ()


def test_the_way_in_starts_at_the_module_s_own_frame() -> None:
    cause = {
        "missing": ["pytest"],
        "names": [],
        "frames": [{"module": "dialect.other", "imports": ["pytest"]}],
    }
    assert machinery_failed_in("dialect.fixtures", cause, OWN) is None
