"""Which answers of a console script to ``--help`` show that it ran."""

from __future__ import annotations

import pytest

from sandboxverify.stages._scripts import _answers_with_usage


@pytest.mark.parametrize(
    ("status", "output", "ran"),
    [
        # scripts with no --help option, as published (each works in normal use)
        (1, "Usage: mprof <command> <options> <arguments>\n", True),  # memory-profiler
        (1, "usage: dulwich [-h] [--no-pager] [--pager] [command]\n", True),
        (2, "KindleUnpack v0.82\noption --help not recognized\nUsage: mobiunpack\n", True),
        (32, "usage: pylint-config [options]\n", True),
        (1, "ERROR: command --help does not exist.\nAvailable commands:\n", True),  # pew
        (1, "option --help not recognized\n", True),  # topydo
        (2, "Usage: zeopack [options]\nzeopack: error: no such option: --help\n", True),
        # a whole help, then the project's own status for it (robotframework's robot: 251)
        (
            251,
            "Robot Framework -- A generic automation framework\n\nUsage:  robot [options] paths\n",
            True,
        ),
        # a traceback is a crash, whatever else it printed; a signal is no answer
        (1, "Usage: x\nTraceback (most recent call last):\n  File ...\nKeyError: 'a'\n", False),
        (-9, "usage: x\n", False),
        # it read --help as something else and refused that: nothing says it ran as meant
        (1, "--help does not look like an app bundle\n", False),
        (1, "No recipients specified.\n", False),
    ],
)
def test_a_script_that_refuses_help_without_a_traceback_has_run(
    status: int, output: str, ran: bool
) -> None:
    assert _answers_with_usage(status, output) is ran
