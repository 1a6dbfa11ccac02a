"""The GitHub Action and the project's workflows, read as the runner reads them: the invariants a
release depends on (verify before publish, no publishing rights while plugin code runs, inputs
that exist, commands that are installed), and the README's CI examples held to the same rules."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import (
    ROOT,
    action,
    action_inputs,
    read_yaml,
    readme_ci_blocks,
    readme_commands,
)

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

WORKFLOWS = ROOT / ".github" / "workflows"
ACTION_FILE = ROOT / "action.yml"
PUBLISH_ACTION = "pypa/gh-action-pypi-publish@"
OWN_ACTION = "sandboxverify/sandboxverify@"


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def workflow_files() -> list[Path]:
    found = sorted(WORKFLOWS.glob("*.yml"))
    assert [path.name for path in found] == ["ci.yml", "release.yml"]
    return found


def jobs_of(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    return jobs


def steps_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    steps = job.get("steps", [])
    assert isinstance(steps, list)
    return steps


def uses_of(job: dict[str, Any]) -> list[str]:
    return [str(step.get("uses", "")) for step in steps_of(job)]


def runs_the_action(job: dict[str, Any]) -> bool:
    return any(use == "./" or use.startswith(OWN_ACTION) for use in uses_of(job))


def publishes(job: dict[str, Any]) -> bool:
    return any(use.startswith(PUBLISH_ACTION) for use in uses_of(job))


def permissions(workflow: dict[str, Any], job: dict[str, Any]) -> dict[str, str]:
    """What the job's token may do: its own ``permissions``, else the workflow's. Declaring
    none is not "none": the repository's default token may then write."""
    assert "permissions" in job or "permissions" in workflow, (
        "no permissions declared: the default token may write"
    )
    granted = job.get("permissions", workflow.get("permissions"))
    assert isinstance(granted, dict), f"permissions must be a mapping, not {granted!r}"
    return granted


def needs(job: dict[str, Any]) -> list[str]:
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


def all_workflows() -> list[tuple[str, dict[str, Any]]]:
    """The project's workflows and the README's example workflows, by name."""
    found = [(path.name, read_yaml(path)) for path in workflow_files()]
    for index, block in enumerate(readme_ci_blocks("yaml")):
        data = yaml.safe_load(block)
        if isinstance(data, dict) and "jobs" in data:
            found.append((f"README example {index + 1}", data))
    return found


WORKFLOWS_AND_EXAMPLES = all_workflows()
WORKFLOW_IDS = [name for name, _ in WORKFLOWS_AND_EXAMPLES]


@pytest.mark.parametrize(("name", "workflow"), WORKFLOWS_AND_EXAMPLES, ids=WORKFLOW_IDS)
def test_jobs_that_run_plugin_code_cannot_publish(name: str, workflow: dict[str, Any]) -> None:
    for job_name, job in jobs_of(workflow).items():
        if runs_the_action(job):
            granted = permissions(workflow, job)
            assert granted.get("id-token") != "write", f"{name}: {job_name} may mint OIDC tokens"
            assert "write" not in granted.values(), f"{name}: {job_name} has write permissions"


def release_workflows() -> list[tuple[str, dict[str, Any]]]:
    found = [
        (name, workflow)
        for name, workflow in WORKFLOWS_AND_EXAMPLES
        if any(publishes(job) for job in jobs_of(workflow).values())
    ]
    assert [name for name, _ in found][:1] == ["release.yml"]
    assert len(found) == 3, "release.yml and the README's release and release-matrix examples"
    return found


RELEASE_WORKFLOWS = release_workflows()


def downloads_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        step
        for step in steps_of(job)
        if str(step.get("uses", "")).startswith("actions/download-artifact@")
        and "name" in step.get("with", {})
    ]


def never_builds(job_name: str, job: dict[str, Any]) -> None:
    scripts = " ".join(str(step.get("run", "")) for step in steps_of(job))
    assert not re.search(r"\b(uv build|-m build|setup\.py)\b", scripts), job_name


