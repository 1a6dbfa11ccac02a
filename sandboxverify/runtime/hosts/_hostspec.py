"""What declares a host: its groups, the wording of its failures, and the host itself. The
registry (``_registry``) holds one of each per host.

Plain classes, not dataclasses: importing ``dataclasses`` would cost each sandbox process more
than the whole registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Final


class Wording:
    """How one host's failures explain themselves: what a plugin is there and how it registers.
    ``{group}`` in ``declare_hint`` is the group looked in."""

    def __init__(
        self,
        *,
        empty: str,
        empty_hint: str,
        setup: str,
        validate_hint: str,
        declare_hint: str,
        register_hint: str = "register it in the plugin's setup(api), or fix --expect-tools",
        exercise_hint: str = "the application broke while it used the plugin: fix what the "
        "traceback in details points at",
    ) -> None:
        self.empty: Final = empty
        self.empty_hint: Final = empty_hint
        self.setup: Final = setup
        self.validate_hint: Final = validate_hint
        self.declare_hint: Final = declare_hint
        self.register_hint: Final = register_hint
        #: what to do when the application, run with the plugin, broke using it
        self.exercise_hint: Final = exercise_hint


class Group:
    """An entry-point group an application loads."""

    def __init__(
        self,
        name: str,
        *,
        application: str | None = None,
        hookspecs: str | None = None,
        more_hookspecs: Iterable[str] = (),
        names_module: bool = False,
        names_file: bool = False,
    ) -> None:
        self.name: Final = name
        #: the distribution whose application loads the group (``None``: sandboxverify's own)
        self.application: Final = application
        #: a pluggy application's hookspecs module: its plugins' hooks are validated against it
        self.hookspecs: Final = hookspecs
        #: hookspecs modules of the same pluggy project that other distributions add, used
        #: when installed (hatch's command line adds its plugin types to hatchling's)
        self.more_hookspecs: Final = tuple(more_hookspecs)
        #: the application loads a module, so an entry point naming a bare module is complete
        self.names_module: Final = names_module
        #: the value names a file inside a package (``package:napari.yaml``): the application
        #: finds the package and reads the file, it never imports the module
        self.names_file: Final = names_file


class NamedModules:
    """Modules an application loads because its users name them in their configuration, with
    no entry point (Sphinx's ``extensions = [...]`` in ``conf.py``): a module of a distribution
    that requires ``application`` and defines ``function`` at its top level (Sphinx calls
    ``setup(app)``) is one. ``group`` is what reports call them, never an entry-point group."""

    def __init__(
        self,
        group: str,
        *,
        application: str,
        function: str,
        arguments: int,
        named_in: str,
        distinctive: bool = False,
    ) -> None:
        self.group: Final = group
        self.application: Final = application
        self.function: Final = function
        #: how many positional arguments the application passes it
        self.arguments: Final = arguments
        #: where users name the module (``extensions = [...]`` in conf.py)
        self.named_in: Final = named_in
        #: no module defines ``function`` for another application (``load_ipython_extension``,
        #: unlike ``setup``): one that does is an extension though nothing declares it
        self.distinctive: Final = distinctive


class Host:
    """Who judges the plugins of some groups, by loading them as their application does."""

    def __init__(
        self,
        name: str,
        *,
        loader: str,
        groups: Iterable[Group] = (),
        default_group: str | None = None,
        drives_sessions: bool = False,
        loading: str,
        kinds: Iterable[str],
        wording: Wording,
        named: NamedModules | None = None,
    ) -> None:
        self.name: Final = name
        #: ``module:function`` of the runtime that loads one plugin (imported only for a load)
        self.loader: Final = loader
        #: the groups ``--host auto`` gives this host
        self.groups: Final = tuple(groups)
        #: the group a named ``--host`` looks in when no ``--group`` is given and it owns none
        self.default_group: Final = default_group
        #: a smoke run can drive a model through its plugins' tools
        self.drives_sessions: Final = drives_sessions
        #: what loading a plugin means, in a sentence (help and README)
        self.loading: Final = loading
        #: the kinds of registration it reports
        self.kinds: Final = tuple(kinds)
        self.wording: Final = wording
        #: the modules its application loads by the name users give them, if any
        self.named: Final = named

    @property
    def own_groups(self) -> tuple[str, ...]:
        """The groups a named ``--host`` looks in when no ``--group`` is given."""
        if self.groups:
            return tuple(group.name for group in self.groups)
        return (self.default_group,) if self.default_group else ()
