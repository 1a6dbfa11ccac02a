"""``record``: a live model drives the plugins' tools; the session becomes a playbook (``_live``
holds the other side: ``run --live``, the contract run of a recording, and ``--compare-results``).
``record --refresh FILE`` records FILE again from its own prompts and settings.

The model is any model of an ``llm`` plugin installed here; ``llm`` runs inside the runtime,
imported only by these commands. Nothing written holds a key: the runtime redacts secrets from
what it returns, and model options named like secrets are used but never written.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify._frozen import frozen
from sandboxverify.cli._output import check_json_path, stdout_to_stderr, write_json
from sandboxverify.cli._render import Style, smoke_call_lines
from sandboxverify.cli._sandboxed import SandboxChoice, sandbox_hint
from sandboxverify.report import Redactor, inert, inert_lines
from sandboxverify.stages.playbook import (
    RecordingSettings,
    load_mocks,
    next_steps,
)


@frozen
class Recording:
    """What ``record`` is asked to do, from its options (``options/_table.py``), checked before
    any work."""

    settings: RecordingSettings
    playbook: Path
    trace: Path
    json_out: str | None
    verbose: int
    sandboxed: SandboxChoice
    #: plugin files are relative to the playbook refreshed (else to where record runs)
    base: Path | None = None

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Recording:
        refreshed: str | None = values.get("refresh")
        if refreshed:
            _refreshing(values)
        elif not values["prompts"] or not values["model"] or not values["output"]:
            missing = [
                text
                for given, text in (
                    (values["prompts"], "PROMPT"),
                    (values["model"], "--model"),
                    (values["output"], "-o FILE"),
                )
                if not given
            ]
            raise UsageError(
                f"record needs {', '.join(missing)}",
                hint="record PROMPT... --model MODEL -o FILE, or record --refresh FILE",
            )
        output = str(values["output"] or refreshed)
        path = _output_path(output)
        trace = Path(values["trace"]) if values["trace"] else path.with_suffix(".jsonl")
        if trace.absolute() == path.absolute():
            raise UsageError("--trace must not be the playbook itself", hint="drop --trace")
        check_json_path(values["json_out"], (output,))
        if any(not prompt.strip() for prompt in values["prompts"]):
            raise UsageError("an empty PROMPT was given", hint="each PROMPT is what the user says")
        for pattern in values["normalize"]:
            _regex("--normalize", pattern)
        sandboxed = SandboxChoice(
            values["sandbox"],
            values["project"],
            values["with_requirements"],
            values["pass_env"],
            values["installer"],
            values["python"],
            values["isolation"],
        )
        sandboxed.check()
        return cls(
            settings=_settings(values, Path(refreshed) if refreshed else None),
            playbook=path,
            trace=trace,
            json_out=values["json_out"],
            verbose=values["verbose"],
            sandboxed=sandboxed,
            base=Path(refreshed).resolve().parent if refreshed else None,
        )

    @classmethod
    def refreshing(cls, path: Path, **values: Any) -> Recording:
        """``record --refresh PATH`` with ``values`` (``model``, ``dist``, ``timeout``,
        ``max_steps``, ``verbose``) and every other option left out."""
        given = {
            "refresh": str(path),
            "prompts": (),
            "output": None,
            "trace": None,
            "json_out": None,
            "normalize": (),
            "system": None,
            "model_options": (),
            "plugins": (),
            "mocks": None,
            "group": None,
            "host": "native",
            "sandbox": False,
            "project": None,
            "with_requirements": (),
            "pass_env": (),
            "installer": None,
            "python": None,
            "isolation": None,
            **values,
        }
        return cls.from_values(given)

    def request(self) -> dict[str, Any]:
        """What the runtime's ``record`` takes."""
        request: dict[str, Any] = self.settings.request(self.trace, self.base)
        return request


#: what --refresh reads from the playbook itself
_FROM_THE_PLAYBOOK = ("system", "normalize", "model_options", "plugins", "mocks", "group")


def _refreshing(values: dict[str, Any]) -> None:
    """``--refresh FILE`` records FILE's own prompts with its own settings: giving them again is
    a mistake (only --model, to try another model, and where to write, may be given)."""
    if values["prompts"]:
        raise UsageError(
            "record --refresh takes its prompts from the playbook",
            hint="drop the PROMPT arguments, or record without --refresh",
        )
    given = [name for name in _FROM_THE_PLAYBOOK if values.get(name)]
    if given:
        flag = "--" + given[0].replace("model_options", "option").replace("_", "-")
        raise UsageError(
            f"{flag}: record --refresh takes it from the playbook",
            hint="edit the playbook, or record without --refresh",
        )


