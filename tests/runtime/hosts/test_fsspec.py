"""The ``fsspec`` host against the real fsspec: ``get_filesystem_class`` reads the entry point's
value as a class path, its own way."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.installed import install, probe_load

fsspec = pytest.importorskip("fsspec")  # in the test extra

FILES = {
    "demo_fs/__init__.py": "",
    "demo_fs/fs.py": '''
        from fsspec import AbstractFileSystem


        class DemoFS(AbstractFileSystem):
            """A filesystem of nothing."""

            protocol = "demofs"


        class Plain:
            pass


        def make():
            return DemoFS
    ''',
    "demo_fs/fancy.py": """
        import demo_fs_fancy_lib
        from fsspec import AbstractFileSystem


        class FancyFS(AbstractFileSystem):
            pass
    """,
    "demo_fs/stale.py": """
        import demo_fs_undeclared_lib
    """,
}

ENTRY_POINTS = {
    "fsspec.specs": {
        "demofs": "demo_fs.fs:DemoFS",
        "dotted": "demo_fs.fs.DemoFS",  # no colon: fsspec splits at the last dot
        "function": "demo_fs.fs:make",
        "plain": "demo_fs.fs:Plain",
        "fancy": "demo_fs.fancy:FancyFS",
        "stale": "demo_fs.stale:StaleFS",
    }
}

#: the distribution's optional part, as METADATA declares it
EXTRA = 'Provides-Extra: fancy\nRequires-Dist: demo-fs-fancy-lib>=1; extra == "fancy"\n'


def installed(root: Path) -> Path:
    site = install(root / "site", "fsspec-demo", ENTRY_POINTS, FILES)
    metadata = site / "fsspec_demo-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text() + EXTRA)
    return site


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo distribution, registered with fsspec as ``import fsspec`` registers plugins."""
    registry = importlib.import_module("fsspec.registry")  # fsspec.registry is a mapping too
    site = installed(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    known = dict(registry.known_implementations)
    fsspec.process_entries()
    yield site
    registry.known_implementations.clear()
    registry.known_implementations.update(known)
    for name in ENTRY_POINTS["fsspec.specs"]:
        registry._registry.pop(name, None)
    for name in [name for name in sys.modules if name.startswith("demo_fs")]:
        del sys.modules[name]


def load(name: str) -> LoadedPlugin:
    ref = EntryPointRef(name, "fsspec.specs", ENTRY_POINTS["fsspec.specs"][name])
    return load_plugin("fsspec", ref, Registry())


def load_error(name: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name)
    return info.value


def test_a_filesystem_class_registers_its_protocol(site: Path) -> None:
    [tool] = load("demofs").tools
    assert (tool["kind"], tool["name"], tool["description"]) == (
        "filesystem",
        "demofs",
        "A filesystem of nothing.",
    )


def test_a_value_without_a_colon_works_as_in_fsspec(site: Path) -> None:
    assert [tool["name"] for tool in load("dotted").tools] == ["dotted"]


def test_a_function_or_a_plain_class_is_no_filesystem(site: Path) -> None:
    function = load_error("function")
    assert function.stage == "validate"
    assert "is not a class" in function.message
    plain = load_error("plain")
    assert plain.stage == "validate"
    assert "must name a subclass of fsspec.AbstractFileSystem" in plain.message


def test_a_module_from_an_extra_is_skipped_with_the_extra_to_install(site: Path) -> None:
    loaded = load("fancy")
    assert loaded.tools == []
    assert loaded.skipped is not None
    assert "'demo_fs_fancy_lib'" in loaded.skipped
    assert 'fsspec-demo[fancy] (demo-fs-fancy-lib>=1; extra == "fancy")' in loaded.skipped


def test_an_undeclared_module_is_the_plugins_import_error(site: Path) -> None:
    error = load_error("stale")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "demo_fs_undeclared_lib"


def test_the_probe_resolves_in_a_fresh_interpreter(tmp_path: Path) -> None:
    site = installed(tmp_path)
    plugin = {"name": "dotted", "group": "fsspec.specs", "value": "demo_fs.fs.DemoFS"}
    result = probe_load(tmp_path, "fsspec", plugin, sites=[site])
    assert result["ok"] is True, result["error"]
    skipped = {"name": "fancy", "group": "fsspec.specs", "value": "demo_fs.fancy:FancyFS"}
    assert "demo-fs-fancy-lib" in probe_load(tmp_path, "fsspec", skipped, sites=[site])["skipped"]
    missing = probe_load(tmp_path, "fsspec", plugin, sites=[site], no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
