"""The ``flake8`` host: one ``flake8.extension`` or ``flake8.report`` plugin, loaded by flake8.

flake8 (5.0 and later) finds every installed plugin with ``flake8.plugins.finder.find_plugins``
and loads them with ``load_plugins``, which imports each entry point, classifies it by the
parameters it takes (``tree``, ``logical_line``, ``physical_line``: a checker; group
``flake8.report``: a formatter) and rejects a checker whose entry point name is no error-code
prefix (``VALID_CODE_PREFIX``, ``^[A-Z]{1,3}[0-9]{0,3}$``). This host does the same for this
distribution's plugin alone (found among flake8's by group, name and value), so another installed
plugin's failure is not this one's. Then flake8 runs once, in-process, on a small file: a
checker with ``--select <prefix>`` (``--enable-extensions`` too, for one off by default), a
formatter with ``--format <name>``; a checker or formatter that raises on real input fails there.

A checker registers its prefix (kind ``code``), a formatter its name (kind ``formatter``).
flake8 is imported at call time only, never by the runtime.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib
import inspect
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

#: flake8 releases before this have no ``flake8.plugins.finder``.
FINDER_SINCE = "5.0"

#: What a checker meets on its one run: the common statements and expressions, all valid on
#: every Python a sandbox may run (3.9 and later), and one unused import for formatters to report.
SAMPLE = '''\
"""A module for plugins to check."""

import os
from typing import Optional


class Greeter:
    """Greets."""

    greeting: str = "hello"

    def __init__(self, name: Optional[str] = None) -> None:
        self.name = name or "world"

    @property
    def message(self) -> str:
        return f"{self.greeting}, {self.name}!"


async def gather(items):
    async with items as opened:
        return [item async for item in opened]


def main(argv=None):
    values = {key: len(key) for key in (argv or [])}
    try:
        with open(__file__) as handle:
            first = handle.readline()
    except OSError as exc:
        raise SystemExit(str(exc)) from exc
    total = sum(x * 2 for x in values.values() if x > 1)
    square = lambda n: n**2  # noqa: E731
    while total > 100:
        total //= 2
    print(Greeter().message, first, square(total), *values, sep="\\n")
    return 0 if total else 1
'''

_KINDS = {"flake8.extension": "code", "flake8.report": "formatter"}


def load_flake8(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Load the plugin with flake8's finder, then run flake8 with it on a small file.

    Raises :class:`PluginLoadError`: ``application`` (flake8 missing or older than 5.0, or the
    run failed), ``import``, ``validate`` (flake8 does not find the plugin, refuses its code
    prefix, cannot classify it, or a formatter is no ``BaseFormatter``).
    """
    del registry, context  # a flake8 plugin registers no tools, and needs no limits
    kind = kind_of_group(_KINDS, "flake8", ref.group)
    flake8 = import_application("flake8", "flake8", ref.group)
    finder = _finder(flake8, ref)
    options = finder.parse_plugin_options(
        configparser.RawConfigParser(),
        os.getcwd(),
        enable_extensions=ref.name,  # one off by default is still checked
        require_plugins=None,
    )
    plugin = _find(flake8, finder, ref, options)
    resolve(ref)  # the plugin's own import error, before flake8 wraps it
    loaded, checker = _load(finder, ref, plugin, options)
    if kind == "formatter":
        _require_formatter(ref, loaded.obj)
        description = summary(loaded.obj)
    else:
        description = f"{checker} checker {_qualname(loaded.obj)}"
        doc = summary(loaded.obj)
        if doc:
            description += f": {doc}"
    _run(finder, plugin, ref, kind)
    registration = {"name": ref.name, "kind": kind, "description": description, "parameters": None}
    return LoadedPlugin(ref=ref, tools=[registration], handlers={})


def _finder(flake8: Any, ref: EntryPointRef) -> Any:
    try:
        return import_application("flake8.plugins.finder", "flake8", ref.group)
    except PluginLoadError as exc:
        version = getattr(flake8, "__version__", "(unknown version)")
        raise PluginLoadError(
            "application",
            RuntimeError(
                f"flake8 {version} has no flake8.plugins.finder: sandboxverify loads flake8 "
                f"plugins with flake8>={FINDER_SINCE}; install a newer flake8 in the sandbox"
            ),
        ) from exc


def _find(flake8: Any, finder: Any, ref: EntryPointRef, options: Any) -> Any:
    """This entry point among the plugins flake8 finds installed."""
    try:
        found = finder.find_plugins(configparser.RawConfigParser(), options)
    except Exception as exc:  # another distribution's broken metadata: flake8 fails for all
        raise PluginLoadError("application", exc) from exc
    for plugin in found:
        point = plugin.entry_point
        if (point.group, point.name, point.value) == (ref.group, ref.name, ref.value):
            return plugin
    version = getattr(flake8, "__version__", "(unknown version)")
    why = _why_not_found(finder, ref)
    raise PluginLoadError(
        "validate",
        LookupError(
            f"flake8 {version} does not find the plugin {ref.name} = {ref.value} "
            f"[{ref.group}] among the installed plugins: {why}"
        ),
    )


