"""The ``pygments`` host against the real Pygments: each plugin found by Pygments' own lookups and
used to highlight a sample."""

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

pytest.importorskip("pygments")  # in the test extra

FILES = {
    "demo_pyg/__init__.py": "",
    "demo_pyg/lexers.py": '''
        from pygments.lexer import RegexLexer
        from pygments.token import Comment, Keyword, Name, Text


        class DemoLexer(RegexLexer):
            """Lexes the demo language."""

            name = "Demo"
            aliases = ["demo", "demolang"]
            filenames = ["*.demo"]
            tokens = {
                "root": [
                    (r"#.*$", Comment),
                    (r"\\b(def|return)\\b", Keyword),
                    (r"\\w+", Name),
                    (r"\\s+|.", Text),
                ]
            }


        class UnclosedLexer(RegexLexer):
            name = "Unclosed"
            aliases = ["unclosed"]
            tokens = {"root": [(r"(def", Keyword)]}


        class ShoutingLexer(DemoLexer):
            name = "Shouting"
            aliases = ["SHOUT"]


        class PythonAgain(DemoLexer):
            name = "Python again"
            aliases = ["python"]
    ''',
    "demo_pyg/styles.py": '''
        from pygments.style import Style
        from pygments.token import Comment, Keyword


        class DemoStyle(Style):
            """Red keywords."""

            styles = {Keyword: "bold #aa0000", Comment: "italic #888888"}
    ''',
    "demo_pyg/formatters.py": '''
        from pygments.formatter import Formatter


        class CountFormatter(Formatter):
            """Counts tokens."""

            name = "Count"
            aliases = ["count"]

            def format(self, tokensource, outfile):
                outfile.write(str(sum(1 for _ in tokensource)))


        class FailingFormatter(Formatter):
            name = "Failing"
            aliases = ["failing"]

            def format(self, tokensource, outfile):
                raise RuntimeError("cannot format")
    ''',
    "demo_pyg/filters.py": '''
        from pygments.filter import Filter


        class UpperFilter(Filter):
            """Upper-cases every token."""

            def filter(self, lexer, stream):
                for ttype, value in stream:
                    yield ttype, value.upper()


        class BrokenFilter(Filter):
            def filter(self, lexer, stream):
                raise ValueError("broken filter")
                yield
    ''',
}

ENTRY_POINTS = {
    "pygments.lexers": {
        "demo": "demo_pyg.lexers:DemoLexer",
        "unclosed": "demo_pyg.lexers:UnclosedLexer",
        "shout": "demo_pyg.lexers:ShoutingLexer",
        "python_again": "demo_pyg.lexers:PythonAgain",
    },
    "pygments.styles": {"demo": "demo_pyg.styles:DemoStyle"},
    "pygments.formatters": {
        "count": "demo_pyg.formatters:CountFormatter",
        "failing": "demo_pyg.formatters:FailingFormatter",
    },
    "pygments.filters": {
        "upper": "demo_pyg.filters:UpperFilter",
        "broken": "demo_pyg.filters:BrokenFilter",
    },
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo distribution, where Pygments (importlib.metadata) finds it."""
    plugin = importlib.import_module("pygments.plugin")
    site = install(tmp_path / "site", "pygments-demo", ENTRY_POINTS, FILES)
    monkeypatch.syspath_prepend(str(site))
    plugin.iter_entry_points.cache_clear()  # Pygments caches what it found
    yield site
    plugin.iter_entry_points.cache_clear()
    for name in [name for name in sys.modules if name.startswith("demo_pyg")]:
        del sys.modules[name]


def load(name: str, group: str) -> LoadedPlugin:
    return load_plugin(
        "pygments", EntryPointRef(name, group, ENTRY_POINTS[group][name]), Registry()
    )


def load_error(name: str, group: str) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(name, group)
    return info.value


def registered(loaded: LoadedPlugin) -> list[tuple[str, str]]:
    return [(tool["kind"], tool["name"]) for tool in loaded.tools]


def test_a_lexer_registers_each_alias_and_highlights(site: Path) -> None:
    loaded = load("demo", "pygments.lexers")
    assert registered(loaded) == [("lexer", "demo"), ("lexer", "demolang")]
    assert loaded.tools[0]["description"] == "Demo lexer"


def test_a_lexer_whose_regex_does_not_compile_fails_where_pygments_uses_it(site: Path) -> None:
    error = load_error("unclosed", "pygments.lexers")
    assert error.stage == "application"
    assert "uncompilable regex" in error.message
    assert "Pygments creating the lexer UnclosedLexer" in error.message


def test_a_lexer_alias_pygments_cannot_find_fails_validation(site: Path) -> None:
    error = load_error("shout", "pygments.lexers")
    assert error.stage == "validate"
    assert "get_lexer_by_name('SHOUT') does not find the plugin" in error.message
    assert "lower case" in error.message


def test_an_alias_pygments_own_lexer_takes_is_said_not_failed(site: Path) -> None:
    loaded = load("python_again", "pygments.lexers")
    assert registered(loaded) == [("lexer", "python")]
    assert "'python' finds pygments.lexers.python.PythonLexer first" in str(
        loaded.tools[0]["description"]
    )


def test_an_entry_point_naming_a_module_is_no_lexer(site: Path) -> None:
    # not declared with the others: Pygments' lookups load every lexer plugin, and one that
    # is no class breaks them all
    ref = EntryPointRef("module", "pygments.lexers", "demo_pyg.lexers")
    with pytest.raises(PluginLoadError) as info:
        load_plugin("pygments", ref, Registry())
    assert info.value.stage == "validate"
    assert "not a subclass of pygments.lexer.Lexer" in info.value.message


def test_a_style_is_found_by_name_and_formats(site: Path) -> None:
    loaded = load("demo", "pygments.styles")
    assert registered(loaded) == [("style", "demo")]
    assert loaded.tools[0]["description"] == "Red keywords."


def test_a_formatter_registers_its_aliases_and_one_that_raises_fails(site: Path) -> None:
    assert registered(load("count", "pygments.formatters")) == [("formatter", "count")]
    error = load_error("failing", "pygments.formatters")
    assert error.stage == "application"
    assert "cannot format" in error.message


def test_a_filter_is_found_by_name_and_one_that_raises_fails(site: Path) -> None:
    assert registered(load("upper", "pygments.filters")) == [("filter", "upper")]
    error = load_error("broken", "pygments.filters")
    assert error.stage == "application"
    assert "broken filter" in error.message


def test_the_probe_loads_a_lexer_in_a_fresh_interpreter(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "pygments-demo", ENTRY_POINTS, FILES)
    plugin = {"name": "demo", "group": "pygments.lexers", "value": "demo_pyg.lexers:DemoLexer"}
    result = probe_load(tmp_path, "pygments", plugin, sites=[site])
    assert result["ok"] is True, result["error"]
    assert [tool["name"] for tool in result["tools"]] == ["demo", "demolang"]
    missing = probe_load(tmp_path, "pygments", plugin, sites=[site], no_site=True)
    assert missing["error"]["type"] == "ApplicationMissing"
