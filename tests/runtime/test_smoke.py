"""The smoke action on its own (in-process): specs, .py playbooks, and runs that prove nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._smoke import smoke
from sandboxverify.stages.playbook import parse_playbook

ECHO = "tests.runtime.test_smoke:echo_plugin"


def echo_plugin(api: Any) -> None:
    api.register_tool("echo", lambda text: text)


def spec(actions: str) -> dict[str, Any]:
    return parse_playbook(f"[[turns]]\nprompt = 'x'\nactions = [{actions}]\n", "s.toml")


def test_a_spec_run_reports_every_call() -> None:
    result = smoke(
        {
            "spec": spec("{ call = 'echo', params = { text = 'hi' } }, { say = 'ok' }"),
            "plugins": [ECHO],
        }
    )
    assert result["ok"] is True and result["error"] is None
    assert (result["sessions"], result["turns"], result["tool_calls"]) == (1, 1, 1)
    assert result["calls"][0]["text"] == "hi"


def test_a_playbook_that_calls_no_tool_proves_nothing() -> None:
    result = smoke({"spec": spec("{ say = 'just talking' }"), "plugins": [ECHO]})
    assert result["ok"] is False
    assert result["error"]["code"] == "nothing_called"


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "play.py"
    path.write_text(
        "from sandboxverify.harness import call, create_test_session, say, when\n" + body
    )
    return path


def test_a_py_playbook_reports_the_calls_of_its_sessions(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        f"for word in ('a', 'b'):\n"
        f"    with create_test_session([{ECHO!r}]) as t:\n"
        f"        t.run(when('x', [call('echo', {{'text': word}}), say('y')]))\n",
    )
    result = smoke({"script": str(path)})
    assert result["ok"] is True, result["error"]
    assert (result["sessions"], result["tool_calls"]) == (2, 2)
    assert [c["text"] for c in result["calls"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        ("x = 1\n", "nothing_called", "called no tool"),
        ("raise ValueError('bad input')\n", "script_failed", "ValueError: bad input"),
        ("import sys\nsys.exit(3)\n", "script_failed", "exited with 3"),
        (
            f"with create_test_session([{ECHO!r}]) as t:\n"
            "    t.run(when('x', [call('ech', {'text': 'a'}), say('y')]))\n",
            "unknown_tool",
            "did you mean 'echo'",
        ),
    ],
)
def test_a_py_playbook_that_fails_or_does_nothing(
    tmp_path: Path, body: str, code: str, fragment: str
) -> None:
    result = smoke({"script": str(script(tmp_path, body))})
    assert result["ok"] is False
    assert result["error"]["code"] == code
    assert fragment in result["error"]["message"]


def test_a_py_playbook_that_exits_zero_after_calling_is_fine(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        f"import sys\nwith create_test_session([{ECHO!r}]) as t:\n"
        "    t.run(when('x', [call('echo', {'text': 'a'}), say('y')]))\n"
        "sys.exit(0)\n",
    )
    assert smoke({"script": str(path)})["ok"] is True


def test_long_results_are_cut_visibly_in_the_report_and_in_mismatch_messages() -> None:
    long_text = "x" * 2500
    result = smoke(
        {
            "spec": spec(
                f"{{ call = 'echo', params = {{ text = '{long_text}' }}, expect = 'y' }}, "
                "{ say = 'ok' }"
            ),
            "plugins": [ECHO],
        }
    )
    [shown] = result["calls"]
    assert shown["text"] == "x" * 2000 + "... [cut: 2500 characters in all]"
    assert shown["text_length"] == 2500
    assert result["error"]["code"] == "expect_mismatch"
    assert "x" * 300 + "... [cut: 2500 characters in all]" in result["error"]["message"]


def quitting_plugin(api: Any) -> None:
    api.register_tool("echo", lambda text: text)
    api.register_tool("quit", lambda: sys.exit(0))
    api.register_tool("hard_quit", lambda: os._exit(0))


QUIT = "tests.runtime.test_smoke:quitting_plugin"


@pytest.mark.parametrize(("tool", "said"), [("quit", "sys.exit(0)"), ("hard_quit", "os._exit(0)")])
def test_a_tool_that_exits_fails_a_toml_and_a_py_playbook(
    tmp_path: Path, tool: str, said: str
) -> None:
    toml = smoke({"spec": spec(f"{{ call = '{tool}' }}, {{ say = 'ok' }}"), "plugins": [QUIT]})
    path = script(
        tmp_path,
        f"with create_test_session([{QUIT!r}]) as t:\n"
        f"    t.run(when('x', [call('echo', {{'text': 'a'}}), call({tool!r}), say('y')]))\n",
    )
    py = smoke({"script": str(path)})
    for result in (toml, py):
        assert result["ok"] is False
        assert result["error"]["code"] == "aborted"
        assert f"the tool {tool!r} called {said}" in result["error"]["message"]


def test_a_py_playbook_that_catches_the_failure_still_fails(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        "from sandboxverify.harness import HarnessError\n"
        f"with create_test_session([{ECHO!r}]) as t:\n"
        "    try:\n"
        "        t.run(when('x', [call('echo', {'text': 'a'}, expect_error=True), say('y')]))\n"
        "    except HarnessError:\n"
        "        pass\n"
        "    t.run(when('again', [call('echo', {'text': 'c'}), say('y')]))\n",
    )
    result = smoke({"script": str(path)})
    assert result["ok"] is False
    assert (result["error"]["code"], result["error"]["turn"]) == ("unexpected_success", 1)
    assert "the playbook caught this failure and went on" in result["error"]["message"]


def test_a_py_playbook_that_exits_hard_itself_fails(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        f"import os\nwith create_test_session([{ECHO!r}]) as t:\n"
        "    t.run(when('x', [call('echo', {'text': 'a'}), say('y')]))\n"
        "os._exit(0)\n",
    )
    result = smoke({"script": str(path)})
    assert result["ok"] is False
    assert result["error"]["message"] == "the playbook called os._exit(0)"


def test_the_call_a_run_diverged_at_is_marked() -> None:
    result = smoke(
        {
            "spec": spec(
                "{ call = 'echo', params = { text = 'a' } }, "
                "{ call = 'echo', params = { text = 'b' }, expect = 'c' }, { say = 'ok' }"
            ),
            "plugins": [ECHO],
        }
    )
    assert result["error"]["code"] == "expect_mismatch"
    assert [call.get("diverged", False) for call in result["calls"]] == [False, True]


def typed_plugin(api: Any) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    api.register_tool("double", lambda n: n * 2, parameters=schema)


def test_validate_false_in_a_toml_playbook_sends_the_arguments_as_written() -> None:
    plugins = ["tests.runtime.test_smoke:typed_plugin"]
    checked = smoke(
        {
            "spec": spec("{ call = 'double', params = { n = 'ab' } }, { say = 'ok' }"),
            "plugins": plugins,
        }
    )
    unchecked = smoke(
        {
            "spec": spec(
                "{ call = 'double', params = { n = 'ab' }, validate = false, expect = 'abab' }, "
                "{ say = 'ok' }"
            ),
            "plugins": plugins,
        }
    )
    assert checked["error"]["code"] == "invalid_arguments"
    assert unchecked["ok"] is True, unchecked["error"]


def dumpable() -> int:
    import ctypes  # noqa: PLC0415 - these tests alone

    return int(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_while_a_run_lasts_in_place_no_process_may_attach_to_its_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run`` judges in the command's own process, beside the plugins' process: while the run
    lasts, no process of the same user may attach to it (and write its verdict); afterwards it is
    as it was."""
    from sandboxverify.runtime import _smoke  # noqa: PLC0415

    seen: list[int] = []
    run_spec = vars(_smoke)["run_spec"]

    def observed(*args: Any, **kwargs: Any) -> Any:
        seen.append(dumpable())
        return run_spec(*args, **kwargs)

    monkeypatch.setattr(_smoke, "run_spec", observed)
    before = dumpable()
    result = smoke(
        {
            "spec": spec("{ call = 'echo', params = { text = 'hi' } }, { say = 'ok' }"),
            "plugins": [ECHO],
        }
    )
    assert result["ok"] is True
    assert seen == [0]
    assert dumpable() == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_while_a_model_drives_the_plugins_no_process_may_attach_to_the_recorder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``record`` and ``run --live`` judge in the command's process too."""
    pytest.importorskip("llm_echo", reason="llm-echo (the offline model) needs Python 3.10+")
    from sandboxverify.runtime import _recording, record  # noqa: PLC0415
    from tests.helpers import fixture  # noqa: PLC0415

    monkeypatch.syspath_prepend(str(fixture("llm-tools")))
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))
    seen: list[int] = []
    live_session = vars(_recording)["live_session"]

    def observed(*args: Any, **kwargs: Any) -> Any:
        seen.append(dumpable())
        return live_session(*args, **kwargs)

    monkeypatch.setattr(_recording, "live_session", observed)
    before = dumpable()
    prompt = '{"tool_calls": [{"name": "reverse_text", "arguments": {"text": "ab"}}]}'
    result = record(
        {"prompts": [prompt], "model": "echo", "plugins": ["svfix_llm_tools.plugin"], "host": "llm"}
    )
    assert result["ok"] is True, result["error"]
    assert seen == [0]
    assert dumpable() == before