@pytest.mark.parametrize(("name", "workflow"), RELEASE_WORKFLOWS)
def test_publish_needs_verify_and_publishes_the_verified_files(
    name: str, workflow: dict[str, Any]
) -> None:
    jobs = jobs_of(workflow)
    [publish] = [job_name for job_name, job in jobs.items() if publishes(job)]
    [verify] = [job_name for job_name, job in jobs.items() if runs_the_action(job)]
    assert verify in needs(jobs[publish]), f"{name}: {publish} must need {verify}"
    assert permissions(workflow, jobs[publish]).get("id-token") == "write"
    assert jobs[publish].get("environment", {}).get("name", jobs[publish].get("environment")) == (
        "pypi"
    )
    # a matrix's verdict is the merge of its jobs' reports: publishing waits for it too
    merges = [name for name, job in jobs.items() if "sandboxverify merge" in str(job)]
    assert set(merges) <= set(needs(jobs[publish])), f"{name}: {publish} must need {merges}"
    never_builds(publish, jobs[publish])
    [action_step] = [
        s for s in steps_of(jobs[verify]) if runs_the_action({"steps": [s]}) and "with" in s
    ]
    kept = action_step["with"].get("dist-artifact")
    if kept:
        # the action builds, verifies and uploads the very files; publish takes exactly those
        assert [step["with"]["name"] for step in downloads_of(jobs[publish])] == [kept]
        assert action_step["with"].get("target", ".") == "."
        assert len([j for j in jobs.values() if runs_the_action(j)]) == 1, "one upload of a name"
        return
    # else built once elsewhere: the verify and publish jobs take the build job's artifact
    [build] = [
        job_name
        for job_name, job in jobs.items()
        if any(use.startswith("actions/upload-artifact@") for use in uses_of(job))
        and not runs_the_action(job)
        and "merge" not in " ".join(str(step.get("run", "")) for step in steps_of(job))
    ]
    assert build in needs(jobs[verify])
    [upload] = [s for s in steps_of(jobs[build]) if s.get("uses", "").startswith("actions/upload")]
    for job_name in (verify, publish):
        downloads = downloads_of(jobs[job_name])
        assert [step["with"]["name"] for step in downloads] == [upload["with"]["name"]]
        assert [step["with"]["path"] for step in downloads] == [upload["with"]["path"]]
        never_builds(job_name, jobs[job_name])
    assert action_step["with"]["target"] == upload["with"]["path"].rstrip("/") + "/*"


def test_the_release_workflow_publishes_the_files_the_action_kept() -> None:
    jobs = jobs_of(read_yaml(WORKFLOWS / "release.yml"))
    [step] = [s for job in jobs.values() for s in steps_of(job) if s.get("uses") == "./"]
    assert step["with"]["dist-artifact"]
    # the action uploads them itself, only once the check passed
    definition = action()
    [upload] = [
        s
        for s in definition["runs"]["steps"]
        if str(s.get("uses", "")).startswith("actions/upload")
    ]
    assert upload["if"] == "steps.check.outputs.dist-artifact != ''"
    assert upload["with"]["path"] == "${{ steps.check.outputs.dist-dir }}"
    assert upload["with"]["if-no-files-found"] == "error"
    assert "--dist-dir" in definition["runs"]["steps"][-2]["run"]


def test_release_verifies_sandboxverify_as_the_pytest_plugin_and_tool_it_ships() -> None:
    jobs = jobs_of(read_yaml(WORKFLOWS / "release.yml"))
    [step] = [s for job in jobs.values() for s in steps_of(job) if s.get("uses") == "./"]
    # what to expect comes from [tool.sandboxverify], the self-check .ci/run runs too
    assert not {"host", "group", "expect-tools", "args"} & set(step["with"])
    config = pyproject()["tool"]["sandboxverify"]
    assert config["with"] == ["pytest"]
    assert "fixture:harness" in config["expect-tools"]
    # a release takes nothing from a cache
    assert step["with"]["cache"] == "false"
    project = pyproject()["project"]
    assert "sandboxverify" in project["entry-points"]["pytest11"]
    assert "sandboxverify" in project["scripts"]


