"""The pluggy host against real pluggy applications (datasette, sqlite-utils, tox) and a custom
one named by its hookspecs module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import (
    ApplicationMissing,
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    load_plugin,
)
from sandboxverify.sandbox._workspace import Workspace


class Write(Protocol):
    def __call__(self, name: str, code: str, *, entry_point: str | None = None) -> None: ...


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Write]:
    """Write a module into an importable directory; with ``entry_point``, installed as a
    plugin of that group (an entry point named after the module)."""
    root = tmp_path / "modules"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def write_module(name: str, code: str, *, entry_point: str | None = None) -> None:
        (root / f"{name}.py").write_text(textwrap.dedent(code))
        if entry_point is not None:
            info = root / f"{name}-1.0.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
            (info / "entry_points.txt").write_text(f"[{entry_point}]\n{name} = {name}\n")

    yield write_module
    for name in [name for name in sys.modules if name.startswith("svpl_")]:
        del sys.modules[name]


def load(value: str, group: str = "datasette", hookspecs: str | None = None) -> LoadedPlugin:
    ref = EntryPointRef(name=value.split(":", 1)[0], group=group, value=value)
    return load_plugin("pluggy", ref, Registry(), HostContext(hookspecs=hookspecs))


def load_error(
    value: str, group: str = "datasette", hookspecs: str | None = None
) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(value, group, hookspecs)
    return info.value


def hooks(loaded: LoadedPlugin) -> list[str]:
    assert {tool["kind"] for tool in loaded.tools} <= {"hook"}
    return [tool["name"] for tool in loaded.tools]


def test_a_datasette_plugin_reports_the_hooks_it_implements(write: Write) -> None:
    write(
        "svpl_good",
        """
        from datasette import hookimpl

        @hookimpl
        def prepare_connection(conn):
            "Register the   SQL functions."

        @hookimpl(trylast=True)
        def startup(datasette):
            pass

        @hookimpl(specname="render_cell")
        def render_upper(value):
            return None

        def helper():
            pass
        """,
    )
    loaded = load("svpl_good")
    assert hooks(loaded) == ["prepare_connection", "render_cell", "startup"]
    assert loaded.tools[0] == {
        "name": "prepare_connection",
        "kind": "hook",
        "description": "Register the SQL functions.",
        "parameters": None,
        "exercise": "passed",  # datasette ran with it: see test_pluggy_apps.py
        "exercise_note": None,
    }


def test_an_entry_point_may_name_a_plugin_object(write: Write) -> None:
    write(
        "svpl_object",
        """
        from datasette import hookimpl

        class Plugin:
            __name__ = "svpl_object"  # datasette names its plugins by it

            @hookimpl
            def extra_css_urls(self):
                return []

        PLUGIN = Plugin()
        """,
    )
    assert hooks(load("svpl_object:PLUGIN")) == ["extra_css_urls"]


def test_a_plugin_object_datasette_cannot_name_breaks_datasette(write: Write) -> None:
    write(
        "svpl_nameless",
        """
        from datasette import hookimpl

        class Plugin:
            @hookimpl
            def extra_css_urls(self):
                return []

        PLUGIN = Plugin()
        """,
    )
    error = load_error("svpl_nameless:PLUGIN")
    assert error.stage == "exercise"
    assert isinstance(error.cause, AttributeError)
    assert "'Plugin' object has no attribute '__name__'" in error.message


def test_a_plugin_implementing_no_hook_has_no_registrations(write: Write) -> None:
    write("svpl_empty", "VALUE = 1\n")
    assert load("svpl_empty").tools == []


def test_an_optional_hook_without_a_spec_is_allowed_and_reported(write: Write) -> None:
    write(
        "svpl_optional",
        """
        from datasette import hookimpl

        @hookimpl(optionalhook=True)
        def a_hook_of_a_newer_datasette(datasette):
            pass
        """,
    )
    assert hooks(load("svpl_optional")) == ["a_hook_of_a_newer_datasette"]


def test_other_pluggy_applications_in_the_table(write: Write) -> None:
    write(
        "svpl_sqlite_utils",
        """
        import sqlite_utils

        @sqlite_utils.hookimpl
        def register_commands(cli):
            pass
        """,
    )
    assert hooks(load("svpl_sqlite_utils", group="sqlite_utils")) == ["register_commands"]
    write(
        "svpl_tox",
        """
        from tox.plugin import impl

        @impl
        def tox_add_option(parser):
            pass
        """,
        entry_point="tox",  # tox loads its plugins from their entry points, on each run
    )
    assert hooks(load("svpl_tox", group="tox")) == ["tox_add_option"]


# -- what the application's hookspecs refuse --------------------------------------------------


def test_a_hook_argument_the_hookspec_lacks_fails_validation(write: Write) -> None:
    write(
        "svpl_bad_argument",
        """
        from datasette import hookimpl

        @hookimpl
        def startup(datasette, app):
            pass
        """,
    )
    error = load_error("svpl_bad_argument")
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    assert "'startup'" in str(error.cause)
    assert "{'app'}" in str(error.cause)


def test_a_misspelled_hook_fails_validation_with_a_suggestion(write: Write) -> None:
    write(
        "svpl_typo",
        """
        from datasette import hookimpl

        @hookimpl
        def prepare_connection(conn):
            pass

        @hookimpl
        def extra_js_url(datasette):
            pass
        """,
    )
    error = load_error("svpl_typo")
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    assert str(error.cause).startswith(
        "extra_js_url() is a hook implementation, but datasette has no hook 'extra_js_url' "
        "(did you mean 'extra_js_urls'?), so datasette never calls it; its hooks are: "
        "actor_from_request, "
    )


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("def startup(datasette):\n    pass\n", "is not marked as a hook implementation"),
        (
            "from sqlite_utils import hookimpl\n\n@hookimpl\ndef prepare_connection(conn):\n"
            "    pass\n",
            "is marked as a hook implementation of 'sqlite_utils', not of 'datasette'",
        ),
    ],
    ids=["unmarked", "another-application"],
)
def test_a_hook_function_pluggy_would_skip_fails_validation(
    write: Write, code: str, why: str
) -> None:
    write("svpl_unmarked", code)
    error = load_error("svpl_unmarked")
    assert error.stage == "validate"
    assert why in str(error.cause)
    assert str(error.cause).endswith(
        "so datasette never calls it: mark it with datasette's hookimpl "
        "(pluggy.HookimplMarker('datasette'))"
    )


def test_a_plugin_that_does_not_import_fails_at_import(write: Write) -> None:
    write("svpl_bad_import", "import svpl_not_installed\n")
    error = load_error("svpl_bad_import")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "svpl_not_installed"


# -- the application ---------------------------------------------------------------------------

HOOKSPECS = """
    import pluggy

    hookspec = pluggy.HookspecMarker("svapp")
    hookimpl = pluggy.HookimplMarker("svapp")

    @hookspec
    def svapp_register_things(register):
        "Register things."

    @hookspec(firstresult=True)
    def svapp_pick(options):
        "Pick one."
