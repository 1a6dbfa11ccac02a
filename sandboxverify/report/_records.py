"""What stages ``imports``, ``scripts`` and ``smoke`` found, as report v1 holds it:
``runs[].imports``, ``runs[].scripts[]`` and ``runs[].smoke``.

Each record writes exactly the JSON of the fixed contract (``to_json``) and reads it back
(``from_json``, for ``merge``): leniently, as :mod:`._load` reads the rest of a report, so a
field an older or newer sandboxverify did not write takes its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from sandboxverify._frozen import frozen
from sandboxverify.report._excused import ExcusedModule, ExtraRecord

#: ``usage``: ``--help`` is no option of the script, which ran and answered with its usage (or
#: said it has no such option) and a non-zero exit status, no traceback, no signal: it works
HelpOutcome = Literal["passed", "failed", "skipped", "server", "usage"]
_HELP_OUTCOMES: tuple[HelpOutcome, ...] = ("passed", "failed", "skipped", "server", "usage")


@frozen
class ImportFailure:
    """A module that failed to import (``imports.failed[]``)."""

    module: str
    type: str
    message: str
    #: the plugin that failed with this very error, which is the failure reported
    reported_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        document = {"module": self.module, "type": self.type, "message": self.message}
        if self.reported_by is not None:
            document["reported_by"] = self.reported_by
        return document

    @classmethod
    def from_json(cls, document: object) -> ImportFailure:
        item = _object(document)
        return cls(
            _text(item.get("module")),
            _text(item.get("type")),
            _text(item.get("message")),
            optional_str(item.get("reported_by")),
        )


@frozen
class AllowedFailure:
    """A module that failed to import as ``--import-allow-fail`` allows
    (``imports.allowed_failures[]``)."""

    module: str
    type: str
    message: str
    #: the glob that allowed it
    allowed_by: str

    def to_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "type": self.type,
            "message": self.message,
            "allowed_by": self.allowed_by,
        }

    @classmethod
    def from_json(cls, document: object) -> AllowedFailure:
        item = _object(document)
        return cls(
            _text(item.get("module")),
            _text(item.get("type")),
            _text(item.get("message")),
            _text(item.get("allowed_by")),
        )


@frozen
class SkippedModule:
    """A module not imported, and why (``imports.skipped[]``)."""

    module: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "reason": self.reason}

    @classmethod
    def from_json(cls, document: object) -> SkippedModule:
        item = _object(document)
        return cls(_text(item.get("module")), _text(item.get("reason")))


@frozen
class OutsideModule:
    """A module loaded from outside the sandbox's site-packages (``imports.outside[]``)."""

    module: str
    file: str
    #: the ``.pth`` file that put its directory on ``sys.path``, if one did
    pth: str | None = None
    #: that ``.pth`` file came with the wheel under test
    shipped: bool = False

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"module": self.module, "file": self.file}
        if self.pth is not None:
            document.update(pth=self.pth, shipped=self.shipped)
        return document

    @classmethod
    def from_json(cls, document: object) -> OutsideModule:
        item = _object(document)
        return cls(
            _text(item.get("module")),
            _text(item.get("file")),
            optional_str(item.get("pth")),
            item.get("shipped") is True,
        )


