"""sqlite-utils runs its command line with the plugin, in-process (click's test runner).

Importing ``sqlite_utils.cli`` calls ``register_commands``; ``--help`` lists the commands; each
command the plugin added answers ``--help`` (its callback lives in the plugin's package: the
command line is a ``DefaultGroup`` whose default command is ``query``, so an unknown command's
``--help`` exits 0 too and proves nothing); ``query`` on a scratch database and a ``Database``
opened by the library call ``prepare_connection``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from sandboxverify.runtime.hosts._exercise import within
from sandboxverify.runtime.hosts._pluggy_watch import AppRun

#: imported before the plugin, as a run of the application does (it loads its plugins)
LOADS_PLUGINS = "sqlite_utils.plugins"


def exercise(run: AppRun, scratch: str) -> None:
    run.scenario = (
        "its command line imported, --help, --help of each command the plugin adds, a query "
        "and a Database opened"
    )
    plugins = run.import_app("sqlite_utils.plugins")
    ensure = getattr(plugins, "ensure_plugins_loaded", None)  # sqlite-utils 4 loads lazily
    if callable(ensure):
        with run.step("loading sqlite-utils' plugins"):
            ensure()
    run.join(plugins.pm)
    imported = "sqlite_utils.cli" in sys.modules
    with run.step("importing sqlite-utils' command line"):
        cli = run.import_app("sqlite_utils.cli").cli
        if imported:  # imported before the watch: call the hook again, on the real group
            plugins.pm.hook.register_commands(cli=cli)
    testing = run.import_app("click.testing")
    runner = testing.CliRunner()
    database = os.path.join(scratch, "data.db")
    own = sorted(name for name, command in cli.commands.items() if _owned(run, command))
    for args in (["--help"], *([name, "--help"] for name in own)):
        _invoke(run, runner, cli, args)
    _invoke(run, runner, cli, ["query", database, "select 1 as one"])
    sqlite_utils = run.import_app("sqlite_utils")
    with run.step("opening a Database"):
        sqlite_utils.Database(database).execute("select 1").fetchall()


def _owned(run: AppRun, command: Any) -> bool:
    callback = getattr(command, "callback", None)
    module = getattr(callback, "__module__", None) or type(command).__module__
    return within(module, run.package)


def _invoke(run: AppRun, runner: Any, cli: Any, args: list[str]) -> None:
    what = "sqlite-utils " + " ".join(
        os.path.basename(arg) if os.sep in arg else arg for arg in args
    )
    with run.step(what) as reached:
        result = runner.invoke(cli, args, catch_exceptions=True)
        error = result.exception
        if error is not None and not isinstance(error, SystemExit):
            run.broke(what, error, reached, answer=f"exited with status {result.exit_code}")
        if result.exit_code != 0:
            output = " ".join(str(result.output).split())[-400:]
            run.broke(
                what, None, reached, answer=f"exited with status {result.exit_code}: {output}"
            )
