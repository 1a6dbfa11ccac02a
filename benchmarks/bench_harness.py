"""How fast the harness plays a long playbook over real plugin tools.

A playbook of 1,000 actions (100 turns of 9 tool calls and a ``say``) drives the ``planner``
fixture's real tools: ``plan_propose``, ``plan_approve`` (late-bound id, asks ``ctx.ui.confirm``),
``plan_reject``, and a mocked ``bash`` that the planner's ``tool_call`` guard inspects. Every call
goes through schema validation, hooks, execution and recording, as in any run.

The overhead per action is measured against calling the same tool functions directly, in the
same process, with the same arguments: what the harness adds on top of the plugin's own work.
Three configurations: the default per-call timeout (tool code runs on a worker thread so a hung
tool can be abandoned), ``call_timeout=None`` (inline), and ``isolate=True`` (the plugins in a
process of their own, as under ``check --smoke`` and ``run``: every call, every UI question and
every mock crosses a pipe). Then what a session costs to start and close, in each process.

Usage: ``python benchmarks/bench_harness.py [--repeat 7] [--turns 100] [--sessions 20]``
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "fixtures" / "planner"))


from sandboxverify.harness import Call, Turn, call, create_test_session, say, when  # noqa: E402

#: the fixture's plugin module, imported from the tree (it is not installed here)
planner: Any = importlib.import_module("svfix_planner.plugin")
PER_TURN_CALLS = 9


class _Confirm:
    """What ``ctx`` gives plan_approve when called directly: a UI that says yes."""

    class ui:
        @staticmethod
        def confirm(title: str, message: str = "") -> bool:
            return True


def build_playbook(turns: int) -> list[Turn]:
    playbook = []
    for number in range(turns):
        ids: list[str] = []

        def remember(result: Any, ids: list[str] = ids) -> None:
            ids.append(result.text.split()[-1])

        def latest(ids: list[str] = ids) -> dict[str, str]:
            return {"id": ids[-1]}

        actions: list[Call | Any] = []
        for round_ in range(3):
            actions.append(call("plan_propose", {"title": f"t{number}.{round_}"}).then(remember))
            actions.append(call("plan_approve", latest))
            actions.append(call("bash", {"command": f"echo {number}"}))
        actions.append(say("done"))
        playbook.append(when(f"turn {number}", actions))
    return playbook


def time_harness(turns: int, call_timeout: float | None, isolate: bool = False) -> float:
    playbook = build_playbook(turns)
    planner.PLANS.clear()
    with create_test_session(
        ["svfix_planner.plugin:setup"],
        mock_tools={"bash": "ok"},
        call_timeout=call_timeout,
        isolate=isolate,
    ) as session:
        started = time.perf_counter()
        session.run(*playbook)
        elapsed = time.perf_counter() - started
        assert len(session.events.tool_results) == turns * PER_TURN_CALLS
    return elapsed


def time_direct(turns: int) -> float:
    """The same tool work without the harness: the floor the harness is measured against."""
    planner.PLANS.clear()
    ctx = _Confirm()
    started = time.perf_counter()
    for number in range(turns):
        for round_ in range(3):
            text = planner.plan_propose(title=f"t{number}.{round_}")
            planner.plan_approve(id=text.split()[-1], ctx=ctx)
            planner.guard(
                type("E", (), {"tool_name": "bash", "input": {"command": f"echo {number}"}})()
            )
    return time.perf_counter() - started


def time_sessions(count: int, isolate: bool) -> float:
    """Seconds one session takes to start (its plugins loaded) and close, in the median."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        with create_test_session(["svfix_planner.plugin:setup"], isolate=isolate):
            pass
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args(argv)
    actions = args.turns * (PER_TURN_CALLS + 1)
    time_harness(2, 60.0)  # warm up imports and the worker thread
    rows = []
    direct = statistics.median(time_direct(args.turns) for _ in range(args.repeat))
    for label, timeout, isolate in (
        ("default (call_timeout=60s)", 60.0, False),
        ("inline (call_timeout=None)", None, False),
        ("isolate=True (own process)", 60.0, True),
    ):
        runs = [time_harness(args.turns, timeout, isolate) for _ in range(args.repeat)]
        median = statistics.median(runs)
        rows.append((label, median, min(runs), max(runs), (median - direct) / actions * 1e6))
    print(
        f"playbook: {args.turns} turns, {actions} actions, {args.turns * PER_TURN_CALLS} tool "
        f"calls over the planner's real tools; {args.repeat} runs each; Python "
        f"{sys.version.split()[0]}"
    )
    print(f"direct calls of the same tools: median {direct * 1000:.1f} ms")
    print(f"{'configuration':<28} {'median':>9} {'min':>9} {'max':>9} {'overhead/action':>16}")
    for label, median, low, high, per_action in rows:
        print(
            f"{label:<28} {median * 1000:7.1f}ms {low * 1000:7.1f}ms {high * 1000:7.1f}ms "
            f"{per_action:13.1f} µs"
        )
    here, apart = time_sessions(args.sessions, False), time_sessions(args.sessions, True)
    print(
        f"a session started and closed ({args.sessions} each, median): in this process "
        f"{here * 1000:.1f} ms, plugins in their own process {apart * 1000:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
