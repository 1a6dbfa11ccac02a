"""The standard-library modules Python no longer has, held to the interpreter running the
tests: each is absent where the table says so, and present before it was removed."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from sandboxverify.stages._removed_stdlib import _PYTHON_2, _REMOVED, removed_from_stdlib

#: modules of one platform: msilib on Windows, the others on Unix
_ONE_PLATFORM = frozenset({"msilib", "crypt", "nis", "ossaudiodev", "spwd"})
HERE = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"


@pytest.mark.parametrize("name", sorted(_PYTHON_2))
def test_a_python_2_module_is_not_there_and_is_said_to_be_python_2(name: str) -> None:
    assert importlib.util.find_spec(name) is None
    said = removed_from_stdlib(name, HERE)
    assert said is not None and "Python 2's standard library" in said


@pytest.mark.parametrize("name", sorted(_REMOVED))
def test_a_removed_module_is_there_until_the_release_that_removed_it(name: str) -> None:
    removed = tuple(int(part) for part in _REMOVED[name].split("."))
    gone = sys.version_info[:2] >= removed
    # built for one platform only until it was removed: elsewhere never there
    elsewhere = (name == "msilib") != (sys.platform == "win32") and name in _ONE_PLATFORM
    assert (importlib.util.find_spec(name) is None) is (gone or elsewhere)
    assert (removed_from_stdlib(name, HERE) is not None) is gone


def test_an_installed_dependency_or_an_unknown_name_is_no_removed_module() -> None:
    assert removed_from_stdlib("yaml", HERE) is None
    assert removed_from_stdlib("distutils", "3.11.9") is None
    assert removed_from_stdlib("cgi", "3.13.0") is not None


def test_a_module_its_distribution_dropped_is_named_with_the_release_that_dropped_it() -> None:
    """sphinxcontrib-asyncio's namespace __init__ imports pkg_resources (setuptools < 82)."""
    said = removed_from_stdlib("pkg_resources", HERE)
    assert said is not None
    assert said.startswith("'pkg_resources' was part of setuptools, which removed it in 82")
    assert "setuptools<82" in said
