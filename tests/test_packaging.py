"""sandboxverify's own release: what its metadata claims, the license it ships, and the
configuration that lets ``sandboxverify check .`` verify it (run by .ci/run)."""

from __future__ import annotations

import re
import sys
from typing import Any

from packaging.specifiers import SpecifierSet

from tests.helpers import ROOT, read_yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_mit_license_is_in_the_repository_and_in_both_artifacts() -> None:
    data = pyproject()
    assert data["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Permission is hereby granted" in text
    assert data["project"]["license-files"] == ["LICENSE"]  # the wheel's .dist-info/licenses/
    assert "/LICENSE" in data["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    # and the self-check proves the built wheel carries it
    assert "*.dist-info/licenses/LICENSE" in data["tool"]["sandboxverify"]["expect-files"]


def test_a_classifier_for_each_python_ci_tests_and_requires_python_allows() -> None:
    project = pyproject()["project"]
    classifiers = set(project["classifiers"])
    tested = read_yaml(ROOT / ".github" / "workflows" / "ci.yml")["jobs"]["tests"]["strategy"][
        "matrix"
    ]["python"]
    allowed = SpecifierSet(project["requires-python"])
    declared = sorted(
        (
            m[1]
            for c in classifiers
            if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))
        ),
        key=lambda version: tuple(map(int, version.split("."))),
    )
    assert declared == tested
    assert all(allowed.contains(f"{version}.0") for version in declared)
    assert "Framework :: Pytest" in classifiers  # it ships a pytest11 plugin
    assert "pytest11" in project["entry-points"]


def test_the_project_urls_a_package_index_shows() -> None:
    urls = pyproject()["project"]["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Issues", "Changelog", "Source"}
    assert all(
        url.startswith("https://github.com/sandboxverify/sandboxverify") for url in urls.values()
    )


def test_the_self_check_installs_the_application_that_loads_the_pytest_plugin() -> None:
    config = pyproject()["tool"]["sandboxverify"]
    # pytest loads the plugin; it is no dependency of sandboxverify, so it comes with --with
    assert config["with"] == ["pytest"]
    assert "pytest" not in " ".join(pyproject()["project"]["dependencies"])
    assert {"fixture:harness", "fixture:playbook", "fixture:sandbox_check"} <= set(
        config["expect-tools"]
    )
    assert re.search(r"^sandboxverify check \.( |$)", (ROOT / ".ci" / "run").read_text(), re.M)
