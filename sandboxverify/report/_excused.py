"""Modules the ``imports`` stage excused, and the extras it installed to verify modules:
``runs[].imports.excused[]`` and ``runs[].imports.extras[]``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from sandboxverify._frozen import frozen

ExcuseReason = Literal[
    "extra",
    "platform",
    "test",
    "application",
    "integration",
    "unbuilt",
    "release",
    "python",
    "configured",
    "data",
    "refuses",
]
EXCUSE_REASONS: tuple[ExcuseReason, ...] = get_args(ExcuseReason)


@frozen
class ExcusedModule:
    """A module that failed in the plain install and is not a failure: it imports with an
    extra installed (``extra``), it is written for another platform (``platform``), or it is
    test code that needs only test packages (``test``, a warning about the wheel's contents), or
    only a plugin its application leaves out here by design needs it (``application``: the
    probe said why, e.g. a database driver or an instrumented library the user chooses), or it
    is named for the libraries it lacks, which no extra declares (``integration``), or it could
    not be verified: the extra it needs requires a distribution published only as an sdist,
    which users' installers build and sandboxverify never does (``unbuilt``), or it is written
    for an older release of a distribution the wheel requires and imports with it (``release``:
    ``hooks3`` of a plugin for tox 3 and 4), or it is code for other Pythons: the package
    imports it only under a version test false here, or it refused this Python from its own
    test (``python``: robotframework's ``typealiasresolver``, for Python 3.12), or it imports
    only inside its configured application, as that imports it (``configured``: a Django
    app's models, once Django is set up with the app installed), or it is a file the package
    ships as data, in a directory without ``__init__.py`` that nothing of the package imports
    (``data``: alembic's ``env.py`` templates), or it is written to refuse import: it raises
    at its own top level, lacking nothing, and nothing of the package imports it (``refuses``:
    distributed's ``bokeh``, which says it has moved to ``distributed.dashboard``)."""

    module: str
    reason: ExcuseReason
    #: why, in words
    detail: str
    #: the extra it imports with (reason ``extra``)
    extra: str | None = None
    #: the top-level modules it lacks, which nothing the wheel requires brings (reason
    #: ``integration``): an application that depends on the wheel may (``_dependents``)
    lacks: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "module": self.module,
            "reason": self.reason,
            "detail": self.detail,
        }
        if self.extra is not None:
            document["extra"] = self.extra
        if self.lacks:
            document["lacks"] = list(self.lacks)
        return document

    @classmethod
    def from_json(cls, document: object) -> ExcusedModule:
        item = document if isinstance(document, Mapping) else {}
        reason = item.get("reason")
        return cls(
            module=str(item.get("module") or ""),
            reason=next((r for r in EXCUSE_REASONS if r == reason), "extra"),
            detail=str(item.get("detail") or ""),
            extra=_optional_str(item.get("extra")),
            lacks=tuple(str(name) for name in lacks)
            if isinstance(lacks := item.get("lacks"), list)
            else (),
        )


@frozen
class ExtraRecord:
    """One extra installed in a sandbox of its own to verify the modules that need it."""

    #: the extra's name, normalised
    name: str
    #: what was installed: ``dist[extra]`` (the wheel under test, with the extra)
    requirement: str
    #: the modules that need it (what they are missing is what it declares)
    modules: tuple[str, ...] = ()
    #: modules missing a package no extra names, tried with it too
    tried: tuple[str, ...] = ()
    installed: bool = False
    #: the modules that imported with it
    imported: tuple[str, ...] = ()
    #: why it did not install, in the installer's words
    error: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "requirement": self.requirement,
            "modules": list(self.modules),
            "tried": list(self.tried),
            "installed": self.installed,
            "imported": list(self.imported),
            "error": self.error,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, document: object) -> ExtraRecord:
        item = document if isinstance(document, Mapping) else {}
        return cls(
            name=str(item.get("name") or ""),
            requirement=str(item.get("requirement") or ""),
            modules=_strings(item.get("modules")),
            tried=_strings(item.get("tried")),
            installed=item.get("installed") is True,
            imported=_strings(item.get("imported")),
            error=_optional_str(item.get("error")),
            seconds=_number(item.get("seconds")),
        )


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
