"""The ``markdown`` host against the real Python-Markdown: ``Markdown(extensions=[name])`` and a
conversion."""

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

pytest.importorskip("markdown")  # in the test extra

FILES = {
    "demo_md/__init__.py": "",
    # modules users name, with no entry point (group markdown:extensions)
    "demo_md/named.py": """
        from demo_md.ext import DemoExtension

        def makeExtension(**kwargs):
            return DemoExtension(**kwargs)
    """,
    "demo_md/old_api.py": """
        from markdown.extensions import Extension

        class OldExtension(Extension):
            def extendMarkdown(self, md, md_globals):  # Markdown 3 passes md alone
                pass

        def makeExtension(configs=None):
            return OldExtension(configs=configs)
    """,
    "demo_md/returns_object.py": """
        def makeExtension(**kwargs):
            return object()
    """,
    "demo_md/ext.py": '''
        from markdown.extensions import Extension
        from markdown.treeprocessors import Treeprocessor


        class Stamp(Treeprocessor):
            def run(self, root):
                for heading in root.iter("h1"):
                    heading.set("class", "stamped")


        class Explode(Treeprocessor):
            def run(self, root):
                raise RuntimeError("cannot walk the tree")


        class DemoExtension(Extension):
            """Stamps the document."""

            def extendMarkdown(self, md):
                md.treeprocessors.register(Stamp(md), "stamp", 5)


        class ExplodingExtension(Extension):
            def extendMarkdown(self, md):
                md.treeprocessors.register(Explode(md), "explode", 5)


        def not_an_extension(**configs):
            return object()
    ''',
}

ENTRY_POINTS = {
    "markdown.extensions": {
        "demo": "demo_md.ext:DemoExtension",
        "module": "demo_md.ext",
        "exploding": "demo_md.ext:ExplodingExtension",
        "object": "demo_md.ext:not_an_extension",
    }
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    util = importlib.import_module("markdown.util")
    site = install(tmp_path / "site", "markdown-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    util.get_installed_extensions.cache_clear()  # Markdown caches the entry points it found
    yield site
    util.get_installed_extensions.cache_clear()
    for name in [name for name in sys.modules if name.startswith("demo_md")]:
        del sys.modules[name]


def load(name: str) -> LoadedPlugin:
    ref = EntryPointRef(name, "markdown.extensions", ENTRY_POINTS["markdown.extensions"][name])
    return load_plugin("markdown", ref, Registry())


def load_error(name: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name)
    return info.value


def test_an_extension_class_converts_a_document(site: Path) -> None:
    assert load("demo").tools == [
        {
            "name": "demo",
            "kind": "extension",
            "description": "Stamps the document.",
            "parameters": None,
        }
    ]


def test_an_entry_point_naming_a_module_fails_as_markdown_fails(site: Path) -> None:
    error = load_error("module")
    assert error.stage == "validate"
    assert "'module' object is not callable" in error.message


def test_what_does_not_return_an_extension_fails_validation(site: Path) -> None:
    error = load_error("object")
    assert error.stage == "validate"
    assert 'must be of type: "markdown.extensions.Extension"' in error.message


def test_an_extension_that_raises_while_converting_fails(site: Path) -> None:
    error = load_error("exploding")
    assert error.stage == "application"
    assert "cannot walk the tree" in error.message
    assert ".convert(...)" in error.message


def test_the_probe_and_markdown_missing(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "markdown-demo", ENTRY_POINTS, FILES)
    plugin = {"name": "demo", "group": "markdown.extensions", "value": "demo_md.ext:DemoExtension"}
    assert probe_load(tmp_path, "markdown", plugin, sites=[site])["ok"] is True
    missing = probe_load(tmp_path, "markdown", plugin, sites=[site], no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"


@pytest.mark.parametrize(
    ("module", "stage", "words"),
    [
        ("demo_md.named", None, ""),
        # the extension breaks in Markdown: Markdown's failure, not a malformed entry point
        ("demo_md.old_api", "application", "'configs'"),  # Markdown 2's keyword
        ("demo_md.returns_object", "validate", "must be of type"),
    ],
)
def test_a_module_users_name_is_made_by_its_make_extension(
    site: Path, module: str, stage: str | None, words: str
) -> None:
    ref = EntryPointRef(module, "markdown:extensions", module)
    if stage is None:
        loaded = load_plugin("markdown", ref, Registry())
        assert [(tool["kind"], tool["name"]) for tool in loaded.tools] == [("extension", module)]
        return
    with pytest.raises(PluginLoadError) as info:
        load_plugin("markdown", ref, Registry())
    assert info.value.stage == stage
    assert words in info.value.message
    assert f"markdown.Markdown(extensions=[{module!r}])" in info.value.message
