"""``sandboxverify run``: whatever the plugin does, the verdict and the JSON report are its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import CliResult, run_cli

PLUGIN = """
import os, sys

def setup(api):
    api.register_tool("echo", lambda text: text)

    @api.tool
    def chatty(text: str) -> str:
        print("printed by the tool")
        os.write(1, b"written to fd 1 by the tool\\n")
        return text

    @api.tool
    def quit() -> str:
        {body}
        return "never"
"""


def run_here(tmp_path: Path, actions: str, *args: str, body: str = "pass") -> CliResult:
    (tmp_path / "toolbox.py").write_text(PLUGIN.format(body=body), encoding="utf-8")
    playbook = tmp_path / "smoke.toml"
    playbook.write_text(f"[[turns]]\nprompt = 'p'\nactions = [{actions}]\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return run_cli(["run", str(playbook), "--plugin", "toolbox:setup", *args], env=env)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("sys.exit(0)", "called sys.exit(0)"),
        ("sys.exit(3)", "called sys.exit(3)"),
        ("os._exit(0)", "called os._exit(0)"),
        ("raise KeyboardInterrupt", "raised KeyboardInterrupt"),
    ],
)
def test_a_tool_that_ends_the_interpreter_fails_the_run_and_the_report_is_written(
    tmp_path: Path, body: str, said: str
) -> None:
    result = run_here(
        tmp_path,
        "{ call = 'echo', params = { text = 'a' } }, { call = 'quit' }, { say = 'x' }",
        "--json",
        "-",
        body=body,
    )
    assert result.code == 1, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["turn"], error["action"]) == ("aborted", 1, 2)
    assert f"the tool 'quit' {said}" in error["message"]
    assert "FAILED [aborted] turn 1 ('p'), action 2 (call('quit'))" in result.stderr


def test_with_json_on_stdout_what_tools_print_goes_to_stderr(tmp_path: Path) -> None:
    result = run_here(
        tmp_path, "{ call = 'chatty', params = { text = 'a' } }, { say = 'x' }", "--json", "-"
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True  # nothing but the JSON
    assert "printed by the tool" in result.stderr
    assert "written to fd 1 by the tool" in result.stderr


def test_the_call_the_run_diverged_at_is_not_shown_as_ok(tmp_path: Path) -> None:
    result = run_here(
        tmp_path,
        "{ call = 'echo', params = { text = 'a' } }, "
        "{ call = 'echo', params = { text = 'b' }, expect = 'c' }, { say = 'x' }",
    )
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ok   turn 1 call_1 echo: a")
    assert lines[1].startswith("FAIL turn 1 call_2 echo: b")


def test_without_plugins_or_a_project_run_is_a_usage_error(tmp_path: Path) -> None:
    playbook = tmp_path / "smoke.toml"
    playbook.write_text("[[turns]]\nprompt = 'p'\nactions = [{ call = 'a' }, { say = 'x' }]\n")
    env = {key: value for key, value in os.environ.items() if key != "SANDBOXVERIFY_DIST"}
    for extra, fragment in (
        ([], "there is no project here"),
        (["--dist", "no-such-dist"], "--dist no-such-dist is not installed in this environment"),
    ):
        result = run_cli(["run", str(playbook), *extra], env=env, cwd=tmp_path)
        assert result.code == 2, result.stdout + result.stderr
        assert result.stderr.startswith("ERROR no plugins to run: ") and fragment in result.stderr
        assert "hint: pass --plugin module:attr" in result.stderr
        assert "plugins=[" not in result.stderr  # the command line's words, not Python's


def test_a_toml_playbook_names_plugin_files_relative_to_itself(tmp_path: Path) -> None:
    folder = tmp_path / "smoke"
    folder.mkdir()
    (folder / "helpers").mkdir()
    (folder / "helpers" / "echo_plugin.py").write_text(
        "def setup(api):\n    api.register_tool('echo', lambda text: text)\n"
        "def loud(api):\n    api.register_tool('shout', lambda text: text.upper())\n"
    )
    (folder / "smoke.toml").write_text(
        "plugins = ['helpers/echo_plugin.py', 'helpers/echo_plugin.py:loud']\n"
        "[[turns]]\nprompt = 'p'\n"
        "actions = [{ call = 'shout', params = { text = 'a' }, expect = '^A$' }, { say = 'x' }]\n"
    )
    result = run_cli(["run", str(folder / "smoke.toml")], cwd=tmp_path)
    assert result.code == 0, result.stdout + result.stderr
    assert "ok   turn 1 call_1 shout: A" in result.stdout
