"""Turning a failed tool's output into the one line that says what went wrong."""

from __future__ import annotations

import re

_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Warning)(?::\s.*|$)"
)


#: what code that reached for the network and found none prints (DNS, refused, offline)
_NETWORK_ERROR = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve host"
    r"|nodename nor servname provided|getaddrinfo failed|NameResolutionError"
    r"|Network is unreachable|cannot download https?://",
)


def reached_for_network(output: str | None) -> bool:
    """Whether ``output`` shows a download that failed for want of a network."""
    return bool(output) and _NETWORK_ERROR.search(output or "") is not None


def summarize(output: str) -> str:
    """The most telling line of pip, uv or pypa/build output (or of a Python traceback)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return "no output"
    pip_errors = [line[len("ERROR: ") :] for line in lines if line.startswith("ERROR: ")]
    if pip_errors:
        return pip_errors[0]
    exceptions = [line for line in lines if _EXCEPTION_LINE.match(line)]
    if exceptions:
        return exceptions[-1]
    for index, line in enumerate(lines):
        if line.startswith("error: "):  # uv: "error: ..." followed by "cause: ..." lines
            causes = [c[len("cause: ") :] for c in lines[index + 1 :] if c.startswith("cause: ")]
            return line[len("error: ") :] + (f": {causes[0]}" if causes else "")
    for line in reversed(lines):
        if line.startswith("ERROR "):  # pypa/build
            return line[len("ERROR ") :]
    return lines[-1]
