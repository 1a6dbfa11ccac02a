"""tox lists and runs a trivial environment with the plugin, in-process and offline.

A scratch project (``tox.ini`` with one environment, ``package = skip`` and one ``python -c``
command, and a ``pyproject.toml`` with a ``[project]`` table, which some plugins read) is listed
(``tox l``: the registration and configuration hooks) and run (``tox r``: the install, command
and teardown hooks too; the environment's virtualenv is seeded from virtualenv's own wheels, so
no index is asked). tox loads its plugins itself on each run; it turns a hook that raises into
"internal error" and an exit status, which the watch tells apart.
"""

from __future__ import annotations

import os
from typing import Any

from sandboxverify.runtime.hosts._base import PluginLoadError
from sandboxverify.runtime.hosts._exercise import captured
from sandboxverify.runtime.hosts._pluggy_watch import AppRun, watching_new_managers

TOX_INI = """\
[tox]
env_list = sv
skip_missing_interpreters = false

[testenv]
package = skip
commands = python -c "print('sandboxverify')"
"""
_USER_CONFIG = "TOX_USER_CONFIG_FILE"
#: a project as most are: with a [project] table and extras (some plugins read them)
PYPROJECT = """\
[project]
name = "sandboxverify-scratch"
version = "0.0.1"

[project.optional-dependencies]
test = []
"""


#: imported before the plugin, as a run of the application does (it loads its plugins)
LOADS_PLUGINS = "tox.plugin.manager"


def exercise(run: AppRun, scratch: str) -> None:
    run.scenario = "tox l and tox r of a trivial environment (package = skip, one command)"
    manager = run.import_app("tox.plugin.manager").MANAGER.manager
    run.watch.attach(manager)  # tox (re)loads its plugins on each run, from the entry points
    ini = os.path.join(scratch, "tox.ini")
    for name, text in (("tox.ini", TOX_INI), ("pyproject.toml", PYPROJECT)):
        with open(os.path.join(scratch, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    tox_run = run.import_app("tox.run")
    previous = os.environ.get(_USER_CONFIG)
    os.environ[_USER_CONFIG] = os.path.join(scratch, "no-user-config.ini")  # not the user's
    try:
        _runs(run, tox_run, manager, ini)
    finally:
        if previous is None:
            os.environ.pop(_USER_CONFIG, None)
        else:
            os.environ[_USER_CONFIG] = previous


def _runs(run: AppRun, tox_run: Any, manager: Any, ini: str) -> None:
    # tox makes a preliminary plugin manager of its own to parse the command line
    with watching_new_managers(run.watch, "tox"):
        _tox(run, tox_run, ["-c", ini, "l"])
        if not manager.is_registered(run.target) and manager.get_plugin(run.ref.name) is None:
            raise PluginLoadError(
                "application",
                RuntimeError(
                    f"tox ran without loading the plugin {run.ref.name!r}: is it blocked "
                    "(TOX_DISABLED_EXTERNAL_PLUGINS)?"
                ),
            )
        _tox(run, tox_run, ["-c", ini, "r", "-e", "sv"])


def _tox(run: AppRun, tox_run: Any, args: list[str]) -> None:
    what = "tox " + " ".join(args[2:])
    with run.step(what) as reached, captured() as output:
        status = tox_run.main(args)
    if status != 0:
        run.broke(what, None, reached, answer=f"exited with status {status}: {_tail(output.text)}")


def _tail(text: str, lines: int = 12) -> str:
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])
