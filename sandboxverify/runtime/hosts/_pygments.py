"""The ``pygments`` host: one lexer, style, formatter or filter plugin, found and used by Pygments.

Pygments loads every entry point of its four groups with ``EntryPoint.load()`` (``pygments.plugin``)
and looks plugins up by what they are: a lexer or a formatter by the aliases its class declares
(the entry point's name is ignored; Pygments' own classes win, and a lexer alias is looked up in
lower case), a style or a filter by the entry point's name. This host loads the entry point as
Pygments does, looks each alias or name up through Pygments' own functions
(``get_lexer_by_name``, ``find_formatter_class``, ``get_style_by_name``, ``find_filter_class``),
then uses the plugin: highlights a small sample with the lexer, with a formatter in the style,
with the formatter, and through the filter. A lexer whose regular expressions do not compile, a
style with a colour Pygments refuses, a formatter or a filter that raises fails there.

Registrations: ``lexer`` and ``formatter`` named by their aliases, ``style`` and ``filter`` by
the entry point's name. Pygments is imported at call time only, never by the runtime.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
)

_KINDS = {
    "pygments.lexers": "lexer",
    "pygments.styles": "style",
    "pygments.formatters": "formatter",
    "pygments.filters": "filter",
}

#: what a lexer meets: a little of what most languages have (words, numbers, strings in both
#: quotes, brackets, operators, comments in several styles, indentation, non-ASCII text)
SAMPLE = """\
# A sample for a lexer: code, markup and prose.
def greet(name="world", *args, **kwargs):
    '''Say hello.'''
    return f"hello, {name}!" if name else None  // 42 + 3.14 - 0x1F * 1e-3

<p class="x">Text & more</p> { "key": [1, 2, null, true] } /* note */ -- done
SELECT a, b FROM t WHERE c = 'd';  $var @attr %macro ~home ;; é ü 漢字 \\n\t\tend
"""

#: what a style or a formatter formats (with Pygments' own Python lexer)
PYTHON = '''\
import os


class Greeter:
    """Greets."""

    def greet(self, name: str = "world") -> str:
        return f"hello, {name}! {len(os.sep) * 2}"  # a comment
'''


def load_pygments(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Load the plugin as Pygments does, look it up as Pygments does, and use it; raises
    :class:`PluginLoadError`: ``application`` (Pygments missing, or it failed with the plugin),
    ``import``, ``validate`` (not the class Pygments expects, or not found by its name)."""
    del registry, context  # a Pygments plugin registers no tools, and needs no limits
    kind = kind_of_group(_KINDS, "Pygments", ref.group)
    import_application("pygments", "pygments", ref.group)
    target = resolve(ref)  # Pygments calls EntryPoint.load() and uses what it returns
    use: Callable[[EntryPointRef, Any], list[dict[str, Any]]] = {
        "lexer": _lexer,
        "style": _style,
        "formatter": _formatter,
        "filter": _filter,
    }[kind]
    return LoadedPlugin(ref=ref, tools=use(ref, target), handlers={})


def _require_subclass(ref: EntryPointRef, target: Any, base: str, what: str) -> None:
    module, _, name = base.rpartition(".")
    expected = getattr(importlib.import_module(module), name)
    if isinstance(target, type) and issubclass(target, expected):
        return
    shown = getattr(target, "__qualname__", None) or type(target).__name__
    raise PluginLoadError(
        "validate",
        TypeError(
            f"{ref.group} entry point {ref.name!r} = {ref.value!r} resolved to {shown}, not a "
            f"subclass of {base}: Pygments uses it as {what}"
        ),
    )