@pytest.mark.parametrize(("name", "workflow"), WORKFLOWS_AND_EXAMPLES, ids=WORKFLOW_IDS)
def test_every_use_of_the_action_passes_only_its_inputs(
    name: str, workflow: dict[str, Any]
) -> None:
    inputs = action_inputs()
    for job in jobs_of(workflow).values():
        for step in steps_of(job):
            use = str(step.get("uses", ""))
            if use == "./" or use.startswith(OWN_ACTION):
                unknown = set(step.get("with", {})) - inputs
                assert unknown == set(), f"{name}: {step.get('name', use)} passes {unknown}"


def test_the_readme_shows_the_action_in_use() -> None:
    examples = [workflow for name, workflow in WORKFLOWS_AND_EXAMPLES if name.startswith("README")]
    uses = [
        use for workflow in examples for job in jobs_of(workflow).values() for use in uses_of(job)
    ]
    assert any(use.startswith(OWN_ACTION) for use in uses), "the README shows no use of the action"


@pytest.mark.parametrize(("name", "workflow"), WORKFLOWS_AND_EXAMPLES, ids=WORKFLOW_IDS)
def test_scripts_never_interpolate_expressions(name: str, workflow: dict[str, Any]) -> None:
    """Values reach scripts through env:, so no value is ever read as shell code."""
    for job in jobs_of(workflow).values():
        for step in steps_of(job):
            assert "${{" not in str(step.get("run", "")), f"{name}: {step.get('name')}"


def test_the_action_reads_its_inputs_only_through_env() -> None:
    for step in action()["runs"]["steps"]:
        if "uses" in step:
            continue
        assert "${{" not in step["run"], step["name"]
        assert step["shell"] == "bash"


#: ``owner/repo@<full commit SHA> # vX.Y.Z``: the version for people, the SHA for the runner
PINNED_USE = re.compile(r"^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+)*)$")


def uses_lines(path: Path) -> list[str]:
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"^\s*(?:- )?uses: ", line) and not line.strip().endswith("uses: ./")
    ]


@pytest.mark.parametrize("path", [ACTION_FILE, *workflow_files()], ids=lambda p: p.name)
def test_every_action_used_is_pinned_to_a_commit_with_its_version_named(path: Path) -> None:
    lines = uses_lines(path)
    assert lines, f"{path.name} uses no other action"
    for line in lines:
        assert PINNED_USE.match(line), f"{path.name}: not pinned to a commit SHA: {line.strip()}"
    # one action, one version: the same SHA and the same comment everywhere
    seen: dict[str, tuple[str, str]] = {}
    for path_ in [ACTION_FILE, *workflow_files()]:
        for line in uses_lines(path_):
            match = PINNED_USE.match(line)
            assert match is not None
            repo, sha, version = match.groups()
            assert seen.setdefault(repo, (sha, version)) == (sha, version), line


@pytest.mark.parametrize(("name", "workflow"), WORKFLOWS_AND_EXAMPLES, ids=WORKFLOW_IDS)
def test_no_checkout_leaves_its_token_behind(name: str, workflow: dict[str, Any]) -> None:
    """``persist-credentials: false``: the token would otherwise stay in .git/config, for every
    later step (plugin code under test among them) and any uploaded artifact to read."""
    for job_name, job in jobs_of(workflow).items():
        for step in steps_of(job):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, (name, job_name)


def ci() -> dict[str, Any]:
    return read_yaml(WORKFLOWS / "ci.yml")


def test_ci_runs_on_pushes_and_pull_requests() -> None:
    workflow: dict[Any, Any] = ci()
    triggers = workflow["on"] if "on" in workflow else workflow[True]  # YAML 1.1: a bare on is true
    assert {"push", "pull_request"} <= set(triggers)


