"""Hints for a plugin that failed to load: what to change, by the stage it failed in and what
its error names (a prerequisite, its application, the network, a program, a module)."""

from __future__ import annotations

import re

from sandboxverify.report import PluginRecord, reached_for_network
from sandboxverify.runtime.hosts import KNOWN_GROUPS, Wording
from sandboxverify.stages._import_causes import NO_MODULE_NAMED
from sandboxverify.stages._removed_stdlib import removed_from_stdlib

#: a program the plugin runs, missing from PATH: "'pngquant' not found", "X: command not found",
#: a subprocess' "[Errno 2] No such file or directory: 'optipng'" (a bare name, not a data file)
_MISSING_PROGRAM = re.compile(
    r"'(?P<quoted>[\w+-]+)' not found"
    r"|(?P<shell>[\w+-]+): command not found"
    r"|No such file or directory: '(?P<errno>[\w+-]+)'"
)


def load_hint(
    record: PluginRecord, own_modules: frozenset[str], python: str, wording: Wording
) -> str:
    """What to change so that a plugin that failed to load loads: by the stage it failed in."""
    error = record.error
    assert error is not None
    if error.type == "MissingPrerequisite":
        return (
            "the plugin needs what this sandbox does not give it (the message says what: a "
            "service, an extra, an interpreter capability); if it needs it by design, check it "
            f"where that is there, or pass --plugin-allow-fail {record.name}"
        )
    removed = _removed_module(error.type, error.message, python)
    if removed is not None and error.stage != "import":  # the import hint says it too
        return removed
    if error.stage == "setup":
        return wording.setup
    if error.stage == "application" and error.type == "ApplicationMissing":
        known = KNOWN_GROUPS.get(record.group)
        application = known[1].application if known and known[1].application else "the application"
        tried = record.application.tried if record.application is not None else ()
        said = f" (sandboxverify could not install it: {tried[-1][1]})" if tried else ""
        return (
            f"install {application} in the sandbox{said}: add it to [project] dependencies if "
            f"the plugin cannot work without it, or pass --with {application}"
        )
    if reached_for_network(error.message) or reached_for_network(error.traceback):
        return (
            "loading the plugin reached for the network and could not get through: a plugin "
            "should load offline (download lazily, when a feature is used); if it needs the "
            "network by design, pass --network (the OS sandbox has none without it), check "
            f"where that host is reachable, or pass --plugin-allow-fail {record.name}"
        )
    program = _MISSING_PROGRAM.search(error.message)
    if error.stage in ("application", "setup") and program:
        name = next(group for group in program.groups() if group)
        return (
            f"the plugin runs the program {name!r}, which is not installed here: install it on "
            f"the machine that checks (apt-get install {name}, brew install {name}), or, if "
            f"the plugin is fine without it, pass --plugin-allow-fail {record.name}"
        )
    if error.stage == "application" and error.type == "HostUnusable":  # not the plugin's fault
        return (
            "the host the application ships cannot judge plugins: tell the application's "
            f"maintainers; meanwhile --host entrypoints --group {record.group} loads the plugin "
            "without it"
        )
    if error.stage == "application":
        return wording.setup
    if error.stage == "exercise":
        return wording.exercise_hint
    if error.stage == "validate":
        return wording.validate_hint
    return _import_hint(record, own_modules, python)


def _removed_module(kind: str, message: str, python: str) -> str | None:
    """Why the plugin cannot import a module its code asks for while the application uses it,
    when that module no longer exists (``pkg_resources``, Python 2's standard library)."""
    missing = NO_MODULE_NAMED.search(message) if kind == "ModuleNotFoundError" else None
    return removed_from_stdlib(missing.group(1).split(".")[0], python) if missing else None


def _import_hint(record: PluginRecord, own_modules: frozenset[str], python: str) -> str:
    """What to change when the plugin's module failed at import."""
    error = record.error
    assert error is not None
    missing = NO_MODULE_NAMED.search(error.message)
    if error.type == "ModuleNotFoundError" and missing:
        module = missing.group(1)
        top = module.split(".", 1)[0]
        if top in own_modules:
            return (
                f"{module} belongs to this project but is not in the installed wheel: "
                "it is left out of the sdist or the wheel (check the build's include/exclude "
                "settings, MANIFEST.in, packages=...), or the entry point names a module that "
                "was renamed or never existed"
            )
        removed = removed_from_stdlib(top, python)
        if removed is not None:
            return removed
        return (
            f"{top!r} is imported but not installed: declare it in [project] dependencies "
            "(only declared dependencies are installed in the sandbox), or, if it is the "
            f"application that loads the plugin, install it with --with {top}"
        )
    # the entry point's own attribute missing, not an AttributeError its module raised
    attribute = record.value.partition(":")[2].replace(" ", "")
    named = [f"has no attribute {part!r}" for part in attribute.split(".") if part]
    if error.type == "AttributeError" and any(words in error.message for words in named):
        return (
            f"the entry point names an attribute the module does not define: fix "
            f"{record.value!r} in [project.entry-points] of pyproject.toml"
        )
    if error.type in ("FileNotFoundError", "IsADirectoryError", "NotADirectoryError"):
        return (
            "a file read at import is not in the installed package: declare it as package "
            "data so the wheel ships it"
        )
    if error.type == "SyntaxError":
        return (
            f"the module does not compile on Python {python}: use syntax this Python "
            "understands, or raise requires-python"
        )
    return "the plugin's module raised at import (traceback in details)"
