"""Turning --python into interpreters: specs, 'min' and 'all' by Requires-Python, discovery."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.sandbox import _interpreters, _subprocess
from sandboxverify.sandbox._interpreters import (
    Interpreter,
    resolve,
    resolve_all,
    select_interpreters,
)


def test_default_is_the_running_interpreter() -> None:
    [interpreter] = resolve_all([])
    assert interpreter.version_info == tuple(sys.version_info[:3])


def test_an_interpreter_says_its_base_prefixes() -> None:
    # a confined process of it, or of a venv made from it, is given these to see
    assert resolve(sys.executable).prefixes == (sys.base_prefix, sys.base_exec_prefix)


def test_the_running_interpreter_is_described_as_it_would_describe_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _interpreters._QUERY],
        capture_output=True,
        text=True,
        check=True,
    )
    assert _interpreters._own_description() == json.loads(asked.stdout)

    def no_process(argv: Sequence[str], timeout: float) -> str | None:
        raise AssertionError(f"started {argv[0]} to ask what it is")

    monkeypatch.setattr(_interpreters, "query", no_process)
    monkeypatch.setattr(_interpreters, "_queried", {})
    assert resolve(sys.executable).version_info == tuple(sys.version_info[:3])


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


@pytest.fixture
def fresh_discovery() -> Iterator[None]:
    """Forget what this process learnt about interpreters, before and after the test."""
    _interpreters.available.cache_clear()
    _interpreters._queried.clear()
    yield
    _interpreters.available.cache_clear()
    _interpreters._queried.clear()


def fake(version: str, implementation: str = "cpython", path: str = "") -> Interpreter:
    info = tuple(int(part) for part in version.split(".")[:3])
    return Interpreter(
        spec=version,
        path=Path(path or f"/opt/{implementation}-{version}/bin/python"),
        version=version,
        version_info=(info[0], info[1], info[2]),
        implementation=implementation,
    )


HERE = (
    fake("3.8.18"),
    fake("3.9.1"),
    fake("3.9.18"),
    fake("3.10.13", "pypy"),
    fake("3.10.13"),
    fake("3.12.0"),
    fake("3.13.0"),
)


@pytest.mark.parametrize(
    ("selectors", "requires_python", "chosen"),
    [
        # the newest patch of the lowest minor version allowed; 3.8 is below the sandbox floor
        (["min"], ">=3.8", ["3.9.18"]),
        (["min"], None, ["3.9.18"]),
        (["min"], ">=3.10", ["cpython-3.10.13"]),
        # every minor version once, the newest patch, CPython over other implementations
        (["all"], ">=3.9", ["3.9.18", "cpython-3.10.13", "3.12.0", "3.13.0"]),
        (["all"], ">=3.9.5,<3.13", ["3.9.18", "cpython-3.10.13", "3.12.0"]),
        (["min", "all"], "!=3.12.*", ["3.9.18", "cpython-3.10.13", "3.13.0"]),
        # only an older patch is allowed: that one, not none
        (["all"], "==3.9.1", ["3.9.1"]),
    ],
)
def test_select_interpreters_by_requires_python(
    monkeypatch: pytest.MonkeyPatch,
    selectors: list[str],
    requires_python: str | None,
    chosen: list[str],
) -> None:
    monkeypatch.setattr(_interpreters, "available", lambda: HERE)
    found = select_interpreters(selectors, requires_python)
    labels = [
        f"{i.implementation}-{i.version}" if i.version == "3.10.13" else i.version for i in found
    ]
    assert labels == chosen


def test_no_interpreter_allowed_is_a_usage_error_naming_what_was_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_interpreters, "available", lambda: HERE)
    with pytest.raises(UsageError) as info:
        select_interpreters(["min"], ">=3.14")
    assert info.value.message == (
        "--python min: no Python interpreter here satisfies the release's Requires-Python "
        "'>=3.14' (found: 3.9.18, 3.10.13, 3.12.0, 3.13.0; older than 3.9, which sandboxes "
        "need: 3.8.18)"
    )
    assert info.value.hint is not None and "install a Python it allows" in info.value.hint
    assert info.value.exit_code == 2


def test_min_refuses_to_stand_in_a_newer_python_for_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_the_floor = tuple(i for i in HERE if i.version_info[:2] != (3, 9))
    monkeypatch.setattr(_interpreters, "available", lambda: without_the_floor)
    with pytest.raises(UsageError) as info:
        select_interpreters(["min"], ">=3.9")
    assert info.value.message == (
        "--python min: the release's Requires-Python '>=3.9' allows Python 3.9, but the lowest "
        "allowed Python here is 3.10.13"
    )
    # all is every allowed one here: no floor to stand in for
    assert select_interpreters(["all"], ">=3.9")[0].version == "3.10.13"


def test_an_invalid_requires_python_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_interpreters, "available", lambda: HERE)
    with pytest.raises(UsageError, match="is not a valid version specifier"):
        select_interpreters(["all"], ">=3.x")


def test_min_and_all_on_the_interpreters_of_this_machine(fresh_discovery: None) -> None:
    # the CI machines carry Python 3.8 to 3.13 under pyenv
    minimum = select_interpreters(["min"], ">=3.9")
    everything = select_interpreters(["all"], ">=3.9")

    assert [i.version_info[:2] for i in minimum] == [(3, 9)]
    minors = [i.version_info[:2] for i in everything]
    assert minors == sorted(set(minors))
    assert {(3, 9), (3, 10), (3, 11), (3, 12), (3, 13)} <= set(minors)
    assert everything[0] == minimum[0]
    for interpreter in everything:  # the newest patch of each minor version here
        same_minor = [
            i
            for i in _interpreters.available()
            if i.version_info[:2] == interpreter.version_info[:2]
        ]
        assert interpreter.version_info == max(i.version_info for i in same_minor)
    with pytest.raises(UsageError, match=r"'>=3\.14'"):
        select_interpreters(["min"], ">=3.14")


def test_each_interpreter_is_asked_once_per_process(
    fresh_discovery: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: Counter[str] = Counter()
    real_query = _subprocess.query

    def counting(argv: Sequence[str], timeout: float) -> str | None:
        asked[argv[0]] += 1
        return real_query(argv, timeout)

    monkeypatch.setattr(_interpreters, "query", counting)
    first = _interpreters.available()
    assert _interpreters.available() is first
    select_interpreters(["all"], None)
    resolve_all(["3.12", "3.12", "python3.12", sys.executable, str(first[-1].path)])

    assert asked
    assert max(asked.values()) == 1, asked


def test_discovery_asks_every_interpreter_at_the_same_time(
    fresh_discovery: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = [tmp_path / f"python3.{minor}" for minor in range(9, 15)]
    # every query waits until all of them are running: asked one after the other, the first
    # one would wait in vain and the barrier would break
    everyone = threading.Barrier(len(paths), timeout=20)

    def waiting(argv: Sequence[str], timeout: float) -> str | None:
        everyone.wait()
        minor = int(argv[0].rsplit(".", 1)[1])
        return json.dumps(
            {"version": f"3.{minor}.0", "info": [3, minor, 0], "implementation": "cpython"}
        )

    monkeypatch.setattr(_interpreters, "_all_candidates", lambda: iter(paths))
    monkeypatch.setattr(_interpreters, "query", waiting)

    found = _interpreters.available()
    assert [i.version for i in found] == [f"3.{minor}.0" for minor in range(9, 15)]


def test_one_install_under_several_names_is_one_interpreter() -> None:
    found = sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python"))
    if not found:  # pragma: no cover - the CI machines carry pyenv Pythons
        pytest.fail("this test needs Python 3.12 under pyenv")
    # bin/python and bin/python3.12 (which 3.12 finds on PATH or in pyenv) are one file
    interpreters = resolve_all([str(found[-1]), str(found[-1].parent / "python3"), "3.12"])
    assert len(interpreters) == 1
    assert interpreters[0].path.name == "python3.12"


def test_a_venv_interpreter_keeps_its_venv_path(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [interpreter] = resolve_all([str(venv / "bin" / "python")])
    # resolving the symlink would leave the venv (and its packages) behind
    assert interpreter.path == venv / "bin" / "python"


def _chosen(version: str) -> list[Interpreter]:
    info = tuple(int(part) for part in version.split("."))
    return [Interpreter("min", Path("/usr/bin/python3"), version, info, "cpython")]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("requires", "lowest", "skipped"),
    [
        (">=3.7", "3.7", "3.7, 3.8"),
        (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*", "2.7", "2.7, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8"),
        (None, "2.0", "2.0, 2.1"),
    ],
)
def test_python_min_says_when_it_raised_the_floor_and_what_it_skipped(
    requires: str | None, lowest: str, skipped: str
) -> None:
    note = _interpreters.floor_note(requires, _chosen("3.9.18"))

    assert note is not None
    assert f"allows Python {lowest}," in note
    assert "ran on 3.9.18" in note
    assert note.endswith(f"not verified on {skipped}") or f"not verified on {skipped}," in note


def test_python_min_says_nothing_when_the_floor_is_allowed() -> None:
    assert _interpreters.floor_note(">=3.9", _chosen("3.9.18")) is None
    assert _interpreters.floor_note(">=3.7", []) is None
