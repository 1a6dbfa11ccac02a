"""Bad input: one readable line (and a hint), exit code 2, no traceback, nothing touched."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from sandboxverify.cli import _check, _main
from sandboxverify.options._check_options import CheckOptions
from tests.helpers import (
    ROOT,
    copy_fixture,
    fixture,
    make_wheel,
    run_cli,
    tree_digest,
    without_the_fallback_warning,
)
from tests.runtime.hosts.test_mcp import SERVER


def assert_usage_error(args: list[str], *fragments: str, cwd: Path | None = None) -> str:
    result = run_cli(args, cwd=cwd)
    assert result.code == 2, result.stdout + result.stderr
    # nothing but the warning, where there is no OS sandbox and the isolation was decided first
    assert without_the_fallback_warning(result.stdout.splitlines()) == []
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("ERROR "), result.stderr
    assert 1 <= len(lines) <= 2, result.stderr
    if len(lines) == 2:
        assert lines[1].startswith("  hint: ")
    for fragment in fragments:
        assert fragment in result.stderr
    return result.stderr


def test_missing_target(tmp_path: Path) -> None:
    assert_usage_error(["check", str(tmp_path / "nope")], "target not found", "hint:")


def test_directory_that_is_not_a_python_project() -> None:
    assert_usage_error(
        ["check", str(fixture("not-a-project"))],
        "is not a Python project",
        "no pyproject.toml or setup.py",
    )


def test_a_file_that_is_not_an_artifact(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hi")
    assert_usage_error(["check", str(notes)], "not a wheel or an sdist")


def test_unknown_option_names_the_option() -> None:
    stderr = assert_usage_error(["check", "--expect-tool", "x"], "No such option", "--help")
    # click words the suggestion differently across versions (8.1 on Python 3.9, 8.2+ later)
    first = stderr.splitlines()[0]
    assert "--expect-tool" in first.replace("--expect-tools", "")
    assert "--expect-tools" in first


def test_bad_choice_lists_the_valid_ones() -> None:
    assert_usage_error(["check", "--installer", "poetry"], "'poetry' is not one of")


def test_unknown_config_key_has_a_did_you_mean(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write('\n[tool.sandboxverify]\nexpect-tool = ["greet"]\n')
    before = tree_digest(project)

    assert_usage_error(
        ["check", str(project)], "unknown key 'expect-tool'", "did you mean 'expect-tools'?"
    )
    assert tree_digest(project) == before


def test_wrongly_typed_config_value(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write('\n[tool.sandboxverify]\nexact = "yes"\n')
    assert_usage_error(["check", str(project)], "exact must be true or false")


def test_broken_pyproject_names_the_file_and_place(tmp_path: Path) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace("[project]", "[project", 1))
    assert_usage_error(["check", str(project)], "pyproject.toml: invalid TOML", "line")


@pytest.mark.parametrize("spec", ["3.99", "/nonexistent/bin/python"])
def test_an_interpreter_that_does_not_exist(spec: str) -> None:
    assert_usage_error(["check", str(fixture("good-hatch")), "--python", spec], spec, "hint:")


def test_an_interpreter_older_than_the_runtime_supports() -> None:
    found = sorted(Path.home().glob(".pyenv/versions/3.8*/bin/python"))
    if not found:  # pragma: no cover - the CI machines carry 3.8 under pyenv
        pytest.fail("this test needs a Python 3.8 interpreter")
    for spec in (str(found[0]), "3.8"):
        assert_usage_error(
            ["check", str(fixture("good-hatch")), "--python", spec], "too old", "3.9 or newer"
        )


def test_entrypoints_host_needs_a_group() -> None:
    assert_usage_error(
        ["check", str(fixture("entrypoints-app")), "--host", "entrypoints"], "needs --group"
    )


def test_json_never_overwrites_an_input_artifact(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"precious")
    assert_usage_error(["check", "--json", str(wheel)], "--json would overwrite")
    assert wheel.read_bytes() == b"precious"


def test_run_json_never_overwrites_the_playbook(tmp_path: Path) -> None:
    playbook = tmp_path / "smoke.toml"
    playbook.write_text("[[turns]]\nprompt = 'x'\nactions = [{ say = 'y' }]\n")
    before = playbook.read_text()
    assert_usage_error(["run", str(playbook), "--json", str(playbook)], "--json would overwrite")
    assert playbook.read_text() == before


def test_artifacts_of_different_releases(tmp_path: Path) -> None:
    for name in ("a-1.0-py3-none-any.whl", "b-2.0-py3-none-any.whl"):
        _minimal_wheel(tmp_path / name)
    assert_usage_error(
        [
            "check",
            str(tmp_path / "a-1.0-py3-none-any.whl"),
            str(tmp_path / "b-2.0-py3-none-any.whl"),
        ],
        "different releases",
    )


def test_non_positive_timeout() -> None:
    assert_usage_error(["check", "--timeout", "0"], "--timeout")


def test_help_and_version_exit_0() -> None:
    assert run_cli(["--version"]).code == 0
    helped = run_cli(["check", "--help"])
    assert helped.code == 0
    for option in (
        "--host",
        "--group",
        "--expect-tools",
        "--exact",
        "--expect-plugins",
        "--python",
        "--installer",
        "--index-url",
        "--find-links",
        "--timeout",
        "--json",
        "--keep",
        "--verbose",
        "--quiet",
    ):
        assert option in helped.stdout
    codes = helped.stdout[helped.stdout.index("Exit codes:") : helped.stdout.index("Options:")]
    listed = [int(line.split()[0]) for line in codes.splitlines()[1:] if line[:6].strip().isdigit()]
    assert listed == [0, 1, 2, 3, 130, 143]


def test_shell_completion_as_the_readme_documents_it() -> None:
    env = {**os.environ, "_SANDBOXVERIFY_COMPLETE": "bash_source"}
    script = run_cli([], env=env)
    assert script.code == 0
    assert "complete -o nosort -F _sandboxverify_completion sandboxverify" in script.stdout
    asked = {
        **os.environ,
        "_SANDBOXVERIFY_COMPLETE": "bash_complete",
        "COMP_WORDS": "sandboxverify check --junit",
        "COMP_CWORD": "2",
    }
    assert run_cli([], env=asked).stdout.splitlines() == ["plain,--junit-xml"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_SANDBOXVERIFY_COMPLETE=bash_source sandboxverify)"' in readme


def _minimal_wheel(path: Path) -> None:
    name, version = path.name.split("-")[:2]
    make_wheel(path.parent, path.name, name=name, version=version, files=(f"{name}.py",))


def test_run_hosts_an_mcp_server_given_as_the_plugin(tmp_path: Path) -> None:
    playbook = tmp_path / "mcp.toml"
    playbook.write_text(
        '[[turns]]\nprompt = "p"\nactions = [\n'
        '  { call = "add", params = { a = 2, b = 3 }, expect = "^5$" },\n'
        '  { call = "ask", sample = "fine" },\n'
        '  { say = "x" },\n]\n',
        encoding="utf-8",
    )
    command = shlex.join([sys.executable, SERVER, "normal"])

    result = run_cli(["run", str(playbook), "--host", "mcp", "--plugin", command, "--json"])

    assert result.code == 0, result.stdout + result.stderr
    report = result.json()
    assert [c["tool"] for c in report["calls"]] == ["add", "ask"]
    assert report["calls"][1]["is_error"] is False
    assert '"model": "sandboxverify-playbook"' in report["calls"][1]["text"]

    unanswered = tmp_path / "unanswered.toml"
    unanswered.write_text(
        '[[turns]]\nprompt = "p"\nactions = [{ call = "ask" }, { say = "x" }]\n', encoding="utf-8"
    )
    failed = run_cli(["run", str(unanswered), "--host", "mcp", "--plugin", command, "--json"])
    assert failed.code == 1
    assert failed.json()["error"]["code"] == "sampling_unscripted"


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--server-command", "srv"], ("only applies to --host mcp", "add --host mcp")),
        (
            ["--host", "mcp", "--server-command", "  "],
            ("--server-command was given an empty value",),
        ),
        (["--host", "mcp", "--server-command", "srv 'open"], ("No closing quotation",)),
        (["--host", "llm", "--server-command", "srv"], ("(the host is llm)",)),
        (
            ["--host", "entrypoints", "--group", "g", "--smoke", "x.toml"],
            ("--smoke does not apply to --host entrypoints",),
        ),
        (["--host", "mpc"], ("'mpc' is not one of", "'llm', 'mcp'")),
    ],
)
def test_host_option_mistakes_are_usage_errors(
    extra: list[str], fragments: tuple[str, ...]
) -> None:
    assert_usage_error(["check", str(fixture("good-hatch")), *extra], *fragments)


def test_junit_xml_never_overwrites_an_input_artifact(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"precious")
    assert_usage_error(["check", str(wheel), "--junit-xml", str(wheel)], "--junit-xml would")
    assert wheel.read_bytes() == b"precious"


class _Captured(Exception):
    pass


def _options_from(args: list[str], monkeypatch: pytest.MonkeyPatch) -> CheckOptions:
    """The CheckOptions the command line (and [tool.sandboxverify]) turn into, without a check."""
    seen: list[CheckOptions] = []

    def capture(options: CheckOptions, on_event: object, **_: object) -> None:
        seen.append(options)
        raise _Captured

    monkeypatch.setattr(_check, "run_check", capture)
    with pytest.raises(_Captured):
        _main.cli.main(args=["check", *args], standalone_mode=False)
    return seen[0]


def test_release_gating_options_reach_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    options = _options_from(
        [
            str(fixture("good-hatch")),
            "--no-import-all",
            "--import-skip",
            "svfix_good_hatch.win*",
            "--import-allow-fail",
            "svfix_good_hatch.extra",
            "--expect-files",
            "svfix_good_hatch/*.py",
            "--expect-files",
            "svfix_good_hatch/data/*",
            "--skip-script-help",
            "svfix-*",
            "--python",
            "min",
        ],
        monkeypatch,
    )
    assert options.import_all is False
    assert options.import_skip == ("svfix_good_hatch.win*",)
    assert options.import_allow_fail == ("svfix_good_hatch.extra",)
    assert options.expect_files == ("svfix_good_hatch/*.py", "svfix_good_hatch/data/*")
    assert options.skip_script_help == ("svfix-*",)
    assert options.python == ("min",)


def test_import_all_is_on_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _options_from([str(fixture("good-hatch"))], monkeypatch).import_all is True


def test_the_command_line_wins_over_the_file_for_import_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = copy_fixture("good-hatch", tmp_path)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write('\n[tool.sandboxverify]\nimport-all = false\nexpect-files = ["x/*"]\n')
    from_file = _options_from([str(project)], monkeypatch)
    assert (from_file.import_all, from_file.expect_files) == (False, ("x/*",))
    overridden = _options_from([str(project), "--import-all"], monkeypatch)
    assert overridden.import_all is True


def test_the_callers_secrets_never_reach_an_error_or_a_playbook_run(tmp_path: Path) -> None:
    secret = "ghs_0123456789-playbook-secret"
    env = {**os.environ, "DEPLOY_TOKEN": secret}
    missing = run_cli(["check", str(tmp_path / secret)], env=env)
    assert missing.code == 2
    assert secret not in missing.stderr and "***" in missing.stderr

    (tmp_path / "leaky.py").write_text(
        "def setup(api):\n"
        f"    api.register_tool('greet', lambda: 'token {secret}', description='uses {secret}')\n"
    )
    playbook = tmp_path / "smoke.toml"
    playbook.write_text(
        "[[turns]]\nprompt = 'p'\nactions = [{ call = 'greet' }, { say = 'done' }]\n"
    )
    result = run_cli(
        ["run", str(playbook), "--plugin", "leaky:setup", "--json", "-", "-v"],
        env=env,
        cwd=tmp_path,
    )
    assert result.code == 0, result.stdout + result.stderr
    assert secret not in result.stdout + result.stderr
    assert result.json()["calls"][0]["text"] == "token ***"
