"""The judge's own account of a ``.py`` playbook holds what a report can carry, whatever the
playbook's process sends it."""

from __future__ import annotations

from typing import Any

import pytest

from sandboxverify.runtime._audit import Audit

RESULT = {"content": [{"type": "text", "text": "boom"}], "is_error": True}


@pytest.mark.parametrize("where", ["1; rm -rf /", None, -3, True, 2.5, [1]])
def test_a_call_numbered_anyhow_is_recorded_and_judged_with_numbers(where: Any) -> None:
    audit = Audit()
    audit.opened(1, {})
    audit.from_playbook(
        1, {"op": "call", "tool": "t" * 1000, "tool_call_id": "c", "turn": where, "action": where}
    )
    audit.from_plugins(1, {"op": "outcome", "result": RESULT, "plugin_ran": True})
    (call,) = audit.calls
    assert (call["turn"], call["action"]) == (0, 0)
    assert len(call["tool"]) == 200
    (failure,) = audit.failures
    assert failure["code"] == "tool_error"
    assert (failure["turn"], failure["action"]) == (0, 0)


def test_a_call_numbered_as_a_playbook_numbers_it_keeps_its_numbers() -> None:
    audit = Audit()
    audit.opened(1, {})
    audit.from_playbook(1, {"op": "call", "tool": "t", "turn": 2, "action": 3})
    audit.from_plugins(1, {"op": "outcome", "result": RESULT, "plugin_ran": True})
    assert (audit.calls[0]["turn"], audit.calls[0]["action"]) == (2, 3)
    assert (audit.failures[0]["turn"], audit.failures[0]["action"]) == (2, 3)
