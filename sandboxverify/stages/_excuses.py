"""Modules judged the way users meet them: a module that fails here only because it needs an
extra, another platform, or a test framework is not broken, and the report says which and why.

:func:`triage` sorts the modules that failed in the plain install; the extras some of them
need are then installed, each in a sandbox of its own (``_extras``), and :func:`settle` reads
what the modules did there. A module an entry point reached (its plugin or console script
imports it, as the runtime saw) is never excused: users meet its failure; unless its
application leaves the entry point out here by design (the probe says why: a driver or a
library its users install), then it is judged like any module
(:func:`~sandboxverify.stages._plugin_modules.left_out_by_application`); or unless its plugin
was loaded with an extra, or its script needs one: then it is judged with that extra.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.report import ExcusedModule, Failure, ImportFailure
from sandboxverify.sandbox import RunContext, Sandbox, parallel_map
from sandboxverify.stages._alternatives import first_extra, with_alternatives
from sandboxverify.stages._configured import in_configured_application
from sandboxverify.stages._data_files import shipped_as_data
from sandboxverify.stages._extras import (
    EXTRA_NOT_INSTALLED,
    SANDBOXES_AT_ONCE,
    ExtraRun,
    Extras,
    extra_record,
    failed_with_extra,
    fallback_extras,
    fresh_paths,
    install_failure,
    not_built,
    read_extras,
    run_extra,
)
from sandboxverify.stages._import_causes import import_cause
from sandboxverify.stages._imports import Settled
from sandboxverify.stages._integrations import (
    integration_excuse,
    own_words,
    unreferenced,
    unreferenced_excuse,
)
from sandboxverify.stages._platform_names import elsewhere, this_platform
from sandboxverify.stages._plugin_modules import judged_with
from sandboxverify.stages._refusals import refusals
from sandboxverify.stages._releases import OtherReleases
from sandboxverify.stages._removed_stdlib import removed_from_stdlib
from sandboxverify.stages._test_support import (
    TEST_SUPPORT,
    is_test_framework,
    is_test_module,
    machinery_failed_in,
)
from sandboxverify.stages._version_gates import (
    imported_elsewhere_only,
    importers_here,
    other_python_excuse,
)


def _lacked_with_extras(runs: Sequence[ExtraRun], needs: Mapping[str, str]) -> dict[str, list[str]]:
    """What each module that needs an extra still lacked in that extra's sandbox."""
    return {
        module: import_cause(result)["missing"]
        for run in runs
        for module, result in (run.results or {}).items()
        if needs.get(module) == run.extra
    }


def packages_of(modules: Iterable[str]) -> set[str]:
    """The packages among ``modules``: those with a submodule."""
    return {module.rsplit(".", 1)[0] for module in modules if "." in module}


