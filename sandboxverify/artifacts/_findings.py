"""The static rules, each declared once: its stable code, its severity and the failure it makes.

What PyPI (or twine, or an installer) would refuse, or what breaks an install, is an ``error``: a
failure. Hygiene (bytecode, junk files, duplicate contents) is a ``warning``: reported in the
report's ``warnings`` and on stderr, and a failure only where ``--fail-on-warning`` names it. The
codes are a contract, as failure codes are: add, never rename.

An ``upload`` rule is about publishing only: PyPI refuses the upload, but an installer takes the
file and its users meet nothing. It fails a check that builds what is about to be published (a
project); on files given as they are, which may be published already, it is a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure, FailureCode, ReportWarning

Severity = Literal["error", "warning"]


@frozen
class Rule:
    code: str
    severity: Severity
    #: what the rule catches, in a few words (``--help`` and the README list them)
    what: str
    failure: FailureCode = "artifact_invalid"
    #: an error only for what is about to be published (see the module's docstring)
    upload: bool = False


_ERROR: Severity = "error"
_WARNING: Severity = "warning"

RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        # -- metadata, as twine and PyPI validate it ------------------------------------------
        Rule(
            "metadata-field-too-new", _ERROR, "a field newer than the Metadata-Version", upload=True
        ),
        Rule(
            "metadata-version-unsupported",
            _ERROR,
            "a Metadata-Version PyPI does not accept",
            upload=True,
        ),
        Rule("metadata-license-file-early", _WARNING, "License-File under Metadata-Version < 2.4"),
        Rule("version-local", _ERROR, "a local version (1.0+local)", upload=True),
        Rule(
            "classifier-invalid",
            _ERROR,
            "an unknown, deprecated or Private classifier",
            upload=True,
        ),
        Rule("summary-too-long", _ERROR, "a Summary over 512 characters", upload=True),
        Rule("url-invalid", _ERROR, "a project URL PyPI refuses", upload=True),
        Rule("license-conflict", _ERROR, "both License and License-Expression", upload=True),
        Rule("license-file-missing", _ERROR, "a License-File the archive lacks", upload=True),
        Rule("readme-invalid", _ERROR, "a long description PyPI cannot render", upload=True),
        Rule("readme-content-type-missing", _WARNING, "no Description-Content-Type"),
        Rule("readme-missing", _WARNING, "no long description"),
        Rule("entry-point-name", _ERROR, "a console script name PyPI refuses", upload=True),
        # -- file names and sizes ---------------------------------------------------------------
        Rule(
            "sdist-filename",
            _ERROR,
            "an sdist not named {normalized_name}-{version}.tar.gz",
            upload=True,
        ),
        Rule(
            "wheel-filename",
            _ERROR,
            "a wheel whose name part is not the normalized name",
            upload=True,
        ),
        Rule(
            "wheel-platform-tag", _ERROR, "a platform tag PyPI refuses (linux_x86_64)", upload=True
        ),
        Rule(
            "wheel-platform-local",
            _WARNING,
            "a wheel built here for this machine only (linux_x86_64): PyPI refuses it",
        ),
        Rule("artifact-too-large", _ERROR, "a file over PyPI's 100 MiB limit", upload=True),
        # -- wheel contents (check-wheel-contents' kinds) ---------------------------------------
        Rule("wheel-editable", _ERROR, "an editable wheel (pip -e, tox usedevelop)"),
        Rule("wheel-src-toplevel", _ERROR, "modules installed under src/ or lib/"),
        Rule("wheel-toplevel-init", _ERROR, "__init__.py at the top of site-packages"),
        Rule("wheel-bytecode", _WARNING, ".pyc or .pyo files in the wheel"),
        Rule("wheel-duplicate-content", _WARNING, "files with identical contents"),
        Rule("wheel-common-toplevel", _WARNING, "a top-level name such as docs, src, build"),
        Rule("wheel-tests-toplevel", _WARNING, "a top-level tests or test package or module"),
        Rule("wheel-toplevel-file", _WARNING, "a non-module file at the top of site-packages"),
        Rule("wheel-unimportable-path", _WARNING, "a module under a path no import reaches"),
        Rule("wheel-dataonly-toplevel", _WARNING, "a top-level directory without modules"),
        Rule("wheel-binary-in-pure", _WARNING, "a compiled extension in a py3-none-any wheel"),
        # -- hygiene of both archives (pydistcheck's kinds) -------------------------------------
        Rule("junk-files", _WARNING, "CI configs, editor and cache files, .git, .github"),
        Rule("path-case-collision", _WARNING, "paths that differ only in case"),
        Rule("path-unportable", _WARNING, "paths with spaces, non-ASCII or over 200 chars"),
        # -- the source: pyproject.toml and the files in version control ------------------------
        Rule(
            "pyproject-invalid",
            _ERROR,
            "pyproject.toml against its schema",
            "pyproject_invalid",
            upload=True,
        ),
        Rule(
            "sdist-missing-module",
            _ERROR,
            "a module tracked in git missing from the sdist",
            "sdist_incomplete",
        ),
        Rule(
            "sdist-missing-files",
            _WARNING,
            "other files tracked in git missing from the sdist",
            "sdist_incomplete",
        ),
    )
}


def rule_named(code: str) -> Rule:
    return RULES[code]


def warning_codes() -> tuple[str, ...]:
    """The codes ``--fail-on-warning`` may name (an upload rule is a warning on given files)."""
    return tuple(code for code, rule in RULES.items() if rule.severity == "warning" or rule.upload)


#: what ``--fail-on-warning`` takes for every warning code
ALL_WARNINGS = "all"
#: the OS sandbox missing: ``--isolation strict`` makes it an error, not ``--fail-on-warning``
NO_OS_SANDBOX = "no-os-sandbox"


def unknown_warning_codes(codes: Sequence[str]) -> list[str]:
    """The codes ``--fail-on-warning`` names that no warning has."""
    known = {*warning_codes(), ALL_WARNINGS}
    return [code for code in codes if code not in known]


def promoted(
    warnings: Sequence[ReportWarning], codes: Sequence[str]
) -> tuple[list[Failure], list[ReportWarning]]:
    """The warnings ``--fail-on-warning`` names, as failures (of the failure code their rule
    fails with), and the rest, still warnings."""
    failures: list[Failure] = []
    kept: list[ReportWarning] = []
    for warning in warnings:
        rule = RULES.get(warning.code)
        if rule is None or (ALL_WARNINGS not in codes and warning.code not in codes):
            kept.append(warning)
            continue
        failures.append(
            Failure(
                rule.failure,
                f"{warning.message} (--fail-on-warning {warning.code})",
                hint=warning.hint,
                rule=warning.code,
            )
        )
    return failures, kept
