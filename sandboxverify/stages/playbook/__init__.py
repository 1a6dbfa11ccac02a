"""Smoke playbooks in TOML: read, check and normalise them on the host, before any sandbox exists.

A playbook scripts the model's side of a session turn by turn (``[[turns]]`` with a ``prompt`` and
``actions``: ``call``, ``parallel`` or ``say``), mocks tools and UI answers (``[mock_tools]``,
``[mock_ui]``) and states what must have happened (``[expect]``). The runtime executes the
normalised spec returned here; this package only validates, so every mistake surfaces up front as
a one-line :class:`ConfigError` naming the file and the place (``turns[1].actions[0].params.id``).

``_document`` reads the file and its top-level keys, ``_mocks`` the mocks, ``_turns`` the turns
and their actions, ``_calls`` each call (and its ``${name}`` references to earlier captures);
``_values`` holds the checks of single values they share.

The normalised spec (a contract with the runtime; JSON-serialisable)::

    {"source": str, "base": str (the playbook's directory: plugin files are relative to it),
     "name": str | None, "mock_tools": {...}, "mock_ui": {...},
     "plugins": [str, ...] | None,
     "turns": [{"prompt": str, "where": "turns[0]", "actions": [action, ...],
                "request_hash": str (when written)}],
     "expect": {"called": [str], "not_called": [str], "called_before": [[str, str]],
                "approved": [str]},
     # only when the playbook sets them (a recording does):
     "host": "native" | "llm" | "mcp", "compare_results": bool, "normalize": [str],
     "has_ui": bool,
     "recording": {"model": str | None, "system": str | None, "options": {...},
                   "tools_hash": str, "settings_hash": str}}

    action: {"kind": "call", "where", "tool", "params", "capture", "expect", "expect_error", "text",
             "sample" (when given), "validate" (when given), "compare_result" (when given),
             "result" (when written: the recorded result text)}
          | {"kind": "parallel", "where", "text", "calls": [call action, ...]}
          | {"kind": "say", "where", "text"}

``_replay`` reads what a recording adds (``host``, ``compare_results``, ``normalize``,
``[recording]``) and mocks files for ``record``; ``_writer`` writes a recorded session as a
playbook, ``_captures`` turning the ids a model copied from results into captures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandboxverify.runtime import imported_on_first_use
from sandboxverify.stages.playbook._document import load_playbook, parse_playbook

if TYPE_CHECKING:
    from sandboxverify.stages.playbook._files import (
        copy_travelling,
        named_in_script,
        plugin_file,
        travelling,
    )
    from sandboxverify.stages.playbook._modes import LLM_ENV, LLM_MODES, LlmMode, llm_mode
    from sandboxverify.stages.playbook._recorded import RecordingSettings, next_steps
    from sandboxverify.stages.playbook._replay import load_mocks
    from sandboxverify.stages.playbook._writer import Unwritable, render_playbook

__all__ = [
    "LLM_ENV",
    "LLM_MODES",
    "LlmMode",
    "RecordingSettings",
    "Unwritable",
    "copy_travelling",
    "llm_mode",
    "load_mocks",
    "load_playbook",
    "named_in_script",
    "next_steps",
    "parse_playbook",
    "plugin_file",
    "render_playbook",
    "travelling",
]

#: what only ``record`` needs: imported when it runs
_IMPORTED_ON_FIRST_USE = {
    "LLM_ENV": "_modes",
    "LLM_MODES": "_modes",
    "LlmMode": "_modes",
    "llm_mode": "_modes",
    "RecordingSettings": "_recorded",
    "next_steps": "_recorded",
    "copy_travelling": "_files",
    "named_in_script": "_files",
    "plugin_file": "_files",
    "travelling": "_files",
    "load_mocks": "_replay",
    "Unwritable": "_writer",
    "render_playbook": "_writer",
}


__getattr__ = imported_on_first_use(globals(), _IMPORTED_ON_FIRST_USE)