"""


def test_a_custom_application_is_named_by_its_hookspecs(write: Write) -> None:
    write("svpl_app_specs", HOOKSPECS)
    write(
        "svpl_app_plugin",
        """
        from svpl_app_specs import hookimpl

        @hookimpl
        def svapp_register_things(register):
            pass
        """,
    )
    loaded = load("svpl_app_plugin", group="svapp", hookspecs="svpl_app_specs")
    assert hooks(loaded) == ["svapp_register_things"]
    write(
        "svpl_app_typo",
        """
        from svpl_app_specs import hookimpl

        @hookimpl
        def svapp_pik(options):
            pass
        """,
    )
    error = load_error("svpl_app_typo", group="svapp", hookspecs="svpl_app_specs")
    assert error.stage == "validate"
    assert "svapp has no hook 'svapp_pik' (did you mean 'svapp_pick'?)" in str(error.cause)


def test_hookspecs_may_be_a_class_and_override_the_table(write: Write) -> None:
    write(
        "svpl_class_specs",
        """
        import pluggy

        class Specs:
            @pluggy.HookspecMarker("datasette")
            def only_this_hook(self, datasette):
                pass
        """,
    )
    write(
        "svpl_class_plugin",
        """
        from datasette import hookimpl

        @hookimpl
        def only_this_hook(datasette):
            pass
        """,
    )
    loaded = load("svpl_class_plugin", hookspecs="svpl_class_specs:Specs")
    assert hooks(loaded) == ["only_this_hook"]


def test_an_unknown_group_needs_its_hookspecs_named(write: Write) -> None:
    write("svpl_unknown", "X = 1\n")
    error = load_error("svpl_unknown", group="svapp")
    assert error.stage == "application"
    assert "--hookspecs svapp=MODULE" in str(error.cause)


def test_hookspecs_without_specs_fail_in_the_application(write: Write) -> None:
    write("svpl_no_specs", "import pluggy\n\ndef svapp_hook():\n    pass\n")
    write("svpl_for_no_specs", "X = 1\n")
    error = load_error("svpl_for_no_specs", group="svapp", hookspecs="svpl_no_specs")
    assert error.stage == "application"
    assert "holds no pluggy hookspecs" in str(error.cause)


def test_the_application_not_installed_is_a_missing_application(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("svpl_no_app", "X = 1\n")
    for name in ("datasette", "datasette.hookspecs"):  # what importing them when missing does
        monkeypatch.setitem(sys.modules, name, None)
    error = load_error("svpl_no_app")
    assert error.stage == "application"
    assert isinstance(error.cause, ApplicationMissing)
    assert error.cause.application == "datasette"
    assert "loads 'datasette' plugins" in str(error.cause)

    error = load_error("svpl_no_app", group="svapp", hookspecs="svpl_app_not_installed.specs")
    assert isinstance(error.cause, ApplicationMissing)
    assert error.cause.application == "svpl_app_not_installed"


# -- through the probe, as in a sandbox -------------------------------------------------------


def test_the_probe_loads_a_plugin_of_a_custom_application(write: Write, tmp_path: Path) -> None:
    write("svpl_app_specs", HOOKSPECS)
    write(
        "svpl_probe_plugin",
        """
        from svpl_app_specs import hookimpl

        @hookimpl
        def svapp_pick(options):
            "Pick the first."
            return options[0]
        """,
    )
    result_path = tmp_path / "result.json"
    request = {
        "action": "load",
        "host": "pluggy",
        "plugin": {"name": "probe", "group": "svapp", "value": "svpl_probe_plugin"},
        "options": {"hookspecs": "svpl_app_specs"},
        "nonce": "n",
        "protocol": 1,
        "result": str(result_path),
    }
    with Workspace() as workspace:
        completed = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                "import sys; sys.path.insert(0, sys.argv[2]); sys.path.append(sys.argv[1]); "
                "from sandboxverify.runtime._probe import main; main()",
                str(workspace.install_runtime()),
                str(tmp_path / "modules"),
            ],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
            env=dict(os.environ),
            timeout=120,
        )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(result_path.read_text())
    assert result["ok"] is True, result["error"]
    assert result["tools"] == [
        {
            "name": "svapp_pick",
            "kind": "hook",
            "description": "Pick the first.",
            "parameters": None,
            "exercise": "not_exercised",
            "exercise_note": "sandboxverify does not know how to run svpl_app_specs: its "
            "hookspecs checked the hook, nothing called it",
        }
    ]