@frozen
class ImportsRecord:
    """Stage ``imports`` (``runs[].imports``): every module of the wheel imported in the
    sandbox. The defaults are the record of a run whose stage did not run."""

    #: how many modules the wheel ships
    modules: int = 0
    imported: tuple[str, ...] = ()
    failed: tuple[ImportFailure, ...] = ()
    allowed_failures: tuple[AllowedFailure, ...] = ()
    skipped: tuple[SkippedModule, ...] = ()
    outside: tuple[OutsideModule, ...] = ()
    #: files the installed RECORD lists that do not exist
    missing_files: tuple[str, ...] = ()
    seconds: float = 0.0
    #: modules that failed in the plain install and are not failures, each with why
    excused: tuple[ExcusedModule, ...] = ()
    #: the extras installed, each in a sandbox of its own, to verify modules that need them
    extras: tuple[ExtraRecord, ...] = ()
    #: False when the import run crashed or hung: ``stopped_at`` (the module it was importing,
    #: if it had started one) and ``not_checked`` (the modules after it) are then written too
    finished: bool = True
    stopped_at: str | None = None
    not_checked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "modules": self.modules,
            "imported": list(self.imported),
            "failed": [failure.to_json() for failure in self.failed],
            "allowed_failures": [failure.to_json() for failure in self.allowed_failures],
            "skipped": [skipped.to_json() for skipped in self.skipped],
            "outside": [outside.to_json() for outside in self.outside],
            "missing_files": list(self.missing_files),
            "excused": [excused.to_json() for excused in self.excused],
            "extras": [extra.to_json() for extra in self.extras],
        }
        if not self.finished:
            document.update(stopped_at=self.stopped_at, not_checked=list(self.not_checked))
        document["seconds"] = self.seconds
        return document

    @classmethod
    def from_json(cls, document: object) -> ImportsRecord:
        item = _object(document)
        return cls(
            modules=_int(item.get("modules")) or 0,
            imported=_strings(item.get("imported")),
            failed=tuple(ImportFailure.from_json(i) for i in _objects(item.get("failed"))),
            allowed_failures=tuple(
                AllowedFailure.from_json(i) for i in _objects(item.get("allowed_failures"))
            ),
            skipped=tuple(SkippedModule.from_json(i) for i in _objects(item.get("skipped"))),
            outside=tuple(OutsideModule.from_json(i) for i in _objects(item.get("outside"))),
            missing_files=_strings(item.get("missing_files")),
            seconds=number(item.get("seconds")),
            finished="stopped_at" not in item and "not_checked" not in item,
            stopped_at=optional_str(item.get("stopped_at")),
            not_checked=_strings(item.get("not_checked")),
            excused=tuple(ExcusedModule.from_json(i) for i in _objects(item.get("excused"))),
            extras=tuple(ExtraRecord.from_json(i) for i in _objects(item.get("extras"))),
        )


@frozen
class ScriptRecord:
    """One console (or GUI) script of the distribution (``runs[].scripts[]``)."""

    name: str
    value: str
    #: ``console_scripts`` or ``gui_scripts``
    group: str
    #: installed in the sandbox's ``bin/``
    exists: bool = False
    help: HelpOutcome = "skipped"
    exit_code: int | None = None
    seconds: float = 0.0
    #: the extra its ``--help`` ran with: it asked for it in the plain install
    extra: str | None = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "name": self.name,
            "value": self.value,
            "group": self.group,
            "exists": self.exists,
            "help": self.help,
            "exit_code": self.exit_code,
            "seconds": self.seconds,
        }
        if self.extra is not None:
            document["extra"] = self.extra
        return document

    @classmethod
    def from_json(cls, document: object) -> ScriptRecord:
        item = _object(document)
        outcome = item.get("help")
        return cls(
            name=_text(item.get("name")),
            value=_text(item.get("value")),
            group=_text(item.get("group")),
            exists=item.get("exists") is True,
            help=next((h for h in _HELP_OUTCOMES if h == outcome), "skipped"),
            exit_code=_int(item.get("exit_code")),
            seconds=number(item.get("seconds")),
            extra=extra if isinstance(extra := item.get("extra"), str) else None,
        )


@frozen
class SmokeError:
    """Why a smoke run failed, and where in the playbook (``smoke.error``)."""

    code: str
    message: str
    #: the turn and action it happened at (1-based), when it happened at one
    turn: int | None = None
    action: int | None = None
    details: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "turn": self.turn,
            "action": self.action,
            "details": self.details,
        }

    @classmethod
    def from_json(cls, document: object) -> SmokeError:
        item = _object(document)
        return cls(
            code=_text(item.get("code")),
            message=_text(item.get("message")),
            turn=_int(item.get("turn")),
            action=_int(item.get("action")),
            details=optional_str(item.get("details")),
        )