def excuse(
    failed: Sequence[Mapping[str, Any]],
    *,
    modules: Sequence[str],
    sandbox: Sandbox,
    wheel: Artifact,
    installed: Mapping[str, str],
    also: Sequence[str],
    ctx: RunContext,
    applications: Collection[str] = (),
) -> Settled:
    """The modules that failed in the plain install (``sandbox``), judged the way users meet
    them: each extra they need installed in a sandbox of its own, next to ``sandbox``, with
    ``also`` (``--with``) as the plain install has it, then an older release of what they lack
    a name of (``_releases``). ``modules``: every module the run planned to import;
    ``installed``: the plain install's distributions and versions; ``applications``: those the
    plugins were loaded in."""
    dist = str(wheel.name)
    data = shipped_as_data(
        wheel.path, [str(i["module"]) for i in failed if not i.get("reached_by")]
    )
    failed, configured = in_configured_application(
        [item for item in failed if item["module"] not in data],
        modules=modules,
        sandbox=sandbox,
        wheel=wheel,
        ctx=ctx,
    )
    extras = read_extras(wheel.path, dist, sandbox.interpreter.version_info)
    version = sandbox.interpreter.version_info
    alone = [str(item["module"]) for item in failed if not item.get("reached_by")]
    gated = imported_elsewhere_only(wheel.path, alone, version) if alone else {}
    found = triage(
        failed,
        own=wheel.top_level,
        extras=extras,
        installed=installed,
        modules=modules,
        gated=gated,
    )
    if found.unmapped:
        mentioned = importers_here(wheel.path, found.unmapped, version)
        lone = {m for m in unreferenced(found.unmapped, mentioned) if m not in wheel.top_level}
        found = replace(found, unreferenced=frozenset(lone))

    def verify(extra: str, alternative_for: Sequence[str] | None = None) -> ExtraRun:
        kind = "extra" if alternative_for is None else "alternative"
        paths = fresh_paths(sandbox, f"{kind}-{extra}")
        needing, tried = (
            found.modules_for(extra) if alternative_for is None else (alternative_for, [])
        )
        return run_extra(
            extra,
            needing,
            tried,
            interpreter=sandbox.interpreter,
            paths=paths,
            wheel=wheel,
            also=also,
            ctx=ctx,
        )

    runs = parallel_map(verify, found.extras, SANDBOXES_AT_ONCE) if found.extras else []
    settled = settle(found, runs, dist=dist, python=sandbox.interpreter.version, extras=extras)
    lacked = _lacked_with_extras(runs, found.needs)
    settled = with_alternatives(
        settled, found.needs, found.alternatives, verify, extras, lacked=lacked
    )
    releases = OtherReleases(extras, installed, also, ctx, applications)
    settled = releases.judge(settled, failed, {*found.excused, *found.needs}, sandbox, wheel)
    judged = {*found.excused, *found.needs, *settled.failed, *(e.module for e in settled.excused)}
    refused = refusals(failed, judged=judged, wheel=wheel, version=version)
    settled = settled.joined(Settled(tuple(refused), {}, (), ()))
    return settled.joined(configured).joined(Settled(tuple(data.values()), {}, (), ()))


@frozen
class Triage:
    """The plain install's failures, sorted: excused at once, or to try with an extra."""

    excused: Mapping[str, ExcusedModule] = field(default_factory=dict)
    #: module -> the extra that declares what it is missing
    needs: Mapping[str, str] = field(default_factory=dict)
    #: modules missing a package no extra names: tried with the extras a user could add
    unmapped: tuple[str, ...] = ()
    #: the extras those are tried with, beyond ``needs``' own
    fallback: tuple[str, ...] = ()
    #: modules an entry point reached that need an extra: what to say about it
    reached_extra: Mapping[str, str] = field(default_factory=dict)
    #: what each unmapped module is missing
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the packages among the modules planned
    packages: frozenset[str] = frozenset()
    #: the wheel's top-level names
    own: frozenset[str] = frozenset()
    #: module -> the other extras that offer what it needs, tried if it fails with its own
    alternatives: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: unmapped module -> its own words refusing to import without what it lacks
    said: Mapping[str, str] = field(default_factory=dict)
    #: module that needs an extra -> what reaches it, in words (a console script; a plugin
    #: loaded with that extra)
    reached_by: Mapping[str, str] = field(default_factory=dict)
    #: unmapped modules no module of the package imports but one of these (``unreferenced``)
    unreferenced: frozenset[str] = frozenset()

    @property
    def extras(self) -> list[str]:
        """Every extra to install, each once: those modules need, then the fallback ones."""
        return list(dict.fromkeys([*self.needs.values(), *self.fallback]))

    def modules_for(self, extra: str) -> tuple[list[str], list[str]]:
        """The modules ``extra``'s sandbox imports: those that need it, and the unmapped."""
        return [m for m, e in self.needs.items() if e == extra], list(self.unmapped)


