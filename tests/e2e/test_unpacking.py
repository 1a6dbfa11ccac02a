"""The build from a project: its sdist is unpacked by sandboxverify's safe extraction (never by a
build frontend) before the wheel is built from it, and the copy of the project never leads a
build back into the real files through a symbolic link."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.artifacts import hostile
from tests.helpers import copy_fixture, run_cli, tree_digest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]

BACKEND = '''\
"""An in-tree build backend whose sdist carries members that climb out of where it is
unpacked: a hostile (or broken) backend, as the frontend sees it."""
import io
import os
import tarfile

NAMES = {names!r}
PKG_INFO = b"Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n"


def build_sdist(sdist_directory, config_settings=None):
    filename = "demo-1.0.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as archive:
        for name, data in [("demo-1.0/PKG-INFO", PKG_INFO), *((n, b"pwned") for n in NAMES)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return filename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("never reached: the sdist is refused before a wheel is built from it")
'''


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_project_whose_sdist_climbs_out_is_refused_before_the_wheel_build(
    installer: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    hostile.prepare_outside(outside)
    climbing = f"demo-1.0/{hostile.CLIMB}{str(outside).lstrip('/')}/pwned"
    absolute = f"{outside}/absolute"
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
        '[project]\nname = "demo"\nversion = "1.0"\n'
    )
    (project / "backend.py").write_text(BACKEND.format(names=[climbing, absolute]))
    before = tree_digest(tmp_path)

    result = run_cli(["check", str(project), "--installer", installer, "--json", "-"])

    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    failures = result.json()["failures"]
    assert [f["code"] for f in failures] == ["artifact_invalid"] * 2
    assert failures[0]["message"].startswith(f"demo-1.0.tar.gz: member {climbing!r} has a '..'")
    assert failures[1]["message"].startswith(f"demo-1.0.tar.gz: member {absolute!r} has an abs")
    assert tree_digest(tmp_path) == before


WHEEL_BACKEND = '''\
"""An in-tree build backend whose wheel carries members that climb out of site-packages and
a link out of the scripts directory: a hostile (or broken) backend, as the frontend sees it."""
import io
import os
import stat
import tarfile
import zipfile

NAMES = {names!r}
LINK = {link!r}
PKG_INFO = b"Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n"


def build_sdist(sdist_directory, config_settings=None):
    filename = "demo-1.0.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as archive:
        for name in ("PKG-INFO", "pyproject.toml", "backend.py"):
            data = PKG_INFO if name == "PKG-INFO" else open(name, "rb").read()
            info = tarfile.TarInfo("demo-1.0/" + name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return filename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as archive:
        archive.writestr("demo/__init__.py", "")
        for name in NAMES:
            archive.writestr(name, "pwned")
        link = zipfile.ZipInfo("demo-1.0.data/scripts/demo")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, LINK)
        archive.writestr("demo-1.0.dist-info/METADATA", PKG_INFO)
        archive.writestr(
            "demo-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
        )
        archive.writestr("demo-1.0.dist-info/RECORD", "")
    return filename
'''


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_project_whose_wheel_climbs_out_is_refused_before_the_install(
    installer: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    hostile.prepare_outside(outside)
    climbing = f"demo-1.0.data/purelib/{hostile.CLIMB}{str(outside).lstrip('/')}/pwned"
    absolute = f"{outside}/absolute"
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
        '[project]\nname = "demo"\nversion = "1.0"\n'
    )
    (project / "backend.py").write_text(
        WHEEL_BACKEND.format(names=[climbing, absolute], link=f"{outside}/target")
    )
    before = tree_digest(tmp_path)

    result = run_cli(["check", str(project), "--installer", installer, "--json", "-"])

    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    report = result.json()
    messages = [f["message"] for f in report["failures"] if f["code"] == "artifact_invalid"]
    wheel = "demo-1.0-py3-none-any.whl"
    assert messages == [
        f"{wheel}: member {climbing!r} has a '..' path component (it could be written outside "
        "the directory the archive is unpacked into)",
        f"{wheel}: member {absolute!r} has an absolute path (it could be written outside the "
        "directory the archive is unpacked into)",
        f"{wheel}: member 'demo-1.0.data/scripts/demo' is a symbolic link",
    ]
    assert all(not run["plugins"] and not run["installed"] for run in report["runs"])
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_source_directory_linked_from_elsewhere_is_copied_not_written_through(
    installer: str, tmp_path: Path
) -> None:
    project = copy_fixture("good-setuptools-src", tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(str(project / "src"), str(elsewhere / "src"))
    os.symlink(elsewhere / "src", project / "src")  # absolute, out of the project
    before = tree_digest(tmp_path)

    # a link out of the project is followed only when the caller asks for it
    refused = run_cli(["check", str(project), "--installer", installer, "--json", "-"])
    assert refused.code == 1
    [failure] = refused.json()["failures"]
    assert failure["code"] == "build_failed"
    assert failure["message"] == (
        f"the project has symbolic links that lead out of it: src -> {elsewhere / 'src'}"
    )
    result = run_cli(["check", str(project), "--installer", installer, "--follow-external-links"])

    assert result.code == 0, result.stdout + result.stderr
    # setuptools writes *.egg-info next to the package: into the copy, not the real directory
    assert tree_digest(tmp_path) == before
