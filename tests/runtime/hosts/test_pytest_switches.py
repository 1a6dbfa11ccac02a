"""The pytest host's runs with each switch a plugin adds, against the real pytest: a switch that
makes pytest end in an internal error, or breaks the tests, fails the plugin; a switch whose
own tests fail (a linter's findings), that needs another option or that waits by design does
not, and says so on the option."""

from __future__ import annotations

from typing import Any

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import HostContext, LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.conftest import Install


def load(ref: EntryPointRef, timeout: float = 60.0) -> LoadedPlugin:
    return load_plugin("pytest", ref, Registry(), HostContext(timeout=timeout))


def options(loaded: LoadedPlugin) -> dict[str, tuple[Any, Any]]:
    return {
        tool["name"]: (tool["exercise"], tool["exercise_note"])
        for tool in loaded.tools
        if tool["kind"] == "option"
    }


def test_a_switch_that_makes_every_run_an_internal_error_fails_the_plugin(
    install: Install,
) -> None:
    ref = install(
        "svpt_switch_crash",
        """
        def pytest_addoption(parser):
            parser.addoption("--svpt-crash", action="store_true", help="Crash.")

        class Late:
            def pytest_collect_file(self, path, parent):
                return None

        def pytest_configure(config):
            if config.getoption("svpt_crash"):
                config.pluginmanager.register(Late(), "svpt-late")
        """,
    )
    with pytest.raises(PluginLoadError) as info:
        load(ref)
    error = info.value
    assert error.stage == "exercise"
    assert error.where == "its --svpt-crash option"
    assert str(error.cause).startswith("pytest --svpt-crash ended in an internal error (status 3)")
    assert "'path'" in str(error.cause)


def test_a_switch_that_breaks_the_generated_tests_fails_the_plugin(install: Install) -> None:
    ref = install(
        "svpt_switch_breaks",
        """
        def pytest_addoption(parser):
            parser.addoption("--svpt-strict", action="store_true", help="Strict.")

        def pytest_runtest_call(item):
            if item.config.getoption("svpt_strict"):
                raise RuntimeError("strict mode has no runner")
        """,
    )
    with pytest.raises(PluginLoadError) as info:
        load(ref)
    message = str(info.value.cause)
    assert message.startswith("with pytest --svpt-strict, the generated test test_sv_plain")
    assert "RuntimeError: strict mode has no runner" in message


def test_a_switch_the_plugin_refuses_without_its_configuration_is_a_note_a_bug_is_not(
    install: Install,
) -> None:
    code = """
        import os

        def pytest_addoption(parser):
            parser.addoption("--{name}", action="store_true", help="Upload results.")

        def pytest_configure(config):
            if config.getoption("{name}".replace("-", "_")):
                {body}
    """
    refuses = 'raise ValueError("SVPT_CLOUD_KEY is required with --svpt-cloud")'
    ref = install("svpt_switch_config", code.format(name="svpt-cloud", body=refuses))
    verdict, note = options(load(ref))["--svpt-cloud"]
    assert verdict == "not_exercised"
    assert note == (
        "pytest --svpt-cloud alone is refused: ValueError: SVPT_CLOUD_KEY is required with "
        "--svpt-cloud"
    )

    bug = 'os.environ["SVPT_CLOUD_KEY"].strip()'
    ref = install("svpt_switch_bug", code.format(name="svpt-upload", body=bug))
    with pytest.raises(PluginLoadError) as info:
        load(ref)
    assert info.value.where == "its --svpt-upload option"
    assert "KeyError" in str(info.value.cause)


def test_findings_of_the_plugins_own_tests_a_usage_error_and_a_wait_are_notes(
    install: Install,
) -> None:
    ref = install(
        "svpt_switch_fine",
        """
        import time

        import pytest

        def pytest_addoption(parser):
            group = parser.getgroup("svpt")
            group.addoption("--svpt-lint", action="store_true", help="Lint.")
            group.addoption("--svpt-only", action="store_true", help="Needs --svpt-target.")
            group.addoption("--svpt-target", default=None, help="Takes a value.")
            group.addoption("--svpt-watch", action="store_true", help="Waits for changes.")
            group.addoption("--svpt-verbose", action="count", default=0, help="More.")

        class Finding(pytest.Item):
            def runtest(self):
                raise AssertionError("line too long")

        class LintFile(pytest.File):
            def collect(self):
                yield Finding.from_parent(self, name="LINT")

        def pytest_collect_file(file_path, parent):
            if parent.config.getoption("svpt_lint") and file_path.suffix == ".py":
                return LintFile.from_parent(parent, path=file_path)
            return None

        def pytest_configure(config):
            if config.getoption("svpt_only") and not config.getoption("svpt_target"):
                raise pytest.UsageError("--svpt-only needs --svpt-target")

        def pytest_sessionstart(session):
            while session.config.getoption("svpt_watch"):
                time.sleep(0.05)
        """,
    )
    verdicts = options(load(ref, timeout=30.0))
    assert verdicts["--svpt-lint"] == ("passed", None)
    assert verdicts["--svpt-verbose"] == ("passed", None)
    assert verdicts["--svpt-target"] == (None, None)  # takes a value: not run
    verdict, note = verdicts["--svpt-only"]
    assert verdict == "not_exercised"
    assert note.startswith("pytest --svpt-only alone is a usage error: ")
    assert "--svpt-only needs --svpt-target" in note
    verdict, note = verdicts["--svpt-watch"]
    assert verdict == "not_exercised"
    assert note.startswith("pytest --svpt-watch did not end within ")


def test_a_switch_that_interrupts_every_run_with_a_collection_error_fails_the_plugin(
    install: Install,
) -> None:
    ref = install(
        "svpt_switch_collect",
        """
        import pytest

        def pytest_addoption(parser):
            parser.addoption("--svpt-scan", action="store_true", help="Scan files.")

        class Scanned(pytest.File):
            def collect(self):
                raise OSError("cannot scan")

        def pytest_collect_file(file_path, parent):
            if parent.config.getoption("svpt_scan") and file_path.suffix == ".py":
                return Scanned.from_parent(parent, path=file_path)
            return None
        """,
    )
    with pytest.raises(PluginLoadError) as info:
        load(ref)
    assert info.value.where == "its --svpt-scan option"
    assert str(info.value.cause).startswith("pytest --svpt-scan ended with status 2")
