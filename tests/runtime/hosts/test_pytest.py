"""The pytest host against the real pytest: plugins installed with entry points, loaded by a real
``pytest --collect-only`` in-process, and once through the probe."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
from tests.runtime.hosts.conftest import Install


def load(ref: EntryPointRef) -> LoadedPlugin:
    return load_plugin("pytest", ref, Registry(), HostContext())


def load_error(ref: EntryPointRef) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(ref)
    return info.value


def kinds(loaded: LoadedPlugin) -> list[tuple[str, str]]:
    return [(tool["kind"], tool["name"]) for tool in loaded.tools]


GOOD = """
    import pytest

    from svpt_helper import borrowed

    pytest_plugins = [__name__ + ".more"]


    def pytest_addoption(parser):
        group = parser.getgroup("svpt", "svpt options")
        group.addoption("--svpt-seed", type=int, default=0, help="Seed the   shuffle.")
        parser.addoption("-Q", "--svpt-quiet", action="store_true")
        parser.addini("svpt_level", "How thorough to be.", default="1")


    def pytest_configure(config):
        config.addinivalue_line("markers", "svpt_slow: marks a test as slow")
        config.addinivalue_line("markers", "svpt_timeout(seconds): fail after seconds")
        config.pluginmanager.register(Reporter(), "svpt-reporter")


    class Reporter:
        def pytest_terminal_summary(self, terminalreporter):
            pass


    @pytest.fixture
    def svpt_answer():
        \"\"\"The answer.

        To everything.\"\"\"
        return 42


    @pytest.fixture(name="svpt_renamed", scope="session")
    def _renamed():
        return 1
"""

MORE = """
    import pytest


    @pytest.fixture
    def svpt_more():
        "From a submodule."


    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(items):
        pass
"""

HELPER = """
    import pytest


    @pytest.fixture
    def borrowed():
        "Someone else's."
"""

OTHER = """
    def pytest_addoption(parser):
        parser.addoption("--svpt-other", help="Another plugin's.")

    def pytest_configure(config):
        config.addinivalue_line("markers", "svpt_other: another plugin's")
