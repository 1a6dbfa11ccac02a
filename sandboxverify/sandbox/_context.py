"""What every step of a check runs with: one frozen value, handed to each step.

The build, the sandboxes, the installs and every process that runs plugin code take a
:class:`RunContext`: how untrusted code is confined, which variables pass, how long a step may
take, where dependencies come from, which tools make environments, and the :class:`Runner`
every command goes through, which also hears how each one ended. A check makes one and derives
one per interpreter from it (:meth:`RunContext.for_python`).
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import field, replace
from pathlib import Path
from typing import Protocol

from sandboxverify._frozen import frozen
from sandboxverify.sandbox._isolation import PROCESS, Isolation
from sandboxverify.sandbox._subprocess import Command, Outcome, run
from sandboxverify.sandbox._toolchain import IndexOptions, Toolchain


class Runner(Protocol):
    """What every command of a check goes through: it runs it and hears how it ended.
    ``python`` is the interpreter the command is for, as events name it (``None``: the build)."""

    def run(self, command: Command, python: str | None) -> Outcome:
        """``command`` to completion or timeout; never raises for the command's own failure."""

    def ended(self, outcome: Outcome, python: str | None) -> None:
        """A command run apart from :meth:`run` ended: a command server, asked request by
        request (``_command_server``)."""


@frozen
class Subprocesses:
    """The runner of a real check: the one subprocess helper (``_subprocess.run``)."""

    def run(self, command: Command, python: str | None) -> Outcome:
        return run(command)

    def ended(self, outcome: Outcome, python: str | None) -> None:
        """Nobody to tell: a check that reports its commands wraps this runner."""


SUBPROCESSES = Subprocesses()


@frozen
class RunContext:
    """What a step runs with (see the module's docstring)."""

    #: how the environments and the tools that fill them are made
    toolchain: Toolchain
    #: seconds plugin code may take: each plugin's load, the import run, a script's ``--help``,
    #: the smoke run (``--timeout``)
    plugin_timeout: float
    #: seconds each build, sandbox creation and install step may take (``--install-timeout``)
    install_timeout: float
    #: how code from the package under test is confined: the OS sandbox, or process isolation
    isolation: Isolation = PROCESS
    #: variables passed on beyond the allowlists (``--pass-env``)
    pass_env: tuple[str, ...] = ()
    #: where dependencies come from, for the build's installs and the sandboxes' alike
    index: IndexOptions = field(default_factory=IndexOptions)
    #: the private copy of the runtime, once a check has made it (every runtime request needs it)
    runtime: Path | None = None
    #: the copy under way, when it is: waited for before it is read, and where it ends is
    #: what is read (:attr:`runtime`, or a copy kept by an earlier check)
    runtime_ready: Future[Path] | None = None
    #: the interpreter the steps run for, as events name it (``None``: the build)
    python: str | None = None
    #: where empty sandboxes are kept to be copied (``_templates``); only where nothing a check
    #: runs can write there (the OS sandbox), else ``None``
    venv_templates: Path | None = None
    #: where the runtime's copy is kept for the checks after this one, on the same terms
    runtime_templates: Path | None = None
    runner: Runner = SUBPROCESSES

    def run(self, command: Command) -> Outcome:
        """``command`` through the runner; never raises for the command's own failure."""
        return self.runner.run(command, self.python)

    def ended(self, outcome: Outcome) -> None:
        """Tell the runner how a command run apart from it ended (a command server)."""
        self.runner.ended(outcome, self.python)

    def for_python(self, python: str) -> RunContext:
        """The context of one interpreter's steps: their commands are reported as its own."""
        return replace(self, python=python)

    def with_runtime(self, runtime: Path, ready: Future[Path] | None = None) -> RunContext:
        return replace(self, runtime=runtime, runtime_ready=ready)

    @property
    def runtime_copy(self) -> Path:
        """The runtime's copy, once made (raising what stopped the copy); asked for before
        the check started it, that is a bug."""
        if self.runtime is None:
            raise RuntimeError("the runtime is not copied yet: no request may run")
        if self.runtime_ready is not None:
            return self.runtime_ready.result()
        return self.runtime
