"""``record --sandbox``: its options checked before any work, and the recording itself run
through the pipeline (build, sandbox, install, then the runtime in the sandbox), with the
progress of ``check``.

Only the variables ``--pass-env`` names reach the sandbox, so a model's key must be named there;
llm's stored keys (its user directory) stay outside. A model the sandbox cannot use says so
with a hint in those terms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.cli import _terminal
from sandboxverify.sandbox import InstallerChoice, IsolationChoice

#: how long a session in a sandbox may take when --timeout is not given (it is killed then)
DEFAULT_SESSION_TIMEOUT = 600.0


@frozen
class SandboxChoice:
    """What ``--sandbox`` and its options asked for."""

    enabled: bool = False
    project: str | None = None
    with_requirements: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    installer: InstallerChoice | None = None
    python: str | None = None
    isolation: IsolationChoice | None = None

    def check(self) -> None:
        """Options of a sandboxed recording without ``--sandbox`` are a usage error: an
        in-place recording would silently ignore them."""
        given = {
            "--project": self.project,
            "--with": self.with_requirements,
            "--pass-env": self.pass_env,
            "--installer": self.installer,
            "--python": self.python,
            "--isolation": self.isolation,
        }
        named = [option for option, value in given.items() if value]
        if named and not self.enabled:
            raise UsageError(
                f"{named[0]} applies to --sandbox recordings",
                hint="add --sandbox, or drop " + ", ".join(named),
            )

    def record(
        self,
        request: dict[str, Any],
        *,
        timeout: float | None,
        trace: Path,
        human: TextIO,
        verbose: int,
    ) -> dict[str, Any]:
        """Build, install and record; the stages shown on ``human`` as ``check`` shows them."""
        # the pipeline and its renderer: only a sandboxed recording pays for importing them
        from sandboxverify.cli._render import Progress  # noqa: PLC0415
        from sandboxverify.options import CheckOptions  # noqa: PLC0415
        from sandboxverify.pipeline import record_in_sandbox  # noqa: PLC0415

        options = CheckOptions(
            targets=(self.project or ".",),
            installer=self.installer or "auto",
            isolation=self.isolation or "auto",
            python=(self.python,) if self.python else (),
            pass_env=self.pass_env,
            with_requirements=self.with_requirements,
            timeout=timeout or DEFAULT_SESSION_TIMEOUT,
            # a live model answers over the network, from inside the sandbox
            network=True,
        )
        progress = Progress(
            human, colour=_terminal.colour(human), live=_terminal.live(human), verbose=verbose
        )
        try:
            return record_in_sandbox(options, request, trace=trace, on_event=progress)
        finally:
            progress.close()


def sandbox_hint(error: dict[str, Any]) -> str | None:
    """What to change when the model cannot be used in the sandbox."""
    reason = error.get("reason")
    if reason == "no_key":
        variable = error.get("key_env") or "NAME"
        return (
            "the sandbox sees only the environment variables --pass-env names (llm's stored keys "
            f"stay outside): pass the model's key with --pass-env {variable}"
        )
    if reason == "unknown_model":
        return (
            "the sandbox has only the llm plugins that --with installs: add the model's "
            "(--with llm-PLUGIN), or check its name with 'llm models list'"
        )
    if reason == "no_llm":
        return "install llm and the model's plugin into the sandbox: --with llm --with llm-PLUGIN"
    hint = error.get("hint")
    return str(hint) if hint else None
