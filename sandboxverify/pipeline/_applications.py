"""The applications a check installs of its own accord: for each group whose application is
looked for (``--host auto``), what the sandbox already holds, what is fetched and confirmed
(``stages/_applications``), and the one install that adds the confirmed ones next to the plugin,
wheels only, before anything is loaded or imported, so every stage meets the plugin with its
application as its users do."""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.pipeline._state import CheckState, Installed
from sandboxverify.report import ApplicationRecord, Failure
from sandboxverify.sandbox import install_wheel
from sandboxverify.stages import Finder, Found, PluginPlan, ProbeError, with_applications


@frozen
class Applications:
    """The plan once applications were looked for, and what to tell about it."""

    plan: PluginPlan
    notes: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()
    #: what was installed, for the install stage's summary
    summary: str = ""


def find_applications(state: CheckState, installed: Installed, plan: PluginPlan) -> Applications:
    """Look for each group's application and install those the plugin does not bring."""
    searches = plan.application_searches()
    if not searches:
        return Applications(plan)
    options = state.options
    wheel = installed.wheel
    declared = wheel.dependencies | {
        canonicalize_name(Requirement(text).name) for text in options.with_requirements
    }
    if not set(searches) & set(options.application_hosts) and all(
        named is not None and canonicalize_name(named) in declared for named in searches.values()
    ):  # every application is one a host of ours names, and the plugin brings it
        found = {g: Found(ApplicationRecord(str(n), None, "declared")) for g, n in searches.items()}
        return Applications(with_applications(plan, found))
    finder = Finder(installed.sandbox, str(wheel.name), installed.ctx)
    try:
        in_sandbox = finder.find_in_sandbox(searches)
    except ProbeError as exc:
        return Applications(plan, failures=(exc.failure,))
    found = {
        group: in_sandbox[group] or finder.search(group, named) for group, named in searches.items()
    }
    requirements = list(dict.fromkeys(f.requirement for f in found.values() if f.requirement))
    notes: list[str] = []
    failures: list[Failure] = []
    if requirements:
        failures = install_wheel(
            installed.sandbox,
            wheel.path,
            installed.ctx,
            extra=(*options.with_requirements, *requirements),
            requires_python=wheel.requires_python,
            requirements=False,
        )
        if failures:
            found = {group: _not_installed(f, failures[0]) for group, f in found.items()}
            notes.append(
                f"the application(s) {', '.join(requirements)} could not be installed next to "
                f"{wheel.name}: {failures[0].message}; its plugins were loaded without them"
            )
    notes += [
        f"installed {f.record.name} {f.record.version} next to {wheel.name}: the application that "
        f"loads {group!r}, which {wheel.name} does not depend on (found {_how(f)})"
        for group, f in found.items()
        if f.record.installed
    ]
    summary = ", ".join(f"+ {r}" for r in requirements) if requirements and not failures else ""
    return Applications(
        with_applications(plan, found, options.application_hosts), tuple(notes), summary=summary
    )


def _not_installed(found: Found, failure: Failure) -> Found:
    """A confirmed application the installer could not add: the plugin goes without it."""
    if not found.requirement:
        return found
    why = f"names the group, but could not be installed next to the plugin: {failure.message}"
    record = ApplicationRecord(None, tried=(*found.record.tried, (found.requirement, why)))
    return Found(record)


def _how(found: Found) -> str:
    return {
        "extra": "among the requirements of the plugin's extras",
        "name": "by the group's name, and its code names the group",
        "registry": "as the application of a host sandboxverify has",
    }.get(found.record.found_by or "", "")