def triage(
    failed: Sequence[Mapping[str, Any]],
    *,
    own: Iterable[str],
    extras: Extras,
    installed: Iterable[str],
    modules: Iterable[str] = (),
    gated: Mapping[str, str] | None = None,
) -> Triage:
    """``failed``: the runtime's results of the modules that failed (neither allowed to nor
    a failed plugin's), each with its ``cause`` and, if an entry point reached it,
    ``reached_by``; or, if only entry points their application leaves out here by design
    reached it (``left_out_by_application``), ``left_out``: why, in words. Such a module is
    judged like one no entry point reaches, and excused when no extra declares what it
    lacks (its users install that themselves: a driver, the library instrumented).
    ``gated``: the modules the wheel imports only on other Pythons, and where
    (``_version_gates``)."""
    own_names = set(own)
    packages = packages_of(modules)
    excused: dict[str, ExcusedModule] = {}
    needs: dict[str, str] = {}
    unmapped: list[str] = []
    reached_extra: dict[str, str] = {}
    lacking: dict[str, tuple[str, ...]] = {}
    alternatives: dict[str, tuple[str, ...]] = {}
    said: dict[str, str] = {}
    reached_by: dict[str, str] = {}
    for item in failed:
        module, cause = str(item["module"]), import_cause(item)
        missing = [name for name in cause["missing"] if name.split(".")[0] not in own_names]
        if len(missing) != len(cause["missing"]):
            continue  # a module of the wheel's own is missing: the wheel left it out
        # lacking nothing by its own account, it may have caught what it lacked, and failed
        # later for want of it (``NameError``): what its import did not find, then
        sought = missing or ([] if cause["names"] else cause["swallowed"])
        extra, others = first_extra(item, sought, extras)
        left_out = item.get("left_out")
        if isinstance(left_out, str) and missing and extra is None:
            excused[module] = ExcusedModule(module, "application", left_out)
            continue
        verified = judged_with(item, extra, extras.requirements)
        if verified is not None:
            needs[module], reached_by[module] = verified
            alternatives[module] = others if verified[0] == extra else ()
            continue
        if item.get("reached_by"):
            if extra is not None:
                reached_extra[module] = extra
            continue
        other_python = other_python_excuse(module, cause, gated or {}, own_names)
        if other_python is not None:
            excused[module] = other_python
            continue
        excuse = _excuse_at_once(module, missing, cause, extras, (packages, own_names))
        if excuse is not None:
            excused[module] = excuse
        elif extra is not None:
            needs[module] = extra
            alternatives[module] = others
        elif missing:
            unmapped.append(module)
            lacking[module] = tuple(dict.fromkeys(name.split(".")[0] for name in missing))
            if module not in own_names and (words := own_words(module, lacking[module], item)):
                said[module] = words
    return Triage(
        excused,
        needs,
        tuple(unmapped),
        fallback_extras(lacking, needs.values(), extras, installed) if unmapped else (),
        reached_extra,
        lacking,
        frozenset(packages),
        frozenset(own_names),
        alternatives,
        said,
        reached_by,
    )


def _excuse_at_once(
    module: str,
    missing: Sequence[str],
    cause: Mapping[str, Any],
    extras: Extras,
    wheel: tuple[Collection[str], Collection[str]],
) -> ExcusedModule | None:
    """A platform's module, or test code that needs only test packages: excused without
    installing anything. ``wheel``: the packages among its modules, its top-level names."""
    rows = elsewhere(missing, cause["names"])
    if rows:
        what = ", ".join(f"{row.name} ({row.source})" for row in rows)
        return ExcusedModule(module, "platform", f"needs {what}")
    required = cause["requires_platform"]
    if required and this_platform() not in required:
        return ExcusedModule(
            module, "platform", f"says at import that it runs on {' or '.join(required)} only"
        )
    packages, own = wheel
    if is_test_module(module, packages):
        return _test_excuse(module, missing, cause, extras)
    return _support_excuse(module, missing, cause, extras, own)


def _support_excuse(
    module: str,
    missing: Sequence[str],
    cause: Mapping[str, Any],
    extras: Extras,
    own: Collection[str],
) -> ExcusedModule | None:
    """Test support not named as a test: it fails only inside test machinery, and lacks
    nothing its users could install with an extra (that is tried first, as for any module)."""
    machinery = machinery_failed_in(module, cause, own)
    if machinery is None or not all(_test_only(name, extras) for name in missing):
        return None
    return ExcusedModule(
        module, "test", f"{TEST_SUPPORT}: imports {machinery}, which only test runs have"
    )


def _test_excuse(
    module: str, missing: Sequence[str], cause: Mapping[str, Any], extras: Extras
) -> ExcusedModule | None:
    if cause["skip"]:
        return ExcusedModule(module, "test", "a test module that skips itself at import")
    if not missing:
        # it raises at import for a reason of its own: a config file of the project's checkout
        # (mako.testing), data fetched from the network, a name only its test tool defines
        # (reveal_type in mypy test cases); test code runs only in its test run
        return ExcusedModule(
            module,
            "test",
            "a test module shipped in the wheel; it raises at import outside its test run "
            "(it misses no package)",
        )
    test_only = [name for name in missing if _test_only(name, extras)]
    if missing and len(test_only) == len(missing):
        names = ", ".join(dict.fromkeys(name.split(".")[0] for name in missing))
        return ExcusedModule(
            module,
            "test",
            f"a test module shipped in the wheel; it needs {names}, which only tests use",
        )
    return None


