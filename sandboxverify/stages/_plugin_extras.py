"""Plugins that lack their application, which the package's users get with an extra: loaded
with that extra installed, as those users load them.

sentry-sdk 2.75.0 declares an ``opentelemetry_propagator`` entry point, loaded by
OpenTelemetry (opentelemetry-api) when a user names it in ``OTEL_PROPAGATORS``; its module
imports ``opentelemetry`` and raises ``DidNotEnable: opentelemetry not installed`` without it.
sentry-sdk brings OpenTelemetry with its extra ``opentelemetry`` (``opentelemetry-distro``, of the
same family of distributions). Only the plugin's own application is excused so: a plugin that
lacks anything else fails its users' application whether or not they installed an extra.

But one: a plugin of a group no host knows, named as an extra. APScheduler 3.11 loads the job
store or executor a user names (``mongodb``, ``gevent``...), and declares an extra named as
each (``apscheduler[mongodb]``): the users who name it install that extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from packaging.utils import canonicalize_name

from sandboxverify.artifacts import Artifact
from sandboxverify.report import PluginRecord
from sandboxverify.runtime import application_names
from sandboxverify.runtime.hosts import GENERIC_HOST
from sandboxverify.sandbox import RunContext, Sandbox, parallel_map
from sandboxverify.stages._extras import (
    SANDBOXES_AT_ONCE,
    Extras,
    development_extra,
    extra_requirement,
    family_member,
    fresh_paths,
    read_extras,
    with_extra_installed,
)
from sandboxverify.stages._hosts import PlannedPlugin
from sandboxverify.stages._import_causes import NO_MODULE_NAMED
from sandboxverify.stages._import_names import extra_names_in
from sandboxverify.stages._probe import PluginLoad, load


def lacked_application(record: PluginRecord) -> str | None:
    """The top-level module a failed plugin stopped at, when it is its group's application's
    (``opentelemetry`` for ``opentelemetry_propagator``, ``keyring`` for
    ``keyring.backends``); ``None`` for anything else it lacks."""
    error = record.error
    if error is None or error.stage != "import":
        return None
    wanted = {canonicalize_name(name) for name in application_names(record.group)}
    said = f"{error.traceback}\n{error.type}: {error.message}"
    for missing in NO_MODULE_NAMED.findall(said):
        top = str(missing).split(".", 1)[0]
        if canonicalize_name(top) in wanted:
            return top
    return None


def extra_bringing(module: str, extras: Extras) -> str | None:
    """The users' extra that brings the top-level ``module``: one that adds a distribution
    that may install it (``Extras.providing``), else one named after it whose distributions are
    of its family (``opentelemetry-distro`` for ``opentelemetry``), else any of whose
    distributions is; the smallest first."""
    found = [e for e in extras.providing(module) if not development_extra(e)]
    if found:
        return found[0]
    root = canonicalize_name(module)
    members = [
        extra
        for extra, names in extras.requirements.items()
        if not development_extra(extra) and any(family_member(name, root) for name in names)
    ]
    named = [extra for extra in members if canonicalize_name(extra) == root]
    ranked = sorted(members, key=lambda extra: (len(extras.requirements[extra]), extra))
    chosen = named or ranked
    return chosen[0] if chosen else None


def extra_named_for(record: PluginRecord, extras: Extras) -> tuple[str, str] | None:
    """The users' extra named as a plugin that failed to import, of a group no host of ours
    knows (judged as ``EntryPoint.load()`` loads it), or else as a part of its module's name
    below the root, the deepest first; with what is so named. That plugin is the extra's
    feature, for the users who install it: APScheduler's job store ``mongodb``, its extra
    ``mongodb``; tooz's driver ``etcd3+http`` in ``tooz.drivers.etcd3gw``, its extra
    ``etcd3gw``. A known application's contract says when it loads its plugins; it stays the
    judge there."""
    error = record.error
    if error is None or error.stage != "import" or record.host != GENERIC_HOST:
        return None
    module = record.value.partition(":")[0].strip()
    named: list[tuple[str, str]] = [(canonicalize_name(record.name), "it is")]
    named += [(part, "its module is") for part in extra_names_in(module)]
    for extra, what in named:
        if extra in extras.requirements and not development_extra(extra):
            return extra, what
    return None


def loaded_with_extras(
    loads: Sequence[PluginLoad],
    to_load: Sequence[PlannedPlugin],
    *,
    sandbox: Sandbox,
    wheel: Artifact,
    also: Sequence[str],
    ctx: RunContext,
) -> tuple[PluginLoad, ...]:
    """``loads``, each that failed for want of its application (:func:`lacked_application`),
    where a users' extra brings it (:func:`extra_bringing`), or named as an extra
    (:func:`extra_named_for`), loaded again in a fresh sandbox with that extra installed
    beside ``sandbox``, one per extra: its load there is its verdict, and its record says the
    extra. One whose extra does not install keeps its failure, and its ``host_reason`` says
    why."""
    extras: Extras | None = None
    wanted: dict[int, str] = {}
    why: dict[int, str] = {}
    plans = {(p.ref.group, p.ref.name): p for p in to_load}
    for index, done in enumerate(loads):
        if done.record.ok or (done.record.group, done.record.name) not in plans:
            continue  # (a server command given on the command line is no entry point)
        if extras is None:
            extras = read_extras(wheel.path, str(wheel.name), sandbox.interpreter.version_info)
        lacked = lacked_application(done.record)
        if lacked is not None:
            extra = extra_bringing(lacked, extras)
            said = "it lacked its application, which the package's users get with"
        elif (named := extra_named_for(done.record, extras)) is not None:
            extra, what = named
            said = f"its application loads it when a user names it, and {what} named for"
        else:
            continue
        if extra is not None:
            wanted[index], why[index] = extra, said
    if not wanted:
        return tuple(loads)
    requirement = {extra: extra_requirement(wheel, extra) for extra in wanted.values()}

    def one(extra: str) -> dict[int, PluginLoad]:
        made, cause, _ = with_extra_installed(
            extra,
            interpreter=sandbox.interpreter,
            paths=fresh_paths(sandbox, f"plugin-extra-{extra}"),
            wheel=wheel,
            also=also,
            ctx=ctx,
        )
        judged: dict[int, PluginLoad] = {}
        for index in (i for i, e in wanted.items() if e == extra):
            done = loads[index]
            if made is None:
                said = f"{why[index]} the extra {extra!r}, and {requirement[extra]} does not "
                judged[index] = _said(done, f"{said}install: {cause}")
                continue
            planned = plans[(done.record.group, done.record.name)]
            again = load(made, planned, ctx, index)
            said = f"loaded with the extra {extra!r} installed ({requirement[extra]}): "
            judged[index] = _said(
                replace(again, record=replace(again.record, extra=extra)),
                f"{said}{why[index]} that extra",
            )
        return judged

    redone = list(loads)
    for judged in parallel_map(one, sorted(set(wanted.values())), SANDBOXES_AT_ONCE):
        for index, done in judged.items():
            redone[index] = done
    return tuple(redone)


def _said(done: PluginLoad, why: str) -> PluginLoad:
    said = done.record.host_reason
    return replace(done, record=replace(done.record, host_reason=f"{said}; {why}" if said else why))
