"""The ``keyring`` host against the real keyring: its own plugin loading, then each backend judged
as ``get_all_keyring()`` judges it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.installed import install, probe_load

pytest.importorskip("keyring")  # in the test extra

BACKEND = '''
    from keyring.backend import KeyringBackend


    class {name}(KeyringBackend):
        """{doc}"""

        {priority}

        def get_password(self, service, username):
            return None

        def set_password(self, service, username, password):
            pass

        def delete_password(self, service, username):
            pass
'''

FILES = {
    "demo_kr/__init__.py": "",
    "demo_kr/good.py": BACKEND.format(
        name="DemoBackend", doc="Keeps nothing.", priority="priority = 5"
    ),
    "demo_kr/elsewhere.py": BACKEND.format(
        name="ElsewhereBackend",
        doc="Only works elsewhere.",
        priority="@properties.classproperty\n        def priority(cls):\n"
        "            raise RuntimeError('needs the demo daemon')",
    ).replace(
        "from keyring.backend", "from keyring.compat import properties\n    from keyring.backend"
    ),
    "demo_kr/fragile.py": BACKEND.format(
        name="FragileBackend", doc="Breaks keyring.", priority="priority = 1"
    )
    + "\n    def _init(self):\n        raise RuntimeError('no vault here')\n\n"
    "    FragileBackend.__init__ = _init\n",
    "demo_kr/stale.py": "import demo_kr_no_such_module\n",
    "demo_kr/nothing.py": "VALUE = 1\n",
    "demo_kr/unfinished.py": """
        from keyring.backend import KeyringBackend


        class UnfinishedBackend(KeyringBackend):
            priority = 1

            def get_password(self, service, username):
                return None
    """,
}

ENTRY_POINTS = {
    "keyring.backends": {
        "good": "demo_kr.good",
        "elsewhere": "demo_kr.elsewhere",
        "fragile": "demo_kr.fragile",
        "stale": "demo_kr.stale",
        "nothing": "demo_kr.nothing",
        "unfinished": "demo_kr.unfinished",
    }
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = install(tmp_path / "site", "keyring-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [name for name in sys.modules if name.startswith("demo_kr")]:
        del sys.modules[name]


def load(name: str) -> LoadedPlugin:
    ref = EntryPointRef(name, "keyring.backends", ENTRY_POINTS["keyring.backends"][name])
    return load_plugin("keyring", ref, Registry())


def load_error(name: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name)
    return info.value


def test_a_viable_backend_is_registered_with_its_priority(site: Path) -> None:
    [tool] = load("good").tools
    assert (tool["kind"], tool["name"]) == ("backend", "demo_kr.good.DemoBackend")
    assert tool["description"] == "Keeps nothing. (priority 5)"


def test_a_backend_not_viable_here_is_said_not_failed(site: Path) -> None:
    [tool] = load("elsewhere").tools
    assert tool["name"] == "demo_kr.elsewhere.ElsewhereBackend"
    assert "not viable here, so keyring does not use it" in tool["description"]
    assert "RuntimeError: needs the demo daemon" in tool["description"]


def test_a_viable_backend_that_cannot_be_created_breaks_keyring_and_fails(site: Path) -> None:
    error = load_error("fragile")
    assert error.stage == "setup"
    assert "no vault here" in error.message
    assert "get_all_keyring()" in error.message


def test_keyrings_error_initializing_plugin_fails(site: Path) -> None:
    error = load_error("stale")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert "keyring: Error initializing plugin 'stale'" in error.message


def test_a_module_without_a_backend_class_registers_nothing_and_is_said(site: Path) -> None:
    loaded = load("nothing")
    assert loaded.tools == []
    assert loaded.skipped is not None
    assert "defines no KeyringBackend subclass" in loaded.skipped


def test_a_backend_class_left_abstract_is_never_registered_and_fails(site: Path) -> None:
    error = load_error("unfinished")
    assert error.stage == "validate"
    assert "UnfinishedBackend is abstract (it lacks set_password)" in error.message


def test_the_probe_and_keyring_missing(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "keyring-demo", ENTRY_POINTS, FILES)
    plugin = {"name": "good", "group": "keyring.backends", "value": "demo_kr.good"}
    assert probe_load(tmp_path, "keyring", plugin, sites=[site])["ok"] is True
    missing = probe_load(tmp_path, "keyring", plugin, sites=[site], no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
