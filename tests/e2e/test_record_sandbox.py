"""``record --sandbox``: the project is built, its wheel installed in a fresh sandbox with llm and
the model's plugin (``--with``), and the real model drives the plugins there; the recording is
then a playbook like any other, replayed in place and by ``check --smoke``.

The model is llm-echo's ``echo`` (and ``echo-needs-key``, which says its key out loud), real llm
model plugins that run offline; nothing of llm is mocked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandboxverify.stages.playbook import load_playbook
from tests.e2e.test_record import COUNT, REVERSE_AND_DIVIDE, prompt, sv
from tests.helpers import fixture

pytest.importorskip("llm_echo", reason="llm-echo (the offline model) needs Python 3.10+")
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv", "os_sandbox")]

# strict: the session runs in the OS sandbox or the recording is refused (exit 2)
IN_A_SANDBOX = ["--sandbox", "--installer", "uv", "--isolation", "strict", "--with", "llm-echo"]
KEY = "sk-echo-key-31415926"
TOKEN = "tok-environment-4242"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Nothing of the fixtures importable here; llm's user directory in a temporary one."""
    user = tmp_path / "llm-user"
    user.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**environ, "LLM_USER_PATH": str(user)}


def test_a_sandboxed_recording_replays_in_place_and_with_check_smoke(
    tmp_path: Path, env: dict[str, str]
) -> None:
    project = str(fixture("llm-tools"))
    steps = [REVERSE_AND_DIVIDE, COUNT, "-m", "echo", "--host", "llm"]
    outputs = ["-o", "s.toml", "--json", "result.json"]
    recorded = sv(["record", *steps, *IN_A_SANDBOX, "--project", project, *outputs], env, tmp_path)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "install    " in recorded.stdout and "svfix_llm_tools-1.0.0-py3-none-any.whl" in (
        recorded.stdout
    )
    assert "RECORDED: s.toml and s.jsonl, 2 turn(s), 3 tool call(s)" in recorded.stdout
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["sandbox"]["wheel"] == "svfix_llm_tools-1.0.0-py3-none-any.whl"
    assert result["sandbox"]["with"] == ["llm-echo"]
    assert result["sandbox"]["isolation"] == "namespaces"
    assert result["plugins"] == ["text_tools"]  # the wheel's entry point, as installed

    text = (tmp_path / "s.toml").read_text()
    assert "The plugins came from svfix_llm_tools-1.0.0-py3-none-any.whl, in a sandbox" in text
    spec = load_playbook(tmp_path / "s.toml")
    assert spec["host"] == "llm" and not spec.get("plugins")  # the distribution's, wherever
    (both, _), (count, _) = (turn["actions"] for turn in spec["turns"])
    assert [(c["tool"], c["result"]) for c in both["calls"]] == [
        ("reverse_text", "desserts"),
        ("divide", "Error: cannot divide by zero"),
    ]
    assert (count["tool"], count["result"]) == ("Counter_increment", "2")
    assert (tmp_path / "s.jsonl").read_text().startswith('{"mock_tools"')

    # replayed in place, without a model: the plugin from the tree
    here = {**env, "PYTHONPATH": project}
    plugin = ["--plugin", "svfix_llm_tools.plugin"]
    replayed = sv(["run", "s.toml", *plugin, "--compare-results"], here, tmp_path)
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    # and in a fresh sandbox, by check
    checked = sv(
        ["check", project, "--installer", "uv", "--smoke", "s.toml", "--json", "-"], env, tmp_path
    )
    assert checked.code == 0, checked.stdout + checked.stderr
    [run] = checked.json()["runs"]
    assert run["smoke"]["ok"] and run["smoke"]["tool_calls"] == 3


def test_only_pass_env_reaches_the_sandbox_and_no_secret_is_written(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The spy's tool returns the names of the variables it sees; echo-needs-key says its key."""
    env = {**env, "LLM_ECHO_NEEDS_KEY_KEY": KEY, "MY_SERVICE_TOKEN": TOKEN}
    said = prompt(("report", {}), text=f"I know {TOKEN}")
    args = ["record", said, "-m", "echo-needs-key", *IN_A_SANDBOX, "--project", str(fixture("spy"))]
    missing = sv([*args, "-o", "s.toml"], env, tmp_path)
    assert missing.code == 2, missing.stdout + missing.stderr
    assert "ERROR model 'echo-needs-key': No key found" in missing.stderr
    assert "pass the model's key with --pass-env LLM_ECHO_NEEDS_KEY_KEY" in missing.stderr
    assert not (tmp_path / "s.toml").exists()

    passed = ["--pass-env", "LLM_ECHO_NEEDS_KEY_KEY"]
    recorded = sv([*args, *passed, "-o", "s.toml", "--json", "result.json"], env, tmp_path)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    spec = load_playbook(tmp_path / "s.toml")
    (report, said_back) = spec["turns"][0]["actions"]
    seen = json.loads(report["result"])["env"]
    assert "LLM_ECHO_NEEDS_KEY_KEY" in seen and "MY_SERVICE_TOKEN" not in seen
    assert '"key": "***"' in said_back["text"]  # echo said the key it was given
    for name in ("s.toml", "s.jsonl", "result.json"):
        written = (tmp_path / name).read_text()
        assert KEY not in written and TOKEN not in written, name
    assert TOKEN not in recorded.stdout and KEY not in recorded.stdout


def test_a_project_that_does_not_build_records_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    broken = ["--project", str(fixture("broken-build"))]
    result = sv(
        ["record", "hi", "-m", "echo", *IN_A_SANDBOX, *broken, "-o", "s.toml"], env, tmp_path
    )
    assert result.code == 1, result.stdout + result.stderr
    assert "FAILED [build_failed] building the sdist failed" in result.stdout
    assert "this build fails on purpose" in result.stdout
    assert "hint: the project itself does not build" in result.stdout
    assert "FAILED: nothing recorded" in result.stdout
    assert not (tmp_path / "s.toml").exists() and not (tmp_path / "s.jsonl").exists()
