"""Part of stage ``install``: dependencies published only as sdists, built in the sandbox.

An install that stopped because a dependency has no wheel (``pytest-cache``, ``proxy-tools``)
is tried again with a wheel built from that dependency's sdist, the way the project is built
(``artifacts._dependency``), offered from a directory of the check's own with ``--find-links``;
so are the later installs of the same check (extras, older releases). A few at most, one after
another: each install names the next one missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.version import InvalidVersion, Version

from sandboxverify.artifacts import BuildResult, install_building_wheelless
from sandboxverify.pipeline._state import CheckState
from sandboxverify.report import Failure, summarize
from sandboxverify.sandbox import NO_WHEEL_HINT, IndexOptions, RunContext, without_wheel

#: dependencies built for one check at most (each a build of its own)
_AT_MOST = 4


def dependency_wheels(state: CheckState) -> Path:
    """Where the check keeps the wheels it built of its dependencies."""
    return state.workspace.root / "dependency-wheels"


def with_dependency_wheels(ctx: RunContext, state: CheckState) -> RunContext:
    """``ctx``, offering the wheels built so far to its installer (``--find-links``)."""
    place = dependency_wheels(state)
    if not any(place.glob("*.whl")) or str(place) in ctx.index.find_links:
        return ctx
    index = IndexOptions(ctx.index.index_url, (*ctx.index.find_links, str(place)))
    return replace(ctx, index=index)


def built_notes(state: CheckState, build: BuildResult) -> list[str]:
    """What the report says of each dependency built so far, and of the build requirements
    ``build`` built."""
    return [
        f"built {name} from its sdist, as the project is built (confined): a build requirement "
        "that publishes no wheel, which users' build frontends build too"
        for name in build.built_requirements
    ] + [
        f"built {wheel.name} from its sdist, as the project is built (confined): it publishes "
        "no wheel for this Python, and users' installers build it too"
        for wheel in sorted(dependency_wheels(state).glob("*.whl"))
    ]


def install_building_dependencies(
    state: CheckState,
    ctx: RunContext,
    python: str,
    install: Callable[[RunContext], list[Failure]],
) -> tuple[list[Failure], list[str]]:
    """``install``'s failures, once each dependency it stopped at for want of a wheel was
    built and offered (at most :data:`_AT_MOST`), and the wheels built."""
    place = dependency_wheels(state)
    built: dict[str, str] = {}  # what the install stopped at -> the wheel built of it
    unbuilt: list[Failure] = []

    def build(name: str) -> Path | None:
        try:
            version = Version(python)
        except InvalidVersion:
            return None
        from sandboxverify.artifacts import build_dependency_wheel  # noqa: PLC0415 - rarely

        wheel, failure = build_dependency_wheel(name, version, place, state.context)
        if failure is not None:
            unbuilt.append(replace(failure, python=python))
            return None
        built[name] = str(wheel)
        return place

    failures, _ = install_building_wheelless(
        lambda index: install(replace(ctx, index=index)),
        _sdist_only,
        build,
        with_dependency_wheels(ctx, state).index,
        at_most=_AT_MOST,
    )
    if unbuilt:
        return unbuilt, list(built.values())
    needed = _sdist_only(failures)
    if needed is not None and needed in built:  # built, and still not taken
        failures = [_not_taken(failure, needed, built[needed]) for failure in failures]
    return failures, list(built.values())


def _not_taken(failure: Failure, needed: str, wheel: str) -> Failure:
    """``failure``, saying that ``wheel``, built of ``needed``, does not fit this install:
    built by the interpreter sandboxverify runs on, compiled code fits that Python alone; a
    pure wheel the installer still refuses is said as it is."""
    if _sdist_only([failure]) != needed:
        return failure
    running = ".".join(map(str, sys.version_info[:2]))
    message, _, _ = failure.message.partition(": the dependency")
    said = f"{message}: the dependency {needed!r} publishes only a source distribution; "
    if wheel.endswith("-none-any.whl"):
        return replace(
            failure,
            message=f"{said}sandboxverify built {wheel} of it (in the sandbox), and the "
            f"installer still does not take it: {summarize(failure.details or '')}",
        )
    return replace(
        failure,
        message=f"{said}sandboxverify built a wheel of it ({wheel}, with Python {running}, in "
        f"the sandbox), but the installer does not take that wheel for Python "
        f"{failure.python}: it holds compiled code for another Python",
        hint=f"check with --python {running}, or {NO_WHEEL_HINT}",
    )


def _sdist_only(failures: Sequence[Failure]) -> str | None:
    """The dependency an install stopped at for want of a wheel."""
    for failure in failures:
        if failure.code == "install_failed" and failure.details:
            name = without_wheel(failure.details)
            if name is not None:
                return name
    return None
