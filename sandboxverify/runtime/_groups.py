"""Which application loads the plugins of an entry-point group, and so which host judges them.

Shared by both sides: the host side chooses a host per plugin (``--host auto``) and words its
hints from this table; the runtime's pluggy host finds an application's hookspecs here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Final


class KnownGroup:
    """Who loads a group's plugins. A plain class, not a dataclass: every load by the
    entrypoints host imports this module, and ``dataclasses`` costs more than the table."""

    def __init__(self, host: str, application: str | None, hookspecs: str | None = None) -> None:
        #: the host that judges a plugin of this group
        self.host: Final = host
        #: the distribution that provides the application loading the group (``--with`` hint)
        self.application: Final = application
        #: ``pluggy`` host: the module holding the application's hookspecs
        self.hookspecs: Final = hookspecs


KNOWN_GROUPS: dict[str, KnownGroup] = {
    "sandboxverify.plugins": KnownGroup("native", None),
    "llm": KnownGroup("llm", "llm"),
    "pytest11": KnownGroup("pytest", "pytest"),
    "flake8.extension": KnownGroup("flake8", "flake8"),
    "flake8.report": KnownGroup("flake8", "flake8"),
    "sphinx.html_themes": KnownGroup("sphinx", "sphinx"),
    "sphinx.builders": KnownGroup("sphinx", "sphinx"),
    "mkdocs.plugins": KnownGroup("mkdocs", "mkdocs"),
    "mkdocs.themes": KnownGroup("mkdocs", "mkdocs"),
    # applications built on pluggy: their hookspecs validate a plugin's hook implementations
    "datasette": KnownGroup("pluggy", "datasette", "datasette.hookspecs"),
    "sqlite_utils": KnownGroup("pluggy", "sqlite-utils", "sqlite_utils.hookspecs"),
    "tox": KnownGroup("pluggy", "tox", "tox.plugin.spec"),
    "hatch": KnownGroup("pluggy", "hatchling", "hatchling.plugin.specs"),
    "devpi_server": KnownGroup("pluggy", "devpi-server", "devpi_server.hookspecs"),
    "devpi_client": KnownGroup("pluggy", "devpi-client", "devpi.hookspecs"),
}

#: groups no application loads as plugins: commands, not plugins
SCRIPT_GROUPS = frozenset({"console_scripts", "gui_scripts"})

#: a distribution depending on one of these ships MCP servers as console scripts
MCP_SDKS = frozenset({"mcp", "fastmcp"})

#: groups whose application loads a module rather than calling an object: an entry point naming
#: a bare module is complete there, whichever host judges it
MODULE_GROUPS = frozenset(
    {"pytest11", "llm", "sphinx.builders", "datasette", "sqlite_utils", "tox", "devpi_server"}
)


def near_miss(group: str) -> str | None:
    """The known group ``group`` was probably meant to be (``pytest_11`` -> ``pytest11``)."""
    import difflib  # noqa: PLC0415 - the host side asks, the runtime's hosts never do

    if group in KNOWN_GROUPS:
        return None
    squashed = {_squash(known): known for known in KNOWN_GROUPS}
    if _squash(group) in squashed:
        return squashed[_squash(group)]
    close = difflib.get_close_matches(group, list(KNOWN_GROUPS), n=1, cutoff=0.85)
    return close[0] if close else None


def _squash(group: str) -> str:
    return "".join(c for c in group.lower() if c.isalnum())
