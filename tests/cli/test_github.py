"""GitHub Actions output: ``::error`` annotations at the line a failure comes from (never a wrong
one), and a Markdown step summary that stays readable and under GitHub's size limit."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.cli._github import GitHubSources, error_annotations
from sandboxverify.cli._tomllines import Scanner
from sandboxverify.report._excused import ExcusedModule
from sandboxverify.report._model import (
    ArtifactRecord,
    Failure,
    PluginError,
    PluginRecord,
    Report,
    ReportWarning,
    Run,
    Stage,
    ToolRecord,
)
from sandboxverify.report._records import (
    AllowedFailure,
    ImportFailure,
    ImportsRecord,
    ScriptRecord,
    SkippedModule,
    SmokeError,
    SmokeRecord,
)
from sandboxverify.report._summary import DETAIL_LINES, SUMMARY_BUDGET, step_summary
from tests.helpers import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib

PY = "3.12.1"
GROUP = "sandboxverify.plugins"
ANNOTATION = re.compile(r"^::error (?P<props>[^:]*)::(?P<message>.*)$")


def make_run(
    plugins: tuple[PluginRecord, ...] = (),
    *,
    smoke: SmokeRecord | None = None,
    scripts: tuple[ScriptRecord, ...] | None = None,
    imports: ImportsRecord | None = None,
    tools: tuple[ToolRecord, ...] = (),
    stages: tuple[Stage, ...] = (Stage("build", "passed", 1.25), Stage("probe", "failed", 0.5)),
) -> Run:
    return Run(
        python=PY,
        interpreter="/usr/bin/python3.12",
        ok=False,
        stages=stages,
        plugins=plugins,
        tools=tools,
        smoke=smoke,
        scripts=scripts,
        imports=imports,
    )


def make_report(
    *failures: Failure, run: Run | None = None, expect_tools: tuple[str, ...] = ()
) -> Report:
    return Report(
        target="demo",
        artifacts=(
            ArtifactRecord("wheel", "demo-1.0-py3-none-any.whl", "c0ffee" * 10 + "abcd", True),
        ),
        runs=(run or make_run(),),
        failures=failures,
        host="native",
        groups=(GROUP,),
        installer="uv",
        seconds=4.25,
        expect_tools=expect_tools,
    )


def plugin(name: str, value: str, group: str = GROUP, ok: bool = False) -> PluginRecord:
    error = None if ok else PluginError("AttributeError", "boom", "", "import")
    return PluginRecord(name, group, value, ok, error=error)


def load_failure(name: str, code: Any = "plugin_load_failed") -> Failure:
    return Failure(code, f"plugin {name!r} failed to load", PY, plugin=name, hint="fix it")


def annotated(report: Report, root: Path, **sources: Path | None) -> list[dict[str, str]]:
    """Each annotation's properties (unescaped) and message."""
    found = []
    merged: dict[str, Path | None] = {"pyproject": None, "playbook": None, **sources}
    for command in error_annotations(report, GitHubSources(root=root, **merged)):
        assert "\n" not in command and "\r" not in command
        match = ANNOTATION.match(command)
        assert match, command
        props = dict(prop.split("=", 1) for prop in match["props"].split(","))
        parsed = {key: unescape(value) for key, value in props.items()}
        parsed["message"] = unescape(match["message"])
        found.append(parsed)
    return found


def unescape(text: str) -> str:
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, char)
    return text


def line_of(path: Path, fragment: str) -> int:
    [number] = [i for i, text in enumerate(path.read_text().splitlines(), 1) if fragment in text]
    return number


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


PYPROJECT = '''\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "demo"
version = "1.0"
description = """
[project.entry-points."sandboxverify.plugins"]
typo = "not:this"
"""
dependencies = [
  "six",  # [project.scripts]
]

# typo = "commented:out"
[project.entry-points."sandboxverify.plugins"]
good = "demo.good:setup"
typo = "demo.plugin:setpu"   # the bug
'quoted' = "demo.quoted:setup"

[project.entry-points."other.group"]
typo = "demo.other:setup"

[project . scripts]
demo-cli = "demo.cli:main"

[tool.sandboxverify]
expect-tools = [
  "greet",
  "add,subtract",  # two in one
]
'''


# --- annotations: escaping and titles -----------------------------------------------------------


