"""The GitHub Action (action.yml), run here the way the runner runs a composite action: its
expressions evaluated, each step a `bash --noprofile --norc -eo pipefail` script with the runner's
environment files, outputs read back from $GITHUB_OUTPUT, $GITHUB_ENV and $GITHUB_PATH carried
from step to step. The install is real (uv from the action's hash-locked requirements, the
action's code from this checkout) and so are the checks. The one step that uses another action
(actions/cache) is not run: here every cache is a miss."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from sandboxverify.sandbox._toolchain import find_uv
from tests.helpers import (
    ROOT,
    action,
    assert_valid_report,
    copy_fixture,
    tree_digest,
    use_in_ci_section,
)

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
#: ``A == 'x'`` / ``A != 'x'``, joined by ``&&``: the conditions the action's ``if:`` uses
CONDITION = re.compile(r"^\s*([\w.-]+)\s*(==|!=)\s*'([^']*)'\s*$")
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


@dataclass(frozen=True)
class StepResult:
    id: str
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]


@dataclass(frozen=True)
class ActionResult:
    steps: list[StepResult]
    outputs: dict[str, str]
    summary: str

    def step(self, step_id: str) -> StepResult:
        [found] = [step for step in self.steps if step.id == step_id]
        return found


def read_file_commands(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads them."""
    values: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block: list[str] = []
            for item in lines:
                if item == delimiter:
                    break
                block.append(item)
            else:
                raise AssertionError(f"{path.name}: {name} is not closed by {delimiter}")
            values[name] = "\n".join(block)
        elif line:
            name, _, value = line.partition("=")
            assert name, f"{path.name}: a line without a name: {line!r}"
            values[name] = value
    return values


