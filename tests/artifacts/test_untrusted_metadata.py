"""What a wheel may not bring into a sandbox, found statically before anything installs it: a
dependency given as a URL or a path (an installer would build it, outside any sandbox), and a
top-level ``sandboxverify`` of a distribution that is not sandboxverify."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from sandboxverify.artifacts._artifacts import ArtifactProblem, inspect_sdist, inspect_wheel
from tests.helpers import make_wheel

DIRECT = (
    "evil @ file:///tmp/evil-1.0.tar.gz",
    "evil @ https://example.invalid/evil-1.0.tar.gz",
    "evil @ git+https://example.invalid/evil.git",
    "evil[extra] @ file:///tmp/evil ; python_version >= '3'",
    "evil @ https://example.invalid/evil-1.0-py3-none-any.whl ; extra == 'all'",
)


@pytest.mark.parametrize("requirement", DIRECT)
def test_a_direct_reference_in_requires_dist_is_an_invalid_artifact_never_installed(
    tmp_path: Path, requirement: str
) -> None:
    metadata = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nProvides-Extra: all\n"
        f"Requires-Dist: six>=1.16\nRequires-Dist: {requirement}\n"
    )
    with pytest.raises(ArtifactProblem) as info:
        inspect_wheel(make_wheel(tmp_path, metadata=metadata))
    [problem] = info.value.problems
    assert problem.message == (
        "demo-1.0-py3-none-any.whl: demo-1.0.dist-info/METADATA has a direct reference in "
        f"Requires-Dist: {requirement!r}; PyPI refuses it and sandboxverify installs no "
        "dependency from a URL or a path"
    )
    assert "--find-links" in problem.hint
    assert info.value.artifact is None  # nothing installs it


def test_names_and_version_ranges_are_fine(tmp_path: Path) -> None:
    metadata = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
        "Requires-Dist: six>=1.16\nRequires-Dist: evil[x]==1.0; python_version >= '3'\n"
    )
    assert inspect_wheel(make_wheel(tmp_path, metadata=metadata)).dependencies == {"six", "evil"}


def test_an_sdist_whose_pkg_info_has_a_direct_reference_is_invalid_too(tmp_path: Path) -> None:
    root = tmp_path / "demo-1.0"
    root.mkdir()
    (root / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: evil @ file:///tmp/e\n"
    )
    (root / "pyproject.toml").write_text("")
    sdist = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        archive.add(root, "demo-1.0")
    with pytest.raises(ArtifactProblem) as info:
        inspect_sdist(sdist)
    assert [p.message for p in info.value.problems] == [
        "demo-1.0.tar.gz: PKG-INFO has a direct reference in Requires-Dist: "
        "'evil @ file:///tmp/e'; PyPI refuses it and sandboxverify installs no dependency "
        "from a URL or a path"
    ]


@pytest.mark.parametrize("files", [("sandboxverify/__init__.py",), ("sandboxverify.py",)])
def test_a_wheel_shipping_a_top_level_sandboxverify_is_reported(
    tmp_path: Path, files: tuple[str, ...]
) -> None:
    wheel = make_wheel(tmp_path, files=("demo/__init__.py", *files))
    with pytest.raises(ArtifactProblem) as info:
        inspect_wheel(wheel)
    [problem] = info.value.problems
    assert problem.message.startswith(
        "demo-1.0-py3-none-any.whl: the wheel ships a top-level 'sandboxverify' package or module"
    )
    assert problem.hint.startswith("rename it")
    # still installed and loaded: the sandbox never imports it in place of the runtime
    assert info.value.artifact is not None


def test_sandboxverifys_own_wheel_ships_it(tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path,
        "sandboxverify-1.0-py3-none-any.whl",
        name="sandboxverify",
        files=("sandboxverify/__init__.py", "sandboxverify/runtime/__init__.py"),
    )
    assert inspect_wheel(wheel).top_level == {"sandboxverify"}
