"""Finding the application that loads a plugin's group, for the groups no host of ours loads
(and the application a host names, when the plugin does not bring it).

In order: a distribution installed with the plugin whose own code names the group; the
distribution itself, when it is named after the group and names it; a requirement of one of the
plugin's extras named after the group (or after the application the registry names); a
distribution named after the group. A candidate that is not installed is fetched alone (a wheel,
never built) next to the sandbox and must name the group in its code (the runtime's literal
scan) to count; only then is it installed with the plugin (see ``pipeline/_applications``).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.report import ApplicationRecord, FoundBy, summarize
from sandboxverify.runtime import application_names
from sandboxverify.sandbox import RunContext, Sandbox, fetch_alone
from sandboxverify.stages._runtime_call import ProbeError, Subject, request_runtime, safe_label


@frozen
class ShippedHost:
    """The host an application ships for a group: its ``sandboxverify.hosts`` entry point."""

    dist: str
    value: str

    def to_json(self) -> dict[str, str]:
        return {"dist": self.dist, "value": self.value}


@frozen
class Found:
    """What was found for one group: the application (or none), and the host it ships."""

    record: ApplicationRecord
    host: ShippedHost | None = None
    #: what to install with the plugin: the application was confirmed but is not installed yet
    requirement: str | None = None


@frozen
class Candidate:
    requirement: str
    name: str
    found_by: FoundBy
    #: the registry names it as the group's application: it need not name the group
    registered: bool = False


@dataclass
class Finder:
    """Looks for the applications of some groups in one sandbox with the wheel installed."""

    sandbox: Sandbox
    dist: str
    ctx: RunContext
    #: requirements of the plugin's extras, as METADATA writes them
    extras: list[dict[str, str]] = field(default_factory=list)
    #: canonical names of what is installed in the sandbox
    installed: frozenset[str] = frozenset()
    #: each fetched candidate's directory, by canonical name (or why it could not be fetched)
    _fetched: dict[str, Path | str] = field(default_factory=dict)

    def scan(
        self, groups: Mapping[str, str | None], *, paths: Sequence[str] = (), label: str = "scan"
    ) -> dict[str, Any]:
        """The runtime's ``applications`` action (raises ``ProbeError``)."""
        request = {"action": "applications", "dist": self.dist, "groups": dict(groups)}
        if paths:
            request["paths"] = list(paths)
        return request_runtime(
            self.sandbox,
            request,
            label=f"applications-{safe_label(label)}",
            ctx=self.ctx,
            subject=Subject("finding the application of a plugin group"),
            read_only=[self.sandbox.paths.root / "applications"] if paths else (),
        )

    def find_in_sandbox(self, groups: Mapping[str, str | None]) -> dict[str, Found | None]:
        """The applications installed with the plugin; ``None`` for a group whose application
        is not there."""
        result = self.scan(groups)
        self.extras = [e for e in result.get("extras") or () if isinstance(e, dict)]
        self.installed = frozenset(str(name) for name in result.get("installed") or ())
        found: dict[str, Found | None] = {}
        for group, named in groups.items():
            seen = (result.get("groups") or {}).get(group) or {}
            application = seen.get("application")
            if application and (named or application.get("names_group")):
                record = ApplicationRecord(
                    str(application["name"]), str(application["version"]), "declared"
                )
                found[group] = Found(record, _host(seen.get("host")))
            elif seen.get("itself"):
                found[group] = Found(ApplicationRecord(self.dist, None, "itself"))
            else:
                found[group] = None
        return found

    def confirm(self, group: str, candidate: Candidate) -> Found | str:
        """``candidate`` fetched alone and scanned: the application, or why it is not."""
        key = canonicalize_name(candidate.name)
        if key in self.installed:
            return "installed with the plugin, but its code does not name the group"
        target = self._fetch(candidate, key)
        if not isinstance(target, Path):
            return target
        try:
            result = self.scan({group: candidate.name}, paths=[str(target)], label=f"{key}-{group}")
        except ProbeError as exc:
            return f"could not be read: {exc.failure.message}"
        seen = (result.get("groups") or {}).get(group) or {}
        application = seen.get("application")
        if not application:
            return "its wheel holds no distribution of that name"
        name, version = str(application["name"]), str(application["version"])
        if not candidate.registered and not application.get("names_group"):
            return f"{name} {version} does not name {group!r} in its code: not its application"
        record = ApplicationRecord(name, version, candidate.found_by, installed=True)
        return Found(record, _host(seen.get("host")), requirement=candidate.requirement)

    def _fetch(self, candidate: Candidate, key: str) -> Path | str:
        """The directory ``candidate``'s wheel is unpacked in, or why it could not be."""
        if key not in self._fetched:
            target = self.sandbox.paths.root / "applications" / safe_label(key)
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            outcome = fetch_alone(self.sandbox, candidate.requirement, target, self.ctx)
            self._fetched[key] = (
                target
                if outcome.ok
                else f"not installable as a wheel ({outcome.describe()}): {summarize(outcome.tail)}"
            )
        return self._fetched[key]

    def search(self, group: str, named: str | None) -> Found:
        """The candidates for ``group``, tried in order until one is its application."""
        tried: list[tuple[str, str]] = []
        for candidate in candidates(group, named, self.extras, self.dist):
            outcome = self.confirm(group, candidate)
            if isinstance(outcome, Found):
                return replace(outcome, record=replace(outcome.record, tried=tuple(tried)))
            tried.append((candidate.requirement, outcome))
        return Found(ApplicationRecord(None, tried=tuple(tried)))


def candidates(
    group: str, named: str | None, extras: Sequence[Mapping[str, str]], own: str
) -> list[Candidate]:
    """What to try for ``group``, in order: a requirement of one of the plugin's ``extras``
    named after the group (or after the application ``named`` by the registry), then that name
    itself; never the distribution under test (``own``)."""
    wanted: list[tuple[str, FoundBy]] = (
        [(named, "registry")] if named else [(n, "name") for n in application_names(group)]
    )
    names = {canonicalize_name(name) for name, _ in wanted}
    found: list[Candidate] = []
    for extra in extras:
        requirement = _requirement(str(extra.get("requirement", "")), str(extra.get("extra", "")))
        if requirement is not None and canonicalize_name(requirement.name) in names:
            registered = named is not None  # an extra's requirement of the registry's application
            found.append(Candidate(_written(requirement), requirement.name, "extra", registered))
    found += [Candidate(name, name, how, how == "registry") for name, how in wanted]
    unique: dict[str, Candidate] = {}
    for candidate in found:
        unique.setdefault(canonicalize_name(candidate.name), candidate)
    return [c for key, c in unique.items() if key != canonicalize_name(own)]


def _host(data: Any) -> ShippedHost | None:
    if not isinstance(data, dict) or not data.get("dist") or not data.get("value"):
        return None
    return ShippedHost(str(data["dist"]), str(data["value"]))


def _requirement(line: str, extra: str) -> Requirement | None:
    """A requirement of the plugin's METADATA (untrusted) the installer may be asked for: a
    name and versions, never a URL, and only where its marker holds (``sys_platform ==
    "win32" and extra == "x"`` is no candidate on Linux)."""
    try:
        requirement = Requirement(line)
        applies = requirement.marker is None or requirement.marker.evaluate({"extra": extra})
    except (InvalidRequirement, ValueError):  # packaging's marker errors are ValueErrors
        return None
    return None if requirement.url or not applies else requirement


def _written(requirement: Requirement) -> str:
    """The requirement without its marker (the extra it was declared under)."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"
