"""The harness in-process: a scripted model, a real agent loop, and every divergence loud."""

from __future__ import annotations

import gc
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.harness import (
    HarnessError,
    ToolResult,
    call,
    call_parallel,
    create_test_session,
    say,
    when,
)
from sandboxverify.runtime import PluginAPI


def demo(api: PluginAPI) -> None:
    """An inline plugin: a few tools and a guard, enough to drive every path."""

    @api.tool
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    @api.tool
    def add(a: int, b: int) -> int:
        return a + b

    @api.tool
    def explode(reason: str = "boom") -> str:
        raise RuntimeError(reason)

    @api.tool
    def pick(ctx: Any) -> str:
        choice = ctx.ui.select("Which?", ["red", "green"])
        ok = ctx.ui.confirm("Sure?", f"Use {choice}?")
        ctx.ui.notify(f"picked {choice}")
        return f"{choice} {'confirmed' if ok else 'declined'} ({ctx.tool_call_id})"

    @api.tool
    def slow(seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    def guard(event: Any) -> dict[str, Any] | None:
        if event.tool_name == "bash" and "rm -rf" in event.input.get("command", ""):
            return {"block": True, "reason": "dangerous command"}
        return None

    api.on("tool_call", guard)


def unlocated(message: str) -> str:
    """``message`` without the ``[file.py:line]`` of the action it names."""
    return re.sub(r" \[[^\]]*\.py:\d+\]", "", message)


def fail(code: str, session_or_call: Any, *turns: Any) -> HarnessError:
    with pytest.raises(HarnessError) as info:
        session_or_call.run(*turns)
    assert info.value.code == code, info.value
    return info.value


@pytest.fixture
def session() -> Iterator[Any]:
    with create_test_session([demo], mock_tools={"bash": lambda p: f"$ {p['command']}\nok"}) as t:
        yield t


def test_a_playbook_drives_real_tools_and_collects_events(session: Any) -> None:
    seen: list[str] = []
    session.run(
        when(
            "Greet Ada",
            [
                call("greet", {"name": "Ada"}).then(lambda r: seen.append(r.text)),
                say("Greeted."),
            ],
        ),
        when("Add", [call("add", {"a": 2, "b": 3}), say("5")]),
    )

    assert seen == ["Hello, Ada!"]
    [greet] = session.events.tool_calls_for("greet")
    assert (greet.input, greet.tool_call_id, greet.turn, greet.action) == (
        {"name": "Ada"},
        "call_1",
        1,
        1,
    )
    [added] = session.events.tool_results_for("add")
    assert (added.text, added.details, added.is_error, added.mocked) == ("5", 5, False, False)
    assert added.tool_call_id == "call_2" and added.turn == 2
    roles = [(m.role, m.text) for m in session.events.messages]
    assert roles == [
        ("user", "Greet Ada"),
        ("assistant", None),
        ("tool", "Hello, Ada!"),
        ("assistant", "Greeted."),
        ("user", "Add"),
        ("assistant", None),
        ("tool", "5"),
        ("assistant", "5"),
    ]
    assert session.playbook.consumed == 4 and session.playbook.remaining == 0
    types = [event.type for event in session.events.all]
    assert types[0] == "run_started" and types[-1] == "run_completed"
    assert types.count("model_step") == 4


def test_late_bound_params_are_resolved_when_the_action_is_taken(session: Any) -> None:
    box: dict[str, str] = {}
    session.run(
        when(
            "Two",
            [
                call("greet", {"name": "Ada"}).then(lambda r: box.update(name=r.text.split()[-1])),
                call("greet", lambda: {"name": box["name"]}),
                say("ok"),
            ],
        )
    )
    assert session.events.tool_results_for("greet")[1].text == "Hello, Ada!!"


def test_parallel_calls_and_text_with_a_call_share_one_model_message(session: Any) -> None:
    session.run(
        when(
            "Both",
            [
                call_parallel(
                    [call("greet", {"name": "A"}), call("add", {"a": 1, "b": 1})], text="Doing both"
                ),
                call("greet", {"name": "B"}, text="One more"),
                say("Done"),
            ],
        )
    )
    assistant = [m for m in session.events.messages if m.role == "assistant"]
    assert [(m.text, [c["name"] for c in m.tool_calls]) for m in assistant] == [
        ("Doing both", ["greet", "add"]),
        ("One more", ["greet"]),
        ("Done", []),
    ]
    assert [r.tool_call_id for r in session.events.tool_results] == ["call_1", "call_2", "call_3"]


def test_a_turn_without_say_fails_naming_the_turn(session: Any) -> None:
    error = fail(
        "turn_without_say",
        session,
        when("First", [call("greet", {"name": "A"})]),
        when("Second", [say("x")]),
    )
    assert error.message == (
        "turn 1 ('First'): the turn ended without say(): the agent loop asked the model for "
        "another step after action 1 (call('greet')); end every turn with say(...)"
    )


def test_the_playbook_running_out_while_the_loop_asks_for_more(session: Any) -> None:
    error = fail("playbook_exhausted", session, when("Only", [call("add", {"a": 1, "b": 2})]))
    assert error.message == (
        "turn 1 ('Only'): the agent loop asked the model for another step after action 1 "
        "(call('add')), but the playbook has nothing left; end the turn with say(...)"
    )


def test_actions_left_over_after_say(session: Any) -> None:
    error = fail(
        "actions_left_over",
        session,
        when("Chat", [say("early"), call("greet", {"name": "A"}), say("late")]),
    )
    assert unlocated(error.message) == (
        "turn 1 ('Chat'), action 1 (say('early')) ended the turn, but 2 action(s) after it "
        "never ran: call('greet'), say('late')"
    )
    assert session.events.tool_calls == []


def test_unknown_tool_lists_the_available_names(session: Any) -> None:
    error = fail("unknown_tool", session, when("x", [call("gret", {"name": "A"}), say("y")]))
    assert (
        "the model called 'gret', which is neither registered nor mocked (did you mean "
        "'greet'?)" in error.message
    )
    assert error.message.endswith(
        "available tools: add, bash, explode, greet, pick, slow (with a mock also: edit, read, "
        "write)"
    )
    assert error.turn == 1 and error.action == 1


def test_arguments_that_fail_the_schema(session: Any) -> None:
    error = fail(
        "invalid_arguments", session, when("x", [call("add", {"a": "two", "b": 2}), say("y")])
    )
    assert (
        "turn 1 ('x'), action 1 (call('add')): arguments {'a': 'two', 'b': 2} do not fit "
        "the schema of 'add': /a: expected integer" in unlocated(error.message)
    )


def test_a_tool_that_raises_without_expect_error(session: Any) -> None:
    error = fail("tool_error", session, when("x", [call("explode", {"reason": "kaput"}), say("y")]))
    assert unlocated(error.message) == (
        "turn 1 ('x'), action 1 (call('explode')): 'explode' returned an error: "
        "RuntimeError: kaput; declare expect_error=True if the error is what you test"
    )
    assert error.details is not None and "raise RuntimeError(reason)" in error.details


def test_expected_errors_reach_then_and_are_checked(session: Any) -> None:
    seen: list[ToolResult] = []
    session.run(
        when(
            "x",
            [
                call("explode", {"reason": "kaput"}, expect_error="kap").then(seen.append),
                say("handled"),
            ],
        )
    )
    assert seen[0].is_error and seen[0].text == "RuntimeError: kaput"
    mismatch = fail(
        "expect_mismatch", session, when("y", [call("explode", expect_error="^nothing"), say("z")])
    )
    assert "expected an error matching '^nothing', got: 'RuntimeError: boom'" in mismatch.message
    success = fail(
        "unexpected_success",
        session,
        when("z", [call("greet", {"name": "A"}, expect_error=True), say("z")]),
    )
    assert "expected an error, but 'greet' succeeded with: 'Hello, A!'" in success.message


def test_an_exception_inside_then(session: Any) -> None:
    def broken(result: Any) -> None:
        raise KeyError("missing")

    error = fail(
        "callback_failed", session, when("x", [call("greet", {"name": "A"}).then(broken), say("y")])
    )
    assert unlocated(error.message) == (
        "turn 1 ('x'), action 1 (call('greet')): the .then() callback 'broken' raised "
        "KeyError: 'missing'"
    )


def test_params_callable_that_raises(session: Any) -> None:
    def broken_params() -> dict[str, Any]:
        raise KeyError("k")

    error = fail("params_failed", session, when("x", [call("greet", broken_params), say("y")]))
    assert "the params callable raised KeyError" in error.message


def test_a_mock_key_naming_no_tool() -> None:
    with pytest.raises(HarnessError) as info:
        create_test_session([demo], mock_tools={"bsh": "ok"})
    assert info.value.code == "unknown_mock"
    assert (
        "mock_tools has 'bsh', which is no registered or environmental tool (did you mean "
        "'bash'?)" in info.value.message
    )


def test_mock_values_of_the_wrong_shape() -> None:
    for value, fragment in (
        (42, "is a int"),
        ([], "empty list"),
        ({"text": "x"}, "unexpected ['text']"),
    ):
        with pytest.raises(HarnessError) as info:
            create_test_session([demo], mock_tools={"bash": value})
        assert info.value.code == "invalid_mock"
        assert fragment in info.value.message


def test_stateful_mocks_are_consumed_in_order_then_exhausted() -> None:
    with create_test_session(
        [demo],
        mock_tools={
            "read": [
                "first",
                {"content": [{"type": "text", "text": "second"}], "details": {"n": 2}},
            ]
        },
    ) as t:
        t.run(when("r", [call("read", {"path": "a"}), call("read", {"path": "b"}), say("ok")]))
        assert [r.text for r in t.events.tool_results] == ["first", "second"]
        assert all(r.mocked for r in t.events.tool_results)
        error = fail("mocks_exhausted", t, when("again", [call("read", {"path": "c"}), say("x")]))
    assert "the mock for 'read' has 2 entries, all used; this is call 3" in error.message


def test_an_environmental_tool_without_a_mock_never_runs() -> None:
    with create_test_session([demo]) as t:
        error = fail(
            "tool_not_mocked",
            t,
            when("x", [call("write", {"path": "p", "content": "c"}), say("y")]),
        )
    assert (
        "the environmental tool 'write', which is never executed for real; add a mock"
        in error.message
    )


def test_hooks_block_before_execution_and_fire_on_mocked_calls() -> None:
    with create_test_session([demo], mock_tools={"bash": ["first"]}) as t:
        t.run(
            when(
                "shell",
                [
                    call("bash", {"command": "rm -rf /"}, expect_error="dangerous"),
                    call("bash", {"command": "ls"}),
                    say("ok"),
                ],
            )
        )
        [blocked] = t.events.blocked_calls()
        assert (blocked.block_reason, blocked.blocked_by) == ("dangerous command", "demo")
        results = t.events.tool_results_for("bash")
        assert [(r.text, r.blocked, r.mocked) for r in results] == [
            ("dangerous command", True, False),
            ("first", False, True),
        ]  # the block used no mock


def test_a_blocked_call_not_declared_as_expected_fails(session: Any) -> None:
    error = fail(
        "tool_error", session, when("x", [call("bash", {"command": "rm -rf /"}), say("y")])
    )
    assert "'bash' was blocked: dangerous command; declare expect_error=True" in error.message


def test_tool_result_hooks_replace_results_and_broken_hooks_fail() -> None:
    def shouting(api: Any) -> None:
        api.on(
            "tool_result",
            lambda event: event.result.text.upper() if event.tool_name == "greet" else None,
        )

    with create_test_session([demo, shouting]) as t:
        t.run(when("x", [call("greet", {"name": "a"}), say("y")]))
        assert t.events.tool_results[0].text == "HELLO, A!"

    def raising(api: Any) -> None:
        api.on("tool_call", lambda event: 1 / 0)

    with create_test_session([demo, raising]) as t:
        error = fail("hook_failed", t, when("x", [call("greet", {"name": "a"}), say("y")]))
    assert (
        "the tool_call handler of plugin 'test_tool_result_hooks_replace_results_and_broken_"
        "hooks_fail.<locals>.raising' raised ZeroDivisionError" in error.message
    )

    def nonsense(api: Any) -> None:
        api.on("tool_call", lambda event: "yes")

    with create_test_session([demo, nonsense]) as t:
        error = fail("hook_failed", t, when("x", [call("greet", {"name": "a"}), say("y")]))
    assert "returned 'yes'; return None or {'block': True, 'reason': '...'}" in error.message


def test_mock_ui_answers_defaults_and_records_every_call() -> None:
    with create_test_session([demo]) as t:
        t.run(when("pick", [call("pick"), say("ok")]))
        assert t.events.tool_results[0].text == "red confirmed (call_1)"  # defaults
        assert [(u.method, u.return_value, u.tool_call_id) for u in t.events.ui] == [
            ("select", "red", "call_1"),
            ("confirm", True, "call_1"),
            ("notify", None, "call_1"),
        ]
        assert t.events.ui_calls_for("select")[0].args == ["Which?", ["red", "green"]]

    with create_test_session([demo], mock_ui={"select": 1, "confirm": [False]}) as t:
        t.run(when("pick", [call("pick"), say("ok")]))
        assert t.events.tool_results[0].text == "green declined (call_1)"

    with create_test_session([demo], mock_ui={"select": lambda title, items: items[-1]}) as t:
        t.run(when("pick", [call("pick"), say("ok")]))
        assert t.events.tool_results[0].text.startswith("green")


def test_a_select_answer_that_is_not_an_item_is_an_error_not_a_fallback() -> None:
    with create_test_session([demo], mock_ui={"select": "gren"}) as t:
        error = fail("ui_invalid", t, when("pick", [call("pick"), say("ok")]))
    assert (
        "select('Which?'): 'gren' is not one of ['red', 'green'] (did you mean 'green'?)"
        in error.message
    )


def test_ui_failures_survive_plugins_that_swallow_exceptions() -> None:
    def swallowing(api: PluginAPI) -> None:
        @api.tool
        def careless(ctx: Any) -> str:
            try:  # noqa: SIM105 - a careless plugin, on purpose
                ctx.ui.select("Which?", ["a"])
            except Exception:
                pass
            return "carried on"

    with create_test_session([swallowing], mock_ui={"select": 5}) as t:
        error = fail("ui_invalid", t, when("x", [call("careless"), say("y")]))
    assert "index 5 is out of range" in error.message


def test_unknown_and_invalid_mock_ui_keys() -> None:
    with pytest.raises(HarnessError, match=r"mock_ui has 'confrim'.*did you mean 'confirm'"):
        create_test_session([demo], mock_ui={"confrim": True})
    with pytest.raises(HarnessError, match="fire-and-forget"):
        create_test_session([demo], mock_ui={"notify": False})
    with pytest.raises(HarnessError, match="cannot answer 'yes'"):
        create_test_session([demo], mock_ui={"confirm": "yes"})


def test_plugin_load_errors_fail_at_once_unless_auto_assert_is_off() -> None:
    def broken(api: Any) -> None:
        raise RuntimeError("no config")

    with pytest.raises(HarnessError) as info:
        create_test_session([demo, broken])
    assert info.value.code == "plugin_load_failed"
    assert "failed to load (setup): RuntimeError: no config" in info.value.message
    with create_test_session([demo, broken], auto_assert=False) as t:
        assert [f.plugin for f in t.load_errors] == [t.load_errors[0].plugin]
        assert "greet" in t.tools


def test_plugins_by_module_attr_string(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "harness_demo_mod.py").write_text(
        "def setup(api):\n    api.register_tool('ping', lambda: 'pong')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with create_test_session(["harness_demo_mod:setup"]) as t:
        t.run(when("x", [call("ping"), say("y")]))
        assert t.events.tool_results[0].text == "pong"
    with pytest.raises(HarnessError, match="has no attribute 'setpu'"):
        create_test_session(["harness_demo_mod:setpu"])


def test_auto_assert_off_keeps_tool_errors_as_results() -> None:
    with create_test_session([demo], auto_assert=False) as t:
        t.run(when("x", [call("explode"), say("y"), say("left over")]))
        assert t.events.tool_results[0].is_error
        assert t.playbook.remaining == 1


def test_per_call_and_whole_run_timeouts() -> None:
    with create_test_session([demo], call_timeout=0.2) as t:
        error = fail("call_timeout", t, when("x", [call("slow", {"seconds": 5}), say("y")]))
    assert "'slow' did not return within 0.2s" in error.message
    with create_test_session([demo], call_timeout=None, run_timeout=0.3) as t:
        error = fail(
            "run_timeout",
            t,
            when("x", [call("slow", {"seconds": 0.2}), call("slow", {"seconds": 5}), say("y")]),
        )
    assert error.code == "run_timeout"


def test_process_assertions(session: Any) -> None:
    session.run(when("x", [call("greet", {"name": "a"}), call("add", {"a": 1, "b": 2}), say("y")]))
    session.assert_called("greet")
    session.assert_called("add", times=1)
    session.assert_not_called("explode")
    session.assert_called_before("greet", "add")
    with pytest.raises(
        HarnessError,
        match=r"expected 'add' before 'greet', but 'greet' came "
        r"first; calls: greet, add",
    ):
        session.assert_called_before("add", "greet")
    with pytest.raises(HarnessError, match="expected 'pick' to be called at least once"):
        session.assert_called("pick")
    with pytest.raises(HarnessError, match="expected 'greet' not to be called"):
        session.assert_not_called("greet")


def test_the_session_cleans_its_temporary_directory(tmp_path: Path) -> None:
    with create_test_session([demo]) as t:
        own = Path(t.cwd)
        assert own.is_dir()
    assert not own.exists()
    with create_test_session([demo], cwd=tmp_path) as t:
        assert t.cwd == str(tmp_path)
    assert tmp_path.is_dir()


def test_bad_turns_are_type_errors_at_construction() -> None:
    with pytest.raises(TypeError, match="action 1 is a str"):
        when("x", ["greet"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="params must be a dict"):
        call("greet", ["a"])  # type: ignore[arg-type]


def test_text_prompts_and_fire_and_forget_ui_calls() -> None:
    def form(api: PluginAPI) -> None:
        @api.tool
        def fill(ctx: Any) -> str:
            name = ctx.ui.input("Name?", "your name")
            note = ctx.ui.editor("Note", "draft")
            ctx.ui.set_status("form", "filled")
            ctx.ui.set_widget("form", ["line 1"])
            return f"{name!r} {note!r}"

    with create_test_session([form]) as t:
        t.run(when("x", [call("fill"), say("y")]))
        assert t.events.tool_results[0].text == "'' ''"  # the defaults
        assert [(u.method, u.args, u.return_value) for u in t.events.ui] == [
            ("input", ["Name?", "your name"], ""),
            ("editor", ["Note", "draft"], ""),
            ("set_status", ["form", "filled"], None),
            ("set_widget", ["form", ["line 1"]], None),
        ]
    with create_test_session(
        [form], mock_ui={"input": ["Ada"], "editor": lambda t, p: p + "!"}
    ) as t:
        t.run(when("x", [call("fill"), say("y")]))
        assert t.events.tool_results[0].text == "'Ada' 'draft!'"


def test_an_unclosed_session_still_removes_its_directory() -> None:
    session = create_test_session([demo])
    directory = Path(session.cwd)
    assert directory.is_dir()
    del session
    gc.collect()
    assert not directory.exists()


def test_snapshots_need_a_place_outside_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.delenv("CI", raising=False)
    with create_test_session([demo]) as t:
        with pytest.raises(HarnessError) as info:
            t.assert_snapshot({"a": 1})
        assert info.value.code == "snapshot_unlocated"
    with create_test_session([demo], snapshot_dir=tmp_path) as t:
        t.assert_snapshot({"a": 1}, name="state")
        assert (tmp_path / "session" / "state.json").read_text() == '{\n  "a": 1\n}\n'
        with pytest.raises(HarnessError, match="snapshot_mismatch"):
            t.assert_snapshot({"a": 2}, name="state")


def test_elicit_answers_are_validated_against_the_requested_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }

    def asking(api: PluginAPI) -> None:
        @api.tool
        def ask(ctx: Any) -> str:
            return json.dumps(ctx.ui.elicit({"message": "Who?", "requestedSchema": schema}))

    with create_test_session([asking]) as t:  # unmocked: the user declines
        t.run(when("x", [call("ask"), say("y")]))
        assert json.loads(t.events.tool_results[0].text) == {"action": "decline"}

    answers = ["cancel", {"name": "Ada"}, {"action": "accept", "content": {"name": "Bo"}}]
    with create_test_session([asking], mock_ui={"elicit": answers}) as t:
        t.run(when("x", [call("ask"), call("ask"), call("ask"), say("y")]))
        assert [json.loads(r.text) for r in t.events.tool_results] == [
            {"action": "cancel"},
            {"action": "accept", "content": {"name": "Ada"}},
            {"action": "accept", "content": {"name": "Bo"}},
        ]
        assert [u.method for u in t.events.ui] == ["elicit"] * 3
        assert t.events.ui[0].args == ["Who?", schema]

    with create_test_session([asking], mock_ui={"elicit": {"name": 7}}) as t:
        error = fail("ui_invalid", t, when("x", [call("ask"), say("y")]))
    assert "elicit('Who?'): the answer {'name': 7} does not fit" in error.message

    with pytest.raises(HarnessError, match="cannot answer 'maybe'"):
        create_test_session([asking], mock_ui={"elicit": "maybe"})


def test_sample_answers_must_be_text_dicts_or_callables() -> None:
    with pytest.raises(TypeError, match="a sample answer is text, a result dict or a callable"):
        call("t", sample=[3])
    assert call("t", sample="x").sample == ("x",)
    assert call("t", sample=["a", {"content": {}}]).sample == ("a", {"content": {}})
