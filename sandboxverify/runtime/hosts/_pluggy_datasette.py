"""datasette serves pages with the plugin: in-process, on a scratch database with a table that
has rows (``render_cell`` runs only for rows), through datasette's own test client.

The command line is imported (``register_commands``, ``publish_subcommand``), ``Datasette`` made
and started (``invoke_startup``: ``startup``, ``prepare_jinja2_environment``...), then it answers
GETs of ``/``, the database, the table (HTML, JSON, and each output renderer's extension the
plugin registers), a row, a query, the plugin's own plain routes and a page that does not exist.
3xx and 4xx are normal answers (datasette 1.0 redirects some of these paths); a 5xx, or an
exception out of datasette, is a break, and a hook of the plugin's that raised says which.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import sys
from typing import Any

from sandboxverify.runtime.hosts._exercise import in_files
from sandboxverify.runtime.hosts._pluggy_watch import AppRun, Stopped

#: what the GETs below cannot reach, by hook
UNREACHED = {
    "skip_csrf": "datasette asks it only for a POST",
    "forbidden": "datasette calls it only when it refuses a request (403)",
    "register_magic_parameters": "datasette calls it only for a canned query with magic parameters",
    "permission_allowed": "datasette asks it only when a page checks a permission the "
    "anonymous actor is not granted by default",
}
_PATHS = (
    "/",
    "/-/versions.json",
    "/data",
    "/data/t",
    "/data/t.json",
    "/data/t/1",
    "/data?sql=select+*+from+t",
)
_NOT_FOUND = "/-/sandboxverify-no-such-page"
#: a regular expression's own syntax, unescaped: not a plain path
_SPECIAL = re.compile(r"(?<!\\)[(\[{?*+|]")


#: imported before the plugin, as a run of the application does (it loads its plugins)
LOADS_PLUGINS = "datasette.plugins"


def exercise(run: AppRun, scratch: str) -> None:
    run.scenario = (
        "its command line imported, a Datasette started, then GETs of /, a database, a table "
        "with rows, a row, a query and a page that does not exist"
    )
    run.unreached.update(UNREACHED)
    plugins = run.import_app("datasette.plugins")
    run.join(plugins.pm)
    with run.step("importing datasette's command line"):
        if "datasette.cli" in sys.modules:  # imported before the watch: call the hook again
            plugins.pm.hook.register_commands(cli=run.import_app("click").Group())
        else:
            run.import_app("datasette.cli")
    import asyncio  # noqa: PLC0415 - only datasette's run pays

    loop = asyncio.new_event_loop()
    try:
        _serve(run, loop, _database(scratch))
    finally:
        with contextlib.suppress(Exception):  # its threads must not outlive the run
            loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def _serve(run: AppRun, loop: Any, database: str) -> None:
    app = run.import_app("datasette.app")
    startup_error = getattr(run.import_app("datasette.utils"), "StartupError", ())
    with run.step("making a Datasette"):
        datasette = app.Datasette([database])
    try:
        _start_and_get(run, loop, datasette, startup_error)
    finally:  # its SQL threads must not outlive the run (in a process that goes on)
        executor = getattr(datasette, "executor", None)
        if executor is not None:
            executor.shutdown(wait=False)


def _start_and_get(run: AppRun, loop: Any, datasette: Any, startup_error: Any) -> None:
    with run.step("starting datasette (invoke_startup)"):
        try:
            loop.run_until_complete(datasette.invoke_startup())
        except Exception as exc:
            if not (startup_error and isinstance(exc, startup_error) and in_files(exc, run.roots)):
                raise
            run.stopped = (
                "datasette did not start: the plugin refuses to without configuration "
                f"({type(exc).__name__}: {exc})"
            )
            raise Stopped(run.stopped) from exc
    paths = [*_PATHS, *(f"/data/t.{ext}" for ext in _own_extensions(run))]
    paths += [*_own_routes(run), _NOT_FOUND]
    for path in dict.fromkeys(paths):
        with run.step(f"GET {path}"):
            response = loop.run_until_complete(datasette.client.get(path))
            if response.status_code >= 500:
                run.broke(f"GET {path}", None, [], answer=f"answered {response.status_code}")


def _own_extensions(run: AppRun) -> list[str]:
    """The extensions of the output renderers the plugin registers (``/data/t.copyable``)."""
    found: list[str] = []
    for result in run.watch.results.get("register_output_renderer", []):
        for renderer in result if isinstance(result, list) else [result]:
            extension = renderer.get("extension") if isinstance(renderer, dict) else None
            if isinstance(extension, str) and extension.isidentifier():
                found.append(extension)
    return found


def _own_routes(run: AppRun) -> list[str]:
    """The plugin's routes that are plain paths (``^/robots\\.txt$``), to GET them."""
    paths: list[str] = []
    for result in run.watch.results.get("register_routes", []):
        for route in result or []:
            pattern = route[0] if isinstance(route, (list, tuple)) and route else None
            if not isinstance(pattern, str) or _SPECIAL.search(pattern.strip("^$")):
                continue
            path = re.sub(r"\\(.)", r"\1", pattern.strip("^$"))
            if path.startswith("/") and re.fullmatch(pattern, path):
                paths.append(path)
    return paths


def _database(scratch: str) -> str:
    """``data.db``: table ``t`` with rows, and columns plugins act on (text, lat/lng, JSON)."""
    path = os.path.join(scratch, "data.db")
    with sqlite3.connect(path) as connection:
        connection.execute(
            "create table t (id integer primary key, name text, latitude real, "
            "longitude real, tags text, body text)"
        )
        connection.executemany(
            "insert into t values (?, ?, ?, ?, ?, ?)",
            [
                (1, "one", 51.5, -0.12, '["a", "b"]', "# Hello\n\nSome *text*."),
                (2, "two", 48.85, 2.35, '{"k": 1}', "https://example.com/"),
            ],
        )
    connection.close()
    return path
