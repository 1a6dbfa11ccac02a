"""``record --sandbox``: its options without --sandbox, and the hints for an unusable model."""

from __future__ import annotations

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.cli._sandboxed import SandboxChoice, sandbox_hint


@pytest.mark.parametrize(
    ("choice", "named"),
    [
        (SandboxChoice(project="."), "--project"),
        (SandboxChoice(with_requirements=("llm-echo",)), "--with"),
        (SandboxChoice(pass_env=("OPENAI_API_KEY",)), "--pass-env"),
        (SandboxChoice(installer="uv"), "--installer"),
        (SandboxChoice(python="3.12"), "--python"),
        (SandboxChoice(isolation="strict"), "--isolation"),
    ],
)
def test_sandbox_options_need_sandbox(choice: SandboxChoice, named: str) -> None:
    with pytest.raises(UsageError, match=f"^{named} applies to --sandbox recordings") as raised:
        choice.check()
    assert raised.value.hint == f"add --sandbox, or drop {named}"


def test_with_sandbox_every_option_is_fine() -> None:
    SandboxChoice(True, ".", ("llm",), ("KEY",), "pip", "3.12", "strict").check()
    SandboxChoice().check()


def test_a_missing_key_names_the_variable_to_pass() -> None:
    hint = sandbox_hint({"reason": "no_key", "key_env": "OPENAI_API_KEY"})
    assert hint is not None and hint.endswith("--pass-env OPENAI_API_KEY")
    assert "--pass-env NAME" in (sandbox_hint({"reason": "no_key", "key_env": None}) or "")
    assert "--with llm-PLUGIN" in (sandbox_hint({"reason": "unknown_model"}) or "")
    assert "--with llm " in (sandbox_hint({"reason": "no_llm"}) or "")
    assert sandbox_hint({"reason": "options", "hint": "see the options"}) == "see the options"
    assert sandbox_hint({}) is None
