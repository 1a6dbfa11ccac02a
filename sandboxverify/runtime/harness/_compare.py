"""Comparing a tool's result with the one recorded in the playbook.

A recorded playbook keeps, on each real call, the text its result had (``result``). A replay
compares each result with it (``compare_results = false`` in the playbook, or
``compare_result = false`` on a call, opts out) and fails with ``replay_mismatch`` at the first
call whose result differs. What legitimately changes from run to run is masked on both sides
first: the values of secrets (by the one redaction marker, ``***``: a recording holds no
secret, a live result may), then ``normalize`` (regexes: generated ids, times), whose matches
become stable placeholders numbered by first appearance (``<id-1>``, ``<id-2>``: the same id
twice stays the same placeholder, two different ids do not). Recordings are written the same
way, so a refreshed recording differs only where behaviour did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Callable

from sandboxverify.runtime._results import excerpt
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._events import ToolResultRecord
from sandboxverify.runtime.harness._secrets import redact

_SHOWN = 300
#: what a masked value becomes, numbered per text in order of first appearance
PLACEHOLDER = "<id-{}>"
#: values that look generated (UUIDs, ULIDs, long hex digests, prefixed random ids): masked in
#: what a model says when a recording is written, never in results unless normalize says so
GENERATED = (
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    r"\b[A-Za-z]{1,12}_(?=[0-9A-Za-z]*[0-9])(?=[0-9A-Za-z]*[a-zA-Z])[0-9A-Za-z]{16,}\b",
    r"\b(?=[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]*[0-9])[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}\b",
    r"\b[0-9a-f]{24,}\b",
)

Normalize = Callable[[str], str]


def normalizer(patterns: Sequence[str], secrets: Sequence[str] = ()) -> Normalize:
    """``secrets`` masked (``***``), then each distinct match of the patterns (tried in order,
    the first to match at a place wins) replaced by a placeholder numbered in order of first
    appearance."""
    combined = re.compile("|".join(f"(?:{pattern})" for pattern in patterns)) if patterns else None

    def normalize(text: str) -> str:
        text = str(redact(text, secrets)) if secrets else text
        if combined is None:
            return text
        numbers: dict[str, int] = {}

        def placeholder(match: re.Match[str]) -> str:
            return PLACEHOLDER.format(numbers.setdefault(match.group(0), len(numbers) + 1))

        return combined.sub(placeholder, text)

    return normalize


def compare_result(
    record: ToolResultRecord, *, recorded: str, normalize: Normalize, where: str
) -> None:
    """A ``.then`` check: the result's text equals the recorded one, once normalised."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    before, now = normalize(recorded), normalize(record.text)
    if before == now:
        return
    raise HarnessError(
        "replay_mismatch",
        f"turn {record.turn}, action {record.action} ({record.tool_call_id}) [{where}]: the "
        f"result of {record.tool_name!r} differs from the recording{_first_difference(before, now)}"
        f": recorded {excerpt(before, _SHOWN)!r}, now {excerpt(now, _SHOWN)!r}; if the "
        "difference is an id or a time, mask it with normalize = ['regex', ...]; if the tool's "
        "answer changed on purpose, record again (sandboxverify record --refresh)",
        turn=record.turn,
        action=record.action,
    )


def _first_difference(before: str, now: str) -> str:
    start = next(
        (i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now))
    )
    line = before.count("\n", 0, start) + 1
    column = start - before.rfind("\n", 0, start)
    return f" (first at line {line}, column {column})"
