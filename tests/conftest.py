from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import assert_valid_junit, is_our_junit


@pytest.fixture
def needs_uv() -> None:
    if find_uv() is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra: pip install -e '.[test]'")


pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _not_on_a_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks run by the suite must not annotate or summarise the CI job running the suite."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Every JUnit file a passing test leaves in its ``tmp_path`` (the real command line's,
    in-process or in a subprocess) validates against junit-10.xsd."""
    result = yield
    root = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(root, Path):
        for path in _files(root, ".xml"):
            if is_our_junit(path):
                assert_valid_junit(path)
    return result


def _files(root: Path, suffix: str) -> Iterator[Path]:
    """Files under ``root`` ending with ``suffix``, not looking inside virtual environments."""
    for folder, dirs, files in os.walk(root):
        if "pyvenv.cfg" in files:
            dirs.clear()
            continue
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git", "node_modules")]
        yield from (Path(folder, name) for name in files if name.endswith(suffix))
