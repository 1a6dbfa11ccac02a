"""Secrets out of everything sandboxverify shows or writes.

The caller's environment may hold credentials (a CI job's ``GITHUB_TOKEN``, ``TWINE_PASSWORD``,
an index token). Plugin code never gets them, but a value can still reach a report: a plugin
that read it from a file, a build log, an error message quoting a URL. Every output (text,
JSON, JUnit XML, GitHub annotations, the step summary, command logs) therefore goes through
:class:`Redactor` on its way out, and every value of a secret-looking variable is replaced by
``***``, as are credentials in URLs (``https://user:token@host``).

Reports are redacted as values, before they are serialised (a secret quoted by JSON or escaped
by XML is caught as it is); text streams are redacted as text, including the forms a value
takes when it is quoted (``repr``, JSON) or URL-encoded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TextIO, TypeVar
from urllib.parse import quote

MASK = "***"

#: a variable whose name says it holds a credential
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|CREDENTIAL|AUTH(?!OR)|COOKIE|DSN"
    r"|^(TWINE|UV_PUBLISH|PYPI|FLIT|HATCH_INDEX|POETRY_HTTP_BASIC|POETRY_PYPI)_",
    re.IGNORECASE,
)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/\s:@]+(:[^/\s@]*)?@", re.I)
#: values too common to be anyone's secret, which replacing would only garble the output with
_NOT_SECRET = frozenset({"true", "false", "none", "null", "yes", "no", "on", "off"})
_SHORTEST = 4

T = TypeVar("T")


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the secret-looking variables, longest first (a secret that contains
    another is replaced whole)."""
    env = os.environ if environ is None else environ
    found = {
        value
        for name, value in env.items()
        if SECRET_NAME.search(name)
        and len(value.strip()) >= _SHORTEST
        and value.strip().lower() not in _NOT_SECRET
    }
    return sorted(found, key=len, reverse=True)


def _spellings(value: str) -> set[str]:
    """The forms a value takes in text: as it is, quoted by ``repr`` or JSON, URL-encoded."""
    forms = {value, repr(value)[1:-1], json.dumps(value)[1:-1], quote(value, safe="")}
    return {form for form in forms if len(form) >= _SHORTEST}


class Redactor:
    """Replaces secrets in text and in report values; build one per command, from the
    environment it was started with."""

    def __init__(self, secrets: Iterable[str] | None = None) -> None:
        values = secret_values() if secrets is None else list(secrets)
        forms = {form for value in values for form in _spellings(value)}
        self._forms = sorted(forms, key=len, reverse=True)

    def text(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)

    def value(self, value: T) -> T:
        """``value`` with every string in it redacted: dict keys and values, lists, tuples and
        frozen dataclasses (such as :class:`~sandboxverify.report._model.Report`), all copied."""
        return self._walk(value)  # type: ignore[no-any-return]

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._walk(key): self._walk(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            items = [self._walk(item) for item in value]
            if hasattr(value, "_fields"):  # a named tuple
                return type(value)(*items)
            return type(value)(items)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {
                field.name: self._walk(getattr(value, field.name))
                for field in dataclasses.fields(value)
                if field.init
            }
            return dataclasses.replace(value, **changes)
        return value

    def stream(self, stream: TextIO) -> TextIO:
        """``stream``, with everything written to it redacted (a line at a time is enough:
        the text output writes whole lines)."""
        return _RedactedStream(stream, self)  # type: ignore[return-value]


class _RedactedStream:
    def __init__(self, stream: TextIO, redactor: Redactor) -> None:
        self._stream = stream
        self._redactor = redactor

    def write(self, text: str) -> int:
        self._stream.write(self._redactor.text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` without the caller's secrets (or ``secrets``) and URL credentials."""
    return Redactor(secrets).text(text)