def test_ci_tests_every_supported_python_with_the_interpreters_the_suite_needs() -> None:
    job = jobs_of(ci())["tests"]
    assert job["strategy"]["matrix"]["python"] == ["3.9", "3.10", "3.11", "3.12", "3.13"]
    [setup] = [s for s in steps_of(job) if str(s.get("uses", "")).startswith("actions/setup-py")]
    listed = setup["with"]["python-version"].splitlines()
    # the last one listed is the default python: the matrix entry
    assert listed[-1] == "${{ matrix.python }}"
    # 3.8 for the "too old" error, 3.10 and 3.12 for multi-interpreter runs, 3.9+ for the runtime
    assert {"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"} <= set(listed)


def test_github_ci_runs_the_readme_test_command_verbatim() -> None:
    _, run_tests = readme_commands()
    scripts = [str(step.get("run", "")).strip() for step in steps_of(jobs_of(ci())["tests"])]
    assert run_tests in scripts


def installed_extras(job: dict[str, Any]) -> set[str]:
    extras: set[str] = set()
    for step in steps_of(job):
        for found in re.findall(r"pip install -e '\.\[([a-z,]+)\]'", str(step.get("run", ""))):
            extras.update(found.split(","))
    return extras


def test_the_commands_ci_runs_are_installed_by_the_extras_it_installs() -> None:
    optional = pyproject()["project"]["optional-dependencies"]
    commands = {"ruff": "ruff", "mypy": "mypy", "pytest": "pytest", "uv": "uv"}
    seen: set[str] = set()
    for job_name, job in jobs_of(ci()).items():
        provided = {
            re.split(r"[<>=!~; \[]", requirement)[0]
            for extra in installed_extras(job)
            for requirement in optional[extra]
        }
        for step in steps_of(job):
            for word in re.findall(r"(?:^|&& |\n|-m )([a-z]+)\b", str(step.get("run", ""))):
                if word in commands:
                    assert commands[word] in provided, f"{job_name} runs {word} without it"
                    seen.add(word)
    assert {"ruff", "mypy", "pytest"} <= seen


def test_ci_lints_and_type_checks_as_the_house_rules_say() -> None:
    scripts = "\n".join(
        str(step.get("run", "")) for job in jobs_of(ci()).values() for step in steps_of(job)
    )
    for command in ("ruff check .", "ruff format --check .", "mypy"):
        assert re.search(rf"^{re.escape(command)}$", scripts, re.M), command


def test_ci_self_check_uses_the_action_on_good_and_broken_fixtures() -> None:
    job = jobs_of(ci())["self-check"]
    uses = {
        step.get("id", step["with"]["target"]): step
        for step in steps_of(job)
        if step.get("uses") == "./"
    }
    targets = {step["with"]["target"] for step in uses.values() if step.get("uses") == "./"}
    assert {"fixtures/good-hatch", "fixtures/planner", "fixtures/broken-typo-attr"} <= targets
    for step in uses.values():
        target = Path(ROOT / step["with"]["target"])
        assert target.is_dir(), target
        if "smoke" in step["with"]:
            assert (ROOT / step["with"]["smoke"]).is_file()
    broken = uses["broken"]
    assert broken["continue-on-error"] is True
    after = steps_of(job)[steps_of(job).index(broken) + 1]
    assert after["env"]["OK"] == "${{ steps.broken.outputs.ok }}"
    assert 'test "$OK" = false' in after["run"]


