"""Test machinery, and the modules that fail only inside it: test support a wheel ships for
its application's test suites under a name that does not say test (a SQLAlchemy dialect's
``requirements``, a Django app's ``testing`` helpers, a ``fixtures`` module importing pytest).

Users of the package never import such a module; only a test run does, and a test run has the
test framework and the other distribution's test machinery. The runtime says, frame by frame,
what the failing import was importing (``frames``); the module is test support only when the
way in from its own code, through its own modules only, stops at an import of test machinery.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

#: test frameworks and their helpers: a test module that needs only these is test code
TEST_PACKAGES = frozenset({"pytest", "_pytest", "py", "hypothesis", "mock", "nose", "nose2"})
#: what a distribution calls the test machinery it ships for its users' test suites
#: (``django.test``, ``sqlalchemy.testing``, ``numpy.testing``, ``twisted.trial``' kin aside)
_TESTING_NAMES = frozenset(
    {"test", "tests", "testing", "_testing", "testutils", "testutil", "test_utils"}
)
#: how the excuse's detail begins: the wheel-contents note tells these from test modules
TEST_SUPPORT = "test support for its application's test suite"


def is_test_framework(name: str) -> bool:
    """A test framework's module or a pytest plugin's (``pytest_*``)."""
    top = name.split(".", maxsplit=1)[0]
    return top in TEST_PACKAGES or top.startswith("pytest_")


def is_test_machinery(name: str, own: Collection[str]) -> bool:
    """A test framework's module, or another distribution's testing sub-package or a module
    in one (``alembic.testing.fixtures``); never the wheel's own (``own``: its top-level names),
    whose modules are judged each on its own."""
    parts = name.split(".")
    if parts[0] in own:
        return False
    return is_test_framework(name) or bool(set(parts[1:]) & _TESTING_NAMES)


def machinery_failed_in(module: str, cause: Mapping[str, Any], own: Collection[str]) -> str | None:
    """The test machinery ``module``'s failed import stopped at, or None: the way in
    (``cause["frames"]``) from the module's own frame passes only the wheel's own modules, each
    stopped at an import, to an import of test machinery; and the failure is that machinery's:
    raised inside it, or a module or name missing from it or from a test framework."""
    if "." not in module:
        return None  # the wheel's own top-level package or module: what its users import
    frames: Sequence[Mapping[str, Any]] = cause["frames"]
    start = next((i for i, f in enumerate(frames) if f["module"] == module), None)
    way = frames[start:] if start is not None else []
    for at, frame in enumerate(way):
        if _top(str(frame["module"])) not in own or not frame["imports"]:
            return None  # another distribution's code, or its own code raised: not an import
        hit = next((str(n) for n in frame["imports"] if is_test_machinery(str(n), own)), None)
        if hit is None:
            continue  # one of its own modules: the way goes on in there
        inner = way[at + 1]["module"] if at + 1 < len(way) else None
        if inner is not None and is_test_machinery(str(inner), own):
            return hit  # it failed inside the test machinery
        lacked = [*cause["missing"], *(pair[0] for pair in cause["names"] if pair)]
        if lacked and all(_of(name, hit) for name in lacked):
            return hit
        return None
    return None


def _of(name: str, machinery: str) -> bool:
    """``name`` is missing from a test framework or from the machinery's distribution."""
    return is_test_framework(name) or _top(name) == _top(machinery)


def _top(name: str) -> str:
    return name.split(".", maxsplit=1)[0]


#: a test suite's packages; Django apps keep the app their tests install in ``testapp``
_TEST_PACKAGE_DIRS = frozenset(
    {"tests", "test", "testing", "_tests", "testapp", "testapps", "test_app", "test_apps"}
)


def is_test_module(module: str, packages: Collection[str] = ()) -> bool:
    """A module of a test suite: a ``tests``/``test``/``testing``/``_tests``/``testapp``
    package (one of ``packages``) or a module in one, or a module named ``test_*``,
    ``*_test`` or ``conftest``.
    (A plain module named ``tests`` is not one: Jinja's ``tests`` are template tests.)"""
    parts = module.split(".")
    last = parts[-1]
    return (
        bool(set(parts[:-1]) & _TEST_PACKAGE_DIRS)
        or (last in _TEST_PACKAGE_DIRS and module in packages)
        or last.startswith("test_")
        or last.endswith("_test")
        or last == "conftest"
    )
