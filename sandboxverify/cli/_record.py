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
from pathlib import Path
from typing import Any

from sandboxverify._errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError
from sandboxverify.cli._output import check_json_path, stdout_to_stderr, write_json
from sandboxverify.cli._render import Style, _smoke_call_lines
from sandboxverify.cli._sandboxed import SandboxChoice, sandbox_hint
from sandboxverify.report._redact import SECRET_NAME, Redactor
from sandboxverify.sandbox._isolation import IsolationChoice
from sandboxverify.sandbox._toolchain import InstallerChoice
from sandboxverify.stages.playbook import parse_playbook
from sandboxverify.stages.playbook._replay import load_mocks
from sandboxverify.stages.playbook._writer import Unwritable, render_playbook


def record_session(
    *,
    prompts: tuple[str, ...],
    model: str,
    output: str,
    plugins: tuple[str, ...],
    dist: str | None,
    host: str,
    group: str | None,
    mocks: str | None,
    system: str | None,
    normalize: tuple[str, ...],
    model_options: tuple[tuple[str, str], ...],
    max_steps: int,
    trace: str | None,
    timeout: float | None,
    json_out: str | None,
    verbose: int,
    sandbox: bool,
    project: str | None,
    with_requirements: tuple[str, ...],
    pass_env: tuple[str, ...],
    installer: InstallerChoice | None,
    python: str | None,
    isolation: IsolationChoice | None,
) -> int:
    """What ``record`` does (its options: ``_commands``)."""
    path = _output_path(output)
    trace_path = Path(trace) if trace else path.with_suffix(".jsonl")
    if trace_path.absolute() == path.absolute():
        raise UsageError("--trace must not be the playbook itself", hint="drop --trace")
    check_json_path(json_out, (output,))
    if any(not prompt.strip() for prompt in prompts):
        raise UsageError("an empty PROMPT was given", hint="each PROMPT is what the user says")
    for pattern in normalize:
        _regex("--normalize", pattern)
    sandboxed = SandboxChoice(
        sandbox, project, with_requirements, pass_env, installer, python, isolation
    )
    sandboxed.check()
    mocked = load_mocks(Path(mocks)) if mocks else {"mock_tools": {}, "mock_ui": {}}
    options = dict(model_options)
    request: dict[str, Any] = {
        "prompts": list(prompts),
        "model": model,
        "system": system,
        "options": options,
        "max_steps": max_steps,
        "plugins": list(plugins) or None,
        "dist": dist,
        "group": group,
        "host": host,
        "run_timeout": timeout,
        "trace": str(trace_path),
        **mocked,
    }
    secrets = Redactor()
    human = secrets.stream(sys.stderr if json_out == "-" else sys.stdout)
    style = Style(human.isatty())
    started = time.perf_counter()
    if sandbox:
        result = sandboxed.record(
            request, timeout=timeout, trace=trace_path, human=human, verbose=verbose
        )
        result = usable(result, sandbox_hint)
    else:
        # the runtime drives llm in this process: only this command pays for importing it
        from sandboxverify.runtime._recording import record as record_here  # noqa: PLC0415

        with stdout_to_stderr(json_out == "-"):  # plugin code prints; the JSON owns stdout
            result = usable(record_here(request))
    result["seconds"] = round(time.perf_counter() - started, 3)
    lines = _smoke_call_lines(result, style)
    kept = {name: value for name, value in options.items() if not SECRET_NAME.search(name)}
    text: str | None = None
    if result.get("ok"):
        try:
            text = render_playbook(
                result["recorded"],
                header=_header(path, result),
                top={
                    "host": host if host != "native" else None,
                    "plugins": list(plugins) or None,
                    "normalize": list(normalize) or None,
                },
                comments=_comments(normalize),
                tables={
                    "recording": {"model": result["model"], "system": system, "options": kept},
                    "mock_tools": mocked["mock_tools"],
                    "mock_ui": mocked["mock_ui"],
                },
                normalize=normalize,
                source=str(path),
            )
        except Unwritable as exc:  # a model's argument TOML and JSON cannot hold
            result.update(ok=False, error={"code": "unwritable", "message": str(exc)})
    if text is not None:
        _write(path, _redacted(secrets, text, path))
        result["playbook"] = str(path)
        lines += [f"{style.paint('RECORDED', 'passed')}: {path} and {trace_path}, {counts(result)}"]
        lines += [f"  {line}" for line in _next_steps(path)]
        lines += [
            f"  note: option {name!r} looks like a secret: used, not written"
            for name in sorted(set(options) - set(kept))
        ]
    else:
        lines += failure_lines(result, style, verbose)
        kept_trace = f" (the session's trace: {result['trace']})" if result.get("trace") else ""
        lines.append(
            f"{style.paint('FAILED', 'failed')}: nothing recorded{kept_trace}, {counts(result)}"
        )
    human.write("\n".join(lines) + "\n")
    human.flush()
    write_json(result, json_out, secrets)
    return EXIT_OK if result.get("ok") else EXIT_CHECK_FAILED


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
    lines = [f"{style.paint('FAILED', 'failed')} [{error.get('code')}] {error.get('message')}"]
    details = (error.get("details") or "").rstrip().splitlines()
    lines += [style.paint(f"  | {text}", "dim") for text in (details if verbose else details[-20:])]
    if error.get("hint"):
        lines.append(f"  hint: {error['hint']}")
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
