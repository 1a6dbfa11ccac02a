"""The hosts of applications too heavy for the test environment (npe2, matplotlib, PyInstaller,
OpenTelemetry; their real runs are end to end, in tests/e2e/test_application_hosts.py): what they
judge before the application is imported, and the application missing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import PluginLoadError, load_plugin, near_miss
from tests.runtime.hosts.installed import install, probe_load

FILES = {
    # importing the package fails: npe2 finds its manifest without importing it
    "demo_own/__init__.py": "raise RuntimeError('needs a Qt binding')\n",
    "demo_own/napari.yaml": "name: own-demo\n",
    "demo_own/hooks.py": "",
}

POINTS = {
    "napari.manifest": {"own-demo": "demo_own:napari.yaml", "missing": "demo_own:absent.yaml"},
    "matplotlib.backend": {"classy": "demo_own.backend:FigureCanvasDemo"},
    "pyinstaller40": {"hook_dirs": "demo_own.hooks:dirs", "hook-dirs": "demo_own.hooks:dirs"},
    "opentelemetry_instrumentor": {"demo": "demo_own.instrumentor:DemoInstrumentor"},
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = install(tmp_path / "site", "own-demo", POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [name for name in sys.modules if name.startswith("demo_own")]:
        del sys.modules[name]


def ref(group: str, name: str) -> EntryPointRef:
    return EntryPointRef(name, group, POINTS[group][name])


def load_error(host: str, group: str, name: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load_plugin(host, ref(group, name), Registry())
    return info.value


def test_a_napari_manifest_is_a_file_found_without_importing_the_package(site: Path) -> None:
    from sandboxverify.runtime.hosts._napari import manifest_file  # noqa: PLC0415

    assert manifest_file(ref("napari.manifest", "own-demo")) == site / "demo_own" / "napari.yaml"
    assert "demo_own" not in sys.modules


def test_a_napari_manifest_missing_from_the_package_is_the_plugins_own_error(site: Path) -> None:
    error = load_error("napari", "napari.manifest", "missing")
    assert error.stage == "import"
    assert isinstance(error.cause, FileNotFoundError)
    assert "no manifest file 'absent.yaml'" in error.message


def test_a_napari_value_naming_no_file_fails_validation(site: Path) -> None:
    bare = EntryPointRef("bare", "napari.manifest", "demo_own")
    with pytest.raises(PluginLoadError) as info:
        load_plugin("napari", bare, Registry())
    assert info.value.stage == "validate"
    assert "'package:napari.yaml'" in info.value.message


def test_a_matplotlib_value_with_a_colon_fails_before_matplotlib_is_asked(site: Path) -> None:
    error = load_error("matplotlib", "matplotlib.backend", "classy")
    assert error.stage == "validate"
    assert "as a module name" in error.message


def test_pyinstaller_reads_only_hook_dirs_and_tests(site: Path) -> None:
    error = load_error("pyinstaller", "pyinstaller40", "hook_dirs")
    assert error.stage == "validate"
    assert "only the pyinstaller40 entry points named 'hook-dirs'" in error.message


@pytest.mark.parametrize(
    ("host", "group", "name", "application"),
    [
        ("napari", "napari.manifest", "own-demo", "npe2"),
        ("matplotlib", "matplotlib.backend", None, "matplotlib"),
        ("pyinstaller", "pyinstaller40", "hook-dirs", "pyinstaller"),
        ("opentelemetry", "opentelemetry_instrumentor", "demo", "opentelemetry-instrumentation"),
    ],
)
def test_the_application_missing_is_said(
    tmp_path: Path, host: str, group: str, name: str | None, application: str
) -> None:
    site = install(tmp_path / "site", "own-demo", POINTS, FILES)
    plugin = (
        ref(group, name).to_json()
        if name
        else {"name": "plain", "group": group, "value": "demo_own.backend_plain"}
    )
    result = probe_load(tmp_path, host, plugin, sites=[site], no_site=True)
    assert result["error"]["type"] == "ApplicationMissing"
    assert result["error"]["message"].startswith(f"{application} is not installed in the sandbox")


@pytest.mark.parametrize(
    "group",
    [
        # OpenTelemetry's other groups, one edit away from opentelemetry_instrumentor
        "opentelemetry_pre_instrument",
        "opentelemetry_post_instrument",
        "opentelemetry_distro",
        "sqlalchemy.plugins",
        "babel.extractors",
    ],
)
def test_the_groups_next_to_the_new_ones_are_no_near_misses(group: str) -> None:
    assert near_miss(group) is None
