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
    """Checks run by the suite must not annotate or summarise the CI job running the suite."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _an_empty_artifact_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each test builds what it checks: no test reuses another's build (the cache's own tests
    fill it on purpose), and nothing is written to the user's cache."""
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(tmp_path_factory.mktemp("artifact-cache")))
