"""The action's lock files (action/, written by action/lock): everything the action installs is
pinned with hashes, and the pins still satisfy what pyproject.toml asks for."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.helpers import ROOT, action

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

LOCKS = ROOT / "action"
#: a pin and its hashes: ``name==version ; marker \\`` then ``--hash=sha256:...`` lines
PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9._-]+)==(?P<version>\S+?)(?: ; (?P<marker>[^\\\n]+?))? \\\n"
    r"(?P<hashes>(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)",
    re.MULTILINE,
)
#: the Pythons the action may run on, as markers see them
ENVIRONMENTS = [
    {"python_version": f"3.{minor}", "python_full_version": f"3.{minor}.{patch}"}
    for minor in range(9, 16)
    for patch in (0, 5)
]


def pins(name: str) -> list[dict[str, Any]]:
    text = (LOCKS / name).read_text(encoding="utf-8")
    found = [match.groupdict() for match in PIN.finditer(text)]
    requirement_lines = [
        line for line in text.splitlines() if line and not line.startswith((" ", "#"))
    ]
    assert len(found) == len(requirement_lines), f"{name}: a requirement without hashes"
    return found


def pinned_version(name: str, lock: list[dict[str, Any]], env: dict[str, str]) -> str | None:
    for pin in lock:
        if canonicalize_name(pin["name"]) != canonicalize_name(name):
            continue
        if pin["marker"] is None or Marker(pin["marker"]).evaluate(env):
            return str(pin["version"])
    return None


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("lock", "requirements"),
    [
        (
            "requirements.txt",
            [
                *pyproject()["project"]["dependencies"],
                *pyproject()["project"]["optional-dependencies"]["uv"],
            ],
        ),
        ("build-constraints.txt", pyproject()["build-system"]["requires"]),
    ],
)
def test_the_lock_pins_what_pyproject_asks_for_on_every_python(
    lock: str, requirements: list[str]
) -> None:
    locked = pins(lock)
    for raw in requirements:
        requirement = Requirement(raw)
        for env in ENVIRONMENTS:
            if requirement.marker is not None and not requirement.marker.evaluate(env):
                continue
            version = pinned_version(requirement.name, locked, env)
            assert version is not None, f"{lock}: {requirement.name} is not pinned for {env}"
            assert requirement.specifier.contains(version, prereleases=True), (
                f"{lock}: {requirement.name}=={version} does not satisfy {raw}; run action/lock"
            )


def pulled_in_by(name: str) -> dict[str, set[str]]:
    """Each package a lock pins, and what its ``# via`` comments say pulls it in."""
    found: dict[str, set[str]] = {}
    current: str | None = None
    listing = False
    for line in (LOCKS / name).read_text(encoding="utf-8").splitlines():
        pin = re.match(r"^([A-Za-z0-9._-]+)==", line)
        if pin:
            current = canonicalize_name(pin[1])
            found.setdefault(current, set())
            listing = False
        elif current is not None and (via := re.match(r"^    # via(?: (.+))?$", line)):
            listing = via[1] is None
            if via[1]:
                found[current].add(via[1])
        elif current is not None and listing and (item := re.match(r"^    #   (.+)$", line)):
            found[current].add(item[1])
    return found


def test_the_lock_pins_nothing_pyproject_no_longer_asks_for() -> None:
    """A dependency dropped from pyproject.toml leaves the lock with action/lock: then neither
    it nor what only it pulled in is installed by the action any more."""
    project = pyproject()["project"]
    direct = {
        canonicalize_name(Requirement(raw).name)
        for raw in [*project["dependencies"], *project["optional-dependencies"]["uv"]]
    }
    locked = pulled_in_by("requirements.txt")
    itself = "sandboxverify (pyproject.toml)"
    pinned_for_itself = {name for name, by in locked.items() if itself in by}
    assert pinned_for_itself == direct, f"the lock pins {pinned_for_itself}: run action/lock"
    for name, by in locked.items():
        parents = {canonicalize_name(parent) for parent in by - {itself}}
        assert by and parents <= set(locked), f"{name} is pulled in by {by}: run action/lock"


def test_uv_is_bootstrapped_with_the_pin_and_hashes_of_the_requirements() -> None:
    [uv] = pins("uv.txt")
    [locked] = [pin for pin in pins("requirements.txt") if pin["name"] == "uv"]
    assert (uv["version"], uv["hashes"]) == (locked["version"], locked["hashes"])


def test_the_action_installs_only_from_the_locks_and_caches_by_their_digest() -> None:
    steps = action()["runs"]["steps"]
    scripts = "\n".join(str(step.get("run", "")) for step in steps)
    assert '--require-hashes --no-deps --only-binary :all: -r "$lock/uv.txt"' in scripts
    assert '--require-hashes -r "$lock/requirements.txt"' in scripts
    assert '--build-constraints "$lock/build-constraints.txt"' in scripts
    assert "pip install --disable-pip-version-check" in scripts
    for name in ("uv.txt", "requirements.txt", "build-constraints.txt"):
        assert f'"{name}"' in scripts, f"the cache key ignores {name}"
    [cache] = [step for step in steps if str(step.get("uses", "")).startswith("actions/cache@")]
    assert cache["uses"].startswith("actions/cache@")
    assert cache["with"]["key"] == "${{ steps.prepare.outputs.cache-key }}"
    assert "inputs.cache == 'true'" in cache["if"]


def test_the_locks_ship_in_the_sdist_and_are_regenerated_by_one_script() -> None:
    include = pyproject()["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert "/action" in include
    script = (LOCKS / "lock").read_text(encoding="utf-8")
    for name in ("requirements.txt", "build-constraints.txt", "uv.txt"):
        assert f"action/{name}" in script
        assert (
            (LOCKS / name)
            .read_text(encoding="utf-8")
            .startswith(
                "# This file was autogenerated by uv via the following command:\n#    action/lock\n"
            )
        )
    assert Path(LOCKS / "lock").stat().st_mode & 0o111
