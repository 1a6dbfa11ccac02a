"""Hostile packages that once reached outside the sandbox, checked end to end in both isolations.

Each ``fixtures/attack-*`` shows one way: a dependency built by the (unconfined) installer, a link
out of the project followed by the (unconfined) copy, a runtime of the package's own standing in
for sandboxverify's, text that forges lines of the report. Each must be a failure with its code,
no package code may run outside the sandbox (a dependency whose setup.py ran would leave a
marker in the HOME the installer got), and the caller's environment must appear in nothing the
check wrote or showed.
"""

from __future__ import annotations

import json
import os
import re
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.sandbox._bwrap import available
from tests.helpers import copy_fixture, fixture, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

SECRET = "svfix-unconfined-secret-value"
#: what the builder's setup.py leaves in the HOME it runs with
MARKER = "svfix-attack-builder-ran"
OWN_ANNOTATION = re.compile(r"::(error|warning) (file=[^,]+,line=\d+,)?title=sandboxverify%3A ")
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Checked:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]
    root: Path

    @property
    def codes(self) -> list[str]:
        return sorted(failure["code"] for failure in self.report["failures"])

    def failure(self, code: str) -> dict[str, Any]:
        [found] = [f for f in self.report["failures"] if f["code"] == code]
        assert isinstance(found, dict)
        return found

    @property
    def ran_unconfined(self) -> bool:
        return (self.root / "home" / MARKER).exists()

    def written(self) -> str:
        """Everything the check showed or wrote: its output, reports, step summary, and the
        contents of every artifact it built (unpacked)."""
        texts = [self.stdout, self.stderr]
        for name in ("report.json", "junit.xml", "summary.md"):
            path = self.root / name
            texts.append(path.read_text(encoding="utf-8") if path.exists() else "")
        for artifact in (self.root / "artifact-cache").rglob("*"):
            texts.extend(_members(artifact))
        return "\n".join(texts)


def _members(path: Path) -> list[str]:
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as archive:
            return [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()]
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path) as archive:
            files = [archive.extractfile(member) for member in archive.getmembers()]
            return [file.read().decode("utf-8", "replace") for file in files if file is not None]
    return []


@pytest.fixture(params=["namespaces", "process"])
def isolation(request: pytest.FixtureRequest) -> str:
    mode: str = request.param
    if mode == "namespaces" and available()[0] is None:
        pytest.skip(f"the OS sandbox is unavailable here: {available()[1]}")
    return mode


def check(
    name: str,
    isolation: str,
    root: Path,
    *options: str,
    prepare: Callable[[Path], None] | None = None,
) -> Checked:
    """``sandboxverify check`` of a copy of fixture ``name``, with a secret in the caller's
    environment and a throwaway HOME (the installer's)."""
    home = root / "home"
    home.mkdir()
    (root / "tmp").mkdir()
    source = copy_fixture(name, root)
    if prepare is not None:
        prepare(source)
    env = {
        **os.environ,
        "HOME": str(home),
        "TMPDIR": str(root / "tmp"),
        "UV_CACHE_DIR": str(root / "uv-cache"),
        "SANDBOXVERIFY_CACHE_DIR": str(root / "artifact-cache"),
        "GITHUB_TOKEN": SECRET,
        "SVFIX_CALLER_SECRET": SECRET,
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
    }
    result = run_cli(
        [
            "check",
            str(source),
            "--isolation",
            "strict" if isolation == "namespaces" else "process",
            "--json",
            str(root / "report.json"),
            "--junit-xml",
            str(root / "junit.xml"),
            *options,
        ],
        env=env,
        cwd=root,
        timeout=400,
    )
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    assert report["isolation"] == isolation
    return Checked(result.code, result.stdout, result.stderr, report, root)


def test_a_file_reference_that_setup_py_writes_into_the_metadata(
    isolation: str, tmp_path: Path
) -> None:
    checked = check("attack-file-reference", isolation, tmp_path, "--installer", "uv")

    assert checked.code == 1
    assert checked.codes == ["artifact_invalid", "artifact_invalid"]  # the sdist and the wheel
    for failure in checked.report["failures"]:
        assert (
            "has a direct reference in Requires-Dist: 'svfix-attack-builder @ file://"
            in (failure["message"])
        )
    assert not _installed(checked)
    assert not checked.ran_unconfined
    assert SECRET not in checked.written()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_direct_reference_in_requires_dist(
    isolation: str, installer: str, tmp_path: Path
) -> None:
    checked = check("attack-direct-reference", isolation, tmp_path, "--installer", installer)

    assert checked.codes == ["artifact_invalid", "artifact_invalid"]
    assert "'svfix-attack-builder @ http://127.0.0.1:9/" in checked.report["failures"][1]["message"]
    assert not _installed(checked)
    assert not checked.ran_unconfined
    assert SECRET not in checked.written()


def _installed(checked: Checked) -> bool:
    """Whether an install ran (the stage passed or failed, rather than never ran)."""
    stages = [stage for run in checked.report["runs"] for stage in run["stages"]]
    return any(s["name"] == "install" and s["status"] != "skipped" for s in stages)