def _why_not_found(finder: Any, ref: EntryPointRef) -> str:
    from importlib import metadata  # noqa: PLC0415 - only this error message needs it

    for dist in metadata.distributions():
        if not any(
            (point.group, point.name, point.value) == (ref.group, ref.name, ref.value)
            for point in dist.entry_points
        ):
            continue
        name = dist.metadata["Name"]
        banned = getattr(finder, "BANNED_PLUGINS", {}).get(name)
        if banned:
            return f"flake8 skips the distribution {name!r}: it is obsolete in flake8>={banned}"
        if name == "flake8":
            return "flake8 keeps its own plugins to itself"
        return f"the distribution {name!r} declares it, but flake8 skips it"
    return "no installed distribution declares this entry point"


def _load(finder: Any, ref: EntryPointRef, plugin: Any, options: Any) -> tuple[Any, str]:
    """flake8's ``load_plugins`` for this one plugin: the loaded plugin and its checker type."""
    failed = importlib.import_module("flake8.exceptions").FailedToLoadPlugin
    try:
        plugins = finder.load_plugins([plugin], options)
    except failed as exc:
        original = exc.original_exception
        if isinstance(original, (ImportError, AttributeError)):
            raise PluginLoadError("import", original) from exc
        raise PluginLoadError("validate", exc) from exc
    except NotImplementedError as exc:  # flake8's "what plugin type?"
        raise PluginLoadError("validate", _unclassified(ref, plugin)) from exc
    except Exception as exc:  # ExecutionError: "plugin code for ... does not match ..."
        raise PluginLoadError("validate", exc) from exc
    groups = [
        ("tree", plugins.checkers.tree),
        ("logical_line", plugins.checkers.logical_line),
        ("physical_line", plugins.checkers.physical_line),
        ("formatter", list(plugins.reporters.values())),
        ("disabled", plugins.disabled),
    ]
    for checker, loaded_plugins in groups:
        for loaded in loaded_plugins:
            return loaded, checker
    raise PluginLoadError(  # pragma: no cover - flake8 classifies or raises
        "validate", RuntimeError(f"flake8 loaded {ref.value!r} but kept no plugin")
    )


def _unclassified(ref: EntryPointRef, plugin: Any) -> TypeError:
    target = plugin.entry_point.load()
    try:
        function = target if inspect.isfunction(target) else target.__init__
        takes = ", ".join(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        takes = "?"
    return TypeError(
        f"flake8 cannot tell what kind of checker {ref.name} = {ref.value} is "
        f"(flake8: what plugin type?): a checker takes a 'tree', 'logical_line' or "
        f"'physical_line' parameter; it takes ({takes})"
    )


def _require_formatter(ref: EntryPointRef, target: Any) -> None:
    base = importlib.import_module("flake8.formatting.base").BaseFormatter
    if isinstance(target, type) and issubclass(target, base):
        return
    raise PluginLoadError(
        "validate",
        TypeError(
            f"flake8.report plugin {ref.name} = {ref.value} resolved to {_qualname(target)}, "
            "not a subclass of flake8.formatting.base.BaseFormatter: flake8 calls it with the "
            "options to make the formatter that writes its report"
        ),
    )


def _run(finder: Any, plugin: Any, ref: EntryPointRef, kind: str) -> None:
    """``flake8 example.py`` with the plugin selected, in-process and serially, with flake8's own
    plugins and this one only; raises ``application`` with the plugin's exception or flake8's."""
    application = importlib.import_module("flake8.main.application")
    with tempfile.TemporaryDirectory(prefix="sandboxverify-flake8-") as tmp, _cwd(tmp):
        Path(tmp, "example.py").write_text(SAMPLE, encoding="utf-8")
        argv = ["example.py", "--isolated", "--jobs=1", "--output-file=flake8-output.txt"]
        if kind == "code":
            argv += [f"--select={ref.name}", f"--enable-extensions={ref.name}"]
        else:
            argv += [f"--format={ref.name}"]
        shown = f"flake8 example.py {argv[-2 if kind == 'code' else -1]}"
        app = application.Application()
        try:
            # Application.run() without its handlers, which print the error and drop it
            with _only(finder, plugin):
                app.initialize(argv)
            manager = app.file_checker_manager
            manager.start()
            manager.run()
            manager.stop()
            app.report()
        except (Exception, SystemExit) as exc:
            # PluginExecutionFailed names the plugin and the file and chains the plugin's
            # exception; a tree checker's run() raises its own exception unwrapped
            raise PluginLoadError("application", exc, where=shown) from exc
        finally:
            output = getattr(app.formatter, "output_fd", None)
            if output is not None and not output.closed:  # the formatter stopped early
                output.close()


#: the distributions flake8 names its own plugins after (pyflakes' F, pycodestyle's E and W)
_OWN = frozenset({"flake8", "pyflakes", "pycodestyle"})


@contextlib.contextmanager
def _only(finder: Any, plugin: Any) -> Iterator[None]:
    """flake8 finds its own plugins and this one, not the other installed plugins: one broken
    neighbour (another entry point of the same distribution, even) fails every flake8 run."""
    find_plugins = finder.find_plugins

    def find_own_and_this(*args: Any, **kwargs: Any) -> list[Any]:
        return [
            found
            for found in find_plugins(*args, **kwargs)
            if found.package in _OWN or found == plugin
        ]

    finder.find_plugins = find_own_and_this
    try:
        yield
    finally:
        finder.find_plugins = find_plugins


@contextlib.contextmanager
def _cwd(path: str) -> Iterator[None]:
    """Run where the file is, as a user does, so messages name ``example.py``."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _qualname(target: Any) -> str:
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or type(target).__name__
    return f"{module}.{name}" if module else str(name)
