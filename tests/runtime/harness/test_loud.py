"""Nothing passes silently: code that would end the run, async code, callbacks that say no, hooks
that hang, and the harness's own calls going wrong are each a failure of the action."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, Callable

import pytest

from sandboxverify.harness import HarnessError, call, create_test_session, say, when
from sandboxverify.runtime import PluginAPI


class Custom(BaseException):
    pass


def _exit0() -> None:
    sys.exit(0)


def _exit3() -> None:
    sys.exit(3)


def _interrupt() -> None:
    raise KeyboardInterrupt


def _custom() -> None:
    raise Custom("stop")


ENDINGS: list[tuple[Callable[[], None], str]] = [
    (_exit0, "called sys.exit(0)"),
    (_exit3, "called sys.exit(3)"),
    (_interrupt, "raised KeyboardInterrupt"),
    (_custom, "raised Custom: stop"),
]


def ending_plugin(end: Callable[[], None]) -> Callable[[PluginAPI], None]:
    def setup(api: PluginAPI) -> None:
        @api.tool
        def quit(text: str = "") -> str:
            end()
            return "never"

        @api.tool
        def echo(text: str) -> str:
            return text

    return setup


def fail(code: str, session: Any, *actions: Any) -> HarnessError:
    with pytest.raises(HarnessError) as info:
        session.run(when("go", [*actions, say("done")]))
    assert info.value.code == code, info.value
    return info.value


@pytest.mark.parametrize("timeout", [60.0, None], ids=["on-a-thread", "inline"])
@pytest.mark.parametrize(("end", "said"), ENDINGS)
def test_a_tool_that_ends_the_run_fails_its_action_even_when_errors_are_expected(
    end: Callable[[], None], said: str, timeout: float | None
) -> None:
    with create_test_session([ending_plugin(end)], call_timeout=timeout) as t:
        error = fail("aborted", t, call("echo", {"text": "a"}), call("quit", expect_error=True))
    assert (error.turn, error.action) == (1, 2)
    assert "turn 1 ('go'), action 2 (call('quit'))" in error.message
    assert f"the tool 'quit' {said}" in error.message
    assert t.failure is error


def test_os_exit_in_a_tool_raises_instead_of_ending_the_interpreter() -> None:
    def hard(api: PluginAPI) -> None:
        api.register_tool("hard", lambda: os._exit(0))

    real = os._exit
    with create_test_session([hard]) as t:
        error = fail("aborted", t, call("hard"))
    assert "the tool 'hard' called os._exit(0)" in error.message
    assert os._exit is real  # restored after the run


def test_os_exit_bound_early_by_name_raises_too(tmp_path: Any, monkeypatch: Any) -> None:
    # a plugin module that imported the function itself, not the os attribute
    (tmp_path / "svtest_early_exit.py").write_text(
        "from os import _exit\n\n"
        "def setup(api):\n"
        "    api.register_tool('early', lambda: _exit(0))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import svtest_early_exit  # type: ignore[import-not-found]  # noqa: PLC0415 - written above

    real = os._exit
    try:
        with create_test_session([svtest_early_exit.setup]) as t:
            error = fail("aborted", t, call("early"))
    finally:  # no other test may find this module loaded
        del sys.modules["svtest_early_exit"]
    assert "the tool 'early' called os._exit(0)" in error.message
    assert svtest_early_exit._exit is real and os._exit is real  # both restored


@pytest.mark.parametrize(("end", "said"), ENDINGS)
def test_hooks_callbacks_mocks_and_params_that_end_the_run_fail_their_action(
    end: Callable[[], None], said: str
) -> None:
    def hooked(api: PluginAPI) -> None:
        api.register_tool("echo", lambda text: text)
        api.on("tool_call", lambda event: end() if event.input.get("text") == "hook" else None)

    def ui_tool(api: PluginAPI) -> None:
        api.register_tool("ask", lambda ctx: str(ctx.ui.confirm("Sure?")))

    with create_test_session([hooked, ui_tool], mock_tools={"bash": lambda p: end()}) as t:
        hook = fail("aborted", t, call("echo", {"text": "hook"}))
        callback = fail("aborted", t, call("echo", {"text": "a"}).then(lambda r: end()))
        mock = fail("aborted", t, call("bash", {"command": "ls"}, expect_error=True))
        params = fail("aborted", t, call("echo", end))  # type: ignore[arg-type]
    assert f"the tool_call handler of plugin {hooked.__qualname__!r} {said}" in hook.message
    assert f"the .then() callback (a lambda) {said}" in callback.message
    assert f"the mock for 'bash' {said}" in mock.message
    assert f"the params callable {said}" in params.message
    with create_test_session([ui_tool], mock_ui={"confirm": lambda *args: end()}) as t:
        ui = fail("aborted", t, call("ask", expect_error=True))
    assert f"the mock_ui 'confirm' callable {said}" in ui.message


def test_a_mock_that_raises_is_never_an_expected_tool_error() -> None:
    def broken(params: dict[str, Any]) -> str:
        return {"a": "b"}["missing"]

    with create_test_session([ending_plugin(_exit0)], mock_tools={"bash": broken}) as t:
        error = fail("mock_failed", t, call("bash", {"command": "ls"}, expect_error=True))
    assert "the mock for 'bash' raised KeyError: 'missing'" in error.message


def test_arguments_the_function_cannot_take_are_never_an_expected_tool_error() -> None:
    def mismatched(api: PluginAPI) -> None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        api.register_tool("hello", lambda: "hi", parameters=schema)

    with create_test_session([mismatched]) as t:
        error = fail("invalid_arguments", t, call("hello", {"name": "A"}, expect_error=True))
    assert "the function of 'hello' cannot take the arguments {'name': 'A'}" in error.message
    assert "its signature and its parameter schema disagree" in error.message


def test_validate_false_sends_arguments_that_break_the_schema() -> None:
    def strict(api: PluginAPI) -> None:
        def double(n: int) -> int:
            if not isinstance(n, int):
                raise TypeError(f"n must be an integer, got {n!r}")
            return n * 2

        api.register_tool("double", double)

    with create_test_session([strict]) as t:
        fail("invalid_arguments", t, call("double", {"n": "x"}, expect_error=True))
        t.run(
            when(
                "bad on purpose",
                [
                    call("double", {"n": "x"}, expect_error="must be an integer", validate=False),
                    say("handled"),
                ],
            )
        )
    assert t.events.tool_results_for("double")[-1].is_error


def test_a_hook_giving_a_reason_without_block_is_an_error() -> None:
    def vague(api: PluginAPI) -> None:
        api.register_tool("echo", lambda text: text)
        api.on("tool_call", lambda event: {"reason": "not today"})

    with create_test_session([vague]) as t:
        error = fail("hook_failed", t, call("echo", {"text": "a"}))
    assert "a reason without 'block': it blocks nothing" in error.message


def echo(api: PluginAPI) -> None:
    api.register_tool("echo", lambda text: text)


def test_async_callbacks_are_awaited_and_returning_false_fails_the_check() -> None:
    async def failing(result: Any) -> None:
        await asyncio.sleep(0)
        assert result.text == "other"

    async def says_no(result: Any) -> bool:
        return False

    seen: list[str] = []

    async def records(result: Any) -> None:
        await asyncio.sleep(0)
        seen.append(result.text)

    with create_test_session([echo]) as t:
        awaited = fail("callback_failed", t, call("echo", {"text": "a"}).then(failing))
        refused = fail("callback_failed", t, call("echo", {"text": "b"}).then(lambda r: False))
        async_refused = fail("callback_failed", t, call("echo", {"text": "c"}).then(says_no))
        t.run(when("fine", [call("echo", {"text": "d"}).then(records).then(bool), say("ok")]))
    assert "the .then() callback 'failing' raised AssertionError" in awaited.message
    assert "returned False for the result of 'echo': 'b'" in refused.message
    assert "the .then() callback 'says_no' returned False" in async_refused.message
    assert seen == ["d"]


def test_async_tools_and_mocks_are_awaited() -> None:
    def slow_echo(api: PluginAPI) -> None:
        @api.tool
        async def shout(text: str) -> str:
            await asyncio.sleep(0)
            return text.upper()

    async def mocked(params: dict[str, Any]) -> str:
        return f"$ {params['command']}"

    for timeout in (60.0, None):
        with create_test_session(
            [slow_echo], mock_tools={"bash": mocked}, call_timeout=timeout
        ) as t:
            t.run(
                when("x", [call("shout", {"text": "hi"}), call("bash", {"command": "ls"}), say("")])
            )
        assert [r.text for r in t.events.tool_results] == ["HI", "$ ls"]


def test_async_tools_run_from_inside_an_event_loop() -> None:
    def slow_echo(api: PluginAPI) -> None:
        async def shout(text: str) -> str:
            return text.upper()

        api.register_tool("shout", shout)

    async def an_async_test() -> str:  # run() called inline while this loop runs
        with create_test_session([slow_echo], call_timeout=None) as t:
            t.run(when("x", [call("shout", {"text": "hi"}), say("")]))
        return t.events.tool_results[0].text

    assert asyncio.run(an_async_test()) == "HI"


def test_hooks_and_callbacks_are_bounded_by_the_timeouts() -> None:
    def hanging(api: PluginAPI) -> None:
        api.register_tool("echo", lambda text: text)
        api.on("tool_call", lambda event: time.sleep(30) if event.input["text"] == "hang" else None)

    started = time.monotonic()
    with create_test_session([hanging], call_timeout=0.3) as t:
        hook = fail("call_timeout", t, call("echo", {"text": "hang"}))
        callback = fail(
            "call_timeout", t, call("echo", {"text": "a"}).then(lambda r: time.sleep(30))
        )
    with create_test_session([hanging], call_timeout=None, run_timeout=0.3) as t:
        whole = fail("run_timeout", t, call("echo", {"text": "hang"}))
    assert time.monotonic() - started < 10
    assert "the tool_call handler of plugin" in hook.message
    assert "did not return within 0.3s" in hook.message
    assert "the .then() callback (a lambda) did not return within 0.3s" in callback.message
    assert "did not return within the run's time" in whole.message


def test_a_run_of_nothing_and_a_session_of_no_plugin_are_errors() -> None:
    with create_test_session([echo]) as t, pytest.raises(HarnessError) as empty:
        t.run()
    assert empty.value.code == "playbook_invalid"
    assert "run() got no turns" in empty.value.message
    with pytest.raises(HarnessError) as none:
        create_test_session([])
    assert none.value.code == "no_plugins"


def test_a_failure_names_the_line_that_wrote_the_action() -> None:
    with create_test_session([echo]) as t:
        line = sys._getframe().f_lineno + 1
        error = fail("unknown_tool", t, call("ecoh", {"text": "a"}))
    assert f"(call('ecoh')) [tests/runtime/harness/test_loud.py:{line}]:" in error.message


def test_a_call_given_up_on_takes_no_further_step() -> None:
    ran: list[str] = []

    def slow_guard(api: PluginAPI) -> None:
        @api.tool
        def effect() -> str:
            ran.append("tool")
            return "done"

        api.on("tool_call", lambda event: time.sleep(0.6))

    with create_test_session([slow_guard], call_timeout=0.2) as t:
        fail("call_timeout", t, call("effect"))
        time.sleep(1.0)  # the hook returns meanwhile, on the abandoned thread
    assert ran == []  # the tool never ran after the harness gave up on the call
    assert t.events.tool_calls == []


def _stray_yield(result: Any) -> Any:
    assert result.text == "never this"  # never runs: the yield below makes this a generator
    yield


async def _async_stray_yield(result: Any) -> Any:
    assert result.text == "never this"
    yield


async def _nested(result: Any) -> Any:
    async def check() -> None:
        assert result.text == "never this"

    return check()  # a coroutine of a coroutine: the inner one is never awaited


@pytest.mark.parametrize(
    ("callback", "said"),
    [
        (_stray_yield, "returned a generator (a `yield` makes it one"),
        (_async_stray_yield, "returned an async generator"),
        (_nested, "returned a coroutine nobody awaited"),
        (lambda r: map(str.isupper, r.text.splitlines()), "a lazy iterator"),
        (lambda r: (line for line in [r.text] if line == "x"), "returned a generator"),
    ],
    ids=["yield", "async-yield", "unawaited", "map", "genexpr"],
)
def test_a_callback_whose_work_never_ran_fails_the_check(callback: Any, said: str) -> None:
    with create_test_session([echo]) as t:
        error = fail("callback_failed", t, call("echo", {"text": "a"}).then(callback))
    assert said in error.message
    assert "so it checked nothing" in error.message


def test_callbacks_that_return_values_still_pass() -> None:
    with create_test_session([echo]) as t:
        t.run(
            when(
                "go",
                [
                    call("echo", {"text": "a"})
                    .then(lambda r: [r.text])
                    .then(lambda r: {"text": r.text})
                    .then(lambda r: r.text)
                    .then(lambda r: None),
                    say("done"),
                ],
            )
        )


def test_a_mock_may_not_shadow_a_tool_a_plugin_registers() -> None:
    with pytest.raises(HarnessError) as info:
        create_test_session([echo], mock_tools={"echo": "mocked", "bash": "ok"})
    assert info.value.code == "mock_shadows_tool"
    assert "mock_tools has 'echo', which a plugin registers" in info.value.message
    assert "the tool under test always runs for real" in info.value.message
