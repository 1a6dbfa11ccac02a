"""The ``pytest`` host: one ``pytest11`` plugin, loaded by a real ``pytest --collect-only``.

pytest loads a plugin of an installed distribution by itself: it imports every ``pytest11`` entry
point at start-up and registers it under the entry point's name. So this host runs

    pytest --collect-only -q -p no:cacheprovider --rootdir TMP

in-process (``pytest.main``) in a fresh, empty temporary directory holding an empty
``pytest.ini`` (so no configuration of the user's tree applies, and nothing is written there),
with the plugin active: autoloaded when its entry point is installed and autoloading is on,
otherwise named with ``-p MODULE``. pytest's plugin manager then does what it does for every
user of the plugin: imports it (with assertion rewriting), registers it (pluggy checks every hook
implementation's arguments against pytest's hookspecs), calls its ``pytest_addoption`` and
``pytest_configure``, collects (nothing) and finally refuses unknown ``pytest_*`` hooks
(``check_pending``).

Outcomes, as :class:`PluginLoadError` stages:

- ``application``: pytest is not installed (:class:`ApplicationMissing`), or the run ended with
  an exit status other than 0 (ok) and 5 (no tests collected), or without loading the plugin;
  the message ends with the tail of pytest's output;
- ``import``: the plugin does not import; the error is what a plain import raises
  (``ModuleNotFoundError``...), not pytest's rewording of it;
- ``validate``: pluggy refused a hook implementation (an argument the hookspec lacks), or the
  plugin implements a ``pytest_*`` hook pytest does not have (with a did-you-mean).

What the plugin registers, each a registration ``{"name", "kind", "description",
"parameters": None}``, attributed to the plugin when the code doing it lives in the plugin
module's top-level package:

- ``fixture``: fixtures whose function is defined in the package (description: its docstring);
- ``option``: command-line options its ``pytest_addoption`` adds (``--randomly-seed``;
  description: the help);
- ``ini``: ini keys it declares with ``parser.addini`` (description: the help);
- ``marker``: markers it declares with ``config.addinivalue_line("markers", "name(args): doc")``
  (name ``name``, description ``doc``);
- ``hook``: the hooks implemented by the plugin and by plugin objects of the package it registers.

Options, ini keys and markers are attributed by who calls pytest's ``OptionGroup.addoption``
(``Parser.addoption`` goes through it), ``OptionGroup._addoption``, ``Parser.addini`` and
``Config.addinivalue_line``, wrapped for the run: walking up the calling frames, the first frame
in the plugin's package attributes it to the plugin, the first frame in pluggy (the hook call the
code runs in, when it is some other plugin's) does not.

After that run, pytest runs a generated test module with the plugin active (``_pytest_exercise``)
and then once more with each option of the plugin's that takes no value turned on alone
(``_pytest_switches``): code a plugin runs only when its own switch asks for it is reached too.

pytest's output (and the plugin's, while pytest runs) is captured, then written to standard
output after the run.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    resolve,
)
from sandboxverify.runtime.hosts._exercise import Deadline, captured
from sandboxverify.runtime.hosts._pluggy import spec_names, summary, unknown_hook_error
from sandboxverify.runtime.hosts._pytest_exercise import Generated, run_generated
from sandboxverify.runtime.hosts._pytest_run import (
    autoloaded,
    fixture_defs,
    module_of,
    one_line,
    owner_of,
    recording,
    references,
    scratch_args,
    scratch_directory,
    sibling_modules,
    within,
)
from sandboxverify.runtime.hosts._pytest_switches import run_switches
from sandboxverify.runtime.hosts._registry import KNOWN_GROUPS

#: what pytest runs with first: collect only, quietly
PYTEST_ARGS = ("--collect-only", "-q")
#: exit statuses of a run that loaded its plugins: OK, NO_TESTS_COLLECTED
OK_EXITS = frozenset({0, 5})
#: lines of pytest's output a failure quotes
TAIL_LINES = 40
#: the order registrations are reported in
KINDS = ("fixture", "option", "ini", "marker", "hook")


class PytestRunFailed(Exception):
    """pytest refused the plugin: an exit status other than 0 or 5, or the plugin not loaded."""


def load_pytest(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Run ``pytest --collect-only`` with the plugin, then the generated tests, and report what
    it registered and how the tests exercised it.

    Raises :class:`PluginLoadError` (``application``, ``import``, ``validate``, ``exercise``:
    see the module).
    """
    del registry  # nothing callable to register
    deadline = Deadline(context.timeout)
    known = KNOWN_GROUPS.get(ref.group)
    application = known[1].application if known and known[0].name == "pytest" else None
    pytest = import_application("pytest", application or "pytest", ref.group)
    run = _Run(package=ref.module.split(".", 1)[0], module=ref.module, ref=ref)
    run.siblings = sibling_modules(ref)
    with scratch_directory() as directory:
        if autoloaded(ref):  # asked where pytest will ask: in the directory it runs in
            run.expected = ref.name
        elif ref.attribute is None:
            run.select = ["-p", ref.module]
            run.expected = ref.module
        else:  # an object: pytest's -p names modules only, so hand pytest the object itself
            run.provided = resolve(ref)
        args = [*PYTEST_ARGS, *scratch_args(directory), *run.select, directory]
        plugins: list[Any] = [_Collector(run), *run.objects()]
        with recording(pytest, run), captured() as output:
            try:
                run.status = int(pytest.main(args, plugins=plugins))
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # older pytest lets a plugin's errors out
                run.escaped = exc
        run.output = output.text
    _judge(pytest, ref, run)
    fixtures = [name for kind, name in run.found if kind == "fixture"]
    generated = run_generated(pytest, run, fixtures, deadline)
    generated.switches = run_switches(pytest, run, run.switches, deadline)
    tools = run.registrations(generated)
    if not tools and run.siblings:  # a module the distribution's other plugins use
        skipped = (
            "pytest loads it, and it registers nothing of its own: the distribution's other "
            f"pytest11 entry points ({', '.join(run.siblings)}) register the rest"
        )
        return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=skipped)
    return LoadedPlugin(ref=ref, tools=tools, handlers={})


