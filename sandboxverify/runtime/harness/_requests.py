"""What a recorded turn answered: a digest of the request that produced it.

A model's steps answer a request: the user's prompt, the system prompt, the model and its
options, and the tools offered (names, descriptions, parameter schemas). A recording keeps, per
turn, a digest of that request (``request_hash``), and in ``[recording]`` the digests of the
tools (``tools_hash``) and of the model's settings (``settings_hash``). A replay computes them
again from the playbook and the plugins installed now: if one differs, the recorded steps answer
a request nobody makes any more, and the turn is ``replay_stale``, without asking any model.
The digests say which part changed: the tools, the settings, or else the prompt.

Secret-looking options are left out of the settings (they are never written either).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sandboxverify.runtime.harness._errors import HarnessError
from sandboxverify.runtime.harness._secrets import SECRET_NAME

Tools = Mapping[str, "tuple[str | None, Mapping[str, Any]]"]


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def tools_hash(tools: Tools) -> str:
    """The digest of the tools offered to the model (name, description, schema each)."""
    return _digest(
        [[name, description, dict(schema)] for name, (description, schema) in sorted(tools.items())]
    )


def settings_hash(model: str | None, system: str | None, options: Mapping[str, Any]) -> str:
    kept = {str(k): str(v) for k, v in options.items() if not SECRET_NAME.search(str(k))}
    return _digest({"model": model, "system": system or None, "options": kept})


def request_hash(prompt: str, settings: str, tools: str) -> str:
    return _digest({"prompt": prompt, "settings": settings, "tools": tools})


def check_fresh(spec: Mapping[str, Any], tools: Tools) -> None:
    """Every recorded turn's request is the one this playbook and these tools make now."""
    __tracebackhide__ = True  # pytest shows the test, not the harness
    recording = spec.get("recording") or {}
    if not any(turn.get("request_hash") for turn in spec["turns"]):
        return
    settings = settings_hash(
        recording.get("model"), recording.get("system"), recording.get("options") or {}
    )
    offered = tools_hash(tools)
    for number, turn in enumerate(spec["turns"], start=1):
        recorded = turn.get("request_hash")
        if not recorded or recorded == request_hash(turn["prompt"], settings, offered):
            continue
        if recording.get("tools_hash") and recording["tools_hash"] != offered:
            what = "the tools the plugins offer the model (a name, a description or a schema)"
        elif recording.get("settings_hash") and recording["settings_hash"] != settings:
            what = "the model, its system prompt or its options ([recording])"
        else:
            what = "the prompt"
        raise HarnessError(
            "replay_stale",
            f"{spec.get('source', 'the playbook')}: turn {number} [{turn.get('where')}]: {what} "
            "changed since the turn was recorded: its steps answer a request no model gets any "
            "more; record it again (sandboxverify record --refresh "
            f"{spec.get('source', 'PLAYBOOK')}), or drop its request_hash to replay it as it is",
            turn=number,
        )
