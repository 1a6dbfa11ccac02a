"""What the hosts that run an application with the plugin share."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator


class _Output:
    text = ""


@contextlib.contextmanager
def captured() -> Iterator[_Output]:
    """The application's output (stdout and stderr, in a real file: it may ask for its fileno),
    written to standard output again afterwards."""
    output = _Output()
    stdout, stderr = sys.stdout, sys.stderr
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="backslashreplace") as capture:
        sys.stdout = sys.stderr = capture
        try:
            yield output
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            with contextlib.suppress(Exception):
                capture.flush()
                capture.seek(0)
                output.text = capture.read()
            with contextlib.suppress(Exception):
                stdout.write(output.text)
                stdout.flush()
