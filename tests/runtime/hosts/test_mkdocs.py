"""The ``mkdocs`` host against the real MkDocs: a one-page ``mkdocs build`` per plugin.

MkDocs reads the installed plugins once per process, so each load runs in the runtime probe, in
a fresh interpreter, as in a sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hosts.installed import install, probe_load

pytest.importorskip("mkdocs")  # in the test extra: never skipped there

PLUGINS = '''
from pathlib import Path

from mkdocs.config import config_options
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

BUILT = Path(__file__).with_name("built.txt")


class Stamp(BasePlugin):
    """Stamps every page."""

    config_scheme = (("text", config_options.Type(str, default="stamped")),)

    def on_page_markdown(self, markdown, page, config, files):
        return markdown + "\\n\\n" + self.config["text"]

    def on_post_build(self, config):
        BUILT.write_text(f"{config['site_name']} {sorted(config['plugins'])}")


class RaisesOnConfig(BasePlugin):
    def on_config(self, config):
        raise RuntimeError("no API key in on_config")


class RefusesTheSite(BasePlugin):
    def on_page_markdown(self, markdown, page, config, files):
        raise PluginError(f"refusing {page.file.src_uri}")


class NotAPlugin:
    pass


class RaisesOnInit(BasePlugin):
    def __init__(self):
        raise ValueError("cannot start")


class NeedsConfig(BasePlugin):
    """Groups other plugins."""

    config_scheme = (("plugins", config_options.Type(list, required=True)),)

    def on_config(self, config):
        raise RuntimeError("built without its required options")


class OfTheTheme(BasePlugin):
    """Renders the theme's own templates."""

    def on_config(self, config):
        if config["theme"].name != "mkdemo":
            raise PluginError(f"needs theme mkdemo, got {config['theme'].name}")