class Runner:
    """One job on a simulated runner: RUNNER_TEMP and the environment persist across uses of the
    action, as they do across the steps of a job."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.extra_env = dict(env or {})
        self.temp = root / "runner-temp"
        self.workspace = root / "workspace"
        self.bin = root / "runner-bin"
        for directory in (self.temp, self.workspace, self.bin):
            directory.mkdir(parents=True, exist_ok=True)
        # the runner's python3 (not this test's virtual environment, nor anything installed in it)
        base = Path(sys.base_prefix) / "bin" / "python3"
        assert base.exists(), base
        python3 = self.bin / "python3"
        if not python3.exists():
            python3.symlink_to(base)
        self.env_file_values: dict[str, str] = {}
        self.path_entries: list[str] = []
        self.uses = 0

    def environment(self) -> dict[str, str]:
        inherited = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("GITHUB_", "RUNNER_", "VIRTUAL_ENV", "PYTHON"))
        }
        venv = Path(sys.prefix) / "bin"
        path = [entry for entry in os.environ["PATH"].split(os.pathsep) if Path(entry) != venv]
        return {
            **inherited,
            "PATH": os.pathsep.join([*self.path_entries, str(self.bin), *path]),
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(ROOT),
            "RUNNER_TEMP": str(self.temp),
            **self.extra_env,
            **self.env_file_values,
        }

    def run(self, inputs: Mapping[str, str]) -> ActionResult:
        """Run the action's steps with ``with:`` ``inputs``, until one fails."""
        definition = action()
        unknown = set(inputs) - set(definition["inputs"])
        assert unknown == set(), f"not inputs of the action: {unknown}"
        self.uses += 1
        files = self.temp / f"_runner_files_{self.uses}"
        files.mkdir()
        summary = files / "step_summary"
        summary.touch()
        step_outputs: dict[str, dict[str, str]] = {}

        def single(expression: str) -> str:
            parts = expression.split(".")
            if parts[0] == "inputs" and len(parts) == 2:
                spec = definition["inputs"][parts[1]]
                return inputs.get(parts[1], str(spec.get("default", "")))
            if expression == "github.action_path":
                return str(ROOT)
            if expression == "runner.temp":
                return str(self.temp)
            if expression == "runner.os":
                return {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}[sys.platform]
            if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
                return step_outputs.get(parts[1], {}).get(parts[3], "")
            raise AssertionError(f"an expression this runner does not evaluate: {expression}")

        def evaluate(text: str) -> str:
            def one(match: re.Match[str]) -> str:
                expression, _, fallback = match.group(1).partition(" || ")
                value = single(expression)
                if value or not fallback:
                    return value
                assert fallback[:1] == fallback[-1:] == "'", f"not a string literal: {fallback}"
                return fallback[1:-1]

            return EXPRESSION.sub(one, text)

        def condition(text: str) -> bool:
            verdicts = []
            for part in text.split("&&"):
                match = CONDITION.match(part)
                assert match, f"a condition this runner does not evaluate: {text}"
                value = single(match.group(1))
                verdicts.append((value == match.group(3)) == (match.group(2) == "=="))
            return all(verdicts)

        results: list[StepResult] = []
        for index, step in enumerate(definition["runs"]["steps"]):
            step_id = step.get("id", f"step{index}")
            if "if" in step and not condition(str(step["if"])):
                continue
            if "uses" in step:
                # another action (actions/cache): pinned, its inputs resolvable; not run here
                assert set(step) <= {"name", "id", "if", "uses", "with"}, step.get("name")
                assert PINNED.match(step["uses"]), step["uses"]
                assert all(evaluate(str(value)) for value in step.get("with", {}).values())
                results.append(StepResult(step_id, 0, "", "", {"cache-hit": "false"}))
                continue
            assert set(step) <= {"name", "id", "shell", "env", "run", "if"}, step.get("name")
            assert step["shell"] == "bash"
            output = files / f"output_{index}"
            env_file = files / f"env_{index}"
            path_file = files / f"path_{index}"
            for path in (output, env_file, path_file):
                path.touch()
            env = {
                **self.environment(),
                **{name: evaluate(str(value)) for name, value in step.get("env", {}).items()},
                "GITHUB_OUTPUT": str(output),
                "GITHUB_ENV": str(env_file),
                "GITHUB_PATH": str(path_file),
                "GITHUB_STEP_SUMMARY": str(summary),
            }
            script = files / f"step_{index}.sh"
            script.write_text(step["run"], encoding="utf-8")
            completed = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            # the runner reads the files after every step, failed or not
            step_outputs[step_id] = read_file_commands(output)
            self.env_file_values.update(read_file_commands(env_file))
            self.path_entries[:0] = reversed(path_file.read_text(encoding="utf-8").splitlines())
            results.append(
                StepResult(
                    step_id,
                    completed.returncode,
                    completed.stdout,
                    completed.stderr,
                    step_outputs[step_id],
                )
            )
            if completed.returncode != 0:
                break
        outputs = {
            name: evaluate(str(spec["value"])) for name, spec in definition["outputs"].items()
        }
        return ActionResult(results, outputs, summary.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    """A job whose first use of the action installs sandboxverify from this checkout; the tests
    then use it again in the same job, so each of them runs the already-installed path."""
    job = Runner(tmp_path_factory.mktemp("job"))
    install = job.run({"target": "does-not-exist"})
    first = install.step("install")
    assert first.code == 0, first.stdout + first.stderr
    assert "::group::Install " in first.stdout
    assert f"installed in {job.temp}/sandboxverify-action/venv: sandboxverify, version " in (
        first.stdout
    )
    assert f"({ROOT}[uv])" in first.stdout
    yield job
    shutil.rmtree(job.root, ignore_errors=True)


def assert_reused_install(result: ActionResult) -> None:
    install = result.step("install")
    assert install.code == 0, install.stderr
    assert "already installed in " in install.stdout
    assert "::group::Install" not in install.stdout


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_a_good_package_passes_with_outputs_report_and_summary(runner: Runner) -> None:
    project = copy_fixture("good-hatch", runner.workspace)
    before = tree_digest(project)

    result = runner.run(
        {
            "target": "good-hatch",
            "expect-tools": "greet, add",
            "python": "3.10,3.12",
            "args": "--exact --timeout '45'",
            "junit-xml": "junit.xml",
        }
    )

    assert_reused_install(result)
    check = result.step("check")
    assert check.code == 0, check.stdout + check.stderr
    assert result.outputs["ok"] == "true"
    report_path = Path(result.outputs["report"])
    assert report_path.is_absolute() and report_path.is_relative_to(runner.temp)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert_valid_report(report)
    assert report["ok"] is True
    assert [run["python"][:4] for run in report["runs"]] == ["3.10", "3.12"]
    assert sorted(tool["name"] for tool in report["runs"][0]["tools"]) == ["add", "greet"]
    # the uv extra came with the install: the fast path, from the action's own environment
    assert report["installer"] == "uv"
    assert (runner.temp / "sandboxverify-action" / "venv" / "bin" / "uv").is_file()
    assert "--expect-tools greet --expect-tools add" in check.stdout
    assert "--exact --timeout 45" in check.stdout
    assert "## sandboxverify passed" in result.summary
    junit = ElementTree.parse(runner.workspace / "junit.xml").getroot()
    assert int(junit.get("tests", "0")) > 0 and junit.get("failures") == "0"
    assert Path(result.outputs["junit"]) == runner.workspace / "junit.xml"
    assert result.outputs["failures"] == "0"
    # the summary the job shows, also as a file (for a pull-request comment, say)
    summary = Path(result.outputs["summary"]).read_text(encoding="utf-8")
    assert summary.startswith("## sandboxverify passed") and summary in result.summary
    assert tree_digest(project) == before


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_dist_artifact_keeps_the_verified_files_for_the_publish_job(runner: Runner) -> None:
    copy_fixture("good-flit", runner.workspace)

    result = runner.run({"target": "good-flit", "dist-artifact": "verified-dist"})

    check = result.step("check")
    assert check.code == 0, check.stdout + check.stderr
    assert result.outputs["dist-artifact"] == "verified-dist"
    dist = Path(result.outputs["dist-dir"])
    report = json.loads(Path(result.outputs["report"]).read_text(encoding="utf-8"))
    assert_valid_report(report)
    kept = {Path(a["kept"]).name: a["sha256"] for a in report["artifacts"]}
    assert sorted(kept) == sorted(path.name for path in dist.iterdir())
    for path in dist.iterdir():  # byte for byte the files verified
        assert hashlib.sha256(path.read_bytes()).hexdigest() == kept[path.name]
    # the upload step ran (here: its inputs resolved), and last
    assert result.steps[-1].id != "check"


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_no_files_are_kept_for_a_package_that_fails(runner: Runner) -> None:
    copy_fixture("broken-empty-plugin", runner.workspace)

    result = runner.run({"target": "broken-empty-plugin", "dist-artifact": "verified-dist"})

    assert result.step("check").code == 1
    assert result.outputs["dist-artifact"] == result.outputs["dist-dir"] == ""
    assert result.steps[-1].id == "check"


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_a_broken_package_fails_the_step_with_outputs_report_and_annotations(
    runner: Runner,
) -> None:
    copy_fixture("broken-typo-attr", runner.workspace)

    result = runner.run(
        {"working-directory": "broken-typo-attr", "report": "../reports-broken.json"}
    )

    assert_reused_install(result)
    check = result.step("check")
    assert check.code == 1, check.stdout + check.stderr
    assert result.outputs["ok"] == "false"
    report_path = runner.workspace / "reports-broken.json"
    assert Path(result.outputs["report"]).resolve() == report_path.resolve()
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert "plugin_load_failed" in [failure["code"] for failure in report["failures"]]
    errors = [line for line in check.stdout.splitlines() if line.startswith("::error")]
    assert errors and any("setpu" in line for line in errors)
    assert "## sandboxverify failed" in result.summary
    assert result.outputs["failures"] == str(len(report["failures"]))
    # a JUnit report even when none was asked for: the output names it
    junit = ElementTree.parse(result.outputs["junit"]).getroot()
    assert int(junit.get("failures", "0")) >= 1


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_a_target_glob_verifies_the_built_files_as_they_are(runner: Runner) -> None:
    project = copy_fixture("good-hatch", runner.workspace / "glob")
    uv = find_uv()
    assert uv is not None
    dist = runner.workspace / "glob" / "dist"
    subprocess.run(
        [str(uv), "build", "--out-dir", str(dist), str(project)],
        check=True,
        capture_output=True,
        timeout=600,
    )

    result = runner.run(
        {"working-directory": "glob", "target": "dist/*", "expect-tools": "greet,add"}
    )
    nothing = runner.run({"working-directory": "glob", "target": "nothing/*.whl"})
    empty = runner.run({"working-directory": "glob", "target": "  "})

    assert result.outputs["ok"] == "true", result.step("check").stdout
    report = json.loads(Path(result.outputs["report"]).read_text(encoding="utf-8"))
    given = [artifact for artifact in report["artifacts"] if not artifact["built"]]
    assert sorted(artifact["filename"] for artifact in given) == [
        "svfix_good_hatch-1.0.0-py3-none-any.whl",
        "svfix_good_hatch-1.0.0.tar.gz",
    ]
    # the given files as they are, and the wheel of the given sdist beside them
    assert [artifact["built"] for artifact in report["artifacts"]] == [False, False, True]
    assert [run["wheel_built"] for run in report["runs"]] == [False, True]
    # a pattern that matches nothing is an error, never a check of something else, and it is
    # visible: an annotation, the step summary, a report that says why
    failed = nothing.step("check")
    assert failed.code == 2
    assert "nothing/*.whl" in failed.stdout + failed.stderr
    assert "::error title=sandboxverify%3A usage_error::target not found: nothing/*.whl" in (
        failed.stdout
    )
    assert "## sandboxverify failed: usage error" in nothing.summary
    assert nothing.outputs["ok"] == "false"
    error_report = json.loads(Path(nothing.outputs["report"]).read_text(encoding="utf-8"))
    assert_valid_report(error_report)
    assert error_report["error"]["code"] == "usage_error"
    # nor is an empty target (an unset output): it would mean the tree, not the built files;
    # the action stops before sandboxverify runs, so there is no report to point at
    assert empty.step("check").code == 2
    assert "the target input is empty" in empty.step("check").stdout
    assert empty.outputs == {
        "ok": "false",
        "report": "",
        "junit": "",
        "failures": "",
        "summary": "",
        "dist-artifact": "",
        "dist-dir": "",
    }


@pytest.mark.slow
def test_input_values_are_never_run_as_shell_code(runner: Runner) -> None:
    hostile = {
        "target": "$(touch pwned-target) `touch pwned-backtick`",
        "expect-tools": "greet; touch pwned-tools",
        "args": "--timeout 5 $(touch pwned-args)",
        "report": "report-$(touch pwned-report).json",
    }

    result = runner.run(hostile)

    assert_reused_install(result)
    check = result.step("check")
    # the words arrive as they are: targets that do not exist, a usage error
    assert check.code == 2, check.stdout + check.stderr
    assert "$(touch" in check.stdout + check.stderr
    assert result.outputs["ok"] == "false"
    assert list(runner.workspace.rglob("pwned*")) == []
    assert list(Path.cwd().glob("pwned*")) == []


@pytest.mark.slow
def test_args_that_cannot_be_split_fail_the_step_with_an_annotation(runner: Runner) -> None:
    result = runner.run({"args": "--expect-files 'pkg/data/*.json"})

    check = result.step("check")
    assert check.code == 2
    assert check.stdout.startswith("::error title=sandboxverify action::args:")
    assert "hint: quote values" in check.stdout
    assert result.outputs["ok"] == "false"


@pytest.mark.slow
@pytest.mark.usefixtures("needs_uv", "os_sandbox")  # the action: --isolation strict
def test_version_installs_that_release_from_the_package_index(tmp_path: Path) -> None:
    """``version`` installs sandboxverify from the index, not the action's code: here a release
    only a local link offers (a local version label, which no public index accepts)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "sandboxverify", source / "sandboxverify")
    (source / "sandboxverify" / "_version.py").write_text('__version__ = "0.1.0+actiontest"\n')
    links = tmp_path / "links"
    uv = find_uv()
    assert uv is not None
    subprocess.run(
        [str(uv), "build", "--wheel", "--out-dir", str(links), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    # the release is installed with uv, which reads UV_FIND_LINKS
    find_links = " ".join(filter(None, [str(links), os.environ.get("UV_FIND_LINKS")]))
    job = Runner(tmp_path / "job", env={"UV_FIND_LINKS": find_links})
    copy_fixture("good-hatch", job.workspace)
    inputs = {"version": "0.1.0+actiontest", "target": "good-hatch", "expect-tools": "greet,add"}

    first = job.run(inputs)
    again = job.run({**inputs, "version": "==0.1.0+actiontest"})

    install = first.step("install")
    assert "::group::Install sandboxverify[uv]==0.1.0+actiontest into" in install.stdout
    assert "installed in " in install.stdout
    assert "sandboxverify, version 0.1.0+actiontest" in install.stdout
    assert first.outputs["ok"] == "true", first.step("check").stdout
    # the same release, spelled the other way: the install is reused
    assert_reused_install(again)
    assert again.outputs["ok"] == "true"


def test_a_version_that_is_not_a_specifier_fails_before_installing(tmp_path: Path) -> None:
    job = Runner(tmp_path)

    result = job.run({"version": "latest"})

    [prepare] = result.steps
    assert prepare.code == 2
    assert prepare.stdout.startswith("::error title=sandboxverify action::version: 'latest'")
    assert "hint: use a specifier such as ==0.4.1" in prepare.stdout
    assert not (job.temp / "sandboxverify-action").exists()
    # the check never ran: ok is still a definite answer, and no file is claimed
    assert result.outputs == {
        "ok": "false",
        "report": "",
        "junit": "",
        "failures": "",
        "summary": "",
        "dist-artifact": "",
        "dist-dir": "",
    }


def test_the_readme_tables_list_exactly_the_actions_inputs_and_outputs() -> None:
    rows = re.findall(r"^\| `([a-z-]+)` \|", use_in_ci_section(), re.MULTILINE)
    definition = action()
    assert sorted(rows) == sorted([*definition["inputs"], *definition["outputs"]])
