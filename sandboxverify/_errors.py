"""The one error hierarchy. The CLI turns these into ``ERROR ...`` plus a hint and an exit code."""

from __future__ import annotations

#: Exit codes (fixed contract): 0 passed, 1 a check failed, 2 usage or configuration error.
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class SandboxVerifyError(Exception):
    """Base class: something the user can fix, with a hint saying how."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(SandboxVerifyError):
    """Bad command-line input: an option, a target, an interpreter."""


class ConfigError(UsageError):
    """Unreadable or invalid ``[tool.sandboxverify]`` configuration."""


class Interrupted(SandboxVerifyError):
    """Ctrl-C or SIGTERM: everything temporary has been cleaned up."""

    exit_code = 130
