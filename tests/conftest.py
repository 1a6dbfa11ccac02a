from __future__ import annotations

import pytest

from sandboxverify.sandbox._toolchain import find_uv


@pytest.fixture
def needs_uv() -> None:
    if find_uv() is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra: pip install -e '.[test]'")


pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _not_on_a_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks run by the suite must not annotate or summarise the CI job running the suite.

    CI is cleared too: it switches snapshot writing off, so a test that depends on it sets it.
    """
    for name in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
