"""The ``sqlalchemy`` host against the real SQLAlchemy: a dialect resolved as ``create_engine``
resolves ``dialect+driver://``, created and used to compile a query, without its driver."""

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

pytest.importorskip("sqlalchemy")  # in the test extra

FILES = {
    "demo_sa/__init__.py": "",
    "demo_sa/dialect.py": '''
        from sqlalchemy.engine.default import DefaultDialect
        from sqlalchemy.sql.compiler import SQLCompiler


        class DemoDialect(DefaultDialect):
            """The demo database."""

            name = "demodb"
            driver = "demodriver"

            @classmethod
            def import_dbapi(cls):
                import demo_sa_driver

                return demo_sa_driver


        class RefusingCompiler(SQLCompiler):
            def visit_select(self, select, **kwargs):
                raise NotImplementedError("demodb cannot select yet")


        class RefusingDialect(DemoDialect):
            statement_compiler = RefusingCompiler
    ''',
    "demo_sa/fast.py": """
        import fastdrv
    """,
    "demo_sa/stale.py": """
        import demo_sa_undeclared
    """,
}

ENTRY_POINTS = {
    "sqlalchemy.dialects": {
        "demodb": "demo_sa.dialect:DemoDialect",
        "demodb.fastdrv": "demo_sa.fast:FastDialect",
        "demodb.stale": "demo_sa.stale:Dialect",
        "demodb.refusing": "demo_sa.dialect:RefusingDialect",
        "sqlite": "demo_sa.dialect:DemoDialect",
    }
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    registry = importlib.import_module("sqlalchemy.dialects").registry
    site = install(tmp_path / "site", "sqlalchemy-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in ENTRY_POINTS["sqlalchemy.dialects"]:
        if name != "sqlite":
            registry.impls.pop(name, None)  # SQLAlchemy caches what it loaded
    for name in [name for name in sys.modules if name.startswith("demo_sa")]:
        del sys.modules[name]


def load(name: str) -> LoadedPlugin:
    ref = EntryPointRef(name, "sqlalchemy.dialects", ENTRY_POINTS["sqlalchemy.dialects"][name])
    return load_plugin("sqlalchemy", ref, Registry())


def load_error(name: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name)
    return info.value


def test_a_dialect_loads_and_compiles_without_its_driver(site: Path) -> None:
    [tool] = load("demodb").tools
    assert (tool["kind"], tool["name"]) == ("dialect", "demodb")
    description = str(tool["description"])
    assert description.startswith("demo_sa.dialect.DemoDialect: driver demodriver not installed")
    assert "create_engine needs it" in description


def test_a_dialect_module_importing_its_driver_is_skipped_with_the_driver_to_install(
    site: Path,
) -> None:
    loaded = load("demodb.fastdrv")
    assert loaded.tools == []
    assert loaded.skipped is not None
    assert "imports its DBAPI driver 'fastdrv'" in loaded.skipped
    assert "--with fastdrv" in loaded.skipped


def test_any_other_missing_module_is_the_plugins_import_error(site: Path) -> None:
    error = load_error("demodb.stale")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "demo_sa_undeclared"


def test_a_dialect_that_cannot_compile_a_query_fails(site: Path) -> None:
    error = load_error("demodb.refusing")
    assert error.stage == "application"
    assert "demodb cannot select yet" in error.message


def test_a_name_sqlalchemys_own_dialect_takes_is_never_used(site: Path) -> None:
    error = load_error("sqlite")
    assert error.stage == "validate"
    assert "its own dialects" in error.message


def test_the_probe_and_sqlalchemy_missing(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "sqlalchemy-demo", ENTRY_POINTS, FILES)
    plugin = {
        "name": "demodb",
        "group": "sqlalchemy.dialects",
        "value": ENTRY_POINTS["sqlalchemy.dialects"]["demodb"],
    }
    assert probe_load(tmp_path, "sqlalchemy", plugin, sites=[site])["ok"] is True
    missing = probe_load(tmp_path, "sqlalchemy", plugin, sites=[site], no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
