"""Secrets out of what the harness writes and compares: one marker, the host's (``***``).

Values of variables named like secrets (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``...)
and the keys a live model uses are replaced by ``***`` in recordings, traces and results before
they are written, and in a live result before it is compared with a recorded one: a recording
that met a secret replays as it was recorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

#: the one redaction marker: the host side's (``report._redact.MASK``) too
REDACTED = "***"
# the names the host side's redactor takes for secrets (report._redact), which the runtime
# cannot import
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|CREDENTIAL|AUTH(?!OR)|COOKIE|DSN"
    r"|^(TWINE|UV_PUBLISH|PYPI|FLIT|HATCH_INDEX|POETRY_HTTP_BASIC|POETRY_PYPI)_",
    re.IGNORECASE,
)
_SHORTEST_SECRET = 6


def secret_values(environ: Mapping[str, str], extra: Sequence[str | None] = ()) -> tuple[str, ...]:
    """Values never to write: of variables named like secrets, and the keys given; longest
    first, so a secret containing another is hidden whole."""
    found = {value for name, value in environ.items() if SECRET_NAME.search(name)}
    found.update(value for value in extra if value)
    kept = {value for value in found if len(value) >= _SHORTEST_SECRET and not value.isdigit()}
    return tuple(sorted(kept, key=lambda value: (-len(value), value)))


def redact(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (JSON-like) with every secret in its strings and keys replaced."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Mapping):
        return {redact(key, secrets): redact(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item, secrets) for item in value]
    return value
