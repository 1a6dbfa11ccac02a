"""Comparing a tool's result with the one recorded in the playbook (``compare_results``).

A recorded playbook keeps, on each real call, the text its result had (``result``). With
``compare_results`` on, a replay fails with ``replay_mismatch`` at the first call whose result
text differs; ``normalize`` (regexes) masks what legitimately changes from run to run, such as
generated ids and times, on both sides before they are compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Callable

from sandboxverify.runtime._results import excerpt
from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._events import ToolResultRecord

MASK = "<normalized>"
_SHOWN = 300

Normalize = Callable[[str], str]


def normalizer(patterns: Sequence[str]) -> Normalize:
    """Each match of any pattern replaced by ``<normalized>``, the patterns in order."""
    compiled = [re.compile(pattern) for pattern in patterns]

    def normalize(text: str) -> str:
        for pattern in compiled:
            text = pattern.sub(MASK, text)
        return text

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
        "difference is an id or a time, mask it with normalize = ['regex', ...]",
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