'''

FILES = {
    "mkdemo.py": PLUGINS,
    "mkdemo_theme/__init__.py": "",
    "mkdemo_theme/mkdocs_theme.yml": "static_templates: []\n",
    "mkdemo_theme/main.html": (
        "<html><body>{{ page.content }}<footer>mkdemo_theme</footer></body></html>\n"
    ),
    "mkdemo_hollow/__init__.py": "",
    "mkdemo_no_main/__init__.py": "",
    "mkdemo_no_main/mkdocs_theme.yml": "static_templates: []\n",
}

ENTRY_POINTS = {
    "mkdocs.plugins": {
        "stamp": "mkdemo:Stamp",
        "raises-on-config": "mkdemo:RaisesOnConfig",
        "refuses": "mkdemo:RefusesTheSite",
        "not-a-plugin": "mkdemo:NotAPlugin",
        "raises-on-init": "mkdemo:RaisesOnInit",
        "missing": "mkdemo_missing:Plugin",
        "needs-config": "mkdemo:NeedsConfig",
        "mkdemo/of-the-theme": "mkdemo:OfTheTheme",
    },
    "mkdocs.themes": {
        "mkdemo": "mkdemo_theme",
        "hollow": "mkdemo_hollow",
        "no-main": "mkdemo_no_main",
    },
}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return install(tmp_path / "site", "mkdocs-demo", ENTRY_POINTS, FILES)


def load(tmp_path: Path, site: Path, name: str, group: str, **options: Any) -> dict[str, Any]:
    plugin = {"name": name, "group": group, "value": ENTRY_POINTS[group][name]}
    return probe_load(tmp_path, "mkdocs", plugin, sites=[site], **options)


def test_a_plugin_registers_its_name_and_the_site_builds_with_it(
    tmp_path: Path, site: Path
) -> None:
    result = load(tmp_path, site, "stamp", "mkdocs.plugins")
    assert result["ok"] is True, result["error"]
    assert result["tools"] == [
        {"name": "stamp", "kind": "plugin", "description": "Stamps every page.", "parameters": None}
    ]
    assert (site / "built.txt").read_text() == "sandboxverify ['stamp']"


def test_a_theme_registers_its_name_and_the_site_builds_with_it(tmp_path: Path, site: Path) -> None:
    result = load(tmp_path, site, "mkdemo", "mkdocs.themes")
    assert result["ok"] is True, result["error"]
    assert result["tools"] == [
        {"name": "mkdemo", "kind": "theme", "description": None, "parameters": None}
    ]


def test_a_themes_own_plugin_is_built_with_that_theme(tmp_path: Path, site: Path) -> None:
    result = load(tmp_path, site, "mkdemo/of-the-theme", "mkdocs.plugins")
    assert result["ok"] is True, result["error"]


def test_a_plugin_whose_required_options_are_all_that_is_missing_loads(
    tmp_path: Path, site: Path
) -> None:
    result = load(tmp_path, site, "needs-config", "mkdocs.plugins")
    assert result["ok"] is True, result["error"]
    assert result["tools"][0]["description"] == (
        "Groups other plugins. (MkDocs loaded it and validated its options; not built: it "
        "needs configuration: 'plugins')"
    )


def test_a_plugin_raising_in_on_config_fails_the_build(tmp_path: Path, site: Path) -> None:
    error = load(tmp_path, site, "raises-on-config", "mkdocs.plugins")["error"]
    assert error["stage"] == "application"
    assert error["type"] == "RuntimeError"
    assert error["message"] == (
        "no API key in on_config (in mkdocs build with plugins: [raises-on-config])"
    )
    assert "in on_config" in error["traceback"]


def test_a_plugin_error_fails_the_build_with_mkdocs_message(tmp_path: Path, site: Path) -> None:
    error = load(tmp_path, site, "refuses", "mkdocs.plugins")["error"]
    assert error["stage"] == "application"
    assert error["type"] == "ApplicationFailed"
    assert error["message"] == (
        "mkdocs build with plugins: [refuses] failed:\n"
        "ERROR: Error reading page 'index.md':\n"
        "ERROR: refusing index.md\n"
        "Aborted with a BuildError!"
    )


@pytest.mark.parametrize(
    ("plugin", "type_name", "message"),
    [
        (
            ("not-a-plugin", "mkdocs.plugins"),
            "ApplicationFailed",
            "mkdocs build with plugins: [not-a-plugin] (loading mkdocs.yml) failed:\n"
            "ERROR: Config value 'plugins': mkdemo.NotAPlugin must be a subclass of "
            "mkdocs.plugins.BasePlugin\n"
            "Aborted with ",
        ),
        (
            ("raises-on-init", "mkdocs.plugins"),
            "ValueError",
            "cannot start (in mkdocs build with plugins: [raises-on-init] (loading mkdocs.yml))",
        ),
        (
            ("hollow", "mkdocs.themes"),
            "ApplicationFailed",
            "mkdocs build with theme: {name: hollow} (loading mkdocs.yml) failed:\n"
            "ERROR: Config value 'theme': The theme 'hollow' does not appear to have a "
            "configuration file. Please upgrade to a current version of the theme.\n"
            "Aborted with ",
        ),
    ],
)
def test_what_mkdocs_refuses_to_configure_fails_validation(
    tmp_path: Path, site: Path, plugin: tuple[str, str], type_name: str, message: str
) -> None:
    error = load(tmp_path, site, *plugin)["error"]
    assert error["stage"] == "validate"
    assert error["type"] == type_name
    # MkDocs' last line: "Aborted with a configuration error!" (1.5+), or "... 1 Configuration
    # Errors!" before
    assert error["message"].startswith(message)


def test_a_theme_without_templates_fails_the_build(tmp_path: Path, site: Path) -> None:
    error = load(tmp_path, site, "no-main", "mkdocs.themes")["error"]
    assert error["stage"] == "application"
    assert error["type"] == "TemplateNotFound"
    assert error["message"].startswith("'main.html' not found in search paths: ")
    assert error["message"].endswith("(in mkdocs build with theme: {name: no-main})")


def test_an_import_error_is_the_plugins_own(tmp_path: Path, site: Path) -> None:
    error = load(tmp_path, site, "missing", "mkdocs.plugins")["error"]
    assert error["stage"] == "import"
    assert error["type"] == "ModuleNotFoundError"
    assert error["message"] == "No module named 'mkdemo_missing'"


def test_mkdocs_not_installed_is_the_application_missing(tmp_path: Path, site: Path) -> None:
    result = load(tmp_path, site, "stamp", "mkdocs.plugins", no_site=True)
    assert result["ok"] is False
    assert result["error"]["stage"] == "application"
    assert result["error"]["type"] == "ApplicationMissing"
    assert result["error"]["message"] == (
        "mkdocs is not installed in the sandbox, and it is the application that loads "
        "'mkdocs.plugins' plugins"
    )
