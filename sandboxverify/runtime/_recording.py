"""The ``record`` and ``live`` actions: a live model (through ``llm``) drives the plugins' tools.

``record``: one turn per prompt; what the model did comes back as playbook turns for the host to
write as TOML (and the trace as JSONL, if asked). ``live``: the contract run of a recorded
playbook: the model chooses again from the same prompts, with the playbook's mocks, and every
step where it left the recording is a divergence. Both return the summary a smoke run returns;
nothing they return or write holds a secret (``harness._secrets.redact``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandboxverify.runtime._descendants import kept_to_myself
from sandboxverify.runtime._smoke import summarize
from sandboxverify.runtime.harness import (
    DEFAULT_MAX_STEPS,
    HarnessError,
    LiveDriver,
    LiveModel,
    ModelUnavailable,
    TestSession,
    divergences,
    live_session,
    offered_tools,
    open_model,
    recorded_turns,
    redact,
    request_hash,
    settings_hash,
    spec_plugins,
    tools_hash,
    write_trace,
)


def record(request: Mapping[str, Any]) -> dict[str, Any]:
    """Record ``request["prompts"]`` driven by ``request["model"]``.

    Other keys: ``system``, ``options`` (the model's), ``max_steps``, ``plugins``, ``dist``,
    ``group``, ``host``, ``mock_tools``, ``mock_ui``, ``run_timeout``, ``trace`` (a path). The
    result has ``ok``, ``error`` (a harness diagnostic, with ``usage`` set when the command was
    at fault: an unknown model, a missing key), ``model``, ``plugins``, ``tools``, ``recorded``
    (the turns) and the summary of a smoke run.
    """
    return _drive(request, [str(prompt) for prompt in request["prompts"]], None)[0]


def live(request: Mapping[str, Any]) -> dict[str, Any]:
    """The contract run of ``request["spec"]`` (a normalised playbook) with ``request["model"]``
    (default: the model it was recorded with). The result also has ``divergences``."""
    return live_session_of(request)[0]


def live_session_of(request: Mapping[str, Any]) -> tuple[dict[str, Any], TestSession | None]:
    """``live``, and the (closed) session the model drove, for assertions on its events."""
    spec = request["spec"]
    recording = spec.get("recording") or {}
    options = {
        **request,
        "model": request.get("model") or recording.get("model"),
        "system": request["system"] if request.get("system") else recording.get("system"),
        "options": {**(recording.get("options") or {}), **(request.get("options") or {})},
        "plugins": request.get("plugins") or spec_plugins(spec),
        "host": request.get("host") or spec.get("host"),
        "has_ui": spec.get("has_ui", True),
        "mock_tools": spec.get("mock_tools") or {},
        "mock_ui": spec.get("mock_ui") or {},
    }
    if not options["model"]:
        unavailable = ModelUnavailable(
            f"{spec.get('source', 'the playbook')} names no model to run live",
            hint="pass --model MODEL (a recording names its model in [recording])",
        )
        return _unavailable(unavailable), None
    return _drive(options, [turn["prompt"] for turn in spec["turns"]], spec)


def _drive(
    request: Mapping[str, Any], prompts: list[str], spec: Mapping[str, Any] | None
) -> tuple[dict[str, Any], TestSession | None]:
    try:
        model = open_model(
            request["model"],
            system=request.get("system"),
            options=request.get("options"),
            max_steps=request.get("max_steps") or DEFAULT_MAX_STEPS,
        )
    except ModelUnavailable as exc:
        return _unavailable(exc), None
    session: TestSession | None = None
    error: dict[str, Any] | None = None
    with kept_to_myself():  # the plugins run beside this process: none attaches to it
        try:
            session = live_session(request)
            session.run(*LiveDriver(model, session).turns(prompts))
            if spec is not None:
                _expectations(spec, session)
        except HarnessError as exc:
            error = exc.to_json()
        finally:
            if session is not None:
                session.close()
    turns = recorded_turns(session.events.all) if session is not None else []
    result = _summary(request, model, session, error)
    if spec is None:
        result["recorded"] = turns
        if session is not None:
            result["digests"] = _digests(model, session, turns)
    else:
        stopped = error["code"] if error else None
        result["divergences"] = divergences(spec["turns"], turns, stopped=stopped)
        if result["divergences"] and error is None:
            count = len(result["divergences"])
            result["ok"] = False
            result["error"] = {
                "code": "live_diverged",
                "message": f"the live model {model.model_id!r} left the recording at "
                f"{count} step(s)",
                "turn": result["divergences"][0]["turn"],
                "action": result["divergences"][0]["step"],
                "details": None,
            }
    return redact(result, model.secrets), session


def _digests(model: LiveModel, session: TestSession, turns: list[dict[str, Any]]) -> dict[str, str]:
    """What the recorded turns answered (see ``harness._requests``): each turn gets the digest
    of its request; the tools and the settings get theirs, for ``[recording]``."""
    tools = tools_hash(offered_tools(session))
    settings = settings_hash(model.model_id, model.system, model.options)
    for turn in turns:
        turn["request_hash"] = request_hash(turn["prompt"], settings, tools)
    return {"tools_hash": tools, "settings_hash": settings}


def _expectations(spec: Mapping[str, Any], session: TestSession) -> None:
    expect = spec.get("expect") or {}
    for name in expect.get("called", []):
        session.assert_called(name)
    for name in expect.get("not_called", []):
        session.assert_not_called(name)
    for first, second in expect.get("called_before", []):
        session.assert_called_before(first, second)
    for label in expect.get("approved", []):
        session.assert_approved(label)


def _unavailable(exc: ModelUnavailable) -> dict[str, Any]:
    return {
        "ok": False,
        "error": {
            "code": "model_failed",
            "message": exc.message,
            "hint": exc.hint,
            "usage": True,
            "reason": exc.reason,
            "key_env": exc.key_env,
            "turn": None,
            "action": None,
            "details": None,
        },
    }


def _summary(
    request: Mapping[str, Any],
    model: LiveModel,
    session: TestSession | None,
    error: dict[str, Any] | None,
) -> dict[str, Any]:
    """What a smoke run reports, the model and the tools; the trace written, if asked."""
    result: dict[str, Any] = {
        "ok": error is None,
        "error": error,
        "model": model.model_id,
        "plugins": list(session.plugins) if session is not None else [],
        "tools": session.tools if session is not None else [],
        **summarize([session] if session is not None else []),
    }
    if session is not None and request.get("trace"):
        events = redact(session.trace(), model.secrets)
        result["trace"] = str(write_trace(events, Path(request["trace"])))
    return result