# -- what one run saw -------------------------------------------------------------------------


@dataclass
class _Run:
    #: the plugin module's top-level package: what it owns
    package: str
    #: the name pytest registers the plugin under (entry point name, or module with ``-p``)
    expected: str | None = None
    #: the plugin object handed to pytest, when the entry point names one
    provided: Any = None
    #: what selects the plugin on pytest's command line, when pytest does not autoload it
    select: list[str] = field(default_factory=list)
    collector: Any = None
    pm: Any = None
    loaded: bool = False
    found: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: ``(plugin, name, exception)`` for every registration pytest's plugin manager refused
    refused: list[tuple[Any, Any, BaseException]] = field(default_factory=list)
    internal_error: BaseException | None = None
    #: how the run ended: pytest's exit status, or what escaped ``pytest.main``
    status: int | None = None
    escaped: BaseException | None = None
    #: pytest's output
    output: str = ""
    #: ``(plugin, hook name, function)``: hook implementations of hooks without a spec
    pending: list[tuple[Any, str, Any]] = field(default_factory=list)
    #: the plugin's options that take no value
    switches: list[str] = field(default_factory=list)
    #: the entry point's module, and those of the distribution's other ``pytest11`` entry
    #: points (loaded in every run too): what is in theirs is not this plugin's
    module: str = ""
    siblings: tuple[str, ...] = ()
    ref: EntryPointRef | None = None

    def mine(self, module: Any) -> bool:
        """Is code in ``module`` this plugin's: in its package, not another entry point's?"""
        if not within(module, self.package):
            return False
        return not self.siblings or owner_of(module, self.module, self.siblings)

    def owns(self, plugin: Any, name: Any = None) -> bool:
        if plugin is None or plugin is self.collector:
            return False
        if plugin is self.provided or (name is not None and name == self.expected):
            return True
        return self.mine(module_of(plugin))

    def holds(self, fixture: Any) -> bool:
        """Where the distribution has several entry points, a fixture of a module none of them
        names (a helper) is the plugin's whose module holds it, as pytest found it there."""
        module = getattr(fixture, "__module__", None)
        if not self.siblings or any(within(module, m) for m in (self.module, *self.siblings)):
            return True
        return references(self.module, fixture)

    def objects(self) -> list[Any]:
        """The plugin objects handed to ``pytest.main``."""
        return [] if self.provided is None else [self.provided]

    def owns_impl(self, impl: Any) -> bool:
        return self.owns(impl.plugin, impl.plugin_name)

    def add(self, kind: str, name: str, description: Any) -> None:
        """Record a registration (the first of a kind and name)."""
        if (kind, name) not in self.found:
            self.found[(kind, name)] = {
                "name": name,
                "kind": kind,
                "description": one_line(description),
                "parameters": None,
            }

    def registrations(self, generated: Generated | None = None) -> list[dict[str, Any]]:
        """What the plugin registered, in ``KINDS`` order; with the generated run, each fixture
        and hook says whether it was exercised (``exercise`` and ``exercise_note``)."""
        ordered: list[dict[str, Any]] = []
        for kind in KINDS:
            of_kind = [reg for (k, _), reg in self.found.items() if k == kind]
            if kind in ("fixture", "hook"):  # found in no meaningful order
                of_kind.sort(key=lambda reg: str(reg["name"]))
            ordered += of_kind
        if generated is None:
            return ordered
        return [generated.describe(registration) for registration in ordered]

    def from_plugin(self) -> bool:
        """Is the code calling the wrapped pytest method (two frames up) the plugin's?"""
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            module = frame.f_globals.get("__name__")
            module = module if isinstance(module, str) else ""
            if within(module, "pluggy") or module.startswith(__name__):
                return False  # the hook call it runs in, or this host's own code (_pytest_run)
            if within(module, self.package):
                return self.mine(module)
            frame = frame.f_back
        return False

    def finish(self, session: Any) -> None:
        """At the end of the session: the plugin's fixtures and hooks."""
        for fixturedef in fixture_defs(getattr(session, "_fixturemanager", None)):
            function = getattr(fixturedef, "func", None)
            if self.mine(getattr(function, "__module__", None)) and self.holds(function):
                self.add("fixture", str(fixturedef.argname), summary(function))
        pm = session.config.pluginmanager
        for name, caller in sorted(vars(pm.hook).items()):
            if name.startswith("_"):
                continue
            for impl in caller.get_hookimpls():
                if self.owns(impl.plugin, pm.get_name(impl.plugin)):
                    self.add("hook", name, summary(impl.function))

    def find_pending(self) -> None:
        """Hook implementations of the plugin's that pytest has no hook for."""
        if self.pm is None:
            return
        for name, caller in sorted(vars(self.pm.hook).items()):
            if name.startswith("_") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                optional = getattr(impl, "optionalhook", False)
                if not optional and self.owns(impl.plugin, self.pm.get_name(impl.plugin)):
                    self.pending.append((impl.plugin, name, impl.function))