@frozen
class SmokeCall:
    """One tool call of a smoke run and its result (``smoke.calls[]``)."""

    tool: str
    tool_call_id: str
    turn: int
    action: int
    is_error: bool = False
    mocked: bool = False
    blocked: bool = False
    #: the result's text (a long one cut, the cut marked) and its full length
    text: str = ""
    text_length: int = 0
    #: the call the run's failure happened at
    diverged: bool = False

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "tool": self.tool,
            "tool_call_id": self.tool_call_id,
            "turn": self.turn,
            "action": self.action,
            "is_error": self.is_error,
            "mocked": self.mocked,
            "blocked": self.blocked,
            "text": self.text,
            "text_length": self.text_length,
        }
        if self.diverged:
            document["diverged"] = True
        return document

    @classmethod
    def from_json(cls, document: object) -> SmokeCall:
        item = _object(document)
        return cls(
            tool=_text(item.get("tool")),
            tool_call_id=_text(item.get("tool_call_id")),
            turn=_int(item.get("turn")) or 0,
            action=_int(item.get("action")) or 0,
            is_error=item.get("is_error") is True,
            mocked=item.get("mocked") is True,
            blocked=item.get("blocked") is True,
            text=_text(item.get("text")),
            text_length=_int(item.get("text_length")) or 0,
            diverged=item.get("diverged") is True,
        )


#: the fields of ``runs[].smoke`` that only a run that reported has
_REPORTED = ("sessions", "turns", "tool_calls", "ui_calls", "calls", "seconds")


@frozen
class SmokeRecord:
    """Stage ``smoke`` (``runs[].smoke``): the playbook's run in the sandbox."""

    playbook: str
    ok: bool
    error: SmokeError | None = None
    #: False when the run never reported (its process crashed or timed out): the record is
    #: then ``playbook``, ``ok`` and an ``error`` of ``code`` and ``message`` only
    reported: bool = True
    #: a ``.py`` playbook: its file name
    script: str | None = None
    sessions: int = 0
    turns: int = 0
    tool_calls: int = 0
    ui_calls: int = 0
    calls: tuple[SmokeCall, ...] = ()
    #: with ``--keep``: the trace of a declarative playbook's session, in the sandbox
    trace: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] | None = None
        if self.error is not None:
            error = self.error.to_json()
            if not self.reported:
                error = {"code": error["code"], "message": error["message"]}
        document: dict[str, Any] = {"playbook": self.playbook, "ok": self.ok, "error": error}
        if not self.reported:
            return document
        if self.script is not None:
            document["script"] = self.script
        document.update(
            sessions=self.sessions,
            turns=self.turns,
            tool_calls=self.tool_calls,
            ui_calls=self.ui_calls,
            calls=[call.to_json() for call in self.calls],
        )
        if self.trace is not None:
            document["trace"] = self.trace
        document["seconds"] = self.seconds
        return document

    @classmethod
    def from_json(cls, document: object) -> SmokeRecord:
        """The record ``document`` describes; also reads the result of a playbook run outside
        a sandbox (``sandboxverify run``, ``record``), which has the same fields."""
        item = _object(document)
        error = item.get("error")
        return cls(
            playbook=_text(item.get("playbook")),
            ok=item.get("ok") is True,
            error=SmokeError.from_json(error) if isinstance(error, Mapping) else None,
            reported=any(key in item for key in _REPORTED),
            script=optional_str(item.get("script")),
            sessions=_int(item.get("sessions")) or 0,
            turns=_int(item.get("turns")) or 0,
            tool_calls=_int(item.get("tool_calls")) or 0,
            ui_calls=_int(item.get("ui_calls")) or 0,
            calls=tuple(SmokeCall.from_json(call) for call in _objects(item.get("calls"))),
            trace=optional_str(item.get("trace")),
            seconds=number(item.get("seconds")),
        )


def optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def number(value: object) -> float:
    """A JSON number as a float; anything else 0."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _object(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _objects(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()
