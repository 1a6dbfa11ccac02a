"""What an import run that crashed or hung left: the module it was importing, from its
progress file, and the failure that names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandboxverify.report import Failure
from sandboxverify.sandbox import loads_bounded, read_bounded


def from_progress(path: Path) -> dict[str, Any]:
    """What the progress file says about a run that never wrote its result."""
    modules: list[str] = []
    results: list[dict[str, Any]] = []
    current: str | None = None
    done = reaching = False
    try:
        lines = read_bounded(path).splitlines()
    except (OSError, ValueError):  # none, or past a bound: the run's code wrote it
        lines = []
    for line in lines:
        try:
            note = loads_bounded(line)
        except ValueError:
            continue  # a line cut short by the crash, or nested past the bound
        if not isinstance(note, dict):
            continue
        if "planned" in note:
            modules = [str(name) for name in note["planned"]]
        elif "importing" in note:
            current = str(note["importing"])
        elif "reaching" in note:  # an entry point's module, imported before all the others
            current, reaching = str(note["reaching"]), True
        elif "module" in note:
            results.append(note)
            current = None
        elif "reached" in note:
            current, reaching = None, False
        elif note.get("done"):
            done = True
    stopped = None if done else current
    if stopped not in modules:
        rest = []
    elif reaching:  # none of the others had been imported yet
        rest = [module for module in modules if module != stopped]
    else:
        rest = modules[modules.index(stopped) + 1 :]
    return {"modules": modules, "results": results, "stopped_at": stopped, "not_checked": rest}


def stopped(failure: Failure, partial: dict[str, Any], timeout: float) -> Failure:
    """The import run died or hung: name the module it was importing, if any."""
    module = partial.get("stopped_at")
    if module is None:
        return failure
    rest = len(partial.get("not_checked") or ())
    remaining = f"; the remaining {rest} module(s) were not checked" if rest else ""
    if failure.code == "timeout":
        return Failure(
            "timeout",
            f"importing module {module!r} did not finish: the import run was killed after "
            f"{timeout:g}s (--timeout){remaining}",
            python=failure.python,
            hint=f"a module must not block at import (a server, a prompt, a network call); "
            f"if it is only slow, raise --timeout; if it must not be imported on its own, "
            f"pass --import-skip {module}",
            details=failure.details,
            module=module,
        )
    cause = failure.message.split(" crashed: ", 1)[-1]
    return Failure(
        "import_failed",
        f"importing module {module!r} crashed the interpreter: {cause}{remaining}",
        python=failure.python,
        hint="a module must not end or kill the interpreter at import (os._exit belongs in a "
        "main function; a crash in an extension module is a bug there); if it must not be "
        f"imported on its own, pass --import-skip {module}",
        details=failure.details,
        module=module,
    )
