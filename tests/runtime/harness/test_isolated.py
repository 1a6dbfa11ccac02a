"""Sessions whose plugins run in a process of their own (``isolate=True``): the same session,
the same verdicts, and a judge that plugin code cannot reach."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.harness import HarnessError, call, create_test_session, say, when
from sandboxverify.runtime import PluginAPI

PLUGIN = "tests.runtime.harness.test_isolated:tools"
#: module state: a fresh plugin process starts it again, whatever an earlier session did
CALLS = {"count": 0}


def tools(api: PluginAPI) -> None:
    @api.tool
    def count() -> int:
        CALLS["count"] += 1
        return CALLS["count"]

    @api.tool
    def explode(reason: str = "boom") -> str:
        raise RuntimeError(reason)

    @api.tool
    def ask(ctx: Any) -> str:
        choice = ctx.ui.select("Which?", ["red", "green"])
        return f"{choice} {'yes' if ctx.ui.confirm('Sure?', choice) else 'no'} {ctx.has_ui}"

    @api.tool
    def hang() -> str:
        time.sleep(3600)
        return "never"

    @api.tool
    def die() -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        return "never"

    @api.tool
    def scribble() -> str:
        """Writes garbage where the harness's messages go."""
        for fd in range(3, 64):
            try:
                os.write(fd, b"this is not a message\n")
            except OSError:
                continue
        return "scribbled"

    @api.tool
    def forge() -> str:
        return "forged"

    @api.tool
    def where() -> str:
        return str(os.getpid())

    def guard(event: Any) -> dict[str, Any] | None:
        if event.tool_name == "bash" and "rm -rf" in event.input.get("command", ""):
            return {"block": True, "reason": "dangerous command"}
        return None

    api.on("tool_call", guard)

    def speak_for_the_process(event: Any) -> None:
        """Before the process says the call began: a 'called' message whose block is no pair."""
        if event.tool_name == "forge":
            os.write(int(sys.argv[-1]), b'{"op": "called", "block": 5}\n')

    api.on("tool_call", speak_for_the_process)


def session(**options: Any) -> Any:
    return create_test_session([PLUGIN], isolate=True, **options)


def fail(code: str, t: Any, *actions: Any) -> HarnessError:
    with pytest.raises(HarnessError) as info:
        t.run(when("go", [*actions, say("done")]))
    assert info.value.code == code, info.value
    return info.value


def test_the_plugins_run_in_another_process_and_the_session_is_the_same() -> None:
    with session(mock_tools={"bash": "ok"}, mock_ui={"select": "green"}) as t:
        t.run(
            when(
                "go",
                [
                    call("where"),
                    call("ask"),
                    call("bash", {"command": "rm -rf /"}, expect_error="dangerous"),
                    call("bash", {"command": "ls"}),
                    call("explode", expect_error="boom"),
                    say("done"),
                ],
            )
        )
        where, asked, blocked, mocked, exploded = t.events.tool_results
        assert int(where.text) != os.getpid()
        assert asked.text == "green yes True"
        assert [(u.method, u.return_value) for u in t.events.ui] == [
            ("select", "green"),
            ("confirm", True),
        ]
        assert blocked.blocked and blocked.is_error and not blocked.mocked
        assert mocked.mocked and mocked.text == "ok"
        assert exploded.is_error and "RuntimeError: boom" in exploded.text
        assert t.events.blocked_calls()[0].blocked_by == PLUGIN
        assert t.tools == ["ask", "count", "die", "explode", "forge", "hang", "scribble", "where"]


def test_every_session_starts_from_fresh_plugin_modules() -> None:
    counts = []
    for _ in range(2):
        with session() as t:
            t.run(when("go", [call("count"), call("count"), say("done")]))
            counts.append([r.text for r in t.events.tool_results])
    assert counts == [["1", "2"], ["1", "2"]]
    assert CALLS["count"] == 0  # none of it ran here


def test_a_tool_error_nobody_expected_still_fails_the_run() -> None:
    with session() as t:
        error = fail("tool_error", t, call("explode"))
        assert "RuntimeError: boom" in error.message


