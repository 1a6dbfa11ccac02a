"""The reaper that runs each step in process isolation: nothing a step starts outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandboxverify.sandbox._confinement import REAPER, Confinement, ProcessIsolation

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a child subreaper is Linux's"
)

#: a double-forked, setsid daemon that sleeps under a marker, then the command exits (or sleeps)
_DAEMON = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(300)',"
    " sys.argv[1]])\n"
    "    os._exit(0)\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def reaped(*argv: str) -> list[str]:
    return ProcessIsolation().launch(list(argv), Confinement(cwd=Path.cwd())).argv


def running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return found.stdout.split()


def wait_for(marker: str) -> None:
    deadline = time.monotonic() + 30
    while not running(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert running(marker), "the daemon never started"


def test_process_isolation_runs_the_command_under_the_reaper() -> None:
    assert reaped("true") == [sys.executable, "-I", "-S", str(REAPER), "true"]


def test_the_reaper_exits_as_its_command_did() -> None:
    assert subprocess.run(reaped("sh", "-c", "exit 3"), check=False).returncode == 3
    killed = subprocess.run(reaped("sh", "-c", "kill -TERM $$"), check=False)
    assert killed.returncode == -signal.SIGTERM


def test_a_double_forked_setsid_daemon_is_gone_when_the_command_ends(tmp_path: Path) -> None:
    marker = f"svfix-reaper-daemon-{tmp_path.name}-{os.getpid()}"

    completed = subprocess.run(reaped(sys.executable, "-c", _DAEMON, marker, "0.5"), check=False)

    assert completed.returncode == 0
    assert running(marker) == []


def test_sigterm_to_the_reaper_ends_everything_below_it(tmp_path: Path) -> None:
    marker = f"svfix-reaper-stopped-{tmp_path.name}-{os.getpid()}"
    proc = subprocess.Popen(reaped(sys.executable, "-c", _DAEMON, marker, "300"))
    wait_for(marker)

    proc.terminate()

    assert proc.wait(timeout=30) == -signal.SIGTERM
    assert running(marker) == []


def test_a_command_that_cannot_start_is_exit_code_127(tmp_path: Path) -> None:
    completed = subprocess.run(
        reaped(str(tmp_path / "missing")), capture_output=True, text=True, check=False
    )
    assert completed.returncode == 127
    assert "cannot start" in completed.stderr
