"""An install that builds what it stops at: the one loop behind every install of a check that
may meet a requirement published only as an sdist (the project's build requirements, its
dependencies, an extra's): install; if the installer stopped at a requirement with no wheel,
build a wheel of it, offer the wheels built with ``--find-links`` and install again, a few
times at most, each install naming the next one missing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sandboxverify.sandbox import IndexOptions

Result = TypeVar("Result")


def install_building_wheelless(
    install: Callable[[IndexOptions], Result],
    stopped_at: Callable[[Result], str | None],
    build: Callable[[str], Path | None],
    index: IndexOptions,
    *,
    at_most: int,
) -> tuple[Result, list[str]]:
    """``install``'s result with ``index``, after each requirement it stopped at for want of a
    wheel (``stopped_at``: its name, or ``None``) was built (``build``: the directory the wheel
    is in, ``None`` when it could not be built; the caller keeps why) and the install tried
    again with that directory offered; and the requirements built, in order. It stops at a
    requirement built already (the installer did not take its wheel), a failed build, or
    ``at_most`` builds."""
    built: list[str] = []
    result = install(index)
    while (needed := stopped_at(result)) is not None:
        if needed in built or len(built) == at_most:
            break
        place = build(needed)
        if place is None:
            break
        built.append(needed)
        if str(place) not in index.find_links:
            index = IndexOptions(index.index_url, (*index.find_links, str(place)))
        result = install(index)
    return result, built
