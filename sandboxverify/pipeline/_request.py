"""What a check was asked, checked before any work: bad input is a usage error here, and so is
``--isolation strict`` where the OS sandbox is unavailable."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.artifacts import ProjectTarget, Target, classify, unknown_warning_codes
from sandboxverify.options import CheckOptions, configured, find_pyproject, validate
from sandboxverify.pipeline._progress import EventSink, IsolationChosen
from sandboxverify.runtime import EntryPointRef, server_ref
from sandboxverify.runtime.hosts import GENERIC_HOST, names_modules
from sandboxverify.sandbox import SELECTORS, Isolation, choose_isolation
from sandboxverify.stages import Playbook, load_smoke_playbook


@frozen
class CheckRequest:
    """A check's options, checked, with what they name read: the target, the playbook, the
    server command. ``options.groups`` has lost its ``:callable`` suffixes."""

    options: CheckOptions
    target: Target
    #: the groups looked in (see ``CheckOptions.effective_groups``)
    groups: tuple[str, ...] = ()
    playbook: Playbook | None = None
    #: ``--server-command``: the one plugin an mcp check loads
    server: EntryPointRef | None = None

    @property
    def explicit_pythons(self) -> tuple[str, ...]:
        """``--python`` versions and paths, resolved before the build."""
        return tuple(spec for spec in self.options.python if spec.lower() not in SELECTORS)

    @property
    def python_selectors(self) -> tuple[str, ...]:
        """``--python min|all``: chosen by the built release's Requires-Python."""
        return tuple(spec.lower() for spec in self.options.python if spec.lower() in SELECTORS)


def with_configuration(options: CheckOptions) -> CheckOptions:
    """``options`` over what the files say, as the command line reads them: the caller's own
    configuration and the checked project's ``[tool.sandboxverify]`` give every option the
    caller left at its default (an artifact target: the current directory's pyproject.toml)."""
    target = classify(options.targets)
    pyproject = find_pyproject(target.path if isinstance(target, ProjectTarget) else None)
    given = {
        field.name: getattr(options, field.name)
        for field in fields(CheckOptions)
        if field.name != "targets" and getattr(options, field.name) != field.default
    }
    return CheckOptions.from_values(options.targets, {**configured(pyproject), **given})


def validated(options: CheckOptions) -> CheckRequest:
    """``options`` checked, in the order a user meets the problems; raises
    :class:`UsageError`."""
    validate(options)
    unknown = unknown_warning_codes(options.fail_on_warning)
    if unknown:
        raise UsageError(
            f"--fail-on-warning names codes no warning has: {', '.join(unknown)}",
            hint="give warning codes from the README's 'What it catches' (junk-files, "
            "wheel-bytecode, ...), or all; --isolation strict fails without the OS sandbox",
        )
    target = classify(options.targets)
    options = _with_group_suffixes(options)
    groups = options.effective_groups
    if not groups and options.host != "auto" and not names_modules(options.host):
        raise UsageError(
            f"--host {options.host} needs --group NAME: it has no default group",
            hint="e.g. --host entrypoints --group myapp.plugins",
        )
    server = _server_ref(options)
    if options.smoke and options.host == GENERIC_HOST:
        raise UsageError(
            "--smoke does not apply to --host entrypoints: its entry points are not tools a "
            "model calls",
            hint="drop --smoke, or use --host native, llm or mcp",
        )
    playbook = load_smoke_playbook(options.smoke) if options.smoke else None
    return CheckRequest(options, target, groups, playbook, server)


def decide_isolation(options: CheckOptions, on_event: EventSink) -> tuple[Isolation, str | None]:
    """The isolation package code runs in, and why it is not the OS sandbox when it could have
    been, announced to ``on_event``. Decided before any work: ``--isolation strict`` without
    the OS sandbox is a usage error."""
    isolation, fallback = choose_isolation(
        options.isolation,
        hide=(*(Path(t) for t in options.targets), Path.cwd()),
        network=options.network,
    )
    on_event(
        IsolationChosen(
            isolation.name,
            f"running without the OS sandbox ({fallback}): code from the package runs as you "
            "and can read your files and secrets; install bubblewrap to sandbox it"
            if fallback
            else None,
        )
    )
    return isolation, fallback


def _with_group_suffixes(options: CheckOptions) -> CheckOptions:
    """``--group NAME:callable``: the group's entry points must name callables (``validate``
    has refused any other suffix)."""
    groups: list[str] = []
    callables = list(options.callable_groups)
    for group in options.groups:
        name, _, suffix = group.partition(":")
        groups.append(name.strip())
        if suffix:
            callables.append(name.strip())
    return replace(options, groups=tuple(groups), callable_groups=tuple(dict.fromkeys(callables)))


def _server_ref(options: CheckOptions) -> EntryPointRef | None:
    """``--server-command`` as the one plugin an mcp check loads, named after its program."""
    if options.server_command is None:
        return None
    if options.host != "mcp":
        raise UsageError(
            f"--server-command only applies to --host mcp (the host is {options.host})",
            hint="add --host mcp, or drop --server-command",
        )
    try:
        return server_ref(options.server_command)
    except ValueError as exc:
        raise UsageError(f"--server-command {options.server_command!r}: {exc}") from None
