from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify._interpreters import resolve, resolve_all


def test_default_is_the_running_interpreter() -> None:
    [interpreter] = resolve_all([])
    assert interpreter.version_info == tuple(sys.version_info[:3])


def test_version_spec_finds_a_matching_interpreter() -> None:
    found = sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python"))
    if not found:  # pragma: no cover - the CI machines carry pyenv Pythons
        pytest.fail("this test needs Python 3.12 under pyenv")
    interpreter = resolve("3.12")
    assert interpreter.version_info[:2] == (3, 12)
    assert interpreter.path.exists()
    assert interpreter.label == interpreter.version


def test_a_path_and_duplicates_collapse() -> None:
    interpreters = resolve_all([sys.executable, sys.executable])
    assert len(interpreters) == 1


@pytest.mark.parametrize("spec", ["3.99", "2", "/no/such/python", "not-a-python-at-all"])
def test_unknown_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError) as info:
        resolve(spec)
    assert info.value.hint


def test_a_file_that_is_not_an_interpreter(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(UsageError, match="not a working Python interpreter"):
        resolve(str(fake))
