"""Secrets out of every output: which variables count, the forms a value takes, reports as
values (before JSON or XML quote them) and text streams as text."""

from __future__ import annotations

import io
import json
from urllib.parse import quote

import pytest

from sandboxverify.report._junit import junit_xml
from sandboxverify.report._model import (
    Failure,
    PluginError,
    PluginRecord,
    Report,
    Run,
    Stage,
    ToolRecord,
)
from sandboxverify.report._records import SmokeCall, SmokeError, SmokeRecord
from sandboxverify.report._redact import Redactor, redact, secret_values

SECRET = "s3cr3t-T0ken/value"


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "MY_SECRET",
        "DB_PASSWORD",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "SSH_PRIVATE_KEY",
        "TWINE_USERNAME",
        "TWINE_REPOSITORY_URL",
        "UV_PUBLISH_URL",
        "PYPI_UPLOAD",
        "HATCH_INDEX_AUTH",
        "SENTRY_DSN",
        "my_lowercase_token",
    ],
)
def test_a_secret_looking_variable_is_redacted(name: str) -> None:
    assert secret_values({name: SECRET}) == [SECRET]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GIT_AUTHOR_NAME", "Jane Doe"),
        ("HOME", "/home/jane/secrets"),
        ("UV_INDEX_URL", "https://pypi.example/simple"),
        ("HF_HUB_DISABLE_TOKEN", "true"),
        ("MY_TOKEN", "abc"),
        ("MY_TOKEN", "   "),
    ],
)
def test_other_variables_and_values_too_common_to_be_secrets_are_kept(
    name: str, value: str
) -> None:
    assert secret_values({name: value}) == []


def test_longer_secrets_are_replaced_first() -> None:
    assert secret_values({"A_TOKEN": "abcd", "B_TOKEN": "abcdefgh"}) == ["abcdefgh", "abcd"]
    assert redact("x abcdefgh y", ["abcd", "abcdefgh"]) == "x *** y"


def test_every_spelling_of_a_secret_is_redacted() -> None:
    secret = 'p@ss"w\\rd with space'
    secrets = Redactor([secret])
    for spelling in (secret, repr(secret), json.dumps(secret), quote(secret, safe="")):
        assert secret not in secrets.text(f"before {spelling} after")
        assert "***" in secrets.text(f"before {spelling} after")


def test_url_credentials_are_redacted_whatever_the_variable() -> None:
    assert Redactor([]).text("pip: https://user:hunter2@pypi.example/simple") == (
        "pip: https://***@pypi.example/simple"
    )


def test_a_missing_environment_means_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", SECRET)
    assert redact(f"token: {SECRET}") == "token: ***"


def carrying(secret: str) -> Report:
    """A report that carries ``secret`` wherever a plugin or a tool can put text."""
    run = Run(
        python="3.12.1",
        interpreter="/usr/bin/python3.12",
        ok=False,
        stages=(Stage("probe", "failed", 0.5),),
        plugins=(
            PluginRecord(
                "leaky",
                "sandboxverify.plugins",
                "demo.leaky:setup",
                ok=False,
                error=PluginError("RuntimeError", f"bad {secret}", f"tb {secret}", "load"),
            ),
        ),
        tools=(
            ToolRecord(
                "greet",
                "leaky",
                f"uses {secret}",
                parameters={"properties": {secret: {"default": secret}}},
            ),
        ),
        smoke=SmokeRecord(
            "smoke.toml",
            ok=False,
            error=SmokeError("expect_mismatch", f"saw {secret}", 1, 1),
            calls=(SmokeCall("greet", "call_1", 1, 1, text=secret, text_length=len(secret)),),
        ),
    )
    return Report(
        target=".",
        artifacts=(),
        runs=(run,),
        failures=(
            Failure("plugin_load_failed", f"leaky: {secret}", "3.12.1", "leaky", details=secret),
        ),
        host="native",
        groups=("sandboxverify.plugins",),
        installer="uv",
        seconds=1.0,
        notes=(f"note {secret}",),
    )


def test_a_report_is_redacted_as_a_value_and_keeps_its_shape() -> None:
    secret = 'tok<en>&"quoted"'
    report = carrying(secret)

    redacted = Redactor([secret]).value(report)

    assert isinstance(redacted, Report)
    document = json.dumps(redacted.to_json())
    assert secret not in document and json.dumps(secret)[1:-1] not in document
    assert document.count("***") == 10
    xml = junit_xml(redacted)
    assert "tok&lt;en&gt;" not in xml and "***" in xml
    # nothing else changed: the same report once the mask is put back
    assert json.dumps(redacted.to_json()).replace("***", json.dumps(secret)[1:-1]) == (
        json.dumps(report.to_json())
    )
    assert redacted.runs[0].smoke == SmokeRecord(
        "smoke.toml",
        ok=False,
        error=SmokeError("expect_mismatch", "saw ***", 1, 1),
        calls=(SmokeCall("greet", "call_1", 1, 1, text="***", text_length=len(secret)),),
    )


def test_a_stream_is_redacted_as_text() -> None:
    target = io.StringIO()
    stream = Redactor([SECRET]).stream(target)

    assert stream.write(f"token {SECRET}\n") == len(f"token {SECRET}\n")
    stream.flush()

    assert target.getvalue() == "token ***\n"
    assert stream.isatty() is False
