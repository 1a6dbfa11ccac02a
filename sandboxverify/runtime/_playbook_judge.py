"""The judge of a ``.py`` playbook: it runs the script in a process of its own
(``_playbook_process``), starts a plugins' process for each session the script creates, relays
every message between them, and decides the run from its own account (``_audit``) and what the
script's process reports, which can only add failures.

Nothing the script or the plugins run executes here: this process starts processes, moves
messages and judges.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sandboxverify.runtime._audit import Audit
from sandboxverify.runtime.harness import (
    END,
    ChannelBroken,
    Spawned,
    absolute,
    end_process,
    exit_status,
    spawn,
)

_PLAYBOOK = "playbook"
#: where snapshots are compared and never written (the harness's ``_snapshot`` reads it)
READ_ONLY_SNAPSHOTS = "SANDBOXVERIFY_READ_ONLY_SNAPSHOTS"
#: how long the script's process may take to end once it said it is done
_ENDING_SECONDS = 10.0


class _Relay:
    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.merged: queue.SimpleQueue[tuple[Any, Any]] = queue.SimpleQueue()
        self.process, self.channel = spawn(
            "sandboxverify.runtime._playbook_process",
            cwd=str(path.parent),
            env=env,
            merged=self.merged,
            tag=_PLAYBOOK,
        )
        self.plugins: dict[int, Spawned] = {}
        self.audit = Audit()
        self.done: dict[str, Any] | None = None
        self.problem: dict[str, Any] | None = None

    def run(self, path: Path, deadline: float | None, *, private: bool) -> None:
        self.channel.send(
            {"op": "start", "script": str(path), "sys_path": absolute(sys.path), "private": private}
        )
        while True:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                tag, item = self.merged.get(timeout=left)
            except queue.Empty:
                self.problem = _error(
                    "run_timeout", "the playbook did not finish within the run's time"
                )
                return
            if tag == _PLAYBOOK:
                if not isinstance(item, dict) or item is END:
                    if isinstance(item, BaseException):
                        self.problem = _error("worker_failed", f"the playbook's process: {item}")
                    return
                self._from_playbook(item)
            else:
                self._from_plugins(tag, item)

    def _from_playbook(self, message: dict[str, Any]) -> None:
        session = message.pop("s", None)
        op = message.get("op")
        if op == "done":
            self.done = message
            return
        if not isinstance(session, int):
            self.problem = self.problem or _error("worker_failed", "the playbook sent nonsense")
            return
        if op == "open":
            self.audit.opened(session, message.get("options"))
            self.plugins[session] = Spawned(merged=self.merged, tag=session)
            return
        if op == "failed":
            self.audit.reported.append(message.get("error"))
            return
        self.audit.from_playbook(session, message)
        plugins = self.plugins.get(session)
        if plugins is None:
            return
        if op == "kill":
            plugins.kill()
        elif op == "close":
            plugins.channel.close()  # it ends on its own; end_process later makes sure
        else:
            with contextlib.suppress(ChannelBroken):  # gone: its end of stream says so
                plugins.channel.send(message)

    def _from_plugins(self, session: int, item: Any) -> None:
        plugins = self.plugins.get(session)
        if isinstance(item, dict) and item is not END:
            self.audit.from_plugins(session, item)
            self._tell_playbook({**item, "s": session})
            return
        if plugins is not None:
            if isinstance(item, BaseException):
                self.audit.failed({"code": "worker_failed", "message": str(item)})
            plugins.kill()
            self.audit.ended(session, exit_status(plugins.process.returncode))
        self._tell_playbook({"s": session, "op": "eof"})

    def _tell_playbook(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ChannelBroken):  # gone: its end of stream says so
            self.channel.send(message)

    def close(self) -> str:
        self.channel.close()
        with contextlib.suppress(subprocess.TimeoutExpired):  # ended below, either way
            self.process.wait(_ENDING_SECONDS)
        for plugins in self.plugins.values():
            plugins.kill()
        end_process(self.process)
        return exit_status(self.process.returncode)


def judge_script(
    path: Path, *, run_timeout: float | None, private: bool = False, read_only: bool = False
) -> dict[str, Any]:
    """Run the ``.py`` playbook at ``path``; the smoke result (see ``_smoke``). ``private``: the
    script's process keeps its memory from the plugins' (in a sandbox); ``read_only``: its files
    are a read-only copy, where snapshots are compared and never written."""
    env = dict(os.environ)
    if read_only:
        env[READ_ONLY_SNAPSHOTS] = "1"
    relay = _Relay(path, env)
    deadline = None if run_timeout is None else time.monotonic() + run_timeout
    try:
        relay.run(path, deadline, private=private)
    finally:
        status = relay.close()
    relay.audit.finished()
    return _verdict(relay, path, status)


def _verdict(relay: _Relay, path: Path, status: str) -> dict[str, Any]:
    """The run's outcome: how it stopped, else how the script ended, else a failure it went
    on after, else the judge's own findings, else whether it proved anything."""
    audit, done = relay.audit, relay.done or {}
    summary = done.get("summary")
    summary = summary if isinstance(summary, dict) else {}
    error = relay.problem or _script_error(done, status) or done.get("caught")
    if error is None and audit.failures:
        first = audit.failures[0]
        error = {**first, "message": f"{first['message']} (seen by the judge of the playbook)"}
    error = error or (audit.reported[0] if audit.reported else None) or _proved_nothing(audit)
    return {
        "ok": error is None,
        "error": error,
        "script": path.name,
        "sessions": len(audit.sessions),
        "turns": int(summary.get("turns") or 0),
        "tool_calls": audit.requested,
        "ui_calls": audit.ui_calls,
        "calls": audit.calls,
    }


def _script_error(done: dict[str, Any], status: str) -> dict[str, Any] | None:
    if not done:
        return _error(
            "script_failed",
            f"the playbook's process ended without finishing the playbook ({status})",
        )
    error = done.get("error")
    return error if isinstance(error, dict) else None


def _proved_nothing(audit: Audit) -> dict[str, Any] | None:
    if not audit.requested:
        return _error(
            "nothing_called",
            "the playbook ran but called no tool: a smoke run that exercises nothing proves "
            "nothing; add call(...) actions (in a .py playbook: run a session)",
        )
    if not audit.plugin_ran:
        return _error(
            "no_plugin_code",
            "no plugin code ran: every call was mocked or blocked, so the run proves nothing "
            "about the plugins; call a tool a plugin registers",
        )
    return None


def _error(code: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "turn": None, "action": None, "details": None}