class _Collector:
    """The plugin this host hands pytest: watches the session the plugin under test runs in."""

    def __init__(self, run: _Run) -> None:
        self._run = run
        run.collector = self

    def pytest_configure(self, config: Any) -> None:
        self._run.pm = config.pluginmanager

    def pytest_internalerror(self, excinfo: Any) -> None:
        self._run.internal_error = excinfo.value
        self._run.find_pending()

    def pytest_sessionfinish(self, session: Any) -> None:
        self._run.finish(session)


# -- judging the run --------------------------------------------------------------------------


def _judge(pytest: Any, ref: EntryPointRef, run: _Run) -> None:
    status, escaped, output = run.status, run.escaped, run.output
    validation = _validation_error(run, escaped)
    if validation is not None:
        raise PluginLoadError("validate", validation)
    if not run.loaded:
        _reimport(ref)  # raises what a plain import of the plugin raises, if it does not import
    if escaped is not None or status not in OK_EXITS:
        cause = escaped or run.internal_error or _first_refusal(run)
        if status is None:
            what = f"raised {type(escaped).__name__}: {escaped}"
        else:
            what = f"exited with status {_status_name(pytest, status)}"
            if run.internal_error is not None:
                what += f", {type(run.internal_error).__name__}: {run.internal_error}"
        failure = PytestRunFailed(f"pytest --collect-only {what}{_tail(output)}")
        failure.__cause__ = cause
        raise PluginLoadError("application", failure)
    if not run.loaded:
        said = _said_of_plugin(output, (ref.name, run.expected or ref.value))
        raise PluginLoadError(
            "application",
            PytestRunFailed(
                f"pytest refused the plugin {run.expected or ref.value!r}: {said}{_tail(output)}"
                if said
                else "pytest --collect-only ran without loading the plugin "
                f"{run.expected or ref.value!r}: is it blocked (-p no:NAME, "
                f"--disable-plugin-autoload in PYTEST_ADDOPTS)?{_tail(output)}"
            ),
        )


