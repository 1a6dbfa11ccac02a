"""What PyPI refuses at upload beyond what ``packaging.metadata`` validates (read from warehouse's
upload checks): the metadata versions it accepts, local versions, classifiers (trove-classifiers,
the list PyPI validates against), URLs, the summary's length, two licences at once; and the long
description, rendered as PyPI renders it (``_readme``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging.version import InvalidVersion, Version

from sandboxverify.artifacts._readme import readme_problems
from sandboxverify.artifacts._rules import Problem

#: the metadata versions PyPI accepts (2.0 never was a standard; 2.6 is newer than PyPI)
PYPI_METADATA_VERSIONS = ("1.0", "1.1", "1.2", "2.1", "2.2", "2.3", "2.4", "2.5")
_SUMMARY_LIMIT = 512
_URL_LABEL_LIMIT = 32
_HTTP_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)
_UPGRADE_BACKEND = (
    "upgrade the build backend and rebuild: it writes the Metadata-Version its fields need "
    "(hatchling >= 1.27, setuptools >= 77, flit-core >= 3.12)"
)


def too_new(where: str, field: str, declared: str | None) -> Problem:
    """A field newer than the declared Metadata-Version: twine and PyPI refuse it, except
    License-File under < 2.4, which twine drops before uploading (setuptools < 77 wrote it)."""
    filename = where.split(":", 1)[0]
    if field == "license-file":
        return Problem(
            f"{where} has License-File under Metadata-Version {declared}: twine drops it, but "
            "uploaders that send it as it is (uv publish, hatch publish) are refused",
            _UPGRADE_BACKEND,
            installable=True,
            rule="metadata-license-file-early",
            file=filename,
        )
    return Problem(
        f"{where} has {field!r}, which Metadata-Version {declared} does not have: "
        f"twine check and PyPI refuse it ({field} introduced in a later metadata version)",
        _UPGRADE_BACKEND,
        installable=True,
        rule="metadata-field-too-new",
        file=filename,
    )


def pypi_problems(filename: str, where: str, raw: Mapping[str, Any]) -> list[Problem]:
    """What PyPI would refuse in this metadata, beyond packaging's validation."""
    found: list[Problem] = []

    def refuse(rule: str, message: str, hint: str) -> None:
        found.append(
            Problem(f"{where} {message}", hint, installable=True, rule=rule, file=filename)
        )

    declared = raw.get("metadata_version")
    if declared and declared not in PYPI_METADATA_VERSIONS and _major(declared) in (1, 2):
        refuse(
            "metadata-version-unsupported",
            f"declares Metadata-Version {declared}, which PyPI does not accept "
            f"({', '.join(PYPI_METADATA_VERSIONS)})",
            "rebuild with a build backend that writes a Metadata-Version PyPI accepts",
        )
    version = raw.get("version")
    try:
        local = Version(version).local if version else None
    except InvalidVersion:
        local = None  # reported by the validation
    if local:
        refuse(
            "version-local",
            f"has the local version {version!r}: PyPI refuses local versions (+{local})",
            "publish a version without '+...' (a VCS version scheme adds it to untagged "
            "commits: tag the release, or set local_scheme = 'no-local-version')",
        )
    for message in _classifier_problems(raw.get("classifiers") or []):
        refuse("classifier-invalid", message, "fix [project] classifiers in pyproject.toml")
    summary = raw.get("summary") or ""
    if len(summary) > _SUMMARY_LIMIT:
        refuse(
            "summary-too-long",
            f"has a Summary of {len(summary)} characters; PyPI takes {_SUMMARY_LIMIT} at most",
            "shorten [project] description (the long text belongs in the README)",
        )
    for message in _url_problems(raw):
        refuse("url-invalid", message, "fix [project.urls] in pyproject.toml")
    if raw.get("license") and raw.get("license_expression"):
        refuse(
            "license-conflict",
            "has both License and License-Expression; PyPI refuses the pair",
            "keep [project] license as an SPDX expression string alone (PEP 639), and drop "
            "license = {text = ...} or a license classifier's duplicate",
        )
    found.extend(readme_problems(filename, where, raw))
    return found


def _major(declared: str) -> int | None:
    """The major metadata version (another major is packaging's own error)."""
    try:
        return Version(declared).major
    except InvalidVersion:
        return None


def _classifier_problems(classifiers: list[str]) -> list[str]:
    import trove_classifiers  # noqa: PLC0415 - a 900-line list, read when metadata has classifiers

    known = trove_classifiers.all_classifiers
    deprecated = trove_classifiers.deprecated_classifiers
    release = getattr(trove_classifiers, "__version__", "")
    messages: list[str] = []
    for classifier in classifiers:
        if classifier in deprecated:
            instead = deprecated[classifier]
            use = f"; use {' or '.join(map(repr, instead))}" if instead else ""
            messages.append(f"has the deprecated classifier {classifier!r}{use}")
        elif classifier.startswith("Private ::"):
            messages.append(
                f"has the classifier {classifier!r}: PyPI refuses every 'Private ::' classifier "
                "(they exist to prevent an upload)"
            )
        elif classifier not in known:
            import difflib  # noqa: PLC0415

            close = difflib.get_close_matches(classifier, sorted(known), n=1)
            meant = f" (did you mean {close[0]!r}?)" if close else ""
            installed = f" {release}" if release else ""
            messages.append(
                f"has the classifier {classifier!r}, which trove-classifiers{installed} does not "
                f"know and PyPI refuses{meant}"
            )
    return messages


def _url_problems(raw: Mapping[str, Any]) -> list[str]:
    messages: list[str] = []
    for field, key in (("Home-Page", "home_page"), ("Download-URL", "download_url")):
        url = raw.get(key)
        if url and not _HTTP_URL.match(url):
            messages.append(f"has {field} {url!r}, which is not an http(s) URL")
    urls: Mapping[str, str] = raw.get("project_urls") or {}
    for label, url in urls.items():
        if not label.strip() or len(label) > _URL_LABEL_LIMIT:
            messages.append(
                f"has the Project-URL label {label!r}: PyPI takes 1 to {_URL_LABEL_LIMIT} "
                "characters"
            )
        if not _HTTP_URL.match(url.strip()):
            messages.append(f"has the Project-URL {label!r} = {url!r}, not an http(s) URL")
    return messages
