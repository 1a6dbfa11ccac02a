"""What a Sphinx extension asks of its users' project, seen while it builds: the errors its own
event handlers raise on purpose, Sphinx errors or ones naming its configuration values (``You
must configure bibtex_bibfiles``, ``jsdoc was not found``, a gallery's example directory
without its header file), and the configuration values it adds (``app.add_config_value``), to
name what such an error asks for. A build stopped by one of those needs what each user's
project gives the extension; a build stopped otherwise is a break.

Sphinx is patched for the build only (its ``Sphinx`` class), and only what the extension's
own package calls is recorded.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any


class Asked:
    """What the extension asked of its users, so far."""

    def __init__(self, package: str) -> None:
        self.package = package
        #: the configuration values it added
        self.config_values: list[str] = []
        #: the messages of the Sphinx errors its own handlers raised
        self.refusals: list[str] = []

    def owns(self, module: str) -> bool:
        return module == self.package or module.startswith(f"{self.package}.")

    def explains(self, message: str) -> str | None:
        """Why a build that stopped with ``message`` needs the users' project, if it does: only
        when the extension's own handler refused (a message that merely names one of its
        configuration values may be any break, a TypeError reading that value)."""
        refusals = [refusal for refusal in self.refusals if refusal and refusal in message]
        if not refusals:
            return None
        named = [name for name in self.config_values if any(name in r for r in refusals)]
        if named:
            return f"it needs its users' configuration ({', '.join(named)})"
        return "it needs what its users' project gives it (configuration, files or programs)"


@contextlib.contextmanager
def asked_of_users(package: str) -> Iterator[Asked]:
    """Record, while the build runs, what code of ``package`` asks of its users' project."""
    asked = Asked(package)
    application = sys.modules.get("sphinx.application")
    errors = sys.modules.get("sphinx.errors")
    sphinx = getattr(application, "Sphinx", None)
    if sphinx is None or errors is None:
        yield asked
        return
    add_config_value, connect = sphinx.add_config_value, sphinx.connect

    def recording_config_value(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        if asked.owns(str(sys._getframe(1).f_globals.get("__name__", ""))):
            asked.config_values.append(name)
        return add_config_value(self, name, *args, **kwargs)

    def recording_connect(self: Any, event: str, callback: Any, *args: Any, **kwargs: Any) -> Any:
        if asked.owns(str(sys._getframe(1).f_globals.get("__name__", ""))) and callable(callback):
            callback = _watched(callback, asked, errors.SphinxError)
        return connect(self, event, callback, *args, **kwargs)

    sphinx.add_config_value, sphinx.connect = recording_config_value, recording_connect
    try:
        yield asked
    finally:
        sphinx.add_config_value, sphinx.connect = add_config_value, connect


def _watched(
    callback: Callable[..., Any], asked: Asked, refusal: type[BaseException]
) -> Callable[..., Any]:
    """``callback``, recording what the extension's own code raises in it on purpose: a Sphinx
    error, or any error whose message names one of its configuration values (sphinx-toolbox's
    ``The 'github_username' option is required.``, a ValueError)."""

    @functools.wraps(callback)
    def handler(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except Exception as exc:
            message = str(exc).strip()
            asks = isinstance(exc, refusal) or any(n in message for n in asked.config_values)
            if asks and asked.owns(_raised_in(exc)):
                asked.refusals.append(message)
            raise

    return handler


def _raised_in(exc: BaseException) -> str:
    """The module whose code raised ``exc`` (its traceback's last frame)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", "")) if tb is not None else ""