def _test_only(name: str, extras: Extras) -> bool:
    """A test framework, or a package only the project's development extras (or none)
    declare."""
    top = name.split(".", maxsplit=1)[0]
    return is_test_framework(top) or not extras.for_users(top)


def settle(
    found: Triage, runs: Sequence[ExtraRun], *, dist: str, python: str, extras: Extras
) -> Settled:
    """What the modules did with their extras installed."""
    by_extra = {run.extra: run for run in runs}
    excused = list(found.excused.values())
    failed: dict[str, ImportFailure] = {}
    failures: list[Failure] = []
    for run in runs:
        if not run.installed and run.modules:
            unbuilt = not_built(run, dist)
            if unbuilt is not None:  # what users' installers build: not verified, said so
                excused += unbuilt
                continue
            failures.append(install_failure(run, dist, python))
            for module in run.modules:
                failed[module] = ImportFailure(module, EXTRA_NOT_INSTALLED, str(run.error))
    for module, extra in found.needs.items():
        ran = by_extra.get(extra)
        if ran is None or not ran.installed or ran.results is None:
            continue
        result = ran.results.get(module)
        if result is not None and result.get("ok") is True:
            excused.append(_with_extra(module, ran, dist, found.reached_by.get(module)))
            continue
        unfinished = {"type": "ImportRunStopped", "message": ran.stopped or "not imported"}
        error = dict((result or {}).get("error") or unfinished)
        retried = _retest(module, result, extras, (found.packages, found.own))
        if retried is not None:
            excused.append(retried)
            continue
        failed[module] = ImportFailure(module, str(error["type"]), str(error["message"]))
        failures.append(failed_with_extra(module, ran, dist, python, error))
    hints = {
        module: f"only the extra {extra!r} declares what it is missing"
        for module, extra in found.reached_extra.items()
    }
    for module in found.unmapped:
        helped = next((r for r in runs if r.imported(module)), None)
        if helped is not None:
            excused.append(_with_extra(module, helped, dist))
            continue
        integration = integration_excuse(
            module, found.missing.get(module, ()), found.said.get(module)
        )
        if integration is not None:
            excused.append(integration)
            continue
        lacking = found.missing.get(module, ())
        if lacking and all(removed_from_stdlib(name, python) for name in lacking):
            continue  # no distribution has it: its own hint says what it is
        if lacking and module in found.unreferenced:
            excused.append(unreferenced_excuse(module, lacking))
            continue
        tried = f", and it did not import with the extras tried ({_names(runs)})" if runs else ""
        hints[module] = f"no extra declares a distribution named {', '.join(lacking)}{tried}"
    records = tuple(extra_record(run, excused) for run in runs)
    return Settled(
        tuple(sorted(excused, key=lambda e: e.module)),
        failed,
        tuple(failures),
        records,
        hints,
    )


def _names(runs: Sequence[ExtraRun]) -> str:
    return ", ".join(run.extra for run in runs)


def _retest(
    module: str,
    result: Mapping[str, Any] | None,
    extras: Extras,
    wheel: tuple[Collection[str], Collection[str]],
) -> ExcusedModule | None:
    """A test module that, with its extra, still needs only test packages or raises for a
    reason of its own, or test support that still fails only inside test machinery: test
    code."""
    if result is None:
        return None
    cause, (packages, own) = import_cause(result), wheel
    if is_test_module(module, packages):
        return _test_excuse(module, list(cause["missing"]), cause, extras)
    return _support_excuse(module, list(cause["missing"]), cause, extras, own)


def _with_extra(module: str, run: ExtraRun, dist: str, words: str | None = None) -> ExcusedModule:
    reached = f"; {words}" if words else ""
    return ExcusedModule(
        module,
        "extra",
        f"imports with the extra installed ({dist}[{run.extra}]){reached}",
        extra=run.extra,
    )
