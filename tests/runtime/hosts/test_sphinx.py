"""The ``sphinx`` host against the real Sphinx: a one-page ``sphinx-build`` per plugin."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import (
    ApplicationFailed,
    LoadedPlugin,
    PluginLoadError,
    load_plugin,
)
from tests.runtime.hosts.installed import install, probe_load

SPHINX: tuple[int, ...] = pytest.importorskip("sphinx").version_info  # in the test extra

RECORD = """
#: what Sphinx built with the plugin, for the tests to read back
BUILT = []


def record(app, exception):
    BUILT.append((app.builder.name, app.config.html_theme, exception))
"""

FILES = {
    "demo_record.py": RECORD,
    "demo_theme/__init__.py": '''
        """A plain theme on top of basic."""
        from pathlib import Path

        from demo_record import record


        def setup(app):
            app.add_html_theme("demo_theme", str(Path(__file__).parent))
            app.connect("build-finished", record)
            return {"parallel_read_safe": True}
    ''',
    # theme.conf: what every Sphinx reads (theme.toml only 7.3 and later)
    "demo_theme/theme.conf": """
        [theme]
        inherit = basic
    """,
    "demo_theme/layout.html": """
        {% extends "basic/layout.html" %}
        {% block footer %}built with demo_theme{% endblock %}
    """,
    # a theme directory without theme.conf or theme.toml
    "demo_hollow/__init__.py": """
        from pathlib import Path


        def setup(app):
            app.add_html_theme("hollow", str(Path(__file__).parent))
    """,
    # registers another name than the entry point's
    "demo_misnamed/__init__.py": """
        from pathlib import Path


        def setup(app):
            app.add_html_theme("other_name", str(Path(__file__).parent))
    """,
    "demo_builder.py": '''
        """Writes each page as plain text."""
        from pathlib import Path

        from sphinx.builders import Builder
        from sphinx.util import logging

        from demo_record import record

        logger = logging.getLogger(__name__)


        class TextPages(Builder):
            name = "demo_text"
            format = "text"

            def get_outdated_docs(self):
                return self.env.found_docs

            def get_target_uri(self, docname, typ=None):
                return docname

            def prepare_writing(self, docnames):
                pass

            def write_doc(self, docname, doctree):
                Path(self.outdir, f"{docname}.txt").write_text(doctree.astext())


        class Raising(TextPages):
            name = "demo_raising"

            def write_doc(self, docname, doctree):
                logger.warning("about to fail on %s", docname)
                raise RuntimeError(f"cannot write {docname}")


        def setup(app):
            app.add_builder(TextPages)
            app.connect("build-finished", record)


        def setup_raising(app):
            app.add_builder(Raising)
    ''',
    "demo_raising.py": """
        from demo_builder import setup_raising as setup
    """,
    "demo_unregistered.py": """
        def setup(app):
            pass
    """,
    # extensions users name in conf.py (group sphinx:extensions)
    "demo_needs_program.py": """
        from sphinx.errors import SphinxError


        def find_program(app):
            raise SphinxError("demodoc was not found. Install it using 'npm install demodoc'.")


        def setup(app):
            app.connect("builder-inited", find_program)
    """,
    "demo_handler_breaks.py": """
        def broken(app):
            return app.no_such_attribute


        def setup(app):
            app.connect("builder-inited", broken)
    """,
    "demo_api_refuses.py": """
        def late(app):
            app.connect("no-such-event", late)  # Sphinx's own ExtensionError, not a refusal


        def setup(app):
            app.connect("builder-inited", late)
    """,
}

ENTRY_POINTS = {
    "sphinx.html_themes": {
        "demo_theme": "demo_theme",
        "hollow": "demo_hollow",
        "misnamed": "demo_misnamed",
        "missing": "demo_missing_module",
    },
    "sphinx.builders": {
        "demo_text": "demo_builder",
        "demo_raising": "demo_raising",
        "demo_unregistered": "demo_unregistered",
    },
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo distribution, installed where Sphinx (importlib.metadata) finds it."""
    site = install(tmp_path / "site", "sphinx-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [name for name in sys.modules if name.startswith("demo_")]:
        del sys.modules[name]


def ref(name: str, group: str) -> EntryPointRef:
    return EntryPointRef(name, group, ENTRY_POINTS[group][name])


def load(name: str, group: str) -> LoadedPlugin:
    return load_plugin("sphinx", ref(name, group), Registry())


def load_error(name: str, group: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name, group)
    return info.value


def built() -> list[Any]:
    return list(sys.modules["demo_record"].BUILT)


def test_a_theme_registers_its_name_and_a_build_uses_it(site: Path) -> None:
    loaded = load("demo_theme", "sphinx.html_themes")
    assert loaded.tools == [
        {
            "name": "demo_theme",
            "kind": "theme",
            "description": "A plain theme on top of basic.",
            "parameters": None,
        }
    ]
    assert built() == [("html", "demo_theme", None)]


def test_a_builder_registers_its_name_and_builds_the_page(site: Path) -> None:
    loaded = load("demo_text", "sphinx.builders")
    assert loaded.tools == [
        {
            "name": "demo_text",
            "kind": "builder",
            "description": "Writes each page as plain text.",
            "parameters": None,
        }
    ]
    assert built() == [("demo_text", "alabaster", None)]


def test_a_theme_without_a_theme_file_fails_the_build(site: Path) -> None:
    error = load_error("hollow", "sphinx.html_themes")
    assert error.stage == "application"
    assert isinstance(error.cause, ApplicationFailed)
    message = str(error.cause)
    assert message.startswith("sphinx-build with html_theme = 'hollow' exited with status 2:\n")
    assert "Theme error" in message
    # Sphinx 7.3+: "no theme configuration file found in ...", before: "doesn't have "theme""
    assert "no theme configuration file found in" in message or "doesn't have" in message
    assert "Versions" not in message  # Sphinx's bug-report sections are left out
    if SPHINX >= (8,):  # earlier, Sphinx saves no traceback for its own errors
        assert "sphinx/theming.py" in error.cause.details  # the traceback Sphinx saved


def test_a_theme_registered_under_another_name_fails_the_build(site: Path) -> None:
    error = load_error("misnamed", "sphinx.html_themes")
    assert error.stage == "application"
    assert "misnamed" in str(error.cause)


def test_a_builder_that_raises_fails_the_build_with_its_warnings_and_traceback(
    site: Path,
) -> None:
    error = load_error("demo_raising", "sphinx.builders")
    assert error.stage == "application"
    assert isinstance(error.cause, ApplicationFailed)
    lines = str(error.cause).splitlines()
    assert lines[0] == "sphinx-build with -b demo_raising exited with status 2:"
    assert "WARNING: about to fail on index" in lines[1]
    assert lines[-1] == "RuntimeError: cannot write index"
    details = error.cause.details
    assert details.startswith("Traceback (most recent call last):")
    assert "demo_builder.py" in details and "in write_doc" in details
    assert details.endswith("RuntimeError: cannot write index")


def test_a_builder_module_that_registers_no_builder_fails_the_build(site: Path) -> None:
    error = load_error("demo_unregistered", "sphinx.builders")
    assert error.stage == "application"
    assert "Builder name demo_unregistered not registered" in str(error.cause)


def test_an_import_error_is_the_plugins_own(site: Path) -> None:
    error = load_error("missing", "sphinx.html_themes")
    assert error.stage == "import"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.cause.name == "demo_missing_module"


def test_the_probe_builds_in_a_fresh_interpreter(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "sphinx-demo", ENTRY_POINTS, FILES)
    plugin = ref("demo_theme", "sphinx.html_themes").to_json()
    result = probe_load(tmp_path, "sphinx", plugin, sites=[site])
    assert result["ok"] is True, result["error"]
    assert [(tool["name"], tool["kind"]) for tool in result["tools"]] == [("demo_theme", "theme")]
    failed = probe_load(
        tmp_path, "sphinx", ref("demo_raising", "sphinx.builders").to_json(), sites=[site]
    )
    assert failed["error"]["type"] == "ApplicationFailed"
    assert failed["error"]["message"].endswith("RuntimeError: cannot write index")
    # the traceback Sphinx saved stands in for the host's own
    assert failed["error"]["traceback"].startswith("Traceback (most recent call last):")
    assert "in write_doc" in failed["error"]["traceback"]
    assert not list(tmp_path.glob("sphinx-err-*"))


def test_sphinx_not_installed_is_the_application_missing(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "sphinx-demo", ENTRY_POINTS, FILES)
    plugin = ref("demo_theme", "sphinx.html_themes").to_json()
    result = probe_load(tmp_path, "sphinx", plugin, sites=[site], no_site=True)
    assert result["ok"] is False
    assert result["error"]["stage"] == "application"
    assert result["error"]["type"] == "ApplicationMissing"
    assert result["error"]["message"] == (
        "sphinx is not installed in the sandbox, and it is the application that loads "
        "'sphinx.html_themes' plugins"
    )


def test_an_extension_refusing_to_build_without_its_users_tools_is_said_not_failed(
    site: Path,
) -> None:
    module = "demo_needs_program"
    loaded = load_plugin("sphinx", EntryPointRef(module, "sphinx:extensions", module), Registry())
    assert loaded.tools == []
    assert loaded.skipped is not None
    assert loaded.skipped.startswith("it needs what its users' project gives it")
    assert loaded.skipped.endswith("demodoc was not found. Install it using 'npm install demodoc'.")


@pytest.mark.parametrize(
    ("module", "words"),
    [
        ("demo_handler_breaks", "no_such_attribute"),  # a plain error, wrapped by Sphinx
        ("demo_api_refuses", "no-such-event"),  # a Sphinx error Sphinx raised, not the extension
    ],
)
def test_an_extension_whose_handler_breaks_the_build_fails(
    site: Path, module: str, words: str
) -> None:
    with pytest.raises(PluginLoadError) as info:
        load_plugin("sphinx", EntryPointRef(module, "sphinx:extensions", module), Registry())
    assert info.value.stage == "application"
    assert words in info.value.message
