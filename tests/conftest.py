from __future__ import annotations

import pytest

from sandboxverify._toolchain import find_uv


@pytest.fixture
def needs_uv() -> None:
    if find_uv() is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra: pip install -e '.[test]'")


pytest_plugins = ["pytester"]