def test_a_hung_tool_is_stopped_for_good_and_the_run_fails() -> None:
    with session(call_timeout=1.0) as t:
        error = fail("call_timeout", t, call("hang"))
        assert "did not return within 1s" in error.message
        # the session cannot go on without its plugins
        again = fail("worker_failed", t, call("count"))
        assert "has ended (killed after the call's time ran out)" in again.message


def test_a_tool_that_kills_its_process_fails_its_call() -> None:
    with session() as t:
        error = fail("aborted", t, call("die"))
        assert "ended the process holding the plugins (killed by SIGKILL)" in error.message


def test_garbage_on_the_harness_pipes_fails_the_run_instead_of_passing() -> None:
    with session() as t:
        error = fail("worker_failed", t, call("scribble"))
        assert "broke the harness's protocol" in error.message


def test_a_malformed_message_from_the_plugins_fails_the_run_instead_of_crashing_it() -> None:
    with session() as t:
        error = fail("worker_failed", t, call("forge"))
        assert "a malformed block '5'" in error.message


def test_a_session_without_a_ui_fails_a_tool_that_asks_anyway() -> None:
    with session(has_ui=False) as t:
        error = fail("ui_invalid", t, call("ask"))
        assert "the session has no UI (ctx.has_ui is False)" in error.message


def test_a_setup_function_the_plugin_process_cannot_reach_is_refused_with_a_way_out() -> None:
    def local(api: PluginAPI) -> None:
        api.register_tool("echo", lambda text: text)

    with pytest.raises(HarnessError) as info:
        create_test_session([local], isolate=True)
    assert info.value.code == "plugin_load_failed"
    assert "name its file 'path/to/plugin.py:setup'" in info.value.message


def test_a_plugin_file_loads_in_either_process(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("PREFIX = '>> '\n")
    (tmp_path / "my_plugin.py").write_text(
        "from helper import PREFIX\n\n"
        "def setup(api):\n"
        "    api.register_tool('shout', lambda text: PREFIX + text.upper())\n"
        "def other(api):\n"
        "    api.register_tool('whisper', lambda text: text.lower())\n"
    )
    for isolate in (False, True):
        with create_test_session(
            [str(tmp_path / "my_plugin.py"), f"{tmp_path / 'my_plugin.py'}:other"],
            isolate=isolate,
        ) as t:
            t.run(when("go", [call("shout", {"text": "hi"}), say("done")]))
            assert t.events.tool_results[0].text == ">> HI"
            assert t.tools == ["shout", "whisper"]


def test_a_missing_plugin_file_is_a_load_failure(tmp_path: Path) -> None:
    with pytest.raises(HarnessError) as info:
        create_test_session([str(tmp_path / "nowhere.py")], isolate=True)
    assert info.value.code == "plugin_load_failed"
    assert "no plugin file" in info.value.message


def test_the_environment_switch_isolates_every_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOXVERIFY_ISOLATE_PLUGINS", "1")
    with create_test_session([PLUGIN]) as t:
        t.run(when("go", [call("where"), say("done")]))
        assert int(t.events.tool_results[0].text) != os.getpid()


def test_an_unclosed_session_does_not_leave_its_plugin_process_behind() -> None:
    t = session()
    process = t._plugin_side.transport.process
    del t
    import gc  # noqa: PLC0415 - this test alone

    gc.collect()
    assert process.poll() is not None


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_closing_a_session_ends_its_plugin_process() -> None:
    with session() as t:
        process = t._plugin_side.transport.process
    assert process.poll() is not None


def test_a_live_or_recorded_session_keeps_its_plugins_out_of_the_judges_process() -> None:
    """``record`` and ``run --live`` judge a model's session (the contract, what is written):
    their plugins run where they cannot reach that judgement."""
    from sandboxverify.runtime.harness import live_session  # noqa: PLC0415 - this test alone

    t = live_session({"plugins": [PLUGIN]})
    try:
        t.run(when("go", [call("where"), say("done")]))
        assert int(t.events.tool_results[0].text) != os.getpid()
    finally:
        t.close()
