"""The other extras that offer what a module lacks, when it failed with the first one.

Several extras often bring the same thing in different ways: a Qt binding each (``pyside2``,
``pyside6``, ``qt``), a database driver each. A module is first tried with the smallest; a user
picks the one that works on their Python, so when it fails there (PySide2 crashes on Python
3.11), the next ones are tried, and the module fails only if it fails with every one tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from packaging.utils import canonicalize_name

from sandboxverify.report import ExcusedModule, Failure, ImportFailure
from sandboxverify.sandbox import parallel_map
from sandboxverify.stages._extras import (
    EXTRA_NOT_INSTALLED,
    SANDBOXES_AT_ONCE,
    ExtraRun,
    Extras,
    development_extra,
    extra_record,
    failed_with_extra,
)
from sandboxverify.stages._import_causes import NO_MODULE_NAMED
from sandboxverify.stages._imports import Settled

#: the other extras a module is tried with, beyond the first
MORE_ALTERNATIVES = 2


def first_extra(
    item: Mapping[str, Any], sought: Sequence[str], extras: Extras
) -> tuple[str | None, tuple[str, ...]]:
    """The extra a failed module (the runtime's ``item``) that lacks ``sought`` is tried with
    first, and the others after it: one its own words name as the distribution's
    (pydantic-ai-slim's ``realtime.openai``: 'use the `openai-realtime` optional group - `pip
    install "pydantic-ai-slim[openai-realtime]"`', where the smallest extra that brings
    ``websockets`` lacks ``openai``), else the smallest that brings what it lacks."""
    first = next((e for name in sought for e in extras.providing(name)[:1]), None)
    others = alternatives_of(sought, first, extras) if first is not None else ()
    error = item.get("error")
    words = str(error.get("message") or "") if sought and isinstance(error, Mapping) else ""
    own = canonicalize_name(extras.dist)
    said = [
        extra
        for dist, named in _DIST_EXTRAS.findall(words)
        if canonicalize_name(dist) == own
        for extra in (canonicalize_name(part.strip()) for part in named.split(","))
        if extra in extras.requirements and not development_extra(extra)
    ]
    if not said:
        return first, others
    rest = (first, *others) if first is not None else ()
    return said[0], tuple(e for e in dict.fromkeys(rest) if e != said[0])[:MORE_ALTERNATIVES]


#: ``dist[extra]`` or ``dist[one,two]``, as a message tells users to install it
_DIST_EXTRAS = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\[([A-Za-z0-9._,\s-]+)\]")


def alternatives_of(missing: Sequence[str], chosen: str, extras: Extras) -> tuple[str, ...]:
    """The extras for users that declare what ``missing`` names first, other than ``chosen``
    (the one the module is tried with first), at most :data:`MORE_ALTERNATIVES`."""
    for name in missing:
        offered = extras.for_users(name)
        if chosen in offered:
            return tuple(extra for extra in offered if extra != chosen)[:MORE_ALTERNATIVES]
    return ()


def with_alternatives(
    settled: Settled,
    needs: Mapping[str, str],
    alternatives: Mapping[str, Sequence[str]],
    run: Callable[[str, Sequence[str]], ExtraRun],
    extras: Extras,
    *,
    lacked: Mapping[str, Sequence[str]] | None = None,
) -> Settled:
    """``settled``, with each module that failed to import with its extra (``needs``) tried
    with its ``alternatives`` (``run``: an extra's sandbox made for these modules), then with
    the extras that declare what it stopped at there (strawberry's ``fastapi`` module needs
    the extra ``fastapi``, past the ``asgi`` one that brings starlette), and excused with the
    first of them it imports with. ``lacked``: what each module lacked with its extra, as the
    runtime saw it."""
    lacked = lacked or {}
    retried: dict[str, tuple[str, ...]] = {}
    stops: dict[str, list[str]] = {}
    for module, chosen in needs.items():
        failure = settled.failed.get(module)
        if failure is None or failure.type == EXTRA_NOT_INSTALLED:
            continue
        # what it stopped at there: the interpreter's words, or the runtime's account of a
        # refusal in the module's own words (sentry-sdk's "FastAPI is not installed")
        stopped = NO_MODULE_NAMED.findall(failure.message) or list(lacked.get(module, ()))
        stops[module] = stopped
        further = [e for name in stopped for e in extras.for_users(name)]
        # those that also bring something its extra brought first: it needs both
        # (pydantic-ai-slim's openai-realtime, past cerebras, which brings openai alone)
        brought = set(extras.requirements.get(chosen, ()))
        further.sort(key=lambda extra: not brought & set(extras.requirements.get(extra, ())))
        offered = [*alternatives.get(module, ()), *further[:MORE_ALTERNATIVES]]
        tried = tuple(dict.fromkeys(extra for extra in offered if extra != chosen))
        if tried:
            retried[module] = tried
    if not retried:
        return settled
    by_extra: dict[str, list[str]] = {}
    for module, others in retried.items():
        for extra in others:
            by_extra.setdefault(extra, []).append(module)
    runs = parallel_map(
        lambda extra: run(extra, by_extra[extra]), sorted(by_extra), SANDBOXES_AT_ONCE
    )
    excused, failed = list(settled.excused), dict(settled.failed)
    failures = list(settled.failures)
    hints = dict(settled.hints)
    for module, others in retried.items():
        helped = next((r for r in runs if r.extra in others and r.imported(module)), None)
        if helped is None:
            hints[module] = f"it fails with the extras {', '.join(others)} too"
            got = _further(module, stops[module], [r for r in runs if r.extra in others])
            if got is not None:  # what users of the extra that brings what it lacked meet
                ran, error = got
                record, said = _further_failure(module, ran, error, extras.dist, failures)
                failed[module] = record
                failures = [*_without(failures, module), said]
            continue
        failed.pop(module)
        failures = _without(failures, module)
        excused.append(
            ExcusedModule(
                module,
                "extra",
                f"imports with the extra installed ({extras.dist}[{helped.extra}]), one of "
                f"those that offer what it needs (it failed with the extra "
                f"{needs.get(module)!r})",
                extra=helped.extra,
            )
        )
    return replace(
        settled,
        excused=tuple(sorted(excused, key=lambda e: e.module)),
        failed=failed,
        failures=tuple(failures),
        records=settled.records + tuple(extra_record(r, excused) for r in runs),
        hints=hints,
    )


def _without(failures: Sequence[Failure], module: str) -> list[Failure]:
    return [f for f in failures if not (f.module == module and f.code == "import_failed")]


def _further(
    module: str, stopped: Sequence[str], runs: Sequence[ExtraRun]
) -> tuple[ExtraRun, Mapping[str, Any]] | None:
    """The first of ``runs`` where ``module``, failing still, got past what it stopped at with
    its first extra (pgqueuer's ``adapters.mcp.server``: past ``mcp`` with the extra ``mcp``, to
    mcp 2's own refusal), and its error there."""
    if not stopped:
        return None
    for run in runs:
        item = (run.results or {}).get(module)
        error = item.get("error") if isinstance(item, Mapping) else None
        said = str(error.get("message") or "") if isinstance(error, Mapping) else ""
        if isinstance(error, Mapping) and not set(NO_MODULE_NAMED.findall(said)) & set(stopped):
            return run, error
    return None


def _further_failure(
    module: str,
    run: ExtraRun,
    error: Mapping[str, Any],
    dist: str,
    failures: Sequence[Failure],
) -> tuple[ImportFailure, Failure]:
    """``module``'s failure with the extra of ``run``, where it got further than with its first
    (:func:`_further`): the record and the failure reported in place of the first's."""
    python = next((f.python for f in failures if f.module == module and f.python), None)
    said = failed_with_extra(module, run, dist, python or "", dict(error))
    return ImportFailure(module, str(error.get("type")), str(error.get("message"))), said
