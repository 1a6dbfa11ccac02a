"""The pluggy host runs each application it knows with the plugin installed: datasette serves
pages, tox lists and runs an environment, sqlite-utils runs its command line, hatchling builds a
project configured to use the plugin. Each plugin is installed with its entry point and loaded
through the probe, in a fresh interpreter, as in a sandbox."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import install, probe_load


def load(
    tmp_path: Path, group: str, code: str, *, name: str = "svap", timeout: float | None = None
) -> dict[str, Any]:
    """Install module ``name`` as a plugin of ``group`` and load it with the pluggy host."""
    site = install(tmp_path / "site", f"{name}-dist", {group: {name: name}}, {f"{name}.py": code})
    plugin = {"name": name, "group": group, "value": name}
    return probe_load(tmp_path, "pluggy", plugin, sites=[site], load_timeout=timeout)


def exercised(result: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    assert result["ok"], result["error"]
    return {tool["name"]: (tool["exercise"], tool["exercise_note"]) for tool in result["tools"]}


def failure(result: dict[str, Any]) -> dict[str, Any]:
    assert not result["ok"], result["tools"]
    error: dict[str, Any] = result["error"]
    return error


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- datasette --------------------------------------------------------------------------------


def test_datasette_serves_pages_with_the_plugin_and_says_what_it_did_not_reach(
    tmp_path: Path,
) -> None:
    found = exercised(
        load(
            tmp_path,
            "datasette",
            """
            from datasette import hookimpl
            from datasette.utils.asgi import Response

            SEEN = []

            @hookimpl
            def prepare_connection(conn):
                conn.create_function("svap", 1, lambda value: f"[{value}]")

            @hookimpl
            def render_cell(value, column):
                return None

            @hookimpl
            def register_routes():
                async def hello(request):
                    return Response.text("hello")
                return [(r"^/-/svap\\-hello$", hello), (r"^/-/svap/(?P<name>.*)$", hello)]

            @hookimpl
            def skip_csrf(datasette, scope):
                return False
            """,
        )
    )
    assert found == {
        "prepare_connection": ("passed", None),
        "register_routes": ("passed", None),
        "render_cell": ("passed", None),
        "skip_csrf": ("not_exercised", "datasette asks it only for a POST"),
    }


@pytest.mark.parametrize(
    ("code", "hook", "step"),
    [
        (
            "@hookimpl\ndef prepare_connection(conn):\n    raise RuntimeError('no functions')\n",
            "prepare_connection",
            "GET /, which answered 500",
        ),
        (
            "@hookimpl\ndef startup(datasette):\n    raise RuntimeError('no start')\n",
            "startup",
            "starting datasette (invoke_startup)",
        ),
        (
            "@hookimpl\ndef render_cell(value, column):\n"
            "    if column == 'name':\n        raise RuntimeError(f'cannot render {value!r}')\n",
            "render_cell",
            "GET /data/t, which answered 500",
        ),
    ],
    ids=["prepare_connection", "startup", "render_cell"],
)
def test_a_datasette_hook_that_raises_fails_naming_the_hook_and_the_page(
    tmp_path: Path, code: str, hook: str, step: str
) -> None:
    error = failure(load(tmp_path, "datasette", "from datasette import hookimpl\n\n" + code))
    assert (error["stage"], error["type"]) == ("exercise", "RuntimeError")
    assert error["message"].endswith(f"(in the {hook} hook, during {step})")
    assert f"in {hook}" in error["traceback"]


def test_a_route_of_the_plugins_that_answers_500_fails_it(tmp_path: Path) -> None:
    error = failure(
        load(
            tmp_path,
            "datasette",
            """
            from datasette import hookimpl

            @hookimpl
            def register_routes():
                async def stats(datasette):
                    return datasette.statistics()
                return [(r"^/-/svap-stats$", stats)]
            """,
        )
    )
    assert (error["stage"], error["type"]) == ("exercise", "AttributeError")
    assert "during GET /-/svap-stats, which answered 500" in error["message"]


def test_a_plugin_that_refuses_to_start_unconfigured_is_not_exercised(tmp_path: Path) -> None:
    found = exercised(
        load(
            tmp_path,
            "datasette",
            """
            from datasette import hookimpl
            from datasette.utils import StartupError

            @hookimpl
            def startup(datasette):
                raise StartupError("svap needs a secret in its configuration")

            @hookimpl
            def extra_css_urls():
                return []
            """,
        )
    )
    note = (
        "datasette did not start: the plugin refuses to without configuration (StartupError: "
        "svap needs a secret in its configuration)"
    )
    assert found == {"extra_css_urls": ("not_exercised", note), "startup": ("passed", None)}


def test_a_datasette_hook_that_needs_an_unreachable_service_says_so(
    tmp_path: Path, closed_port: int
) -> None:
    error = failure(
        load(
            tmp_path,
            "datasette",
            f"""
            import socket

            from datasette import hookimpl

            @hookimpl
            def startup(datasette):
                socket.create_connection(("127.0.0.1", {closed_port}), timeout=2)
            """,
        )
    )
    assert (error["stage"], error["type"]) == ("exercise", "MissingPrerequisite")
    assert error["message"].startswith("needs a service it cannot reach (it tried ")
    assert "ConnectionRefusedError" in error["message"]
    assert error["message"].endswith(
        "(in the startup hook, during starting datasette (invoke_startup))"
    )


def test_a_datasette_hook_that_hangs_is_a_timeout(tmp_path: Path) -> None:
    result = load(
        tmp_path,
        "datasette",
        """
        import time

        from datasette import hookimpl

        @hookimpl
        def extra_css_urls():
            while True:
                time.sleep(0.1)
        """,
        timeout=6,
    )
    error = failure(result)
    assert (error["stage"], error["code"]) == ("exercise", "timeout")
    assert error["message"].startswith("datasette: GET / did not finish within ")
    assert error["message"].endswith("(in the plugin's extra_css_urls hook)")


# -- tox --------------------------------------------------------------------------------------


def test_tox_lists_and_runs_an_environment_with_the_plugin(tmp_path: Path) -> None:
    found = exercised(
        load(
            tmp_path,
            "tox",
            """
            from tox.plugin import impl

            @impl
            def tox_add_option(parser):
                parser.add_argument("--svap", action="store_true")

            @impl
            def tox_before_run_commands(tox_env):
                pass

            @impl
            def tox_env_teardown(tox_env):
                pass
            """,
        )
    )
    assert found == {
        "tox_add_option": ("passed", None),
        "tox_before_run_commands": ("passed", None),
        "tox_env_teardown": ("passed", None),
    }


@pytest.mark.parametrize(
    ("hook", "arguments", "step"),
    [
        ("tox_add_core_config", "core_conf, state", "tox l"),
        ("tox_before_run_commands", "tox_env", "tox r -e sv"),
    ],
)
def test_a_tox_hook_that_raises_fails_naming_the_hook_and_the_command(
    tmp_path: Path, hook: str, arguments: str, step: str
) -> None:
    error = failure(
        load(
            tmp_path,
            "tox",
            f"from tox.plugin import impl\n\n@impl\ndef {hook}({arguments}):\n"
            "    raise RuntimeError('broken')\n",
        )
    )
    assert (error["stage"], error["type"]) == ("exercise", "RuntimeError")
    assert error["message"] == f"broken (in the {hook} hook, during {step})"


# -- sqlite-utils -----------------------------------------------------------------------------


def test_sqlite_utils_runs_its_command_line_with_the_plugin(tmp_path: Path) -> None:
    found = exercised(
        load(
            tmp_path,
            "sqlite_utils",
            """
            import click
            import sqlite_utils

            @sqlite_utils.hookimpl
            def register_commands(cli):
                @cli.command(name="svap-hello")
                def hello():
                    "Say hello."
                    click.echo("hello")

            @sqlite_utils.hookimpl
            def prepare_connection(conn):
                conn.create_function("svap", 1, lambda value: f"[{value}]")
            """,
        )
    )
    assert found == {"prepare_connection": ("passed", None), "register_commands": ("passed", None)}


@pytest.mark.parametrize(
    ("code", "step"),
    [
        (
            "@sqlite_utils.hookimpl\ndef register_commands(cli):\n    raise RuntimeError('broken')\n",
            "the register_commands hook, during importing sqlite-utils' command line",
        ),
        (
            "@sqlite_utils.hookimpl\ndef prepare_connection(conn):\n    raise RuntimeError('broken')\n",
            "the prepare_connection hook, during sqlite-utils query",
        ),
    ],
    ids=["register_commands", "prepare_connection"],
)
def test_a_sqlite_utils_hook_that_raises_fails_naming_it(
    tmp_path: Path, code: str, step: str
) -> None:
    error = failure(load(tmp_path, "sqlite_utils", "import sqlite_utils\n\n" + code))
    assert (error["stage"], error["type"]) == ("exercise", "RuntimeError")
    assert error["message"].startswith(f"broken (in {step}")


# -- hatch ------------------------------------------------------------------------------------

BUILD_HOOK = """
from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