def _sdist_only_links(root: Path) -> Path:
    """A find-links directory holding the builder as an sdist only (tarred here: its setup.py
    never runs in the test)."""
    links = root / "links"
    links.mkdir()
    with tarfile.open(links / "svfix_attack_builder-1.0.tar.gz", "w:gz") as archive:
        archive.add(fixture("attack-sdist-only-dep") / "builder", "svfix_attack_builder-1.0")
    return links


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_dependency_that_has_only_an_sdist(
    isolation: str, installer: str, tmp_path: Path
) -> None:
    links = _sdist_only_links(tmp_path)
    checked = check(
        "attack-sdist-only-dep",
        isolation,
        tmp_path,
        "--installer",
        installer,
        "--find-links",
        str(links),
    )

    if installer == "uv":  # uv names it: built as the project is, never by the installer
        assert checked.codes == []
        assert any(
            note.startswith("built svfix_attack_builder-1.0-py3-none-any.whl from its sdist")
            for note in checked.report["notes"]
        ), checked.report["notes"]
    else:  # pip says only that nothing matched; the hint says why that may be
        assert checked.codes == ["install_failed"]
        failure = checked.failure("install_failed")
        assert "svfix-attack-builder" in failure["message"]
        assert "if it has only a source distribution, build a wheel" in failure["hint"]
    assert not checked.ran_unconfined
    assert SECRET not in checked.written()


def _links_out(root: Path) -> Callable[[Path], None]:
    """Links out of the copied project: to sandboxverify's environment, and to a credentials
    file in the caller's home."""

    def prepare(source: Path) -> None:
        (root / "home" / ".pypirc").write_text("[pypi]\npassword = svfix-pypirc-secret\n")
        package = source / "svfix_attack_links"
        (package / "leak.txt").symlink_to("/proc/self/environ")
        (package / "pypirc.txt").symlink_to(Path("..") / ".." / "home" / ".pypirc")

    return prepare


def test_links_out_of_the_project(isolation: str, tmp_path: Path) -> None:
    checked = check(
        "attack-links",
        isolation,
        tmp_path,
        prepare=_links_out(tmp_path),
    )

    assert checked.codes == ["build_failed"]
    assert checked.failure("build_failed")["message"] == (
        "the project has symbolic links that lead out of it: "
        "svfix_attack_links/leak.txt -> /proc/self/environ, "
        "svfix_attack_links/pypirc.txt -> ../../home/.pypirc"
    )
    assert list((tmp_path / "artifact-cache").rglob("*.whl")) == []
    written = checked.written()
    assert SECRET not in written
    assert "svfix-pypirc-secret" not in written


def test_following_external_links_is_the_callers_choice_and_never_reaches_proc(
    isolation: str, tmp_path: Path
) -> None:
    checked = check(
        "attack-links",
        isolation,
        tmp_path,
        "--follow-external-links",
        prepare=_links_out(tmp_path),
    )

    assert checked.codes == ["build_failed"]
    assert checked.failure("build_failed")["message"] == (
        "the project has symbolic links that lead out of it: "
        "svfix_attack_links/leak.txt -> /proc/self/environ"
    )
    assert SECRET not in checked.written()


def test_a_wheel_shipping_its_own_sandboxverify_cannot_stand_in_for_the_runtime(
    isolation: str, tmp_path: Path
) -> None:
    checked = check("attack-shadow-runtime", isolation, tmp_path)

    assert checked.code == 1
    assert checked.codes == ["artifact_invalid", "plugin_load_failed"]
    assert (
        "ships a top-level 'sandboxverify' package"
        in checked.failure("artifact_invalid")["message"]
    )
    [run] = checked.report["runs"]
    [plugin] = run["plugins"]
    assert plugin["ok"] is False
    assert plugin["error"]["message"].endswith("this plugin fails on purpose")
    assert run["tools"] == []  # nothing forged


def test_control_sequences_in_a_plugins_error_message(isolation: str, tmp_path: Path) -> None:
    checked = check("attack-control-chars", isolation, tmp_path, "-v")

    assert checked.codes == ["plugin_load_failed"]
    message = checked.failure("plugin_load_failed")["message"]
    assert "\x1b[2K\rPASSED" in message  # the JSON report keeps the text as it was
    shown = {
        "text": checked.stdout + checked.stderr,
        "summary": (tmp_path / "summary.md").read_text(encoding="utf-8"),
        "junit": "\n".join(
            [
                *(v for e in ET.parse(tmp_path / "junit.xml").iter() for v in e.attrib.values()),
                *(e.text or "" for e in ET.parse(tmp_path / "junit.xml").iter()),
            ]
        ),
    }
    for surface, text in shown.items():
        assert not RAW.findall(text), surface
        for line in text.splitlines():
            stripped = line.lstrip()
            assert not stripped.startswith("PASSED"), (surface, line)
            if stripped.startswith("::"):  # only sandboxverify's own annotations
                assert OWN_ANNOTATION.match(stripped), (surface, line)
        plain = text.replace("\\\\", "\\")  # Markdown doubles backslashes
        assert "\\x1b[2K\\rPASSED" in plain, surface
        assert "svfix\\u202etxt.exe" in plain, surface
    [annotation] = [line for line in checked.stdout.splitlines() if line.startswith("::error ")]
    assert "\\r::error::svfix-forged-annotation" in annotation
