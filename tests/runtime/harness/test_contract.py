"""The contract run's comparison (where a live model left the recording) and the secrets kept out
of everything a live model's session writes."""

from __future__ import annotations

from typing import Any

from sandboxverify.runtime.harness._contract import divergences, same_value
from sandboxverify.runtime.harness._secrets import REDACTED, redact, secret_values


def call(tool: str, **params: Any) -> dict[str, Any]:
    return {"kind": "call", "tool": tool, "params": params}


def parallel(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "parallel", "text": None, "calls": list(calls)}


def say(text: str = "done") -> dict[str, Any]:
    return {"kind": "say", "text": text}


def turn(*actions: dict[str, Any], prompt: str = "go") -> dict[str, Any]:
    return {"prompt": prompt, "actions": list(actions)}


def test_the_same_calls_match_in_any_order_and_words_may_differ() -> None:
    recorded = [turn(parallel(call("a", x=1), call("b", y=[1, {"z": "q"}])), say("Done."))]
    live = [turn(parallel(call("b", y=[1, {"z": "q"}]), call("a", x=1)), say("All done!"))]
    assert divergences(recorded, live) == []


def test_a_reference_in_a_recorded_argument_matches_any_value() -> None:
    assert same_value("${id}", "PLAN-1")
    assert same_value("plan ${id} now", "plan PLAN-9 now")
    assert not same_value("plan ${id} now", "plan PLAN-9 later")
    assert same_value("$${literal}", "${literal}")
    assert not same_value("$${literal}", "anything")


def test_json_equality_keeps_booleans_apart_from_numbers() -> None:
    assert same_value(1, 1.0)
    assert not same_value(True, 1)
    assert not same_value({"a": 1}, {"a": 1, "b": 2})
    assert not same_value([1], [1, 2])


def test_each_diverging_step_names_the_turn_and_the_calls_apart() -> None:
    recorded = [
        turn(parallel(call("reverse_text", text="stressed"), call("divide", a=1, b=0)), say()),
        turn(call("total"), say(), prompt="second"),
    ]
    live = [
        turn(parallel(call("reverse_text", text="desserts"), call("divide", a=1, b=0)), say()),
        turn(call("total"), call("total"), say(), prompt="second"),
    ]

    found = divergences(recorded, live)

    assert found == [
        {
            "turn": 1,
            "step": 1,
            "prompt": "go",
            "recorded": 'parallel calls reverse_text({"text": "stressed"}), divide({"a": 1, "b": 0})',
            "live": 'parallel calls reverse_text({"text": "desserts"}), divide({"a": 1, "b": 0})',
            "not_made": ['reverse_text({"text": "stressed"})'],
            "instead": ['reverse_text({"text": "desserts"})'],
        },
        {
            "turn": 2,
            "step": 2,
            "prompt": "second",
            "recorded": 'say "done"',
            "live": "call total({})",
        },
    ]


def test_a_turn_the_live_model_ends_early_or_a_run_that_stopped() -> None:
    recorded = [turn(call("a"), call("b"), say()), turn(call("c"), say())]
    ended = divergences(recorded, [turn(call("a"), say()), turn(call("c"), say())])
    assert [(d["turn"], d["step"], d["recorded"], d["live"]) for d in ended] == [
        (1, 2, "call b({})", 'say "done"')
    ]

    stopped = divergences(recorded, [turn(call("a"))], stopped="unknown_tool")
    assert [(d["turn"], d["step"], d["live"]) for d in stopped] == [
        (1, 2, "nothing: the live run stopped (unknown_tool)")
    ]


def test_secret_values_and_redaction() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-abcdef123456",
        "MY_TOKEN": "tok-987654321",
        "DB_PASSWORD": "hunter2hunter2",
        "FEATURE_KEY_ENABLED": "true",  # too short to be a secret: never masks every "true"
        "SOME_SECRET_PORT": "12345678",  # digits only: not a secret worth masking
        "PATH": "/usr/bin",
    }
    secrets = secret_values(environ, ["sk-abcdef123456-longer", None])
    assert secrets == (
        "sk-abcdef123456-longer",
        "sk-abcdef123456",
        "hunter2hunter2",
        "tok-987654321",
    )

    value = {
        "prompt": "use sk-abcdef123456-longer and sk-abcdef123456",
        "sk-abcdef123456": ["tok-987654321", 3, None],
        "ok": "true",
    }
    assert redact(value, secrets) == {
        "prompt": f"use {REDACTED} and {REDACTED}",
        REDACTED: [REDACTED, 3, None],
        "ok": "true",
    }
