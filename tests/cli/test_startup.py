"""The command line's start: the cycle collector is paused for its imports only."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_REPORT = (
    "import gc, json\n"
    "{before}\n"
    "counts = gc.get_stats()[0]['collections']\n"
    "import sandboxverify.cli\n"
    "print(json.dumps({{'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count(),\n"
    "    'collected': gc.get_stats()[0]['collections'] - counts}}))\n"
)


def _after_import(before: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", _REPORT.format(before=before)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(completed.stdout)
    return result


def test_the_imports_run_without_the_collector_which_then_runs_again_past_them() -> None:
    after = _after_import("")
    # one pass at most, while the package above it is imported; dozens otherwise
    assert isinstance(after["collected"], int) and after["collected"] <= 1
    assert after["enabled"] is True
    assert isinstance(after["frozen"], int) and after["frozen"] > 10_000


@pytest.mark.parametrize("before", ["gc.disable()", "gc.disable(); gc.freeze()"])
def test_a_process_that_paused_the_collector_itself_finds_it_paused(before: str) -> None:
    after = _after_import(before)
    assert after["enabled"] is False