def test_one_escaped_workflow_command_per_failure(tmp_path: Path) -> None:
    failure = Failure(
        "dependency_conflict",
        "100% broken\r\nsecond line ::add-mask::x",
        PY,
        hint="a, b: c",
    )
    [command] = error_annotations(
        make_report(failure), GitHubSources(pyproject=None, playbook=None, root=tmp_path)
    )

    assert command == (
        "::error title=sandboxverify%3A dependency_conflict [3.12.1]::"
        "100%25 broken%0Asecond line ::add-mask::x%0Ahint: a, b: c"
    )
    no_python = Failure("build_failed", "the build failed", None)
    [other] = error_annotations(
        make_report(no_python), GitHubSources(pyproject=None, playbook=None, root=tmp_path)
    )
    assert other == "::error title=sandboxverify%3A build_failed::the build failed"


def test_properties_escape_colons_and_commas(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "odd:dir,name" / "pyproject.toml", PYPROJECT)
    report = make_report(load_failure("typo"), run=make_run((plugin("typo", "demo.plugin:setpu"),)))

    [command] = error_annotations(
        report, GitHubSources(pyproject=pyproject, playbook=None, root=tmp_path)
    )
    line = line_of(pyproject, "setpu")
    assert command.startswith(f"::error file=odd%3Adir%2Cname/pyproject.toml,line={line},title=")


# --- annotations: entry points in pyproject.toml -------------------------------------------------


