"""Extensions users name in their configuration, with no entry point: Sphinx's ``extensions =
[...]`` in ``conf.py``, Markdown's ``extensions=[...]``. A distribution that declares no entry
point such an application loads, but requires it (or is named for it), and ships a module
defining the function the application calls (``setup(app)``), is an extension of it: each such
module is loaded in the application as its users load it, instead of being verified as a
library (or by its other entry points) only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from packaging.utils import canonicalize_name

from sandboxverify.artifacts import Artifact
from sandboxverify.runtime import EntryPointRef
from sandboxverify.runtime.hosts import NAMED_MODULES, NamedModules
from sandboxverify.stages._extras import metadata_text, parse_extras
from sandboxverify.stages._hosts import PlannedPlugin
from sandboxverify.stages._test_support import is_test_module
from sandboxverify.stages._wheel_imports import modules_defining

#: at most this many modules of one distribution are loaded; the others are named in a note
LOADED_AT_MOST = 8


def named_extensions(
    wheel: Artifact,
    judged_by: Collection[str] = (),
    *,
    only: str | None = None,
    python: Sequence[int] | None = None,
) -> tuple[list[PlannedPlugin], list[str]]:
    """The wheel's modules that are extensions of an application it requires (on an
    interpreter of version ``python``: its markers evaluated), each planned with that
    application's host (public modules first, packages before submodules, then by name, at
    most :data:`LOADED_AT_MOST`), and notes on those left out. An application whose host
    already judges an entry point of the wheel (``judged_by``) loads those instead. ``only``:
    the host ``--host`` names, whose modules are looked for whatever the wheel requires."""
    planned: list[PlannedPlugin] = []
    words = canonicalize_name(str(wheel.name)).split("-")
    declared = _Declared(wheel, python)
    for group, (host, named) in NAMED_MODULES.items():
        if host.name in judged_by or only not in (None, host.name):
            continue
        found = _found_by(declared, named, host.name, words, only=only is not None)
        if found is None:
            continue
        why, required, only_named_for = found
        application = canonicalize_name(named.application)
        modules = [
            module
            for module in modules_defining(wheel.path, named.function, named.arguments)
            if not is_test_module(module)
            and module.rsplit(".", 1)[-1] not in _NOT_EXTENSIONS
            and (not only_named_for or _named_for(module, application))
            # a private module is the package's own (bokeh's sphinxext._internal, for its own
            # docs): users name its public ones, unless --host asks for every one
            and (only is not None or not _private(module))
        ]
        for module in sorted(modules, key=_order):
            reason = (
                f"{wheel.name} declares no entry point {named.application} loads, {why} and "
                f"defines {named.function}() in {module}: an extension its users name in "
                f"{named.named_in}, loaded that way"
            )
            ref = EntryPointRef(module, group, module)
            planned.append(
                PlannedPlugin(
                    ref,
                    host.name,
                    reason,
                    application=named.application,
                    finds_application=not required,
                    named=True,
                )
            )
    notes = [
        f"{len(planned) - LOADED_AT_MOST} more module(s) defining an extension's function were "
        f"not loaded (only {LOADED_AT_MOST} are): "
        + ", ".join(plugin.ref.value for plugin in planned[LOADED_AT_MOST:])
    ]
    return planned[:LOADED_AT_MOST], notes if len(planned) > LOADED_AT_MOST else []


def _found_by(
    declared: _Declared, named: NamedModules, host: str, words: list[str], *, only: bool
) -> tuple[str, bool, bool] | None:
    """Why the wheel's modules defining the application's function are its extensions, in the
    reason's words; whether the wheel requires the application; whether only the modules named
    for it are. ``None``: none is. The first rule that holds decides."""
    application = canonicalize_name(named.application)
    if declared.requires(application):
        return f"requires {named.application}", True, False
    # an extra named for it (returns[compatible-mypy], line_profiler[ipython])
    extra = declared.extra_for(application)
    if extra:
        return f"requires {named.application} through its extra {extra!r}", False, False
    # named for it (sphinx-sitemap, sphinxcontrib-mermaid) though it leaves the application
    # to a requirement or to its users' projects: found, as for any group
    if len(words) > 1 and words[0].startswith(application):
        return f"is named for {named.application}", False, False
    if only:
        return f"is checked with --host {host}", False, False
    # a function only that application calls (memory_profiler's load_ipython_extension)
    if named.distinctive:
        return f"defines a function only {named.application} calls", False, False
    # else only a module named for it (pydantic.mypy, matplotlib.sphinxext.*)
    if any(_named_for(path, application) for path in declared.wheel.files):
        return f"names the module for {named.application}", False, True
    return None


def _named_for(name: str, application: str) -> bool:
    """Does a part of a module's dotted name or a wheel's file path begin with the
    application's name (``pydantic.mypy``, ``matplotlib/sphinxext/plot_directive.py``)? A
    ``.dist-info`` directory's files are the distribution's, no module."""
    parts = name.replace("/", ".").split(".")
    if any(part.endswith("-info") for part in parts):
        return False
    return any(part.lower().startswith(application.replace("-", "_")) for part in parts)


def _order(module: str) -> tuple[bool, int, str]:
    """Public modules first (``sphinx_toolbox._css`` is an implementation detail), then
    packages before their submodules, then by name."""
    return (_private(module), module.count("."), module)


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


#: modules that define such a function for another purpose: a Sphinx project's own
#: ``conf.py``, a ``setup.py`` shipped by mistake
_NOT_EXTENSIONS = frozenset({"conf", "setup"})


class _Declared:
    """What the wheel requires, read from its METADATA only where the names alone cannot tell
    (parsing it costs a check that needs none of it)."""

    def __init__(self, wheel: Artifact, python: Sequence[int] | None) -> None:
        self.wheel = wheel
        self.python = python
        self._text: str | None = None

    def requires(self, application: str) -> bool:
        """Required with no extra, its marker true on ``python`` (``sphinx; python_version <
        "3.8"`` is no requirement on 3.11)."""
        if application not in self.wheel.dependencies:
            return False
        if self.python is None:
            return True
        return application in parse_extras(self.text, str(self.wheel.name), self.python).base

    def extra_for(self, application: str) -> str | None:
        """The extra named for ``application`` (a word of its name: ``compatible-mypy``) that
        requires it: how its users install the integration."""
        headers = self.text.split("\n\n", 1)[0]  # not the description after them
        if not any(
            line.startswith("Requires-Dist:") and application in line.lower()
            for line in headers.splitlines()
        ):
            return None
        python = self.python or (3, 12)
        extras = parse_extras(self.text, str(self.wheel.name), python)
        for extra, names in extras.requirements.items():
            if application in names and application in extra.split("-"):
                return extra
        return None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = metadata_text(self.wheel.path)
        return self._text