def _validation_error(run: _Run, escaped: BaseException | None) -> BaseException | None:
    """The plugin's hook implementations pluggy refused, registering it or after collection."""
    candidates: list[tuple[Any, Any, BaseException]] = list(run.refused)
    if run.internal_error is not None:
        candidates.append((getattr(run.internal_error, "plugin", None), None, run.internal_error))
    if escaped is not None:
        candidates.append((getattr(escaped, "plugin", None), None, escaped))
    for plugin, name, error in candidates:
        found = _pluggy_validation(error)
        if found is None or not run.owns(getattr(found, "plugin", plugin), name):
            continue
        if error is run.internal_error and run.pending:  # check_pending: an unknown hook
            pending_plugin, hook, function = run.pending[0]
            better = unknown_hook_error(
                pending_plugin,
                hook,
                function,
                "pytest",
                spec_names(run.pm),
                consequence="pytest refuses the plugin",
                listed=False,
            )
            better.__cause__ = found
            return better
        return found
    return None


def _pluggy_validation(error: BaseException) -> BaseException | None:
    """The ``PluginValidationError`` in ``error``'s chain (pytest 9.2 wraps load failures)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        if type(current).__name__ == "PluginValidationError":
            return current
        seen.append(current)
        current = current.__cause__ or current.__context__
    return None


def _first_refusal(run: _Run) -> BaseException | None:
    owned = [error for plugin, name, error in run.refused if run.owns(plugin, name)]
    return owned[0] if owned else None


def _reimport(ref: EntryPointRef) -> None:
    """Import the plugin the plain way; a failure is the plugin's ``import`` error."""
    try:
        resolve(ref)
    except PluginLoadError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # pytest.skip() at import: an OutcomeException
        raise PluginLoadError("import", exc) from exc


def _status_name(pytest: Any, status: int | None) -> str:
    try:
        return f"{status} ({pytest.ExitCode(status).name})"
    except ValueError:
        return str(status)


def _said_of_plugin(output: str, names: tuple[str, ...]) -> str | None:
    """What pytest's own output says of the plugin, by name: its warning when it refuses one
    (``pytest-catchlog plugin has been merged into the core, please remove it``)."""
    wanted = {name.split(":")[0].split(".")[0].lower().replace("_", "-") for name in names if name}
    for line in output.splitlines():
        text = line.strip()
        lowered = text.lower().replace("_", "-")
        if "warning" in lowered and any(name and name in lowered for name in wanted):
            said = _WARNING.search(text)  # without the file and line it was raised at
            return (said.group(0) if said else text)[:400]
    return None


_WARNING = re.compile(r"\w*Warning: .*")


def _tail(output: str) -> str:
    lines = [line for line in output.rstrip().splitlines() if line.strip()]
    if not lines:
        return ""
    return "; pytest said:\n" + "\n".join(lines[-TAIL_LINES:])
