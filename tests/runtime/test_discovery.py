"""The runtime reads installed distributions without ``importlib.metadata`` and finds exactly
what it finds: the same distributions in the same order, with the same names, versions, entry
points and RECORD, on every Python from 3.9 to 3.13, in crafted corners and in real
environments; where only ``importlib.metadata`` knows how (eggs, zips), it is asked."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import sandboxverify

#: the runtime's parent: ``sandboxverify.runtime`` imports from there on any Python
ROOT = Path(sandboxverify.__file__).parent.parent

#: run by each interpreter: both readers over the ``sys.path`` given, as JSON
COMPARE = r"""
import csv, json, pathlib, sys, zipfile
from importlib import metadata
sys.path.insert(0, sys.argv[1])
from sandboxverify.runtime import _discovery

def ours():
    return [
        [d.name, d.version, [[e.name, e.group, e.value] for e in d.entry_points],
         d.read_text("RECORD"), d.locate_file("x/y.py"), d.locate_file("")]
        for d in _discovery.distributions()
    ]

def theirs():
    return [
        [d.metadata["Name"], d.version, [[e.name, e.group, e.value] for e in d.entry_points],
         d.read_text("RECORD"), str(d.locate_file("x/y.py")), str(d.locate_file(""))]
        for d in metadata.distributions()
    ]

# both once on the interpreter's own path: what they import late is imported now
[(d.entry_points, d.version) for d in metadata.distributions()]
[d.entry_points for d in _discovery.distributions()]
sys.path[:] = json.loads(sys.argv[2])  # what both read from now on

def outcome(read):
    try:
        return read()
    except Exception as exc:
        return type(exc).__name__
try:
    _discovery._read_directly()
    direct = True
except _discovery._Unusual:
    direct = False
print(json.dumps({
    "ours": outcome(ours), "theirs": outcome(theirs), "direct": direct,
    "version": list(sys.version_info[:2]),
}))
"""


def pythons() -> list[Path]:
    """This interpreter, and one of each minor version 3.9 to 3.13 pyenv has here."""
    found = [Path(sys.executable)]
    for minor in range(9, 14):
        found += sorted(Path.home().glob(f".pyenv/versions/3.{minor}.*/bin/python"))[-1:]
    return found


def compared(python: Path, path: list[str]) -> dict[str, object]:
    done = subprocess.run(
        [str(python), "-I", "-c", COMPARE, str(ROOT), json.dumps(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def dist_info(where: Path, directory: str, files: dict[str, str | bytes]) -> None:
    folder = where / directory
    folder.mkdir(parents=True)
    for name, text in files.items():
        if isinstance(text, bytes):
            (folder / name).write_bytes(text)
        else:
            (folder / name).write_text(text, encoding="utf-8")


def corners(tmp_path: Path) -> list[str]:
    """Directories of metadata written the many ways installers and hand-made wheels write
    it."""
    first, second = tmp_path / "site", tmp_path / "more"
    dist_info(
        first,
        "pkg_a-1.0.dist-info",
        {
            "METADATA": "Metadata-Version: 2.1\nName: Pkg.A\nVersion: 1.0\nName: later\n\n"
            "Name: in the body\n",
            "entry_points.txt": "orphan = before:any_section\n# comment\n[console_scripts]\n"
            "  a-cli =  pkg_a.cli:main  \n\n[ my.group ]\nx=pkg_a:x [extra]\n; not a comment=1\n",
            "RECORD": 'pkg_a/__init__.py,sha256=x,1\n"odd,name.py",,\n',
        },
    )
    dist_info(
        first,
        "PKG_B-2.0.DIST-INFO",
        {"METADATA": b"name: pkg-b\r\nversion:\t2.0 \r\n\r\n", "entry_points.txt": "[g]\nb = b\n"},
    )
    dist_info(first, "c-3.0.dist-info", {"PKG-INFO": "Name: c\nVersion: 3.0\n"})
    dist_info(first, "foo-1.dist-info", {"METADATA": "Name: foo\nVersion: 1\n"})
    dist_info(first, "zed-1.dist-info", {"METADATA": "Name: zed\nVersion: 1\n"})
    dist_info(first, "Foo-2.dist-info", {"METADATA": "Name: Foo\nVersion: 2\n"})
    dist_info(first, "noversion-0.dist-info", {"METADATA": "Name: noversion\n"})
    dist_info(second, "pkg_a-9.0.dist-info", {"METADATA": "Name: pkg-a\nVersion: 9.0\n"})
    (first / "pkg_a").mkdir()
    return [str(tmp_path / "missing"), str(first), str(first / "pkg_a"), str(second)]


@pytest.mark.parametrize("python", pythons(), ids=lambda path: path.parent.parent.name)
def test_distributions_read_directly_are_what_importlib_metadata_finds(
    tmp_path: Path, python: Path
) -> None:
    result = compared(python, corners(tmp_path))
    assert result["ours"] == result["theirs"]
    # Python 3.9 reads entry points with configparser: there it is always asked (and it
    # refuses the entry point before the first section)
    version = result["version"]
    assert isinstance(version, list)
    assert result["direct"] is (version >= [3, 10])
    if result["direct"]:
        assert isinstance(result["ours"], list)
        assert len(result["ours"]) == 8


@pytest.mark.parametrize("python", pythons(), ids=lambda path: path.parent.parent.name)
def test_a_real_environment_reads_the_same(python: Path) -> None:
    """This interpreter's own environment, and the others' standard libraries."""
    if python == Path(sys.executable):
        path = [p for p in sys.path if p]
    else:
        path = [str(next((python.parent.parent / "lib").glob("python3*/site-packages")))]
    result = compared(python, path)
    assert result["ours"] == result["theirs"]
    assert result["ours"]


def test_eggs_zips_and_entry_points_it_cannot_read_are_left_to_importlib_metadata(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    dist_info(site, "plain-1.dist-info", {"METADATA": "Name: plain\nVersion: 1\n"})
    egg = tmp_path / "eggs"
    dist_info(egg, "old.egg-info", {"PKG-INFO": "Name: old\nVersion: 0.1\n"})
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr("zipped-1.dist-info/METADATA", "Name: zipped\nVersion: 1\n")
    folded = tmp_path / "folded"
    dist_info(folded, "long-1.dist-info", {"METADATA": "Name: long\nVersion: 1\n  .0\n"})
    for path in ([str(site), str(egg)], [str(archive), str(site)], [str(folded)]):
        result = compared(Path(sys.executable), path)
        assert result["direct"] is False, path
        assert result["ours"] == result["theirs"]
    broken = tmp_path / "broken"
    dist_info(
        broken, "bad-1.dist-info", {"METADATA": "Name: bad\n", "entry_points.txt": "[g]\nx\n"}
    )
    result = compared(Path(sys.executable), [str(broken)])
    assert result["ours"] == result["theirs"]
    assert result["ours"] in ("ValueError", "TypeError")  # as importlib.metadata raises it
