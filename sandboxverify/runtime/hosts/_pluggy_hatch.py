"""hatchling builds a scratch project configured to use the plugin, in-process.

hatchling imports third-party ``hatch`` plugins only when a project names one it does not have
built in, so an unconfigured plugin never runs. Its type follows from the ``hatch_register_*``
hook it implements, and the name a project configures it by is the ``PLUGIN_NAME`` of the class
that hook returns (not the entry point's name). So each of the plugin's register hooks is called
through hatchling's (or hatch's) own plugin manager, and each class it returns is used the way
a project uses it: a version source, a metadata hook, a build hook by ``hatchling build -t
wheel``; a builder by ``hatchling build -t NAME``; a version scheme by ``hatchling version
minor``. The hatch command line's own types (environments, publishers, templates...) run only
under ``hatch``, which installs from an index: they are registered and named, not run.

A project table left empty may not be enough: a plugin that needs configuration raises its own
error, which is not a break (a programming error is: ``AttributeError``, ``TypeError``...).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from sandboxverify.runtime.hosts._base import ApplicationFailed, PluginLoadError
from sandboxverify.runtime.hosts._exercise import PROGRAMMING_ERRORS, captured, need_of
from sandboxverify.runtime.hosts._pluggy_watch import AppRun, watching_new_managers

#: the fields a metadata hook may fill: hatchling calls metadata hooks only for a project
#: with dynamic fields, and refuses a field a hook fills that is not dynamic
_FILLED = ("readme", "dependencies", "optional-dependencies", "urls", "classifiers", "keywords")
#: what hatchling does with each type, by register hook: (type, project table, its dynamic
#: fields, command)
HATCHLING = {
    "hatch_register_version_source": (
        "version source",
        '[tool.hatch.version]\nsource = "{name}"\n',
        ("version",),
        ["build", "-t", "wheel"],
    ),
    "hatch_register_metadata_hook": (
        "metadata hook",
        '[tool.hatch.metadata.hooks."{name}"]\n',
        _FILLED,
        ["build", "-t", "wheel"],
    ),
    "hatch_register_build_hook": (
        "build hook",
        '[tool.hatch.build.hooks."{name}"]\n',
        (),
        ["build", "-t", "wheel"],
    ),
    "hatch_register_builder": (
        "builder",
        '[tool.hatch.build.targets."{name}"]\n',
        (),
        ["build", "-t", "{name}"],
    ),
    "hatch_register_version_scheme": (
        "version scheme",
        '[tool.hatch.version]\npath = "demo/__init__.py"\nscheme = "{name}"\n',
        ("version",),
        ["version", "minor"],
    ),
}
#: the hatch command line's types: run only by ``hatch``
HATCH = {
    "hatch_register_environment": "environment",
    "hatch_register_environment_collector": "environment collector",
    "hatch_register_publisher": "publisher",
    "hatch_register_template": "project template",
    "hatch_register_locker": "locker",
}
PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "sandboxverify-scratch"
description = "A scratch project"
{fields}
[tool.hatch.build.targets.wheel]
packages = ["demo"]

{table}"""


#: hatchling imports its plugins only when a build names one: nothing to import first
LOADS_PLUGINS = ""


def exercise(run: AppRun, scratch: str) -> None:
    run.scenario = "hatchling building a scratch project configured to use the plugin"
    hooks = [hook for hook in run.hooks if hook in HATCHLING or hook in HATCH]
    with watching_new_managers(run.watch, "hatch"):
        for hook in hooks:
            for name, cls in _registered(run, hook):
                if hook in HATCH:
                    run.judge(
                        hook,
                        "not_exercised",
                        f"registers the {HATCH[hook]} {name!r} ({_qualname(cls)}), which only "
                        "the hatch command line runs (and it installs from an index): not run",
                    )
                else:
                    _use(run, hook, name, cls, os.path.join(scratch, f"{hook}-{name}"))


def _registered(run: AppRun, hook: str) -> list[tuple[str, Any]]:
    """The classes the plugin's ``hook`` returns, as hatchling (or hatch) collects them."""
    kind = hook[len("hatch_register_") :]
    module = "hatch.plugin.manager" if hook in HATCH else "hatchling.plugin.manager"
    with run.step(f"hatch collecting its {kind.replace('_', ' ')}s ({hook})") as reached:
        getattr(run.import_app(module).PluginManager(), kind).collect()
    classes: list[Any] = []
    for result in run.watch.results.get(hook, []):
        classes += result if isinstance(result, list) else [result]
    found: list[tuple[str, Any]] = []
    for cls in classes:
        name = getattr(cls, "PLUGIN_NAME", None)
        if not isinstance(name, str) or not name:
            error = TypeError(f"{_qualname(cls)} has no PLUGIN_NAME: hatch cannot name it")
            run.broke(f"hatch collecting {kind}s", error, reached, hook=hook)
        found.append((name, cls))
    return found


def _use(run: AppRun, hook: str, name: str, cls: Any, project: str) -> None:
    kind, table, dynamic, command = HATCHLING[hook]
    command = [word.format(name=name) for word in command]
    _write_project(project, table.format(name=name), dynamic)
    what = f"hatchling {' '.join(command)} with the {kind} {name!r} ({_qualname(cls)})"
    cli = run.import_app("hatchling.cli")
    previous, argv = os.getcwd(), sys.argv
    os.chdir(project)
    sys.argv = ["hatchling", *command, *(["-d", "dist"] if command[0] == "build" else [])]
    try:
        with run.step(what) as reached, captured() as output:
            try:
                cli.hatchling()
            except SystemExit as exc:
                if exc.code not in (0, None):
                    run.broke(what, ApplicationFailed(output.text[-2000:]), reached)
            except Exception as exc:
                if isinstance(exc, PROGRAMMING_ERRORS) or need_of(exc, reached) is not None:
                    raise
                run.judge(
                    hook,
                    "not_exercised",
                    f"registers the {kind} {name!r}, but {what} raised "
                    f"{type(exc).__name__}: {exc}: it needs configuration a project gives it",
                )
                return
    except PluginLoadError:
        raise
    finally:
        os.chdir(previous)
        sys.argv = argv
    run.judge(hook, "passed", f"{what} succeeded")


def _write_project(path: str, table: str, dynamic: tuple[str, ...]) -> None:
    os.makedirs(os.path.join(path, "demo"))
    fields = {"version": '"0.1.0"', "readme": '"README.md"'}
    lines = [f"{key} = {value}" for key, value in fields.items() if key not in dynamic]
    lines.append("dynamic = [" + ", ".join(f'"{field}"' for field in dynamic) + "]")
    files = {
        "pyproject.toml": PYPROJECT.format(fields="\n".join(lines) + "\n", table=table),
        "README.md": "# scratch\n",
        os.path.join("demo", "__init__.py"): '__version__ = "0.1.0"\n',
    }
    for relative, text in files.items():
        with open(os.path.join(path, relative), "w", encoding="utf-8") as handle:
            handle.write(text)


def _qualname(cls: Any) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"
