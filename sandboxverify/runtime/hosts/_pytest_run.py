"""How the ``pytest`` host runs pytest: a scratch directory, captured output, and wrappers
around the pytest methods a plugin registers options, ini keys, markers and itself with."""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import Any, Callable, Protocol

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime.hosts._exercise import PROGRAMMING_ERRORS

#: argparse actions of an option that takes no value: a switch
SWITCH_ACTIONS = frozenset({"store_true", "store_false", "store_const", "count", "append_const"})


class RecordingRun(Protocol):
    """What the wrappers record into: the pytest host's run."""

    pm: Any
    provided: Any
    expected: str | None
    loaded: bool
    refused: list[tuple[Any, Any, BaseException]]
    #: the plugin's options that take no value, as pytest's command line names them
    switches: list[str]

    def add(self, kind: str, name: str, description: Any) -> None: ...

    def from_plugin(self) -> bool: ...


# -- recording what the plugin registers ------------------------------------------------------


@contextlib.contextmanager
def recording(pytest: Any, run: RecordingRun) -> Iterator[None]:
    """Wrap the pytest methods a plugin registers options, ini keys, markers and itself with."""

    def option(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def addoption(self: Any, *opts: Any, **attrs: Any) -> Any:
            result = original(self, *opts, **attrs)
            if opts and run.from_plugin():
                name = _option_name(opts)
                run.add("option", name, attrs.get("help"))
                switch = attrs.get("action") in SWITCH_ACTIONS and name.startswith("--")
                if switch and name not in run.switches:
                    run.switches.append(name)
            return result

        return addoption

    def ini(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def addini(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            name = args[0] if args else kwargs.get("name")
            help_text = args[1] if len(args) > 1 else kwargs.get("help")
            if isinstance(name, str) and run.from_plugin():
                run.add("ini", name, help_text)
            return result

        return addini

    def line(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def addinivalue_line(self: Any, name: Any, value: Any) -> Any:
            result = original(self, name, value)
            if name == "markers" and isinstance(value, str) and run.from_plugin():
                marker = _marker(value)
                if marker is not None:
                    run.add("marker", marker[0], marker[1])
            return result

        return addinivalue_line

    def register(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def register(self: Any, plugin: Any, *args: Any, **kwargs: Any) -> Any:
            name = args[0] if args else kwargs.get("name")
            run.pm = self
            try:
                result = original(self, plugin, *args, **kwargs)
            except Exception as exc:
                run.refused.append((plugin, name, exc))
                raise
            if result is not None and (plugin is run.provided or result == run.expected):
                run.loaded = True
            return result

        return register

    wrapped = [
        (pytest.OptionGroup, "addoption", option),
        (pytest.OptionGroup, "_addoption", option),
        (pytest.Parser, "addini", ini),
        (pytest.Config, "addinivalue_line", line),
        (pytest.PytestPluginManager, "register", register),
    ]
    restore: list[tuple[type, str, Any]] = []
    try:
        for cls, name, wrap in wrapped:
            original = getattr(cls, name, None)
            if original is None:
                continue
            restore.append((cls, name, cls.__dict__.get(name)))
            setattr(cls, name, wrap(original))
        yield
    finally:
        for cls, name, own in reversed(restore):
            if own is None:
                delattr(cls, name)
            else:
                setattr(cls, name, own)


def _option_name(opts: tuple[Any, ...]) -> str:
    names = [str(opt) for opt in opts]
    return next((name for name in names if name.startswith("--")), names[0])


_MARKER = re.compile(r"\s*([^\s(:]+)\s*(?:\([^)]*\))?\s*:?\s*(.*)", re.DOTALL)


def _marker(line: str) -> tuple[str, str | None] | None:
    """``"timeout(seconds): stop a slow test"`` -> ``("timeout", "stop a slow test")``."""
    match = _MARKER.match(line)
    if match is None:
        return None
    return match.group(1), match.group(2).strip() or None


def one_line(text: Any) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return " ".join(text.split())


# -- where pytest runs ------------------------------------------------------------------------


def autoloaded(ref: EntryPointRef) -> bool:
    """Will pytest load this entry point by itself (installed, and autoloading on)?

    pluggy loads the first ``pytest11`` entry point of a name over all distributions.
    """
    if ref.group != "pytest11" or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    from importlib import metadata  # noqa: PLC0415 - pytest imports it anyway

    for dist in metadata.distributions():
        for entry_point in dist.entry_points:
            if entry_point.group == "pytest11" and entry_point.name == ref.name:
                return _squash(entry_point.value) == _squash(ref.value)
    return False


def sibling_modules(ref: EntryPointRef) -> tuple[str, ...]:
    """The modules of the other ``pytest11`` entry points of the distribution that declares
    ``ref`` (pytest autoloads them all, so each run has them all active)."""
    from importlib import metadata  # noqa: PLC0415 - pytest imports it anyway

    for dist in metadata.distributions():
        points = [ep for ep in dist.entry_points if ep.group == "pytest11"]
        if any(ep.name == ref.name and _squash(ep.value) == _squash(ref.value) for ep in points):
            modules = {ep.value.split(":", 1)[0].strip() for ep in points}
            return tuple(sorted(modules - {ref.module}))
    return ()


def owner_of(module: str, own: str, siblings: tuple[str, ...]) -> bool:
    """Does code in ``module`` belong to the entry point whose module is ``own``? Where a
    distribution has several, the one whose module holds it most closely; code in none of
    them (its helpers) belongs to each."""
    holding = [name for name in (own, *siblings) if within(module, name)]
    return not holding or max(holding, key=len) == own


def refused_on_purpose(error: BaseException, package: str) -> bool:
    """Did the plugin's own code raise ``error`` on purpose (a ``raise`` statement of its own,
    or its call of ``pytest.fail``; not a programming error or a failed import): what it was
    asked for alone needs what users give with it (an API key for a switch, a test of its own
    kind for a fixture)?"""
    if isinstance(error, (*PROGRAMMING_ERRORS, ImportError, NotImplementedError)):
        return False
    # the innermost frame of the plugin's own code, and the frame of the raise
    own, innermost = None, error.__traceback__
    while innermost is not None:
        if within(innermost.tb_frame.f_globals.get("__name__"), package):
            own = innermost
        if innermost.tb_next is None:
            break
        innermost = innermost.tb_next
    if own is None or innermost is None:
        return False
    if own is not innermost:  # pytest.fail() called by the plugin: pytest's Failed, on purpose
        raised_in = innermost.tb_frame.f_globals.get("__name__")
        return type(error).__name__ == "Failed" and within(raised_in, "_pytest")
    line = linecache.getline(own.tb_frame.f_code.co_filename, own.tb_lineno)
    return line.strip().startswith("raise")


def references(module_name: str, function: Any) -> bool:
    """Does module ``module_name`` hold ``function`` (as a fixture pytest found there: the
    function itself, or pytest's wrapper of it)?"""
    module = sys.modules.get(module_name)
    for value in vars(module).values() if module is not None else ():
        wrapped = getattr(value, "_get_wrapped_function", None)
        if value is function or getattr(value, "__wrapped__", None) is function:
            return True
        if callable(wrapped) and wrapped() is function:
            return True
    return False


def _squash(value: str) -> str:
    return "".join(value.split())


def scratch_args(directory: str) -> list[str]:
    """pytest's options for a run in ``directory``: its rootdir, and its cache there (not
    ``-p no:cacheprovider``: plugins may use ``config.cache``)."""
    cache = os.path.join(directory, ".pytest_cache")
    return ["-o", f"cache_dir={cache}", "--rootdir", directory]


@contextlib.contextmanager
def scratch_directory() -> Iterator[str]:
    """A fresh empty directory to run in, with an empty ``pytest.ini`` so none above applies."""
    directory = tempfile.mkdtemp(prefix="sandboxverify-pytest-")
    with open(os.path.join(directory, "pytest.ini"), "w", encoding="utf-8") as ini:
        ini.write("[pytest]\n")
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield directory
    finally:
        os.chdir(previous)
        shutil.rmtree(directory, ignore_errors=True)


def fixture_defs(manager: Any) -> list[Any]:
    """Every fixture definition pytest's fixture manager holds (its internals differ by
    version: ``_get_all_fixture_defs()`` since 9.2, ``_arg2fixturedefs`` before)."""
    if manager is None:
        return []
    every = getattr(manager, "_get_all_fixture_defs", None)
    if callable(every):
        return list(every())
    found: list[Any] = []
    pending: list[Any] = [getattr(manager, "_arg2fixturedefs", {})]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
        elif hasattr(value, "argname") and hasattr(value, "func"):
            found.append(value)
    return found


def module_of(plugin: Any) -> str | None:
    """The module a plugin object belongs to: its own name for a module."""
    if isinstance(plugin, type(sys)):
        return plugin.__name__
    if isinstance(plugin, type):
        return plugin.__module__
    return type(plugin).__module__


def within(module: Any, package: str) -> bool:
    return isinstance(module, str) and (module == package or module.startswith(package + "."))