def _settings(values: dict[str, Any], refreshed: Path | None) -> RecordingSettings:
    common: dict[str, Any] = {
        "dist": values["dist"],
        "max_steps": values["max_steps"],
        "timeout": values["timeout"],
    }
    if refreshed is not None:
        if not refreshed.is_file():
            raise UsageError(f"--refresh {refreshed}: no such playbook", hint="check the path")
        return RecordingSettings.of_playbook(refreshed, model=values["model"], **common)
    mocks = values["mocks"]
    return RecordingSettings(
        prompts=values["prompts"],
        model=values["model"],
        plugins=values["plugins"],
        host=values["host"],
        group=values["group"],
        system=values["system"],
        normalize=values["normalize"],
        model_options=dict(values["model_options"]),
        mocked=load_mocks(Path(mocks)) if mocks else {"mock_tools": {}, "mock_ui": {}},
        **common,
    )


def record_session(**values: Any) -> int:
    """What ``record`` does: the session, then the playbook written from it, then the report."""
    return record(Recording.from_values(values))


def record(recording: Recording) -> int:
    """Record, write the playbook, report: exit 0 when it was written."""
    secrets = Redactor()
    human = secrets.stream(sys.stderr if recording.json_out == "-" else sys.stdout)
    style = Style(human.isatty())
    started = time.perf_counter()
    result = _session(recording, human)
    result["seconds"] = round(time.perf_counter() - started, 3)
    lines = smoke_call_lines(result, style)
    text = (
        recording.settings.text(result, recording.playbook, secrets) if result.get("ok") else None
    )
    if text is not None:
        _write(recording.playbook, text)
        result["playbook"] = str(recording.playbook)
        lines += _recorded_lines(recording, result, style)
    else:
        lines += failure_lines(result, style, recording.verbose)
        kept_trace = f" (the session's trace: {result['trace']})" if result.get("trace") else ""
        lines.append(
            f"{style.paint('FAILED', 'failed')}: nothing recorded{kept_trace}, {counts(result)}"
        )
    human.write("\n".join(lines) + "\n")
    human.flush()
    write_json(result, recording.json_out, secrets)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


def _session(recording: Recording, human: TextIO) -> dict[str, Any]:
    """The live session: in a fresh sandbox (``--sandbox``), or here."""
    if recording.sandboxed.enabled:
        result = recording.sandboxed.record(
            recording.request(),
            timeout=recording.settings.timeout,
            trace=recording.trace,
            human=human,
            verbose=recording.verbose,
        )
        return usable(result, sandbox_hint)
    # the runtime drives llm in this process: only this command pays for importing it
    from sandboxverify.runtime import record as record_here  # noqa: PLC0415

    with stdout_to_stderr(recording.json_out == "-"):  # plugin code prints; the JSON owns stdout
        return usable(record_here(recording.request()))


def _recorded_lines(recording: Recording, result: dict[str, Any], style: Style) -> list[str]:
    path = recording.playbook
    lines = [f"{style.paint('RECORDED', 'passed')}: {path} and {recording.trace}, {counts(result)}"]
    lines += [f"  {line}" for line in next_steps(path)]
    settings = recording.settings
    secret = sorted(set(settings.model_options) - set(settings.kept_options))
    lines += [f"  note: option {name!r} looks like a secret: used, not written" for name in secret]
    return lines


# -- helpers -----------------------------------------------------------------------------------


def usable(
    result: dict[str, Any], hint: Callable[[dict[str, Any]], str | None] | None = None
) -> dict[str, Any]:
    """A model that cannot be used is the command's fault: exit 2, before anything ran.
    ``hint``: what to change, from the error (where the model ran decides it)."""
    error = result.get("error") or {}
    if error.get("usage"):
        raise UsageError(error["message"], hint=hint(error) if hint else error.get("hint"))
    return result


def _output_path(output: str) -> Path:
    path = Path(output)
    if path.suffix != ".toml":
        raise UsageError(
            f"-o {output}: a recording is a TOML playbook", hint="name it session.toml or similar"
        )
    if path.is_dir() or not path.absolute().parent.is_dir():
        raise UsageError(f"-o {output}: cannot write a file there", hint="check the path")
    return path


def _regex(option: str, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"{option} {pattern!r}: bad regex: {exc}") from None
    if not pattern:
        raise UsageError(f"{option}: an empty regex masks nothing")


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def counts(result: dict[str, Any]) -> str:
    counts = f"{result.get('turns', 0)} turn(s), {result.get('tool_calls', 0)} tool call(s)"
    if "seconds" in result:
        counts += f" in {result['seconds']:.2f}s"
    return counts


def failure_lines(result: dict[str, Any], style: Style, verbose: int) -> list[str]:
    error = result.get("error") or {}
    message = "\n  ".join(inert_lines(error.get("message")))
    lines = [f"{style.paint('FAILED', 'failed')} [{inert(error.get('code'))}] {message}"]
    details = inert_lines(str(error.get("details") or "").rstrip())
    lines += [style.paint(f"  | {text}", "dim") for text in (details if verbose else details[-20:])]
    if error.get("hint"):
        lines.append(f"  hint: {inert(error['hint'])}")
    return lines


def short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