def test_the_interpreter_links_step_puts_pythons_where_the_suite_looks(tmp_path: Path) -> None:
    """The CI step that exposes setup-python's interpreters as ~/.pyenv/versions/X.Y.Z, run for
    real against this machine's interpreters (each python3.X on a private PATH)."""
    job = jobs_of(ci())["tests"]
    [step] = [s for s in steps_of(job) if ".pyenv/versions" in str(s.get("run", ""))]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wanted: dict[str, Path] = {}
    for minor in range(8, 14):
        found = sorted(Path.home().glob(f".pyenv/versions/3.{minor}.*/bin/python"))
        if not found:  # pragma: no cover - the CI machines carry these interpreters
            pytest.fail(f"this test needs Python 3.{minor}")
        (bin_dir / f"python3.{minor}").symlink_to(found[-1])
        wanted[found[-1].parent.parent.name] = found[-1]
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    for version in wanted:
        # the same glob the tests use (tests/test_cli.py, tests/runtime/test_stdlib_only.py)
        [python] = sorted(home.glob(f".pyenv/versions/{version}*/bin/python"))
        reported = subprocess.run(
            [str(python), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert reported == version


def test_the_readme_release_matrix_runs_the_action_per_job_and_merges_the_reports() -> None:
    [(_, workflow)] = [
        (name, wf)
        for name, wf in RELEASE_WORKFLOWS
        if any("strategy" in job for job in jobs_of(wf).values())
    ]
    jobs = jobs_of(workflow)
    build, verify, merge = jobs["build"], jobs["verify"], jobs["merge"]
    assert "sandboxverify matrix dist/*.whl" in str(build)
    assert verify["strategy"]["matrix"] == "${{ fromJSON(needs.build.outputs.matrix) }}"
    assert verify["strategy"]["fail-fast"] is False
    assert verify["runs-on"] == "${{ matrix.os }}"
    [action_step] = [s for s in steps_of(verify) if str(s.get("uses", "")).startswith(OWN_ACTION)]
    report = action_step["with"]["report"]
    [upload] = [s for s in steps_of(verify) if str(s.get("uses", "")).startswith("actions/upload")]
    assert upload["with"]["path"] == report
    assert upload["if"] == "${{ !cancelled() }}"
    assert upload["with"]["name"].startswith("report-")
    assert merge["if"] == "${{ !cancelled() }}" and needs(merge) == ["verify"]
    [download] = [s for s in steps_of(merge) if str(s.get("uses", "")).startswith("actions/down")]
    assert download["with"]["pattern"] == "report-*"
    directory = download["with"]["path"].rstrip("/")
    assert f"sandboxverify merge {directory}/" in str(merge)


def test_the_readme_survey_workflow_runs_a_shard_per_job_and_merges_them() -> None:
    [workflow] = [wf for name, wf in WORKFLOWS_AND_EXAMPLES if "survey" in jobs_of(wf)]
    jobs = jobs_of(workflow)
    survey, merge = jobs["survey"], jobs["merge"]
    shards = survey["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    assert survey["strategy"]["fail-fast"] is False
    assert "permissions" not in survey and "environment" not in survey
    [run] = [s for s in steps_of(survey) if "sandboxverify survey" in str(s.get("run", ""))]
    # the shard from the matrix through env, out of the same N as the matrix has
    assert f'--shard "$SHARD/{len(shards)}"' in run["run"]
    assert run["env"]["SHARD"] == "${{ matrix.shard }}"
    results = re.search(r"--results (\S+)", run["run"])
    assert results is not None
    [upload] = [s for s in steps_of(survey) if str(s.get("uses", "")).startswith("actions/upload")]
    assert upload["with"]["path"] == results.group(1)
    assert upload["if"] == "${{ !cancelled() }}"
    assert upload["with"]["name"] == "survey-${{ matrix.shard }}"
    assert merge["if"] == "${{ !cancelled() }}" and needs(merge) == ["survey"]
    [download] = [s for s in steps_of(merge) if str(s.get("uses", "")).startswith("actions/down")]
    assert download["with"]["pattern"] == "survey-*"
    directory = download["with"]["path"].rstrip("/")
    assert f"sandboxverify merge {directory}/" in str(merge)
    # every command line is one this sandboxverify parses
    from sandboxverify.cli._main import cli  # noqa: PLC0415

    for line in (run["run"].replace('"$SHARD/', '"1/'), str(merge["steps"][2]["run"])):
        name, *args = shlex.split(line.split("&& ", 1)[-1])[1:]
        command = cli.commands[name]
        command.make_context(name, args)
