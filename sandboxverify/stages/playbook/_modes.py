"""One switch moves a whole suite of recorded playbooks between replay, record and live.

``SANDBOXVERIFY_LLM=replay|record|live`` (or the command line: ``run --live``, ``record
--refresh``, pytest's ``--llm-mode``): ``replay`` (the default) plays the recorded steps with no
model and no key, results compared; ``record`` records each playbook again from its own prompts
and settings, then replays it; ``live`` is the contract run, the model asked again. Under CI
(``CI`` set) only replay runs, unless the command line itself asks for another mode: a variable
left in an environment must not spend a model's budget, or rewrite recordings, on every push.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from sandboxverify._errors import UsageError

LLM_ENV = "SANDBOXVERIFY_LLM"
LlmMode = Literal["replay", "record", "live"]
LLM_MODES: tuple[LlmMode, ...] = ("replay", "record", "live")
_TRUTHY = ("1", "true", "yes")


def llm_mode(asked: str | None, environ: Mapping[str, str]) -> LlmMode:
    """The mode: ``asked`` (the command line's), else ``SANDBOXVERIFY_LLM``, else replay."""
    if asked is not None:
        if asked not in LLM_MODES:
            raise UsageError(f"unknown mode {asked!r}", hint="replay, record or live")
        return asked
    value = environ.get(LLM_ENV, "").strip().lower()
    if not value:
        return "replay"
    if value not in LLM_MODES:
        raise UsageError(
            f"{LLM_ENV}={value!r} is no mode", hint=f"{LLM_ENV}=replay, record or live"
        )
    if value != "replay" and environ.get("CI", "").strip().lower() in _TRUTHY:
        raise UsageError(
            f"{LLM_ENV}={value}: under CI recordings only replay, unless the command line asks",
            hint=f"in the one job that holds the model's key, ask on the command line (run "
            f"--live, record --refresh, pytest --llm-mode {value}); elsewhere unset {LLM_ENV}",
        )
    return value
