"""Every sample package through the real pipeline: build, sandbox, install, probe, verdict."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from sandboxverify import CheckOptions, Report, check
from tests.helpers import copy_fixture, fixture, run_cli, uv_wheel

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


def verify(target: str | Path, **options: Any) -> Report:
    options.setdefault("installer", "uv")
    # a wheel target would read the current directory's table: the repository's, not the fixture's
    return check(CheckOptions(targets=(str(target),), **options), config=False)


def codes(report: Report) -> list[str]:
    return [failure.code for failure in report.failures]


def tool_names(report: Report) -> list[str]:
    return sorted(tool.name for run in report.runs for tool in run.tools)


@pytest.mark.parametrize(
    ("name", "tools"),
    [
        ("good-hatch", ["add", "greet"]),
        ("good-setuptools-src", ["shout", "whisper"]),
        ("good-flit", ["reverse"]),
        ("good-with-dep", ["is_string"]),
        ("good-two-plugins", ["alpha_ping", "beta_ping"]),
        ("good-noisy", ["quiet"]),
        ("planner", ["plan_approve", "plan_list", "plan_propose", "plan_reject"]),
    ],
)
def test_good_packages_pass_with_exactly_their_tools(name: str, tools: list[str]) -> None:
    report = verify(fixture(name), expect_tools=tuple(tools), exact=True)

    assert report.ok, report.failures
    assert codes(report) == []
    assert tool_names(report) == tools
    [run] = report.runs
    assert [(stage.name, stage.status) for stage in run.stages] == [
        ("build", "passed"),
        ("venv", "passed"),
        ("install", "passed"),
        ("probe", "passed"),
        ("imports", "passed"),
        ("scripts", "passed"),
    ]
    assert run.imports is not None and run.imports.failed == ()
    assert all(plugin.ok for plugin in run.plugins)
    assert {artifact.kind for artifact in report.artifacts} == {"sdist", "wheel"}
    assert all(len(artifact.sha256) == 64 for artifact in report.artifacts)


def test_the_pip_toolchain_reaches_the_same_verdict() -> None:
    report = verify(fixture("good-with-dep"), installer="pip", expect_tools=("is_string",))

    assert report.ok, report.failures
    assert report.installer == "pip"
    assert tool_names(report) == ["is_string"]


def test_tools_carry_descriptions_and_schemas_derived_from_signatures() -> None:
    report = verify(fixture("good-hatch"))

    tools = {tool.name: tool for tool in report.runs[0].tools}
    assert tools["greet"].plugin == "greeter"
    assert tools["greet"].parameters == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    assert tools["add"].description == "Add two integers."


#: what a fixture also fails with where it is a git checkout (this repository): its sdist lacks a
#: module git tracks
IN_GIT = {"broken-sdist-excludes-module": ["sdist_incomplete"]}


@pytest.mark.parametrize(
    ("name", "code", "plugin", "fragments"),
    [
        (
            "broken-typo-attr",
            "plugin_load_failed",
            "typo",
            ["has no attribute 'setpu'", "did you mean 'setup'"],
        ),
        (
            "broken-undeclared-dep",
            "plugin_load_failed",
            "styled",
            ["ModuleNotFoundError", "No module named 'click'"],
        ),
        (
            "broken-missing-data",
            "plugin_load_failed",
            "voices",
            ["FileNotFoundError", "tools.json"],
        ),
        (
            "broken-sdist-excludes-module",
            "plugin_load_failed",
            "helped",
            ["No module named 'svfix_broken_sdist_excludes_module.helpers'"],
        ),
        (
            "broken-setup-raises",
            "plugin_load_failed",
            "fragile",
            ["raised while registering", "RuntimeError", "missing PLANNER_HOME"],
        ),
        ("broken-exit", "probe_crashed", "impostor", ["crashed", "without writing a result"]),
        ("broken-duplicate-tools", "tool_duplicate", "second", ["'search'", "'first'", "'second'"]),
        ("broken-empty-plugin", "plugin_empty", "forgetful", ["registered no tools and no event"]),
    ],
)
def test_broken_plugins_fail_with_a_code_naming_plugin_and_cause(
    name: str, code: str, plugin: str, fragments: list[str]
) -> None:
    report = verify(fixture(name))

    assert not report.ok
    # checked in place, in this repository's git checkout: the sdist is compared with git
    assert codes(report) == [*IN_GIT.get(name, []), code]
    [failure] = [failure for failure in report.failures if failure.code == code]
    assert failure.plugin == plugin
    assert failure.python == report.runs[0].python
    assert failure.hint
    for fragment in fragments:
        assert fragment in failure.message


def test_hints_tell_an_undeclared_dependency_from_a_module_missing_from_the_sdist() -> None:
    undeclared = verify(fixture("broken-undeclared-dep")).failures[0]
    excluded = verify(fixture("broken-sdist-excludes-module")).failures[-1]

    assert undeclared.hint is not None and "declare it in [project] dependencies" in undeclared.hint
    assert excluded.hint is not None and "belongs to this project" in excluded.hint
    assert excluded.details is not None and "helpers import title_case" in excluded.details


def test_a_wheel_built_straight_from_the_tree_hides_what_the_sdist_lost(tmp_path: Path) -> None:
    """The reason we build the wheel from the sdist: the direct wheel passes, ours must not."""
    source = copy_fixture("broken-sdist-excludes-module", tmp_path)
    direct_wheel = uv_wheel(source, tmp_path / "direct")

    assert verify(direct_wheel).ok
    assert codes(verify(source)) == ["plugin_load_failed"]


def test_a_plugin_that_hangs_at_import_is_a_timeout_naming_it() -> None:
    report = verify(fixture("broken-hangs"), timeout=3)

    assert codes(report) == ["timeout"]
    [failure] = report.failures
    assert failure.plugin == "sleeper"
    assert "did not finish within 3s" in failure.message
    assert failure.details is not None and "loading..." in failure.details
    [plugin] = report.runs[0].plugins
    assert not plugin.ok
    # offline in the OS sandbox: a wait for the network is one cause, said with its way out
    assert failure.hint is not None
    assert ("--network" in failure.hint) is (report.isolation == "namespaces")


@pytest.mark.usefixtures("os_sandbox")
def test_a_plugin_that_hangs_with_the_network_on_is_not_told_about_the_network() -> None:
    report = verify(fixture("broken-hangs"), timeout=3, network=True)

    [failure] = report.failures
    assert failure.code == "timeout"
    assert failure.hint is not None and "--network" not in failure.hint


def test_a_build_that_fails_is_build_failed_with_the_backend_error() -> None:
    report = verify(fixture("broken-build"))

    assert codes(report) == ["build_failed"]
    [failure] = report.failures
    assert "building the sdist failed" in failure.message
    assert "this build fails on purpose" in failure.message
    assert failure.python is None
    [run] = report.runs
    assert [(s.name, s.status) for s in run.stages] == [
        ("build", "failed"),
        ("venv", "skipped"),
        ("install", "skipped"),
        ("probe", "skipped"),
        ("imports", "skipped"),
        ("scripts", "skipped"),
    ]
    assert report.artifacts == ()


@pytest.mark.parametrize("requires_python", [">=3.14", "<3.8"])
def test_requires_python_that_excludes_the_interpreter_is_install_failed(
    requires_python: str, tmp_path: Path
) -> None:
    """``uv pip install <wheel>`` ignores an upper bound by itself; both installers must refuse."""
    project = copy_fixture("broken-requires-python", tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('">=3.14"', f'"{requires_python}"'), encoding="utf-8"
    )
    messages = {}
    for installer in ("uv", "pip"):
        report = verify(project, installer=installer)

        assert codes(report) == ["install_failed"], installer
        [failure] = report.failures
        assert f"not in {requires_python!r}" in failure.message, installer
        assert failure.hint is not None and "requires-python excludes" in failure.hint
        messages[installer] = failure.message.replace(f"with {installer} ", "with INSTALLER ")
    assert messages["uv"] == messages["pip"]


def test_a_distribution_without_plugins_in_the_group_is_no_plugins() -> None:
    report = verify(fixture("broken-no-plugins"), host="native")

    assert codes(report) == ["no_plugins"]
    message = report.failures[0].message
    assert "'sandboxverify.plugins'" in message
    assert "it declares: console_scripts" in message


def test_expectations_missing_unexpected_and_count() -> None:
    report = verify(
        fixture("good-two-plugins"),
        expect_tools=("alpha_ping", "gamma_ping"),
        exact=True,
        expect_plugins=3,
    )

    assert sorted(codes(report)) == ["plugin_count_mismatch", "tool_missing", "tool_unexpected"]
    by_code = {failure.code: failure for failure in report.failures}
    assert by_code["tool_missing"].tool == "gamma_ping"
    assert "registered: alpha_ping, beta_ping" in by_code["tool_missing"].message
    assert by_code["tool_unexpected"].tool == "beta_ping"
    assert by_code["tool_unexpected"].plugin == "beta"
    assert "expected 3 plugin(s)" in by_code["plugin_count_mismatch"].message
    assert "found 2: alpha, beta" in by_code["plugin_count_mismatch"].message


def test_a_missing_tool_of_a_failed_plugin_points_at_the_load_failure() -> None:
    report = verify(fixture("broken-setup-raises"), expect_tools=("status",))

    assert sorted(codes(report)) == ["plugin_load_failed", "tool_missing"]
    missing = next(f for f in report.failures if f.code == "tool_missing")
    assert missing.hint is not None and "'fragile' failed to load" in missing.hint


def test_entrypoints_host_treats_each_entry_point_as_a_tool() -> None:
    report = verify(
        fixture("entrypoints-app"),
        host="entrypoints",
        groups=("svfix.commands",),
        expect_tools=("hello", "bye"),
        exact=True,
    )

    assert report.ok, report.failures
    tools = {tool.name: tool for tool in report.runs[0].tools}
    assert set(tools) == {"hello", "bye"}
    assert tools["hello"].plugin == "hello"
    assert tools["hello"].description


def test_group_override_on_the_native_host_finds_nothing_in_an_empty_group() -> None:
    report = verify(fixture("good-hatch"), groups=("svfix.nothing-here",))

    assert codes(report) == ["no_plugins"]
    assert "sandboxverify.plugins" in report.failures[0].message  # what it does declare


def test_given_wheel_and_sdist_are_verified_as_they_are() -> None:
    built = verify(fixture("good-hatch"), keep=True)
    assert built.workdir is not None
    dist = Path(built.workdir) / "dist"
    try:
        wheel = next(dist.glob("*.whl"))
        sdist = next(dist.glob("*.tar.gz"))
        # artifacts read the current directory's [tool.sandboxverify]: the repository's own
        report = check(
            CheckOptions(
                targets=(str(wheel), str(sdist)), installer="uv", expect_tools=("greet", "add")
            ),
            config=False,
        )
        wheel_only = check(CheckOptions(targets=(str(sdist),), installer="uv"), config=False)
        # as in a release job: relative paths, the way a shell expands dist/*
        relative = run_cli(["check", wheel.name, sdist.name, "--installer", "uv"], cwd=dist)
    finally:
        shutil.rmtree(built.workdir)

    assert relative.code == 0, relative.stdout + relative.stderr

    assert report.ok, report.failures
    records = {(a.kind, a.built): a for a in report.artifacts}
    assert records["wheel", False].filename == wheel.name  # verified as given, never rebuilt
    assert records["wheel", True].filename == wheel.name  # and the wheel of the given sdist
    assert [run.wheel_built for run in report.runs] == [False, True]
    assert wheel_only.ok, wheel_only.failures
    assert {a.kind: a.built for a in wheel_only.artifacts} == {"sdist": False, "wheel": True}


def test_several_interpreters_run_in_parallel_one_run_each() -> None:
    report = verify(fixture("good-hatch"), python=("3.10", "3.12"), expect_tools=("greet",))

    assert report.ok, report.failures
    assert [run.python[:4] for run in report.runs] == ["3.10", "3.12"]
    assert len(report.artifacts) == 2  # built once


def test_keep_leaves_the_sandbox_and_says_where() -> None:
    report = verify(fixture("good-hatch"), keep=True)
    try:
        assert report.workdir is not None
        sandbox = report.runs[0].sandbox
        assert sandbox is not None and Path(sandbox, "venv").is_dir()
        assert Path(report.workdir, "dist").is_dir()
    finally:
        shutil.rmtree(str(report.workdir))


def test_everything_temporary_is_removed_after_success_and_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    verify(fixture("good-hatch"))
    verify(fixture("broken-setup-raises"))

    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("sandboxverify-")] == []


def test_plugins_of_other_installed_distributions_are_ignored(tmp_path: Path) -> None:
    """A dependency that declares plugins in the same group does not lend them to us."""
    built = verify(fixture("good-hatch"), keep=True)
    assert built.workdir is not None
    links = tmp_path / "links"
    shutil.copytree(Path(built.workdir) / "dist", links)
    shutil.rmtree(built.workdir)
    consumer = tmp_path / "consumer"
    (consumer / "svfix_consumer").mkdir(parents=True)
    (consumer / "svfix_consumer" / "__init__.py").write_text(
        "def setup(api):\n    api.register_tool('consume', lambda: 'ok')\n"
    )
    (consumer / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "svfix-consumer"\nversion = "1.0"\n'
        'dependencies = ["svfix-good-hatch"]\n'
        '[project.entry-points."sandboxverify.plugins"]\nconsumer = "svfix_consumer:setup"\n'
    )

    report = verify(consumer, find_links=(str(links),), expect_tools=("consume", "greet"))

    assert codes(report) == ["tool_missing"]
    assert report.failures[0].tool == "greet"
    assert [plugin.name for plugin in report.runs[0].plugins] == ["consumer"]
    assert tool_names(report) == ["consume"]


BROKEN = sorted(path.name for path in fixture(".").iterdir() if path.name.startswith("broken-"))
# options that make a fixture's one fault show (and keep a hang short)
BROKEN_OPTIONS: dict[str, dict[str, Any]] = {
    "broken-hangs": {"timeout": 5.0},
    "broken-mcp-crash": {"host": "mcp"},
    "broken-no-plugins": {"host": "native"},
    "broken-llm-plugin": {"host": "llm"},
    "broken-python-floor": {"python": ("min",)},
}


@pytest.mark.parametrize("name", BROKEN)
def test_every_broken_fixture_gets_the_same_verdict_from_both_installers(name: str) -> None:
    options = BROKEN_OPTIONS.get(name, {})
    verdicts = {}
    for installer in ("uv", "pip"):
        report = verify(fixture(name), installer=installer, **options)
        verdicts[installer] = sorted((f.code, f.plugin or "") for f in report.failures)
        assert not report.ok, (installer, name)
    assert verdicts["uv"] == verdicts["pip"]
