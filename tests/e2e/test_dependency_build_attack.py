"""A dependency published only as an sdist is built in the OS sandbox, as the project is: its
build code cannot write outside it. The sdist is written here by hand, so its hostile setup.py
never runs on the host while the test prepares it."""

from __future__ import annotations

import io
import secrets
import tarfile
from pathlib import Path

import pytest

from tests.e2e.test_fixtures import verify

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv", "os_sandbox")]

SETUP = """
import pathlib
from setuptools import setup

for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("svfix-attack-was-here")
    except OSError:
        pass
setup()
"""
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "svfix-attack-sdist-dep"
version = "1.0.0"

[tool.setuptools]
packages = ["svfix_attack_sdist_dep"]
"""
PLUGIN = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "svfix-needs-attack-dep"
version = "1.0.0"
dependencies = ["svfix-attack-sdist-dep"]

[project.entry-points."sandboxverify.plugins"]
needs = "svfix_needs_attack_dep:setup"

[tool.hatch.build.targets.wheel]
packages = ["svfix_needs_attack_dep"]
"""

#: a plugin whose build needs the hostile sdist, and which depends on nothing
BUILT_WITH = PLUGIN.replace(
    'requires = ["hatchling"]', 'requires = ["hatchling", "svfix-attack-sdist-dep"]'
).replace('dependencies = ["svfix-attack-sdist-dep"]', "dependencies = []")


def _sdist(links: Path, targets: list[str]) -> None:
    """``svfix-attack-sdist-dep``'s sdist, whose setup.py writes to each of ``targets``."""
    members = {
        "PKG-INFO": "Metadata-Version: 2.1\nName: svfix-attack-sdist-dep\nVersion: 1.0.0\n",
        "pyproject.toml": PYPROJECT,
        "setup.py": SETUP.format(targets=targets),
        "svfix_attack_sdist_dep/__init__.py": "VALUE = 1\n",
    }
    links.mkdir()
    with tarfile.open(links / "svfix_attack_sdist_dep-1.0.0.tar.gz", "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"svfix_attack_sdist_dep-1.0.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(
    ("pyproject", "code", "built_as"),
    [
        (  # a dependency: the plugin imports it
            PLUGIN,
            "from svfix_attack_sdist_dep import VALUE\n",
            "it publishes no wheel for this Python",
        ),
        (  # a build requirement of the plugin: built for the build environment
            BUILT_WITH,
            "VALUE = 1\n",
            "a build requirement that publishes no wheel",
        ),
    ],
    ids=["dependency", "build-requirement"],
)
def test_the_build_of_an_sdist_without_a_wheel_cannot_write_outside_the_sandbox(
    tmp_path: Path, pyproject: str, code: str, built_as: str
) -> None:
    """Built in the sandbox, the hostile sdist's setup.py writes nowhere outside it, and the
    check goes on with its wheel."""
    escaped = [
        tmp_path / f"escaped-{secrets.token_hex(4)}",
        Path.home() / f".svfix-{secrets.token_hex(4)}",
    ]
    _sdist(tmp_path / "links", [str(path) for path in escaped])
    project = tmp_path / "project"
    (project / "svfix_needs_attack_dep").mkdir(parents=True)
    (project / "pyproject.toml").write_text(pyproject)
    (project / "svfix_needs_attack_dep" / "__init__.py").write_text(
        f"{code}\n\ndef setup(api):\n"
        '    @api.tool\n    def value() -> int:\n        """The value."""\n'
        "        return VALUE\n"
    )
    try:
        report = verify(project, find_links=(str(tmp_path / "links"),), isolation="strict")
        assert report.ok, report.failures  # it built, in the sandbox, and the plugin loads
        assert any(
            note.startswith("built svfix_attack_sdist_dep-1.0.0") and built_as in note
            for note in report.notes
        ), report.notes
        assert [path for path in escaped if path.exists()] == []
    finally:
        for path in escaped:
            path.unlink(missing_ok=True)
