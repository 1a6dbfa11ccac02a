"""``record``: a live model drives the plugins' tools; the session becomes a playbook (``_live``
holds the other side: ``run --live``, the contract run of a recording, and ``--compare-results``).

The model is any model of an ``llm`` plugin installed here; ``llm`` runs inside the runtime,
imported only by these commands. Nothing written holds a key: the runtime redacts secrets from
what it returns, and model options named like secrets are used but never written.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._output import check_json_path, stdout_to_stderr, write_json
from sandboxverify.cli._render import Style, smoke_call_lines
from sandboxverify.cli._sandboxed import SandboxChoice, sandbox_hint
from sandboxverify.report import SECRET_NAME, Redactor, inert, inert_lines
from sandboxverify.stages.playbook import Unwritable, load_mocks, parse_playbook, render_playbook


@dataclass(frozen=True)
class Recording:
    """What ``record`` is asked to do, from its options (``options/_table.py``), checked before
    any work."""

    prompts: tuple[str, ...]
    model: str
    playbook: Path
    trace: Path
    plugins: tuple[str, ...]
    dist: str | None
    host: str
    group: str | None
    system: str | None
    normalize: tuple[str, ...]
    model_options: dict[str, str]
    max_steps: int
    timeout: float | None
    json_out: str | None
    verbose: int
    #: environmental tools and UI answers (``--mocks``), copied into the recording
    mocked: dict[str, Any]
    sandboxed: SandboxChoice

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Recording:
        path = _output_path(values["output"])
        trace = Path(values["trace"]) if values["trace"] else path.with_suffix(".jsonl")
        if trace.absolute() == path.absolute():
            raise UsageError("--trace must not be the playbook itself", hint="drop --trace")
        check_json_path(values["json_out"], (values["output"],))
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
        mocks = values["mocks"]
        return cls(
            prompts=values["prompts"],
            model=values["model"],
            playbook=path,
            trace=trace,
            plugins=values["plugins"],
            dist=values["dist"],
            host=values["host"],
            group=values["group"],
            system=values["system"],
            normalize=values["normalize"],
            model_options=dict(values["model_options"]),
            max_steps=values["max_steps"],
            timeout=values["timeout"],
            json_out=values["json_out"],
            verbose=values["verbose"],
            mocked=load_mocks(Path(mocks)) if mocks else {"mock_tools": {}, "mock_ui": {}},
            sandboxed=sandboxed,
        )

    def request(self) -> dict[str, Any]:
        """What the runtime's ``record`` takes."""
        return {
            "prompts": list(self.prompts),
            "model": self.model,
            "system": self.system,
            "options": self.model_options,
            "max_steps": self.max_steps,
            "plugins": list(self.plugins) or None,
            "dist": self.dist,
            "group": self.group,
            "host": self.host,
            "run_timeout": self.timeout,
            "trace": str(self.trace),
            **self.mocked,
        }


def record_session(**values: Any) -> int:
    """What ``record`` does: the session, then the playbook written from it, then the report."""
    recording = Recording.from_values(values)
    secrets = Redactor()
    human = secrets.stream(sys.stderr if recording.json_out == "-" else sys.stdout)
    style = Style(human.isatty())
    started = time.perf_counter()
    result = _session(recording, human)
    result["seconds"] = round(time.perf_counter() - started, 3)
    lines = smoke_call_lines(result, style)
    text = _playbook(recording, result) if result.get("ok") else None
    if text is not None:
        _write(recording.playbook, _redacted(secrets, text, recording.playbook))
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
            timeout=recording.timeout,
            trace=recording.trace,
            human=human,
            verbose=recording.verbose,
        )
        return usable(result, sandbox_hint)
    # the runtime drives llm in this process: only this command pays for importing it
    from sandboxverify.runtime import record as record_here  # noqa: PLC0415

    with stdout_to_stderr(recording.json_out == "-"):  # plugin code prints; the JSON owns stdout
        return usable(record_here(recording.request()))


def _kept_options(recording: Recording) -> dict[str, str]:
    """The model's options that may be written: none named like a secret."""
    return {
        name: value
        for name, value in recording.model_options.items()
        if not SECRET_NAME.search(name)
    }


def _playbook(recording: Recording, result: dict[str, Any]) -> str | None:
    """The recording as a playbook's text; ``None`` (and the result failed) when a model's
    argument cannot be written as TOML."""
    try:
        return render_playbook(
            result["recorded"],
            header=_header(recording.playbook, result),
            top={
                "host": recording.host if recording.host != "native" else None,
                "plugins": list(recording.plugins) or None,
                "normalize": list(recording.normalize) or None,
            },
            comments=_comments(recording.normalize),
            tables={
                "recording": {
                    "model": result["model"],
                    "system": recording.system,
                    "options": _kept_options(recording),
                },
                "mock_tools": recording.mocked["mock_tools"],
                "mock_ui": recording.mocked["mock_ui"],
            },
            normalize=recording.normalize,
            source=str(recording.playbook),
        )
    except Unwritable as exc:  # a model's argument TOML and JSON cannot hold
        result.update(ok=False, error={"code": "unwritable", "message": str(exc)})
        return None


def _recorded_lines(recording: Recording, result: dict[str, Any], style: Style) -> list[str]:
    path = recording.playbook
    lines = [f"{style.paint('RECORDED', 'passed')}: {path} and {recording.trace}, {counts(result)}"]
    lines += [f"  {line}" for line in _next_steps(path)]
    secret = sorted(set(recording.model_options) - set(_kept_options(recording)))
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


def _redacted(secrets: Redactor, text: str, path: Path) -> str:
    """The playbook with the caller's secrets out in every spelling, and still a playbook."""
    redacted = secrets.text(text)
    if redacted != text:
        parse_playbook(redacted, str(path))
    return redacted


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


def _header(path: Path, result: dict[str, Any]) -> list[str]:
    return [
        f"Recorded by 'sandboxverify record' with the model {result['model']!r}: "
        f"{result.get('turns', 0)} turn(s), {result.get('tool_calls', 0)} tool call(s) by "
        f"{', '.join(result.get('plugins') or []) or 'no plugin'}.",
        "Every model step is an action; the plugins' tools ran for real, result = what they "
        "returned.",
        *_where(result),
        *_next_steps(path),
    ]


def _where(result: dict[str, Any]) -> list[str]:
    sandbox = result.get("sandbox")
    if not sandbox:
        return []
    return [f"The plugins came from {sandbox['wheel']}, in a sandbox (Python {sandbox['python']})."]


def _next_steps(path: Path) -> list[str]:
    return [
        f"replay (no model, no key):      sandboxverify run {path.name}",
        f"compare every tool's result:    sandboxverify run {path.name} --compare-results",
        f"does the model still agree?     sandboxverify run {path.name} --live",
    ]


def _comments(normalize: Sequence[str]) -> list[str]:
    """Settings a replay may turn on, commented out."""
    lines = ["compare_results = true   # replay_mismatch when a result differs from its 'result'"]
    if normalize:
        return lines
    return [*lines, "normalize = ['ID-[0-9a-f]+']   # regexes masked before results are compared"]
