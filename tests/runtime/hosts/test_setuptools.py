"""The ``setuptools`` host against the real setuptools: commands created and finalized in a
``Distribution``, finalize hooks run by ``finalize_options()``, file finders called."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.installed import install, probe_load

pytest.importorskip("setuptools")

FILES = {
    "demo_st/__init__.py": "",
    "demo_st/commands.py": '''
        from distutils.errors import DistutilsOptionError

        from setuptools import Command


        class DemoCommand(Command):
            """Does nothing, well."""

            description = "do nothing, well"
            user_options = []

            def initialize_options(self):
                self.build_lib = None

            def finalize_options(self):
                self.set_undefined_options("build", ("build_lib", "build_lib"))

            def run(self):
                pass


        class NeedsTarget(DemoCommand):
            description = "needs a target"

            def finalize_options(self):
                raise DistutilsOptionError("--target is required")


        class Crashing(DemoCommand):
            def finalize_options(self):
                raise RuntimeError("crashed while finalizing")


        def helper():
            pass
    ''',
    "demo_st/hooks.py": '''
        SEEN = []


        def remember(dist):
            """Remembers each distribution."""
            SEEN.append(dist.get_name())


        def find_nothing(dirname):
            return []


        def explode(dist):
            raise RuntimeError("every build breaks")
    ''',
}

ENTRY_POINTS = {
    "distutils.commands": {
        "demo": "demo_st.commands:DemoCommand",
        "needs_target": "demo_st.commands:NeedsTarget",
        "crashing": "demo_st.commands:Crashing",
        "helper": "demo_st.commands:helper",
    },
    "setuptools.finalize_distribution_options": {"remember": "demo_st.hooks:remember"},
    "setuptools.file_finders": {"nothing": "demo_st.hooks:find_nothing"},
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = install(tmp_path / "site", "setuptools-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [name for name in sys.modules if name.startswith("demo_st")]:
        del sys.modules[name]


def load(name: str, group: str) -> LoadedPlugin:
    return load_plugin(
        "setuptools", EntryPointRef(name, group, ENTRY_POINTS[group][name]), Registry()
    )


def load_error(name: str, group: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name, group)
    return info.value


def test_a_command_is_created_and_finalized(site: Path) -> None:
    [tool] = load("demo", "distutils.commands").tools
    assert (tool["kind"], tool["name"], tool["description"]) == (
        "command",
        "demo",
        "do nothing, well",
    )


def test_a_command_that_needs_a_projects_options_is_said_not_failed(site: Path) -> None:
    [tool] = load("needs_target", "distutils.commands").tools
    assert tool["description"] == (
        "needs a target (not finalized without a project: --target is required)"
    )


def test_a_command_that_crashes_while_finalizing_fails(site: Path) -> None:
    error = load_error("crashing", "distutils.commands")
    assert error.stage == "application"
    assert error.message == "crashed while finalizing (in crashing.finalize_options())"


def test_a_function_is_no_command(site: Path) -> None:
    error = load_error("helper", "distutils.commands")
    assert error.stage == "validate"
    assert "not a Command subclass" in error.message


def test_a_finalize_hook_runs_in_finalize_options(site: Path) -> None:
    [tool] = load("remember", "setuptools.finalize_distribution_options").tools
    assert (tool["kind"], tool["description"]) == ("hook", "Remembers each distribution.")
    assert sys.modules["demo_st.hooks"].SEEN == ["sandboxverify-demo"]


def test_a_file_finder_is_called_on_an_empty_directory(site: Path) -> None:
    assert [t["kind"] for t in load("nothing", "setuptools.file_finders").tools] == ["file_finder"]


def test_a_finalize_hook_that_raises_breaks_every_build_and_fails(tmp_path: Path) -> None:
    points = {"setuptools.finalize_distribution_options": {"explode": "demo_st.hooks:explode"}}
    site = install(tmp_path / "site", "setuptools-demo", points, FILES)
    plugin = {
        "name": "explode",
        "group": "setuptools.finalize_distribution_options",
        "value": "demo_st.hooks:explode",
    }
    result = probe_load(tmp_path, "setuptools", plugin, sites=[site])
    assert result["ok"] is False
    assert result["error"]["stage"] == "application"
    assert result["error"]["message"] == (
        "every build breaks (in Distribution(...).finalize_options())"
    )