class StampHook(BuildHookInterface):
    PLUGIN_NAME = "svap-stamp"

    def initialize(self, version, build_data):
        {body}

@hookimpl
def hatch_register_build_hook():
    return StampHook
"""


def test_hatchling_builds_a_project_configured_to_use_the_plugin(tmp_path: Path) -> None:
    body = "build_data['force_include'][__file__] = 'svap_stamp.py'"
    found = exercised(load(tmp_path, "hatch", BUILD_HOOK.format(body=body)))
    assert found == {
        "hatch_register_build_hook": (
            "passed",
            "hatchling build -t wheel with the build hook 'svap-stamp' (svap.StampHook) succeeded",
        )
    }


def test_a_build_hook_that_breaks_the_build_fails_naming_it(tmp_path: Path) -> None:
    body = "build_data['artifacts'].append(self.build_config.stamp_path())"
    error = failure(load(tmp_path, "hatch", BUILD_HOOK.format(body=body)))
    assert (error["stage"], error["type"]) == ("exercise", "AttributeError")
    assert error["message"].endswith(
        "(in hatchling build -t wheel with the build hook 'svap-stamp' (svap.StampHook))"
    )


def test_a_build_hook_that_needs_configuration_is_not_exercised(tmp_path: Path) -> None:
    body = "if 'path' not in self.config:\n            raise ValueError('`path` is required')"
    found = exercised(load(tmp_path, "hatch", BUILD_HOOK.format(body=body)))
    verdict, note = found["hatch_register_build_hook"]
    assert verdict == "not_exercised"
    assert note.endswith(
        "raised ValueError: `path` is required: it needs configuration a project gives it"
    )


def test_a_version_source_is_asked_for_the_version(tmp_path: Path) -> None:
    found = exercised(
        load(
            tmp_path,
            "hatch",
            """
            from hatchling.plugin import hookimpl
            from hatchling.version.source.plugin.interface import VersionSourceInterface

            class Fixed(VersionSourceInterface):
                PLUGIN_NAME = "svap-fixed"

                def get_version_data(self):
                    return {"version": "1.2.3"}

            @hookimpl
            def hatch_register_version_source():
                return Fixed
            """,
        )
    )
    assert found["hatch_register_version_source"][0] == "passed"


def test_a_registered_class_hatch_cannot_name_fails(tmp_path: Path) -> None:
    error = failure(
        load(
            tmp_path,
            "hatch",
            """
            from hatchling.plugin import hookimpl

            class Nameless:
                pass

            @hookimpl
            def hatch_register_build_hook():
                return Nameless
            """,
        )
    )
    assert (error["stage"], error["type"]) == ("exercise", "ValueError")
    assert error["message"] == (  # hatchling's own words
        "Class `Nameless` does not have a None attribute. (in hatch collecting its build hooks "
        "(hatch_register_build_hook))"
    )
