"""One option of a command, as the options table declares it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from sandboxverify._frozen import frozen
from sandboxverify.options._kinds import Flag, Kind, Toggle
from sandboxverify.options._trust import ProjectRule

CommandName = Literal["check", "run", "record", "merge", "matrix", "survey"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_INSTALL_TIMEOUT = 900.0
DEFAULT_MAX_STEPS = 10


@frozen
class Option:
    """One option: ``--name`` (``--name/--no-name`` for a toggle), and ``short`` if it has one."""

    name: str
    kind: Kind
    #: what it does; a mapping when a command words it its own way
    help: str | Mapping[CommandName, str]
    commands: tuple[CommandName, ...]
    #: the keyword the command (and ``CheckOptions``) receives it as
    dest: str = ""
    short: str | None = None
    multiple: bool = False
    #: what applies when nobody gives it
    default: Any = None
    #: how ``--help`` and the README say the default, when the value alone would not
    default_text: str | None = None
    metavar: str | None = None
    #: the commands it is required by
    required: tuple[CommandName, ...] = ()
    #: may the checked project's own ``[tool.sandboxverify]`` set it (``check``'s options):
    #: ``True``; ``False`` when it only widens what package code reaches or where sandboxverify
    #: writes; or a rule saying which values it may not ask for (``_trust``)
    project: bool | ProjectRule = True

    def __post_init__(self) -> None:
        if not self.dest:
            object.__setattr__(self, "dest", self.name.replace("-", "_"))

    @property
    def flag(self) -> str:
        """``--name``: how messages name it."""
        return f"--{self.name}"

    @property
    def config_key(self) -> str:
        """Its key in ``[tool.sandboxverify]`` (``check``'s options; ``-`` or ``_`` alike)."""
        return self.name

    def help_for(self, command: CommandName) -> str:
        """The help ``command`` shows, with the default."""
        text = self.help if isinstance(self.help, str) else self.help[command]
        shown = self.shown_default
        return f"{text} [default: {shown}]" if shown else text

    @property
    def shown_default(self) -> str | None:
        if self.default_text is not None:
            return self.default_text
        if isinstance(self.kind, Toggle) and self.default is not None:
            return "on" if self.default else "off"
        if self.default in (None, False, (), 0) or isinstance(self.kind, Flag):
            return None
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)
