"""The real command line on a real terminal (a pseudo-terminal): running stages update in place
with their elapsed time, colour follows NO_COLOR / FORCE_COLOR / TERM=dumb, and a log (no
terminal) gets plain lines."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

import pytest

from tests.helpers import fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

CHECK = ["check", str(fixture("good-hatch")), "--installer", "uv", "--no-import-all"]
#: a rewrite of the status line: erase it, a spinner frame, the running stages with their time
STATUS = re.compile(r"\r\x1b\[K(?:\x1b\[2m)?\S (?P<running>[^\r\n\x1b]*)")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_NOT_INHERITED = ("CI", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")


def environment(**extra: str) -> dict[str, str]:
    """This environment, less what decides colour and updates, plus ``extra``."""
    env = {name: value for name, value in os.environ.items() if name not in _NOT_INHERITED}
    return {**env, "COLUMNS": "120", **extra}


def in_a_terminal(args: list[str], **extra: str) -> tuple[int, str]:
    """Run the command line with a pseudo-terminal as its stdout and stderr."""
    import pty  # noqa: PLC0415 - POSIX only, like the terminal behaviour it tests

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandboxverify", *args],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=environment(**extra),
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(primary, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:  # pragma: no cover - only if the check hangs
            proc.kill()
        os.close(primary)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def test_on_a_terminal_the_running_stages_update_in_place_with_their_elapsed_time() -> None:
    code, output = in_a_terminal(CHECK, TERM="xterm-256color")

    assert code == 0, output
    statuses = [match["running"] for match in STATUS.finditer(output)]
    times = {float(t) for status in statuses for t in re.findall(r"(\d+\.\d)s", status)}
    assert len(statuses) >= 5, output  # a few times a second through the build and install
    assert len(times) >= 3, statuses  # the elapsed time moves on
    assert any(status.startswith("build ") for status in statuses)
    assert COLOUR.search(output)  # a terminal gets colour
    assert "PASSED" in output.splitlines()[-1]


def test_no_color_keeps_the_updates_and_drops_the_colour() -> None:
    code, output = in_a_terminal(CHECK, TERM="xterm-256color", NO_COLOR="1")

    assert code == 0, output
    assert STATUS.search(output)
    assert not COLOUR.search(output)


def test_a_dumb_terminal_gets_plain_lines() -> None:
    code, output = in_a_terminal(CHECK, TERM="dumb")

    assert code == 0, output
    assert "\x1b" not in output
    assert "\r\n" in output and "\r" not in output.replace("\r\n", "")  # no rewrites
    assert re.search(r"^ok   build +\d+\.\d\ds ", output, re.MULTILINE)


def test_a_log_gets_plain_lines_and_force_color_colours_them() -> None:
    plain = run_cli(CHECK, env=environment())
    forced = run_cli(CHECK, env=environment(FORCE_COLOR="1"))

    assert (plain.code, forced.code) == (0, 0)
    assert "\x1b" not in plain.stdout
    assert COLOUR.search(forced.stdout)
    assert "\r" not in forced.stdout  # colour, but still no updates in place
