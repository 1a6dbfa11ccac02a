"""The hand-rolled plugin check that the non-sandboxverify contenders of ``bench_check.py`` run.

Usage (inside the freshly installed environment, ideally with ``python -I``)::

    python -I plugin_loader.py DISTRIBUTION GROUP [EXPECTED_TOOLS]

Loads every entry point of DISTRIBUTION in GROUP with :mod:`importlib.metadata`, calls each with a
minimal stub of the plugin API (``register_tool``, the ``tool`` decorator and ``on``) that only
records names, and prints what each plugin registered. All plugins load in this one process.

Exit status 0 when at least one plugin loaded and every tool in EXPECTED_TOOLS (comma-separated)
was registered, 1 otherwise. Stdlib only, Python 3.9+: it is copied into each benchmark
repetition's temporary directory and run by the interpreter of the environment under test.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any, Callable

Function = Callable[..., Any]


class StubAPI:
    """Just enough of the plugin API for ``setup(api)`` to run; records tool and event names."""

    def __init__(self) -> None:
        self.tools: list[str] = []
        self.events: list[str] = []

    def register_tool(self, name: str, fn: Function, **_options: Any) -> None:
        if not callable(fn):
            raise TypeError(f"tool {name!r}: expected a callable, got {type(fn).__name__}")
        self.tools.append(name)

    def tool(self, fn: Function | None = None, *, name: str | None = None, **options: Any) -> Any:
        def decorate(func: Function) -> Function:
            self.register_tool(name or func.__name__, func, **options)
            return func

        return decorate if fn is None else decorate(fn)

    def on(self, event: str, handler: Function | None = None) -> Any:
        def subscribe(func: Function) -> Function:
            self.events.append(event)
            return func

        return subscribe if handler is None else subscribe(handler)


def normalize(name: str) -> str:
    """PEP 503 normalisation, so ``svfix_good_hatch`` finds ``svfix-good-hatch``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def find_distribution(name: str) -> metadata.Distribution | None:
    wanted = normalize(name)
    for dist in metadata.distributions():
        if normalize(dist.metadata["Name"] or "") == wanted:
            return dist
    return None


def load(entry_point: metadata.EntryPoint) -> list[str]:
    """Load one plugin and return the tools it registered."""
    api = StubAPI()
    target = entry_point.load()
    setup = target if callable(target) else getattr(target, "setup", None)
    if not callable(setup):
        raise TypeError(f"{entry_point.value} is neither callable nor has a setup()")
    setup(api)
    return api.tools


def main(argv: Sequence[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    dist_name, group = argv[0], argv[1]
    expected = {tool for tool in (argv[2] if len(argv) == 3 else "").split(",") if tool}
    dist = find_distribution(dist_name)
    if dist is None:
        print(f"distribution {dist_name!r} is not installed", file=sys.stderr)
        return 1
    entry_points = [ep for ep in dist.entry_points if ep.group == group]
    if not entry_points:
        print(f"{dist_name} declares no entry points in group {group!r}", file=sys.stderr)
        return 1
    registered: list[str] = []
    for entry_point in entry_points:
        tools = load(entry_point)
        print(f"{entry_point.name}: {', '.join(tools) or '(no tools)'}")
        registered.extend(tools)
    missing = sorted(expected - set(registered))
    if missing:
        print(f"expected tools not registered: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
