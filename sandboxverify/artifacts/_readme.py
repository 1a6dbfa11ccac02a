"""The long description rendered as PyPI renders it: readme_renderer, the library twine and PyPI
use. reStructuredText (also what PyPI assumes without a Description-Content-Type) fails on any
docutils warning or worse, and PyPI refuses the upload; plain text and Markdown always render."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from sandboxverify.artifacts._rules import Problem

#: docutils' ``<string>:6: (ERROR/3) Unknown directive type`` as twine words it
_DOCUTILS_MESSAGE = re.compile(r"<string>:(?P<line>\d+): \((?P<level>[A-Z]+)/\d\) ")
_RST_HINT = (
    "fix the README so it renders on PyPI (python -m readme_renderer README.rst shows where): "
    "Sphinx-only roles and directives (:ref:, :py:func:, .. automodule::), raw and include "
    "directives and title underlines shorter than the title fail; or declare it as Markdown "
    "(readme = 'README.md')"
)
_SHOWN = 3


def readme_problems(filename: str, where: str, raw: Mapping[str, Any]) -> list[Problem]:
    """The long description's problems: one PyPI would refuse, or none declared."""
    description: str = raw.get("description") or ""
    content_type = (raw.get("description_content_type") or "").split(";", 1)[0].strip().lower()
    if not description.strip() or description.strip() == "UNKNOWN":
        return [
            Problem(
                f"{where} has no long description: the project's PyPI page will be empty",
                "set [project] readme = 'README.md' (or .rst) in pyproject.toml",
                installable=True,
                rule="readme-missing",
                file=filename,
            )
        ]
    found: list[Problem] = []
    if not content_type or content_type == "unknown":
        found.append(
            Problem(
                f"{where} has no Description-Content-Type: PyPI renders the long description as "
                "reStructuredText",
                "set [project] readme to the file (its suffix gives the type), or "
                "readme = {file = 'README.md', content-type = 'text/markdown'}",
                installable=True,
                rule="readme-content-type-missing",
                file=filename,
            )
        )
        content_type = "text/x-rst"
    if content_type == "text/x-rst":
        errors = rst_errors(description)
        if errors is not None:
            shown = "; ".join(errors[:_SHOWN]) + (
                f" (and {len(errors) - _SHOWN} more)" if len(errors) > _SHOWN else ""
            )
            found.append(
                Problem(
                    f"{where}: the long description does not render as reStructuredText, so "
                    f"PyPI refuses the upload: {shown or 'no content rendered'}",
                    _RST_HINT,
                    installable=True,
                    rule="readme-invalid",
                    file=filename,
                )
            )
    return found


@lru_cache(maxsize=8)  # the sdist and the wheel carry the same text
def rst_errors(text: str) -> tuple[str, ...] | None:
    """docutils' messages (``line 6: Error: Unknown directive type``) when the text does not
    render as readme_renderer renders it for PyPI, else ``None``."""
    # docutils takes ~0.5 s to import: only for a reStructuredText description
    from readme_renderer.rst import render  # noqa: PLC0415

    stream = io.StringIO()
    if render(text, stream=stream) is not None:
        return None
    messages: list[str] = []
    for line in stream.getvalue().splitlines():
        match = _DOCUTILS_MESSAGE.match(line)
        if match:
            level = match["level"].capitalize()
            messages.append(f"line {match['line']}: {level}: {line[match.end() :].strip()}")
        elif line.strip() and not line.startswith(" ") and not messages:
            messages.append(line.strip())
    return tuple(messages)