"""


def test_a_plugin_reports_its_fixtures_options_ini_keys_markers_and_hooks(
    install: Install,
) -> None:
    install("svpt_helper", HELPER, installed=False)
    install("svpt_other", OTHER)  # installed too: pytest loads it, it is not the plugin's
    loaded = load(install("svpt_good", GOOD, files={"more.py": MORE}))
    assert kinds(loaded) == [
        ("fixture", "svpt_answer"),
        ("fixture", "svpt_more"),
        ("fixture", "svpt_renamed"),
        ("option", "--svpt-seed"),
        ("option", "--svpt-quiet"),
        ("ini", "svpt_level"),
        ("marker", "svpt_slow"),
        ("marker", "svpt_timeout"),
        ("hook", "pytest_addoption"),
        ("hook", "pytest_collection_modifyitems"),
        ("hook", "pytest_configure"),
        ("hook", "pytest_terminal_summary"),
    ]
    described = {(tool["kind"], tool["name"]): tool["description"] for tool in loaded.tools}
    assert described[("fixture", "svpt_answer")] == "The answer."
    assert described[("fixture", "svpt_renamed")] is None
    assert described[("option", "--svpt-seed")] == "Seed the shuffle."
    assert described[("ini", "svpt_level")] == "How thorough to be."
    assert described[("marker", "svpt_timeout")] == "fail after seconds"
    assert all(tool["parameters"] is None for tool in loaded.tools)
    assert set(loaded.tools[0]) == {
        "name",
        "kind",
        "description",
        "parameters",
        "exercise",
        "exercise_note",
    }


def test_pytest_runs_in_a_scratch_directory_not_the_users_tree(
    install: Install, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text("raise RuntimeError('the user tree was read')\n")
    (project / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    monkeypatch.chdir(project)
    install(
        "svpt_where",
        """
        import os

        SEEN = {}

        def pytest_configure(config):
            SEEN["cwd"] = os.getcwd()
            SEEN["rootdir"] = str(config.rootpath)
        """,
    )
    assert kinds(load(EntryPointRef("svpt_where", "pytest11", "svpt_where"))) == [
        ("hook", "pytest_configure")
    ]
    seen = sys.modules["svpt_where"].SEEN
    assert seen["cwd"] == seen["rootdir"]
    assert Path(seen["cwd"]).name.startswith("sandboxverify-pytest-")
    assert not Path(seen["cwd"]).exists()
    assert Path.cwd() == project
    assert sorted(path.name for path in project.iterdir()) == ["conftest.py", "pytest.ini"]


def test_a_plugin_that_is_importable_but_not_installed_is_named_with_dash_p(
    install: Install,
) -> None:
    ref = install(
        "svpt_loose",
        """
        def pytest_addoption(parser):
            parser.addoption("--svpt-loose")
        """,
        installed=False,
    )
    assert kinds(load(ref)) == [("option", "--svpt-loose"), ("hook", "pytest_addoption")]


def test_an_entry_point_may_name_a_plugin_object(install: Install) -> None:
    code = """
        import pytest

        class Plugin:
            def pytest_addoption(self, parser):
                parser.addoption("--{name}", help="From an object.")

            @pytest.fixture
            def {name}_fixture(self):
                "A fixture method."

        PLUGIN = Plugin()
    """
    for name, installed in [("svpt_object", True), ("svpt_object_loose", False)]:
        ref = install(name, code.format(name=name), value=f"{name}:PLUGIN", installed=installed)
        assert kinds(load(ref)) == [
            ("fixture", f"{name}_fixture"),
            ("option", f"--{name}"),
            ("hook", "pytest_addoption"),
        ]


def test_each_entry_point_of_one_package_owns_what_its_own_module_registers(
    install: Install, site: Path
) -> None:
    # pytest autoloads every entry point of the distribution, so each run has both active
    main = install(
        "svpt_pair",
        "",
        value="svpt_pair.main",
        files={
            "helpers.py": """
                import pytest

                @pytest.fixture
                def svpt_shared():
                    "Defined in a module no entry point names."
            """,
            "main.py": """
                import pytest
                from svpt_pair.helpers import svpt_shared

                def pytest_addoption(parser):
                    parser.addoption("--svpt-workers", help="Main.")

                @pytest.fixture
                def svpt_worker_id():
                    "Main's fixture."
            """,
            "loop.py": """
                def pytest_addoption(parser):
                    parser.addoption("--svpt-loop", action="store_true", help="Loop.")
            """,
        },
    )
    (site / "svpt_pair-1.0.dist-info" / "entry_points.txt").write_text(
        "[pytest11]\nsvpt_pair = svpt_pair.main\nsvpt_pair.loop = svpt_pair.loop\n"
    )
    loop = EntryPointRef("svpt_pair.loop", "pytest11", "svpt_pair.loop")
    assert kinds(load(main)) == [
        ("fixture", "svpt_shared"),
        ("fixture", "svpt_worker_id"),
        ("option", "--svpt-workers"),
        ("hook", "pytest_addoption"),
    ]
    driver = EntryPointRef("svpt_pair.driver", "pytest11", "svpt_pair.driver")
    (site / "svpt_pair" / "driver.py").write_text("def driver_kwargs():\n    return {}\n")
    with (site / "svpt_pair-1.0.dist-info" / "entry_points.txt").open("a") as points:
        points.write("svpt_pair.driver = svpt_pair.driver\n")
    loaded = load(driver)  # used by main's code, not by pytest: a note, not an empty plugin
    assert loaded.tools == []
    assert loaded.skipped is not None
    assert loaded.skipped.startswith("pytest loads it, and it registers nothing of its own")
    assert kinds(load(loop)) == [  # the helper's fixture is main's: main's module holds it
        ("option", "--svpt-loop"),
        ("hook", "pytest_addoption"),
    ]


def test_a_plugin_without_registrations_loads_with_none(install: Install) -> None:
    assert load(install("svpt_empty", "X = 1\n")).tools == []


def test_an_optional_hook_of_another_plugin_is_allowed(install: Install) -> None:
    ref = install(
        "svpt_optional",
        """
        import pytest

        @pytest.hookimpl(optionalhook=True)
        def pytest_svpt_not_installed(config):
            pass
        """,
    )
    assert kinds(load(ref)) == [("hook", "pytest_svpt_not_installed")]


# -- what pytest refuses ----------------------------------------------------------------------


def test_a_hook_argument_pytest_does_not_pass_fails_validation(install: Install) -> None:
    ref = install(
        "svpt_bad_argument",
        """
        def pytest_configure(config, settings):
            pass
        """,
    )
    error = load_error(ref)
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    assert "pytest_configure" in str(error.cause)
    assert "settings" in str(error.cause)


def test_a_misspelled_hook_fails_validation_with_a_suggestion(install: Install) -> None:
    ref = install(
        "svpt_typo",
        """
        def pytest_configure(config):
            pass

        def pytest_collection_modifyitem(items):
            pass
        """,
    )
    error = load_error(ref)
    assert error.stage == "validate"
    assert type(error.cause).__name__ == "PluginValidationError"
    assert str(error.cause) == (
        "pytest_collection_modifyitem() is a hook implementation, but pytest has no hook "
        "'pytest_collection_modifyitem' (did you mean 'pytest_collection_modifyitems'?), so "
        "pytest refuses the plugin"
    )
    assert "unknown hook" in str(error.cause.__cause__)  # pluggy's own words


def test_a_plugin_that_does_not_import_fails_at_import_with_the_plain_error(
    install: Install,
) -> None:
    error = load_error(install("svpt_bad_import", "import svpt_not_installed\n"))
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "svpt_not_installed"

    error = load_error(install("svpt_raises", "raise ValueError('at import')\n"))
    assert (error.stage, type(error.cause)) == ("import", ValueError)

    skips = "import pytest\npytest.skip('not here', allow_module_level=True)\n"
    error = load_error(install("svpt_skips", skips))
    assert (error.stage, type(error.cause).__name__) == ("import", "Skipped")


def test_a_plugin_whose_registration_raises_fails_in_the_application(install: Install) -> None:
    ref = install(
        "svpt_conflict",
        """
        def pytest_addoption(parser):
            parser.addoption("--collect-only", action="store_true")
        """,
    )
    error = load_error(ref)
    assert error.stage == "application"
    assert type(error.cause).__name__ == "PytestRunFailed"
    assert isinstance(error.cause.__cause__, Exception)  # ValueError, argparse.ArgumentError
    assert "--collect-only" in str(error.cause.__cause__)


def test_a_plugin_that_breaks_collection_fails_in_the_application(install: Install) -> None:
    ref = install(
        "svpt_breaks",
        """
        def pytest_collection_modifyitems(items):
            raise RuntimeError("the items are wrong")
        """,
    )
    error = load_error(ref)
    assert error.stage == "application"
    assert type(error.cause).__name__ == "PytestRunFailed"
    message = str(error.cause)
    assert message.startswith(
        "pytest --collect-only exited with status 3 (INTERNAL_ERROR), RuntimeError: the items "
        "are wrong; pytest said:\n"
    )
    assert "INTERNALERROR>" in message  # the tail of pytest's output
    assert isinstance(error.cause.__cause__, RuntimeError)


def test_a_plugin_that_exits_pytest_fails_in_the_application(install: Install) -> None:
    ref = install(
        "svpt_exits",
        """
        import pytest

        def pytest_configure(config):
            pytest.exit("not in this environment", returncode=7)
        """,
    )
    error = load_error(ref)
    assert error.stage == "application"
    assert str(error.cause).startswith("pytest --collect-only exited with status 7")
    assert "not in this environment" in str(error.cause)


def test_a_plugin_pytest_does_not_load_fails_in_the_application(
    install: Install, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:svpt_blocked")
    error = load_error(install("svpt_blocked", "X = 1\n"))
    assert error.stage == "application"
    assert "ran without loading the plugin 'svpt_blocked'" in str(error.cause)


@pytest.mark.filterwarnings("default")  # as in a sandbox: pytest's warning, not an error
def test_a_plugin_pytest_refuses_fails_with_pytests_own_reason(install: Install) -> None:
    """pytest refuses the plugins it merged into its core (pytest-catchlog, pytest-subtests)."""
    refused = sorted(importlib.import_module("_pytest.deprecated").DEPRECATED_EXTERNAL_PLUGINS)[0]
    error = load_error(install(refused, "X = 1\n"))
    assert error.stage == "application"
    assert str(error.cause).startswith(
        f"pytest refused the plugin '{refused}': PytestConfigWarning: "
    )
    assert "merged into the core" in str(error.cause).splitlines()[0]


def test_pytest_not_installed_is_a_missing_application(
    install: Install, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = install("svpt_no_pytest", "X = 1\n")
    monkeypatch.setitem(sys.modules, "pytest", None)  # what importing a missing pytest does
    error = load_error(ref)
    assert error.stage == "application"
    assert isinstance(error.cause, ApplicationMissing)
    assert error.cause.application == "pytest"
    assert "loads 'pytest11' plugins" in str(error.cause)


# -- through the probe, as in a sandbox -------------------------------------------------------


def probe(request: dict[str, Any], site: Path, tmp_path: Path) -> dict[str, Any]:
    result = tmp_path / "result.json"
    request = {"action": "load", "nonce": "n", "protocol": 1, "result": str(result), **request}
    with Workspace() as workspace:
        completed = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                "import sys; sys.path.insert(0, sys.argv[2]); sys.path.append(sys.argv[1]); "
                "from sandboxverify.runtime._probe import main; main()",
                str(workspace.install_runtime()),
                str(site),
            ],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
            env={**os.environ, "PYTEST_ADDOPTS": ""},
            timeout=120,
        )
    assert completed.returncode == 0, completed.stderr
    data: dict[str, Any] = json.loads(result.read_text())
    return data


def test_the_probe_loads_a_pytest_plugin(install: Install, site: Path, tmp_path: Path) -> None:
    ref = install("svpt_probe_good", GOOD, files={"more.py": MORE})
    install("svpt_helper", HELPER, installed=False)
    result = probe({"host": "pytest", "plugin": ref.to_json()}, site, tmp_path)
    assert result["ok"] is True, result["error"]
    assert {tool["kind"] for tool in result["tools"]} == {
        "fixture",
        "option",
        "ini",
        "marker",
        "hook",
    }

    bad = install("svpt_probe_bad", "def pytest_configure(config, settings): pass\n")
    result = probe({"host": "pytest", "plugin": bad.to_json()}, site, tmp_path)
    assert result["ok"] is False
    assert (result["error"]["stage"], result["error"]["type"]) == (
        "validate",
        "PluginValidationError",
    )
