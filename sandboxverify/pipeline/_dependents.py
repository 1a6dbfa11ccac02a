"""The applications that depend on their plugin (``stages/_dependents``), found after the
stages: each one that requires the distribution is installed next to it, wheels only, in the
same sandbox, and the stages are run again there, so the plugins and modules that import it
are judged as its users meet them. Nothing is excused: what fails there still fails."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sandboxverify._frozen import frozen
from sandboxverify.pipeline._state import Installed
from sandboxverify.report import ApplicationRecord, Failure, ImportsRecord, PluginRecord
from sandboxverify.sandbox import install_wheel
from sandboxverify.stages import (
    ApplicationNeed,
    Confirmed,
    Dependent,
    application_needs,
    as_installed,
    confirm_dependent,
    dependent_notes,
    refused_notes,
    undeclared_missing,
)


@frozen
class Dependents:
    """The dependents installed (the stages are to be run again), and what to tell."""

    confirmed: tuple[Dependent, ...] = ()
    #: said whatever happens; ``after`` only once the stages ran again with them
    notes: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    #: what the applications installed for the plugins import without declaring it
    provided: tuple[ApplicationNeed, ...] = ()

    @property
    def requirements(self) -> tuple[str, ...]:
        """What was installed: each dependent's requirement, and each provider, once."""
        return tuple(
            dict.fromkeys(
                [d.confirmed.requirement for d in self.confirmed]
                + [need.provider for need in self.provided]
            )
        )


def add_dependents(
    installed: Installed,
    failures: Sequence[Failure],
    plugins: Sequence[PluginRecord],
    imports: ImportsRecord | None,
    with_requirements: Sequence[str],
) -> Dependents:
    """Look for the application that depends on the plugin, for each module a plugin or module
    failed without, and install those that require it."""
    wheel, sandbox, dist = installed.wheel, installed.sandbox, str(installed.wheel.name)
    provided = tuple(application_needs(failures, plugins, sandbox.paths.venv))
    # what the application itself imports is the application's, not a dependent to look for
    theirs = {need.module for need in provided}
    missing = [
        item
        for item in undeclared_missing(
            failures, plugins, imports, wheel=wheel, python=sandbox.interpreter.version_info
        )
        if item.module not in theirs
    ]
    confirmed: list[Dependent] = []
    refused: dict[str, list[str]] = {}
    seen: dict[str, Confirmed | str] = {}  # each candidate fetched once
    for item in missing:
        whys: list[str] = []
        for module in item.candidates:
            if module not in seen:
                seen[module] = confirm_dependent(sandbox, dist, module, installed.ctx)
            outcome = seen[module]
            if isinstance(outcome, Confirmed):
                confirmed.append(Dependent(outcome, item))
                break
            whys.append(f"{module}: {outcome}")
        else:
            refused[item.module] = whys
    notes = refused_notes(dist, refused)
    if not confirmed and not provided:
        return Dependents(notes=tuple(notes))
    requirements = Dependents(tuple(confirmed), provided=provided).requirements
    failed = install_wheel(
        sandbox,
        wheel.path,
        installed.ctx,
        extra=(*with_requirements, *requirements),
        requires_python=wheel.requires_python,
        requirements=False,
    )
    if failed:
        names = ", ".join(
            [f"{d.confirmed.name} {d.confirmed.version}" for d in confirmed]
            + [need.provider for need in provided]
        )
        why = f"{names}, wanted for {dist}'s users, could not be installed next to it"
        notes.append(f"{why}: {failed[0].message}; the failures stand as found without it")
        return Dependents(notes=tuple(notes))
    # what is judged is what was installed: each confirmed again as the installer chose it
    again = [(d, as_installed(sandbox, d.confirmed, dist)) for d in confirmed]
    unconfirmed = [f"{d.confirmed.name}: {why}" for d, why in again if isinstance(why, str)]
    if unconfirmed:
        notes.append(
            f"installed next to {dist}, but not confirmed: {'; '.join(unconfirmed)}; "
            "the failures stand as found without it"
        )
        return Dependents(notes=tuple(notes))
    installed_as = [replace(d, confirmed=c) for d, c in again if isinstance(c, Confirmed)]
    after = [*dependent_notes(dist, installed_as), *(need.note(dist) for need in provided)]
    return Dependents(tuple(installed_as), tuple(notes), tuple(after), provided)


def with_dependents(
    plugins: tuple[PluginRecord, ...], confirmed: Sequence[Dependent]
) -> tuple[PluginRecord, ...]:
    """Each plugin that failed without a dependent now records it as its application (unless
    an application was found for its group already)."""
    by_plugin = {name: d for d in confirmed for name in d.missing.plugins}
    return tuple(
        replace(plugin, application=_record(by_plugin[plugin.name]))
        if plugin.name in by_plugin
        and (plugin.application is None or plugin.application.name is None)
        else plugin
        for plugin in plugins
    )


def _record(dependent: Dependent) -> ApplicationRecord:
    found = dependent.confirmed
    return ApplicationRecord(found.name, found.version, "dependent", installed=True)
