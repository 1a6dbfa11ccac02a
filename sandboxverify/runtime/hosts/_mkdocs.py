"""The ``mkdocs`` host: one ``mkdocs.plugins`` or ``mkdocs.themes`` plugin, in a real build.

MkDocs finds both kinds by name among the installed entry points: a plugin named in
``plugins:`` (MkDocs loads its class, requires a ``mkdocs.plugins.BasePlugin`` subclass and
validates its options), a theme named in ``theme: name:`` (the entry point's package directory
holds its templates and ``mkdocs_theme.yml``). This host imports the entry point (an import
error is the plugin's own), then runs ``mkdocs build`` in-process the way the command does
(``load_config``, ``on_startup``, ``build``, ``on_shutdown``) on a one-page site in a fresh
temporary directory. A configuration MkDocs refuses fails at stage ``validate``, a failed build
at ``application``, each with MkDocs' own messages (what it logs as warnings and errors).

A plugin registers its name (kind ``plugin``), a theme its name (kind ``theme``). MkDocs is
imported at call time only, never by the runtime, and loads its plugins and themes once per
process, which is the probe's: one load per interpreter.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import logging
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
    tail,
)

_KINDS = {"mkdocs.plugins": "plugin", "mkdocs.themes": "theme"}

INDEX = """\
# sandboxverify

A page for a plugin to build, with a little of everything.

## Section

Some *emphasis*, **strong** text, `code`, a [link](https://example.invalid/) and a
[reference](#a-list).

## A list

- one
- two

```python
print("hello")
```

| a | b |
|---|---|
| 1 | 2 |
"""


def load_mkdocs(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Build a one-page site with the plugin or the theme; raises :class:`PluginLoadError`:
    ``application`` (MkDocs missing, or the build failed), ``import``, ``validate`` (MkDocs
    refused the configuration: the plugin is no ``BasePlugin``, the theme is incomplete...)."""
    del registry, context  # an MkDocs plugin registers no tools, and needs no limits
    kind = kind_of_group(_KINDS, "MkDocs", ref.group)
    config = import_application("mkdocs.config", "mkdocs", ref.group)
    build = import_application("mkdocs.commands.build", "mkdocs", ref.group)
    target = resolve(ref)
    _forget_installed_themes()
    with tempfile.TemporaryDirectory(prefix="sandboxverify-mkdocs-") as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs" / "index.md").write_text(INDEX, encoding="utf-8")
        # a theme's own plugin is built with that theme, as its users build it
        # (mkdocs-material's material/blog and material/search render the theme's partials)
        theme = _own_theme(ref) if kind == "plugin" else ref.name
        setting: dict[str, Any] = {"plugins": [ref.name]} if kind == "plugin" else {}
        if theme is not None:
            setting["theme"] = {"name": theme}
        # JSON is YAML: no quoting rules to get wrong for an odd entry-point name
        (root / "mkdocs.yml").write_text(
            json.dumps({"site_name": "sandboxverify", **setting}, indent=2), encoding="utf-8"
        )
        shown = ", ".join(
            ([f"plugins: [{ref.name}]"] if kind == "plugin" else [])
            + ([f"theme: {{name: {theme}}}"] if theme is not None else [])
        )
        needs = _build(config, build, root / "mkdocs.yml", f"mkdocs build with {shown}", ref)
    description = summary(target)
    if needs:
        description = (
            f"{description} (MkDocs loaded it and validated its options; not built: it needs "
            f"configuration: {', '.join(needs)})"
        ).lstrip()
    registration = {
        "name": ref.name,
        "kind": kind,
        "description": description,
        "parameters": None,
    }
    return LoadedPlugin(ref=ref, tools=[registration], handlers={})


def _build(config: Any, build: Any, path: Path, what: str, ref: EntryPointRef) -> list[str]:
    """What ``mkdocs build`` does: load the configuration, start the plugins, build, shut down.

    Returns the options the plugin requires that a one-page site cannot give it: MkDocs found
    the plugin, created it and validated its options, so it loads; the build is not run."""
    with _messages() as messages:
        try:
            loaded = _step(
                "validate", f"{what} (loading mkdocs.yml)", messages, config.load_config, str(path)
            )
        except PluginLoadError:
            needs = _required_options(messages, ref.name)
            if needs:
                return needs
            raise
        plugins = loaded.plugins
        if hasattr(plugins, "on_startup"):  # MkDocs 1.4+
            _step("application", what, messages, plugins.on_startup, command="build", dirty=False)
        try:
            _step("application", what, messages, build.build, loaded)
        finally:
            if hasattr(plugins, "on_shutdown"):
                with contextlib.suppress(Exception):
                    plugins.on_shutdown()
    return []


def _step(
    stage: LoadStage, what: str, messages: list[str], step: Any, *args: Any, **kwargs: Any
) -> Any:
    """One step of ``mkdocs build``. MkDocs' refusal (``Abort``, after logging why) becomes
    :class:`ApplicationFailed` with what it logged; anything else stays the exception raised."""
    abort = importlib.import_module("mkdocs.exceptions").Abort
    try:
        return step(*args, **kwargs)
    except abort as exc:
        # in the order the command line prints them: what went wrong, then that it stopped
        failure = ApplicationFailed(f"{what} failed:\n" + tail("\n".join([*messages, str(exc)])))
        raise PluginLoadError(stage, failure) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError(stage, exc, where=what) from exc


@contextlib.contextmanager
def _messages() -> Iterator[list[str]]:
    """What MkDocs logs as warnings and errors while it runs (its command line prints them)."""
    logger = logging.getLogger("mkdocs")
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            with contextlib.suppress(Exception):
                messages.append(f"{record.levelname}: {record.getMessage()}")

    handler = Collect(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def _forget_installed_themes() -> None:
    """MkDocs caches the installed themes; the probe's interpreter is fresh, a test's is not."""
    themes = getattr(importlib.import_module("mkdocs.utils"), "get_themes", None)
    cache_clear = getattr(themes, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()


_REQUIRED = re.compile(
    r"^ERROR: Config value 'plugins': Plugin '(?P<plugin>[^']+)' option '(?P<option>[^']+)': "
    r"Required configuration not provided\.$"
)


def _required_options(messages: list[str], plugin: str) -> list[str]:
    """The plugin's required options, when they are all MkDocs refused the configuration for."""
    errors = [message for message in messages if message.startswith("ERROR:")]
    found = [_REQUIRED.match(message) for message in errors]
    if not errors or not all(match is not None and match["plugin"] == plugin for match in found):
        return []
    return [repr(match["option"]) for match in found if match is not None]


def _own_theme(ref: EntryPointRef) -> str | None:
    """The theme a namespaced plugin belongs to: MkDocs' convention (1.5+) names a theme's own
    plugins ``<theme>/<plugin>`` (``material/blog``), and they render that theme's templates."""
    theme, slash, _ = ref.name.partition("/")
    if not slash or not theme:
        return None
    everything: Any = importlib.metadata.entry_points()
    # Python 3.9 returns a dict of groups; 3.10+ can select
    themes = (
        everything.select(group="mkdocs.themes")
        if hasattr(everything, "select")
        else everything.get("mkdocs.themes", ())
    )
    return theme if any(entry.name == theme for entry in themes) else None
