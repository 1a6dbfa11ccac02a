"""The ``markdown`` host: one ``markdown.extensions`` plugin, used by Python-Markdown.

``markdown.Markdown(extensions=[name])`` looks ``name`` up among the installed entry points of
the group (the first of a name wins), calls what ``EntryPoint.load()`` returns with the
extension's configuration, requires an ``Extension`` instance back and calls its
``extendMarkdown``. So the entry point names the ``Extension`` subclass: one naming its module
fails in Markdown (``'module' object is not callable``) although it imports. This host does
exactly that, then converts a small document with the extension, where an extension whose
processors raise fails.

A module its users name with no entry point (group ``markdown:extensions``: the module defines
``makeExtension``) is passed by its dotted name, which Markdown imports and asks for the
extension.

Registrations: kind ``extension``, named by the entry point (or the module). Markdown is
imported at call time.
"""

from __future__ import annotations

import importlib
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
)

_KINDS = {"markdown.extensions": "extension", "markdown:extensions": "extension"}

#: what an extension meets: the common block and inline syntax
SAMPLE = """\
# A title

Some *emphasis*, **strong** text, `code`, a [link](https://example.invalid/ "title") and an
![image](image.png).

## A section {#section}

- one
- two
    1. nested

> a quote

    indented code

```python
print("hello")
```

| a | b |
|---|---|
| 1 | 2 |

Term
: Definition[^1]

[^1]: A footnote. &copy; <span>inline html</span> $x^2$ ==mark== ~~strike~~ :smile:
"""


def load_markdown(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """``markdown.Markdown(extensions=[name]).convert(SAMPLE)``; raises
    :class:`PluginLoadError`: ``application`` (Markdown missing, or the conversion failed),
    ``import``, ``validate`` (what the entry point names does not make an ``Extension``)."""
    del registry, context  # a Markdown extension registers no tools, and needs no limits
    kind_of_group(_KINDS, "Markdown", ref.group)
    markdown = import_application("markdown", "markdown", ref.group)
    named = ref.group != "markdown.extensions"  # a module users name: Markdown imports it
    # the plugin's own import error, before Markdown's message
    target = resolve(EntryPointRef(ref.name, ref.group, ref.module) if named else ref)
    if not named:
        _require_first(ref)
    name = ref.module if named else ref.name
    shown = f"markdown.Markdown(extensions=[{name!r}])"
    try:
        converter = markdown.Markdown(extensions=[name])
    except (Exception, SystemExit) as exc:
        # what the entry point names is not callable, or does not return an Extension; a
        # module users name is Markdown's to call: only what it returns can be no Extension
        wrong = _returned_no_extension(exc) if named else _not_an_extension(target, exc)
        stage: LoadStage = "validate" if wrong else "application"
        raise PluginLoadError(stage, exc, where=shown) from exc
    try:
        converter.convert(SAMPLE)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc, where=f"{shown}.convert(...)") from exc
    registration = {"name": ref.name, "kind": "extension", "description": summary(target)}
    return LoadedPlugin(ref=ref, tools=[{**registration, "parameters": None}], handlers={})


def _require_first(ref: EntryPointRef) -> None:
    """Markdown takes the first installed entry point of a name: it must be this one."""
    util = importlib.import_module("markdown.util")
    points = [ep for ep in util.get_installed_extensions() if ep.name == ref.name]
    if points and points[0].value != ref.value:
        raise PluginLoadError(
            "validate",
            LookupError(
                f"Markdown loads {points[0].value!r} for the extension {ref.name!r}, not "
                f"{ref.value!r}: another installed distribution declares that name first"
            ),
        )


def _not_an_extension(target: Any, exc: BaseException) -> bool:
    import inspect  # noqa: PLC0415 - only a failure needs it

    if inspect.ismodule(target) or not callable(target):
        return True
    return _returned_no_extension(exc)


def _returned_no_extension(exc: BaseException) -> bool:
    """Markdown's words for an extension maker that returned no ``Extension``."""
    return isinstance(exc, TypeError) and "must be of type" in str(exc)