def _use(what: str, step: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One use of the plugin by Pygments; what it raises is the plugin failing there."""
    try:
        return step(*args, **kwargs)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=what) from exc


def _highlight(code: str, lexer: Any, formatter: Any, what: str) -> None:
    highlight = importlib.import_module("pygments").highlight
    _use(what, highlight, code, lexer, formatter)


def _html() -> Any:
    return importlib.import_module("pygments.formatters.html").HtmlFormatter()


def _python() -> Any:
    return importlib.import_module("pygments.lexers.python").PythonLexer()


def _shadowed(found: Any, cls: type, name: str) -> str:
    """What a lookup by ``name`` found instead of the plugin (Pygments' own class wins)."""
    if found is cls:
        return ""
    other = f"{found.__module__}.{found.__qualname__}"
    return f"; {name!r} finds {other} first (Pygments' own classes win)"


def _lexer(ref: EntryPointRef, cls: Any) -> list[dict[str, Any]]:
    _require_subclass(ref, cls, "pygments.lexer.Lexer", "a lexer class (looked up by its aliases)")
    lexers = importlib.import_module("pygments.lexers")
    lexer = _use(f"Pygments creating the lexer {cls.__qualname__}", cls)
    _highlight(SAMPLE, lexer, _html(), f"highlighting a sample with {cls.__qualname__}")
    aliases = [alias for alias in getattr(cls, "aliases", ()) if isinstance(alias, str)]
    notes = ""
    for alias in aliases:
        what = f"get_lexer_by_name({alias!r})"
        found = _lookup(what, lexers.get_lexer_by_name, alias, upper_hint=alias != alias.lower())
        notes += _shadowed(type(found), cls, alias)
    description = f"{getattr(cls, 'name', None) or cls.__qualname__} lexer" + notes
    return [_registration(name, "lexer", description) for name in aliases or [cls.name]]


def _lookup(what: str, find: Callable[[str], Any], name: str, *, upper_hint: bool = False) -> Any:
    """Pygments' own lookup by ``name``; not finding the plugin fails validation."""
    not_found = importlib.import_module("pygments.util").ClassNotFound
    try:
        found = find(name)
    except not_found as exc:
        why = " (Pygments looks lexer aliases up in lower case)" if upper_hint else ""
        error = LookupError(f"{what} does not find the plugin: {exc}{why}")
        raise PluginLoadError("validate", error) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=what) from exc
    if found is None:
        raise PluginLoadError("validate", LookupError(f"{what} does not find the plugin"))
    return found


def _style(ref: EntryPointRef, cls: Any) -> list[dict[str, Any]]:
    _require_subclass(ref, cls, "pygments.style.Style", "a style (looked up by the entry's name)")
    styles = importlib.import_module("pygments.styles")
    found = _lookup(f"get_style_by_name({ref.name!r})", styles.get_style_by_name, ref.name)
    html = importlib.import_module("pygments.formatters.html").HtmlFormatter
    terminal = importlib.import_module("pygments.formatters.terminal256").Terminal256Formatter
    for formatter in (html, terminal):
        what = f"{formatter.__name__}(style={ref.name!r})"
        made = _use(what, formatter, style=cls)
        _highlight(PYTHON, _python(), made, f"highlighting Python with {what}")
    _use(f"HtmlFormatter(style={ref.name!r}).get_style_defs()", html(style=cls).get_style_defs)
    description = (summary(cls) or f"{cls.__qualname__} style") + _shadowed(found, cls, ref.name)
    return [_registration(ref.name, "style", description)]


def _formatter(ref: EntryPointRef, cls: Any) -> list[dict[str, Any]]:
    _require_subclass(ref, cls, "pygments.formatter.Formatter", "a formatter class")
    formatters = importlib.import_module("pygments.formatters")
    formatter = _use(f"Pygments creating the formatter {cls.__qualname__}", cls)
    _highlight(PYTHON, _python(), formatter, f"formatting Python with {cls.__qualname__}")
    aliases = [alias for alias in getattr(cls, "aliases", ()) if isinstance(alias, str)]
    notes = ""
    for alias in aliases:
        found = _lookup(f"find_formatter_class({alias!r})", formatters.find_formatter_class, alias)
        notes += _shadowed(found, cls, alias)
    description = f"{getattr(cls, 'name', None) or cls.__qualname__} formatter" + notes
    return [_registration(name, "formatter", description) for name in aliases or [ref.name]]


def _filter(ref: EntryPointRef, cls: Any) -> list[dict[str, Any]]:
    _require_subclass(ref, cls, "pygments.filter.Filter", "a filter class (looked up by name)")
    filters = importlib.import_module("pygments.filters")
    found = _lookup(f"find_filter_class({ref.name!r})", filters.find_filter_class, ref.name)
    lexer = _python()
    _use(f"adding the filter {ref.name!r} to a lexer", lexer.add_filter, cls())
    _highlight(PYTHON, lexer, _html(), f"highlighting Python through the filter {ref.name!r}")
    description = (summary(cls) or f"{cls.__qualname__} filter") + _shadowed(found, cls, ref.name)
    return [_registration(ref.name, "filter", description)]


def _registration(name: str, kind: str, description: str) -> dict[str, Any]:
    return {"name": name, "kind": kind, "description": description, "parameters": None}
