"""The tests that need the OS sandbox (bubblewrap with unprivileged user namespaces): where there is
none they are skipped, and the run's summary says how many and why, so a run without it never
passes for one with it; where ``SANDBOXVERIFY_TEST_REQUIRE_OS_SANDBOX`` is set (``.ci/run`` sets
it) they fail instead.

A pytest plugin (``pytest_plugins`` in ``conftest.py``): the ``os_sandbox`` fixture, and
:func:`require_os_sandbox` for fixtures of a wider scope.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxverify.sandbox._bwrap import available

#: set it, and a test that needs the OS sandbox fails where there is none
REQUIRE_OS_SANDBOX = "SANDBOXVERIFY_TEST_REQUIRE_OS_SANDBOX"
_MISSING = "the OS sandbox is unavailable here"


def require_os_sandbox() -> Path:
    """bwrap, where the OS sandbox works; else the test is skipped, or fails under
    :data:`REQUIRE_OS_SANDBOX`."""
    bwrap, why = available()
    if bwrap is None:
        if os.environ.get(REQUIRE_OS_SANDBOX):
            pytest.fail(f"{_MISSING} ({why}), and {REQUIRE_OS_SANDBOX} asks for it")
        pytest.skip(f"{_MISSING}: {why}")
    return bwrap


@pytest.fixture
def os_sandbox() -> Path:
    """bwrap: see :func:`require_os_sandbox`."""
    return require_os_sandbox()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many tests the missing OS sandbox kept from running: the attack suite's half."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if _MISSING in str(getattr(report, "longrepr", ""))
    ]
    if not skipped:
        return
    _, why = available()
    terminalreporter.write_sep("=", "the OS sandbox", yellow=True)
    terminalreporter.write_line(
        f"{len(skipped)} test(s) of the OS sandbox did not run: {why or _MISSING}. Install "
        "bubblewrap (README: Isolation) to run them; "
        f"{REQUIRE_OS_SANDBOX}=1 makes their absence a failure, as CI does."
    )
