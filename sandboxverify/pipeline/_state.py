"""What a check's steps hand on to each other (see ``_check``): what was asked, where the check
works, what every command runs with and who hears of it; then what the build produced."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact, BuildResult, default_root
from sandboxverify.options import CheckOptions
from sandboxverify.pipeline._headstart import EarlySandbox
from sandboxverify.pipeline._progress import EventSink, of_wheel_from_sdist
from sandboxverify.pipeline._request import CheckRequest
from sandboxverify.pipeline._stages import AnnouncingRunner, StageTimer
from sandboxverify.report import Failure, Stage, StageName
from sandboxverify.sandbox import (
    SUBPROCESSES,
    IndexOptions,
    Interpreter,
    Isolation,
    RunContext,
    Runner,
    Sandbox,
    Workspace,
    choose_toolchain,
)


@frozen
class CheckState:
    """One check as its steps hand it on."""

    request: CheckRequest
    workspace: Workspace
    #: what every step runs with (see ``sandbox/_context``); its commands are announced
    context: RunContext
    on_event: EventSink

    @property
    def options(self) -> CheckOptions:
        return self.request.options

    def stage(self, stages: list[Stage], name: StageName, python: str | None) -> StageTimer:
        """A stage of ``python`` (``None``: the build), recorded in ``stages`` and announced."""
        return StageTimer(stages, name, python, self.on_event)

    def of_wheel_from_sdist(self) -> CheckState:
        """The check as the runs of the wheel built from the given sdist see it: each event
        they send, and each command they run, is announced as theirs."""
        on_event = of_wheel_from_sdist(self.on_event)
        runner = self.context.runner
        if isinstance(runner, AnnouncingRunner):
            runner = AnnouncingRunner(runner.runner, on_event)
        return replace(self, on_event=on_event, context=replace(self.context, runner=runner))


def run_context(
    options: CheckOptions,
    isolation: Isolation,
    on_event: EventSink,
    runner: Runner = SUBPROCESSES,
) -> RunContext:
    """What every step of a check with ``options`` runs with: its commands go through
    ``runner``, and ``on_event`` hears how each one ended."""
    # unconfined code could write the kept sandboxes and runtime every later check reads
    kept = default_root() if options.cache and isolation.name != "process" else None
    return RunContext(
        # with no OS sandbox to keep the environments read-only, untrusted code could write to
        # what gets installed: nothing installed may be shared with the installer's cache
        toolchain=choose_toolchain(
            options.installer, writable_installs=isolation.name == "process"
        ),
        plugin_timeout=options.timeout,
        install_timeout=options.install_timeout,
        isolation=isolation,
        pass_env=options.pass_env,
        index=IndexOptions(options.index_url, options.find_links),
        runner=AnnouncingRunner(runner, on_event),
        venv_templates=kept / "venv-templates" if kept else None,
        runtime_templates=kept / "runtime" if kept else None,
    )


@frozen
class Built:
    """What the build step leaves for the sandboxes and their stages."""

    result: BuildResult
    #: where the runtime's private copy is made
    runtime: Path
    #: the interpreters to verify on, with their labels (unique: ``3.12``, ``3.12-2``)
    pythons: tuple[tuple[Interpreter, str], ...]
    #: sandboxes made while the build ran, by label
    early: Mapping[str, EarlySandbox]
    #: given a wheel and an sdist: where the given wheel and the one built from the sdist
    #: differ (``_from_sdist``), and what the check could not compare
    differences: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    #: the copy of the runtime while it is under way, which ends with where the sandboxes read
    #: it: :attr:`runtime`, or a copy kept by an earlier check (``RunContext.runtime_ready``)
    runtime_ready: Future[Path] | None = None


@frozen
class Installed:
    """A sandbox with the wheel installed, and what its interpreter's stages run with."""

    sandbox: Sandbox
    wheel: Artifact
    #: the check's context for this interpreter, with the runtime's copy
    ctx: RunContext

    @property
    def python(self) -> str:
        return self.sandbox.interpreter.version
