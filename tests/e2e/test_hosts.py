"""The llm and mcp hosts end to end: real builds, sandboxes, installs from the index, discovery,
expectations and smoke playbooks against the fixture packages."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest

from sandboxverify import CheckOptions, check
from tests.helpers import FIXTURES, fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

PLAYBOOKS = FIXTURES / "playbooks"
MCP_TOOLS = ("add", "echo", "explode", "confirm_name", "summarize")


# -- mcp ----------------------------------------------------------------------------------------


def test_an_mcp_server_on_the_official_sdk_is_listed_and_smoked() -> None:
    report = check(
        CheckOptions(
            targets=(str(fixture("mcp-server")),),
            host="mcp",
            installer="uv",
            python=("min",),  # the SDK needs 3.10+, whatever runs the tests
            expect_tools=MCP_TOOLS,
            exact=True,
            expect_plugins=1,
            smoke=str(PLAYBOOKS / "mcp-server.toml"),
        )
    )

    assert report.ok, report.failures
    [run] = report.runs
    [plugin] = run.plugins
    assert (plugin.name, plugin.group, plugin.value) == (
        "svfix-mcp-server",
        "console_scripts",
        "svfix_mcp_server.server:main",
    )
    assert [tool.name for tool in run.tools] == list(MCP_TOOLS)
    add = next(tool for tool in run.tools if tool.name == "add")
    assert add.description == "Add two integers."
    assert add.parameters is not None and set(add.parameters["properties"]) == {"a", "b"}
    assert run.smoke is not None
    assert [(c.tool, c.is_error, c.text) for c in run.smoke.calls] == [
        ("add", False, "5"),
        ("echo", False, "hello"),
        ("explode", True, "Error executing tool explode"),
        ("confirm_name", False, "not confirmed; the user suggests 'Ada Lovelace'"),
        ("confirm_name", False, "the user chose decline"),
        ("summarize", False, "A short summary."),
    ]


def test_a_server_command_replaces_the_console_scripts() -> None:
    result = run_cli(
        [
            "check",
            str(fixture("mcp-server")),
            "--host",
            "mcp",
            "--server-command",
            "python -m svfix_mcp_server.server",
            "--expect-tools",
            "add,echo",
            "--python",
            "min",  # the SDK needs 3.10+, whatever runs the tests
            "--json",
        ]
    )

    assert result.code == 0, result.stdout + result.stderr
    [plugin] = result.json()["runs"][0]["plugins"]
    assert (plugin["name"], plugin["value"]) == ("python", "python -m svfix_mcp_server.server")


def test_sampling_the_playbook_does_not_answer_fails_the_smoke_run(tmp_path: Path) -> None:
    playbook = tmp_path / "unscripted.toml"
    playbook.write_text(
        '[[turns]]\nprompt = "p"\n'
        'actions = [{ call = "summarize", params = { text = "t" } }, { say = "x" }]\n',
        encoding="utf-8",
    )
    report = check(
        CheckOptions(
            targets=(str(fixture("mcp-server")),),
            host="mcp",
            installer="uv",
            python=("min",),  # the SDK needs 3.10+, whatever runs the tests
            smoke=str(playbook),
        )
    )

    [failure] = report.failures
    assert failure.code == "smoke_failed"
    assert "[sampling_unscripted] turn 1 ('p'), action 1 (call('summarize'))" in failure.message
    assert "'summarize' asked the model to sample" in failure.message
    assert failure.hint is not None
    assert f"'sandboxverify run {playbook} --host mcp --dist svfix-mcp-server'" in failure.hint


def test_a_server_that_crashes_at_start_is_probe_crashed_with_its_stderr() -> None:
    result = run_cli(["check", str(fixture("broken-mcp-crash")), "--host", "mcp", "--json"])

    assert result.code == 1
    [failure] = result.json()["failures"]
    assert failure["code"] == "probe_crashed"
    assert failure["plugin"] == "svfix-broken-mcp-crash"
    assert "exited with code 1 before answering initialize" in failure["message"]
    assert "RuntimeError: missing configuration: set SVFIX_MCP_CONFIG" in result.stdout


def test_a_distribution_without_a_console_script_has_no_server() -> None:
    result = run_cli(["check", str(fixture("good-hatch")), "--host", "mcp", "--json"])

    assert result.code == 1
    [failure] = result.json()["failures"]
    assert failure["code"] == "no_plugins"
    assert failure["message"] == (
        "svfix-good-hatch 1.0.0 declares no console script to start as an MCP server (looked "
        "in group 'console_scripts'); it declares: sandboxverify.plugins"
    )
    assert "--server-command" in result.stdout


# -- llm ----------------------------------------------------------------------------------------

LLM_TOOLS = ("reverse_text", "divide", "Counter_increment", "Counter_total")


def test_llm_tools_functions_and_a_toolbox_are_found_and_smoked() -> None:
    report = check(
        CheckOptions(
            targets=(str(fixture("llm-tools")),),
            host="llm",
            installer="uv",
            expect_tools=LLM_TOOLS,
            exact=True,
            smoke=str(PLAYBOOKS / "llm-tools.toml"),
        )
    )

    assert report.ok, report.failures
    [run] = report.runs
    [plugin] = run.plugins
    assert (plugin.name, plugin.group, plugin.value) == (
        "text_tools",
        "llm",
        "svfix_llm_tools.plugin",
    )
    assert [tool.name for tool in run.tools] == list(LLM_TOOLS)
    increment = next(tool for tool in run.tools if tool.name == "Counter_increment")
    assert increment.description == "Add to the counter and return the new total."
    assert run.smoke is not None
    assert [(c.tool, c.is_error, c.text) for c in run.smoke.calls] == [
        ("reverse_text", False, "desserts"),
        ("divide", True, "Error: cannot divide by zero"),
        ("divide", False, "0.25"),
        ("Counter_increment", False, "2"),
        ("Counter_increment", False, "3"),
        ("Counter_total", False, "3"),
    ]


def test_each_broken_llm_plugin_fails_alone_and_the_good_one_still_loads() -> None:
    result = run_cli(["check", str(fixture("broken-llm-plugin")), "--host", "llm", "--json"])

    assert result.code == 1
    report = result.json()
    plugins = {p["name"]: p for p in report["runs"][0]["plugins"]}
    assert plugins["good"]["ok"] is True
    assert {name: plugins[name]["error"]["stage"] for name in ("stale", "raises", "typo")} == {
        "stale": "import",
        "raises": "setup",
        "typo": "validate",
    }
    assert [t["name"] for t in report["runs"][0]["tools"]] == ["echo"]
    failures = {f["plugin"]: f for f in report["failures"]}
    assert set(failures) == {"stale", "raises", "typo"}
    assert {f["code"] for f in failures.values()} == {"plugin_load_failed"}
    assert "No module named 'svfix_broken_llm_plugin.renamed'" in failures["stale"]["message"]
    assert "register_tools failed on purpose" in failures["raises"]["message"]
    assert "(did you mean 'register_tools'?)" in failures["typo"]["message"]


def test_a_distribution_without_llm_entry_points_has_no_llm_plugins() -> None:
    result = run_cli(["check", str(fixture("good-hatch")), "--host", "llm", "--json"])

    assert result.code == 1
    [failure] = result.json()["failures"]
    assert failure["code"] == "no_plugins"
    assert failure["message"] == (
        "svfix-good-hatch 1.0.0 declares no entry points in group 'llm'; "
        "it declares: sandboxverify.plugins"
    )
    assert "[project.entry-points.llm]" in result.stdout


@pytest.mark.parametrize(
    ("script", "code", "message"),
    [
        (
            "import sys, time; sys.stderr.write('warming the cache\\n'); sys.stderr.flush(); "
            "time.sleep(120)",
            "timeout",
            "did not answer initialize within 3s",
        ),
        (
            "import sys; print('Server ready on stdio'); sys.stdout.flush(); sys.stdin.read()",
            "probe_crashed",
            "Server ready on stdio",
        ),
    ],
    ids=["never-answers", "prints-to-stdout"],
)
def test_a_server_that_misbehaves_is_reported_in_time(script: str, code: str, message: str) -> None:
    started = time.monotonic()
    result = run_cli(
        [
            "check",
            str(fixture("good-hatch")),
            "--host",
            "mcp",
            "--server-command",
            f"python -c {shlex.quote(script)}",
            "--timeout",
            "4",
            "--json",
        ]
    )

    assert time.monotonic() - started < 60  # never a hang (the build and install take seconds)
    assert result.code == 1, result.stdout + result.stderr
    [failure] = result.json()["failures"]
    assert failure["code"] == code
    assert failure["plugin"] == "python"
    assert message in failure["message"]
    if code == "timeout":
        assert failure["message"].endswith("(--timeout 4s, less a margin to collect its output)")
        assert "warming the cache" in result.stdout  # the server's stderr, as details