def test_a_plugin_failure_points_at_its_entry_point_line(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    run = make_run(
        (
            plugin("typo", "demo.plugin:setpu"),
            plugin("quoted", "demo.quoted:setup"),
            plugin("good", "demo.good:setup", ok=True),
        )
    )
    report = make_report(
        load_failure("typo"),
        load_failure("quoted", "timeout"),
        load_failure("good", "plugin_empty"),
        run=run,
    )

    found = annotated(report, tmp_path, pyproject=pyproject)

    # not the line inside the multi-line description, nor the comment: the real table
    assert [(a["file"], a["line"]) for a in found] == [
        ("pyproject.toml", str(line_of(pyproject, "setpu"))),
        ("pyproject.toml", str(line_of(pyproject, "'quoted'"))),
        ("pyproject.toml", str(line_of(pyproject, "demo.good:setup"))),
    ]
    assert found[0]["title"] == f"sandboxverify: plugin_load_failed [{PY}]"
    assert found[0]["message"] == "plugin 'typo' failed to load\nhint: fix it"


def test_the_group_the_plugin_came_from_decides_between_namesakes(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    other = make_run((plugin("typo", "demo.other:setup", group="other.group"),))

    [found] = annotated(make_report(load_failure("typo"), run=other), tmp_path, pyproject=pyproject)
    assert found["line"] == str(line_of(pyproject, "demo.other:setup"))

    # without a record of the plugin, a name declared twice is ambiguous: no file at all
    [unsure] = annotated(
        make_report(load_failure("typo", "probe_crashed"), run=make_run()),
        tmp_path,
        pyproject=pyproject,
    )
    assert "file" not in unsure and "line" not in unsure


def test_an_entry_point_whose_value_differs_is_not_pointed_at(tmp_path: Path) -> None:
    """The installed value is not the one in this pyproject.toml (another version, a
    setup.py that overrides it): no line is better than a wrong one."""
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    stale = make_run((plugin("typo", "demo.plugin:setup_v2"),))

    [found] = annotated(make_report(load_failure("typo"), run=stale), tmp_path, pyproject=pyproject)
    assert "file" not in found and "line" not in found


@pytest.mark.parametrize(
    ("text", "group"),
    [
        (
            '[project]\nname = "demo"\n'
            'entry-points."sandboxverify.plugins".dotted = "demo.dotted:setup"\n',
            GROUP,
        ),
        (
            '[project]\nname = "demo"\n[project.entry-points]\n'
            '"other.group" = { a = "demo.a:setup", dotted = "demo.dotted:setup" }\n',
            "other.group",
        ),
        (
            "[project]\nname = 'demo'\n\n[project.entry-points.'other.group']\r\n"
            "a.b = 1\r\ndotted = 'demo.dotted:setup'\r\n",
            "other.group",
        ),
    ],
    ids=["dotted-key", "inline-table", "literal-strings-crlf"],
)
def test_every_way_to_write_an_entry_point_is_followed(
    tmp_path: Path, text: str, group: str
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_bytes(text.encode())
    run = make_run((plugin("dotted", "demo.dotted:setup", group),))

    [found] = annotated(make_report(load_failure("dotted"), run=run), tmp_path, pyproject=pyproject)
    assert found["line"] == str(line_of(pyproject, "demo.dotted:setup"))


def test_console_scripts_and_mcp_servers_point_at_project_scripts(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    expected = str(line_of(pyproject, "demo-cli ="))
    server = make_run((plugin("demo-cli", "demo.cli:main", group="console_scripts"),))
    script = make_run(
        scripts=(ScriptRecord("demo-cli", "demo.cli:main", "console_scripts", help="failed"),)
    )
    crashed = Failure("probe_crashed", "server demo-cli crashed", PY, plugin="demo-cli")
    help_failed = Failure("script_failed", "demo-cli --help exited 2", PY, plugin="demo-cli")

    [mcp] = annotated(make_report(crashed, run=server), tmp_path, pyproject=pyproject)
    [cli] = annotated(make_report(help_failed, run=script), tmp_path, pyproject=pyproject)
    assert (mcp["line"], cli["line"]) == (expected, expected)


def test_paths_are_relative_to_the_workspace_or_left_out(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "repo" / "pkg" / "pyproject.toml", PYPROJECT)
    report = make_report(load_failure("typo"), run=make_run((plugin("typo", "demo.plugin:setpu"),)))

    [inside] = annotated(report, tmp_path / "repo", pyproject=pyproject)
    [outside] = annotated(report, tmp_path / "elsewhere", pyproject=pyproject)
    assert inside["file"] == "pkg/pyproject.toml"
    assert "file" not in outside and "line" not in outside


def test_unreadable_or_invalid_pyproject_gives_no_file(tmp_path: Path) -> None:
    broken = write(tmp_path / "pyproject.toml", "[project\nname = 'x'\n")
    report = make_report(load_failure("typo"), run=make_run((plugin("typo", "demo.plugin:setpu"),)))

    [found] = annotated(report, tmp_path, pyproject=broken)
    assert "file" not in found


def test_failures_without_a_source_have_no_file(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    report = make_report(
        Failure("no_plugins", "declares no entry points", PY),
        Failure("install_failed", "requires-python excludes 3.12", PY),
        Failure("timeout", "the venv took too long", PY),
    )

    found = annotated(report, tmp_path, pyproject=pyproject)
    assert [set(a) for a in found] == [{"title", "message"}] * 3
    assert [a["title"] for a in found] == [
        f"sandboxverify: no_plugins [{PY}]",
        f"sandboxverify: install_failed [{PY}]",
        f"sandboxverify: timeout [{PY}]",
    ]


# --- annotations: expected tools ------------------------------------------------------------------


def test_tool_failures_point_at_expect_tools_in_the_config(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    asked = ("greet", "add", "subtract")
    missing = Failure(
        "tool_missing", "expected tool 'subtract' is not registered", PY, tool="subtract"
    )
    unexpected = Failure("tool_unexpected", "tool 'extra' not expected", PY, tool="extra")

    found = annotated(
        make_report(missing, unexpected, expect_tools=asked), tmp_path, pyproject=pyproject
    )
    assert [a["line"] for a in found] == [
        str(line_of(pyproject, '"add,subtract"')),
        str(line_of(pyproject, "expect-tools")),
    ]

    # the command line asked for other tools: the config line is not where they come from
    [other] = annotated(
        make_report(missing, expect_tools=("subtract",)), tmp_path, pyproject=pyproject
    )
    assert "file" not in other


# --- annotations: modules --------------------------------------------------------------------------


def test_an_import_failure_points_at_the_module_and_the_traceback_line(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", PYPROJECT)
    write(
        tmp_path / "src" / "demo" / "reports" / "render.py",
        '"""Render."""\n\nfrom .templates import PAGE\n',
    )
    write(tmp_path / "src" / "demo" / "reports" / "__init__.py", "")
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/sb/venv/lib/python3.12/site-packages/demo/reports/render.py", line 3, in <module>\n'
        "    from .templates import PAGE\n"
        "ModuleNotFoundError: No module named 'demo.reports.templates'\n"
    )
    failures = (
        Failure(
            "import_failed",
            "demo.reports.render failed",
            PY,
            module="demo.reports.render",
            details=traceback,
        ),
        # no frame in the file: the top of the module
        Failure("import_failed", "demo.reports failed", PY, module="demo.reports"),
        # a frame past the end of the local file is not this file's line
        Failure(
            "import_failed",
            "demo.reports.render failed",
            PY,
            module="demo.reports.render",
            details=traceback.replace("line 3", "line 30"),
        ),
        # not in the project's tree: the pyproject, without a line
        Failure("import_failed", "demo.generated failed", PY, module="demo.generated"),
    )

    found = annotated(make_report(*failures), tmp_path, pyproject=pyproject)
    assert [(a.get("file"), a.get("line")) for a in found] == [
        ("src/demo/reports/render.py", "3"),
        ("src/demo/reports/__init__.py", "1"),
        ("src/demo/reports/render.py", "1"),
        ("pyproject.toml", None),
    ]


# --- annotations: smoke playbooks -------------------------------------------------------------------

PLAYBOOK = """\
# A playbook written the way people write them.
[mock_tools]
bash = "ok"

[[turns]]
prompt = "Propose a plan"   # [[turns]] in a comment
actions = [
  # a comment between actions
  { call = "plan_propose", params = { title = "Cook" } },
  { say = \"\"\"
[[turns]]
a say spanning lines
\"\"\" },
]

[[turns]]
prompt = "Approve it"
actions = [
  { call = "plan_list" }, { call = "plan_approve", params = { steps = [
    "one",
    "two",
  ] } },
  { parallel = [
      { call = "plan_list" },
      { call = "plan_reject", params = { id = "x" } },
    ] },
  { say = "Done." },
]

[[turns]]
prompt = "Array of tables"

[[turns.actions]]
call = "plan_list"

[[turns.actions]]
say = "Listed."
"""


def smoke_failure(
    turn: int | None, action: int | None, message: str = "diverged"
) -> tuple[Failure, Run]:
    error = SmokeError("expect_mismatch", message, turn, action)
    run = make_run(smoke=SmokeRecord("smoke.toml", ok=False, error=error))
    return Failure("smoke_failed", f"smoke playbook smoke.toml: {message}", PY), run


@pytest.mark.parametrize(
    ("turn", "action", "message", "fragment"),
    [
        (1, 1, "turn 1, action 1", 'call = "plan_propose"'),
        (1, 2, "turn 1, action 2", '{ say = """'),
        (2, 1, "turn 2, action 1", '{ call = "plan_list" }, { call = "plan_approve"'),
        (2, 3, "turn 2, action 3", "{ parallel = ["),
        (
            2,
            3,
            "turn 2, action 3 (call_5) [turns[1].actions[2].parallel[1]]",
            'call = "plan_reject"',
        ),
        (2, 4, "turn 2, action 4", '{ say = "Done." }'),
        (3, 2, "turn 3, action 2", "[[turns.actions]]"),
        # an action past the turn's end (the loop asked for more): the turn's line
        (2, 9, "turn 2", 'prompt = "Approve it"'),
        (3, None, "turn 3: ended without say", 'prompt = "Array of tables"'),
    ],
)
def test_a_smoke_failure_points_at_the_failing_action(
    tmp_path: Path, turn: int, action: int | None, message: str, fragment: str
) -> None:
    playbook = write(tmp_path / "smoke.toml", PLAYBOOK)
    failure, run = smoke_failure(turn, action, message)

    [found] = annotated(make_report(failure, run=run), tmp_path, playbook=playbook)
    assert found["file"] == "smoke.toml"
    lines = playbook.read_text().splitlines()
    if fragment == "[[turns.actions]]":  # an action written as a table starts at its header
        assert found["line"] == str(line_of(playbook, 'say = "Listed."') - 1)
    elif fragment == 'prompt = "Array of tables"':
        assert lines[int(found["line"]) - 1] == "[[turns]]"
        assert lines[int(found["line"])] == fragment
    elif fragment == 'prompt = "Approve it"':
        assert found["line"] == str(line_of(playbook, fragment) - 1)  # its [[turns]] header
    else:
        assert fragment in lines[int(found["line"]) - 1]


def test_a_smoke_failure_with_no_turn_points_at_the_playbook(tmp_path: Path) -> None:
    playbook = write(tmp_path / "smoke.toml", PLAYBOOK)
    failure, run = smoke_failure(None, None, "the playbook ran but called no tool")

    [found] = annotated(make_report(failure, run=run), tmp_path, playbook=playbook)
    assert (found["file"], found["line"]) == ("smoke.toml", "1")
    [no_playbook] = annotated(make_report(failure, run=run), tmp_path)
    assert "file" not in no_playbook


def test_a_python_playbook_failure_points_at_the_traceback_line(tmp_path: Path) -> None:
    playbook = write(
        tmp_path / "playbooks" / "smoke.py",
        "from sandboxverify.harness import create_test_session\n\n\n"
        "def main():\n    raise RuntimeError('boom')\n\n\nmain()\n",
    )
    details = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/sb/playbooks/smoke.py", line 8, in <module>\n'
        '  File "/tmp/sb/playbooks/smoke.py", line 5, in main\n'
        "RuntimeError: boom\n"
    )
    error = SmokeError("script_failed", "RuntimeError: boom", details=details)
    run = make_run(smoke=SmokeRecord("smoke.py", ok=False, error=error, script="smoke.py"))
    failure = Failure(
        "smoke_failed",
        "smoke playbook smoke.py: [script_failed] RuntimeError: boom",
        PY,
        details=details,
    )

    [found] = annotated(make_report(failure, run=run), tmp_path, playbook=playbook)
    assert (found["file"], found["line"]) == ("playbooks/smoke.py", "5")


# --- the TOML line scanner ----------------------------------------------------------------------------


def repository_toml() -> list[Path]:
    return sorted(
        [ROOT / "pyproject.toml", *ROOT.glob("fixtures/**/*.toml"), *ROOT.glob("tests/**/*.toml")]
    )


@pytest.mark.parametrize("path", repository_toml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_scanner_agrees_with_the_toml_parser_on_real_files(path: Path) -> None:
    """Every key the scanner places is on a line that names it, and every key the parser
    finds (down to array elements) has a line."""
    text = path.read_text(encoding="utf-8")
    lines = Scanner(text).scan()
    source = text.splitlines()

    def walk(value: Any, key: tuple[Any, ...]) -> None:
        if key:
            assert key in lines, key
            if isinstance(key[-1], str):
                assert key[-1] in source[lines[key] - 1], (key, lines[key])
        if isinstance(value, dict):
            for name, item in value.items():
                walk(item, (*key, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*key, index))

    walk(tomllib.loads(text), ())


# --- the step summary -----------------------------------------------------------------------------


def full_run() -> Run:
    return make_run(
        (
            PluginRecord("greeter", GROUP, "demo.plugin:setup", True),
            PluginRecord(
                "pipe|name",
                GROUP,
                "demo.pipe:setup",
                False,
                error=PluginError("ValueError", "a | b\nsecond line", "tb", "setup"),
            ),
        ),
        tools=(ToolRecord("greet", "greeter", None), ToolRecord("add", "greeter", None)),
        stages=(
            Stage("build", "passed", 1.25),
            Stage("venv", "passed", 0.5),
            Stage("install", "passed", 0.75),
            Stage("probe", "failed", 0.125),
            Stage("smoke", "skipped", 0.0),
        ),
        imports=ImportsRecord(
            modules=12,
            imported=tuple(f"demo.m{i}" for i in range(10)),
            failed=(ImportFailure("demo.extra", "ImportError", "x"),),
            allowed_failures=(AllowedFailure("demo.win", "ImportError", "x", "demo.w*"),),
            skipped=(SkippedModule("demo.__main__", "--import-skip *.__main__"),),
            excused=(
                ExcusedModule("demo.chart", "extra", "imports with demo[chart]", extra="chart"),
                ExcusedModule("demo.winreg", "platform", "needs winreg"),
            ),
        ),
        scripts=(
            ScriptRecord("demo-cli", "demo.cli:main", "console_scripts", True, "passed"),
            ScriptRecord("demo-gui", "demo.gui:main", "gui_scripts", False, "skipped"),
        ),
        smoke=SmokeRecord(
            "smoke.toml",
            ok=False,
            error=SmokeError("expect_mismatch", "turn 2 <b>bad</b>\nmore"),
            turns=2,
            tool_calls=3,
        ),
    )


def test_the_summary_has_verdict_artifacts_stages_plugins_and_outcomes() -> None:
    failure = Failure(
        "plugin_load_failed",
        "plugin 'pipe|name' raised",
        PY,
        plugin="pipe|name",
        hint="fix __init__",
    )
    text = step_summary(make_report(failure, run=full_run()))

    assert text.startswith(
        "## sandboxverify failed\n\n**failed: 1 failure(s)**; 2 plugin(s) registering 2 tool(s)"
    )
    assert "in 4.2s" in text or "in 4.3s" in text
    assert "| wheel | demo-1.0-py3-none-any.whl | `c0ffeec0ffee` |" in text.replace("\\_", "_")
    assert "### Python 3.12.1" in text
    assert "| probe | failed | 0.12 |" in text or "| probe | failed | 0.13 |" in text
    assert "| install | passed | 0.75 |" in text
    assert "| greeter | `demo.plugin:setup` | ok | greet, add |" in text
    assert (
        "- **imports**: 10 of 12 module(s) imported; failed: demo.extra; "
        "1 need an extra (demo.chart); 1 for another platform (demo.winreg); "
        "1 allowed to fail; 1 skipped" in text.replace("\\_", "_")
    )
    assert "- **scripts**: 2 script(s): demo-cli (--help passed), demo-gui (not installed)" in text
    assert (
        "- **smoke**: smoke.toml failed: 2 turn(s), 3 tool call(s); \\[expect\\_mismatch\\] turn 2 \\<b\\>bad\\</b\\>"
        in text
    )
    assert "more" not in text.split("- **smoke**")[1].split("\n")[0]
    assert "#### plugin\\_load\\_failed [3.12.1]" in text
    assert "**hint:** fix \\_\\_init\\_\\_" in text


def test_table_cells_escape_pipes_and_newlines() -> None:
    text = step_summary(make_report(run=full_run()))

    [row] = [line for line in text.splitlines() if "demo.pipe:setup" in line]
    assert row == "| pipe\\|name | `demo.pipe:setup` | failed | ValueError: a \\| b |"
    # the row has as many unescaped pipes as its table's header
    [header] = [line for line in text.splitlines() if line.startswith("| plugin |")]
    assert len(re.findall(r"(?<!\\)\|", row)) == len(re.findall(r"(?<!\\)\|", header))


def test_a_passing_report_has_no_failures_section() -> None:
    report = Report(
        target="demo",
        artifacts=(),
        runs=(Run(PY, "/usr/bin/python3.12", True, (Stage("build", "passed", 1.0),)),),
        failures=(),
        host="native",
        groups=(GROUP,),
        installer="pip",
        seconds=1.0,
    )
    text = step_summary(report)

    assert text.startswith("## sandboxverify passed\n\n**passed**; no plugins")
    assert "Failures" not in text
    assert "imports" not in text and "smoke" not in text  # no record, no line


def test_details_show_their_last_lines_in_a_fence_that_holds_them() -> None:
    details = "\n".join(f"line {i} ```" for i in range(100)) + "\n" + "x" * 5000
    failure = Failure("import_failed", "1. looks like a list\n- and another", PY, details=details)
    text = step_summary(make_report(failure))

    block = text.split("<details>")[1]
    assert f"details (101 line(s), the last {DETAIL_LINES} shown)" in block
    assert "line 60 ```" not in block and "line 61 ```" in block
    assert "\n````text\n" in block and "\n````\n" in block
    assert len(max(block.splitlines(), key=len)) < 500
    # a message line that reads like a list item starts the paragraph as plain text
    assert "\n1\\. looks like a list<br>- and another\n" in text


def test_thousands_of_failures_keep_the_summary_under_the_limit() -> None:
    details = "\n".join("x" * 300 for _ in range(200))
    failures = [
        Failure("import_failed", f"module m{i} failed", PY, module=f"m{i}", details=details)
        for i in range(2000)
    ]
    text = step_summary(make_report(*failures))

    size = len(text.encode())
    assert SUMMARY_BUDGET // 2 < size <= SUMMARY_BUDGET < 1024 * 1024
    shown = text.count("#### import\\_failed")
    assert 0 < shown < 2000
    assert f"*{2000 - shown} more failure(s) not shown here: the JSON report has them all.*" in text
    assert text.count("<details>") == text.count("</details>") == shown


def test_the_summary_lists_the_warnings_as_text() -> None:
    report = replace(
        make_report(run=full_run()),
        warnings=(ReportWarning("junk-files", "demo.tar.gz: ships `.github/` *and* <b>", None),),
    )
    text = step_summary(report)

    assert "### Warnings" in text
    [line] = [line for line in text.splitlines() if "junk-files" in line]
    assert line.startswith("- `junk-files` demo.tar.gz: ships")
    assert "<b>" not in line  # package text stays text
