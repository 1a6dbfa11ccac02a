"""The ``applications`` action: which installed distribution is the application of a group, by
the quoted group in its own code, and the host it ships. Run as the sandbox runs it: a fresh
interpreter, isolated, with only the test's own site directories importable."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime import application_names
from tests.runtime.hosts.installed import PROBE, REPO


def dist(
    site: Path,
    name: str,
    files: dict[str, str],
    *,
    entry_points: str = "",
    requires: tuple[str, ...] = (),
) -> None:
    """A distribution installed in ``site`` as installers leave one: its files, METADATA and a
    RECORD that lists them."""
    site.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    info = f"{name.replace('-', '_')}-1.0.dist-info"
    (site / info).mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    (site / info / "METADATA").write_text("\n".join(lines) + "\n")
    (site / info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    record = [*files, f"{info}/METADATA", f"{info}/entry_points.txt", f"{info}/RECORD"]
    (site / info / "RECORD").write_text("".join(f"{path},,\n" for path in record))


def scan(
    tmp_path: Path,
    site: Path,
    groups: dict[str, str | None],
    *,
    own: str = "svt-plugin",
    **more: Any,
) -> dict[str, Any]:
    """One ``applications`` request to the runtime in a fresh, isolated interpreter."""
    result = tmp_path / "result.json"
    request = {
        "action": "applications",
        "dist": own,
        "groups": groups,
        "nonce": "x",
        "protocol": 1,
        "result": str(result),
        **more,
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(site), str(REPO)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(result.read_text())
    assert found["ok"], found
    return found


def application(found: dict[str, Any], group: str) -> str | None:
    seen = found["groups"][group]["application"]
    return None if seen is None else str(seen["name"])


@pytest.mark.parametrize(
    ("group", "names"),
    [
        ("keyring.backends", ["keyring"]),
        ("sqlalchemy.dialects", ["sqlalchemy"]),
        ("pytest_randomly.random_seeder", ["pytest_randomly"]),
        ("pyinstaller40", ["pyinstaller40", "pyinstaller"]),
        ("pandas_plotting_backends", ["pandas_plotting_backends", "pandas"]),
        ("pdm", ["pdm"]),
        ("x", []),
        ("-bad name.plugins", []),
    ],
)
def test_the_names_an_application_goes_by_come_from_its_group(group: str, names: list[str]) -> None:
    assert application_names(group) == names


def test_the_application_is_the_distribution_whose_code_quotes_the_group(tmp_path: Path) -> None:
    site = tmp_path / "site"
    # the application names its group in a module constant, not in the entry_points() call
    dist(site, "svt-app", {"svt_app/plugins.py": 'GROUP = "svt_app.plugins"\n'})
    # a freezer's hook file and another distribution's tests name it too: neither loads it
    dist(site, "svt-freezer", {"svt_freezer/hooks/hook-svt_app.py": "x = 'svt_app.plugins'\n"})
    dist(site, "svt-other", {"svt_other/tests/test_it.py": "G = 'svt_app.plugins'\n"})
    dist(site, "svt-plugin", {"svt_plugin/__init__.py": ""})

    found = scan(tmp_path, site, {"svt_app.plugins": None, "nobody.loads": None})

    assert found["groups"]["svt_app.plugins"]["application"] == {
        "name": "svt-app",
        "version": "1.0",
        "names_group": True,
    }
    assert application(found, "nobody.loads") is None
    assert found["installed"] == ["svt-app", "svt-freezer", "svt-other", "svt-plugin"]


def test_hook_files_and_tests_alone_never_make_an_application(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist(site, "svt-freezer", {"svt_freezer/hook-grp.py": "collect('grp.plugins')\n"})
    dist(site, "svt-other", {"svt_other/testing/util.py": "entry_points(group='grp.plugins')\n"})
    dist(site, "svt-more", {"svt_more/test_grp.py": "entry_points(group='grp.plugins')\n"})
    assert application(scan(tmp_path, site, {"grp.plugins": None}), "grp.plugins") is None


def test_the_distribution_named_after_the_group_wins_then_one_that_looks_it_up(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    dist(site, "svt-mentions", {"svt_mentions/a.py": 'DOC = "grp.plugins"\n'})
    dist(site, "svt-loader", {"svt_loader/a.py": 'for ep in entry_points(group="grp.plugins"):\n'})
    assert application(scan(tmp_path, site, {"grp.plugins": None}), "grp.plugins") == "svt-loader"

    dist(site, "grp", {"grp/__init__.py": 'KIND = "grp.plugins"\n'})
    assert application(scan(tmp_path, site, {"grp.plugins": None}), "grp.plugins") == "grp"


def test_a_one_word_group_needs_a_line_that_looks_entry_points_up(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist(site, "svt-words", {"svt_words/a.py": 'MODE = "svtword"\n'})
    assert application(scan(tmp_path, site, {"svtword": None}), "svtword") is None

    dist(site, "svt-host", {"svt_host/core.py": 'entry_points().select(group="svtword")\n'})
    assert application(scan(tmp_path, site, {"svtword": None}), "svtword") == "svt-host"


def test_a_distribution_named_after_its_group_is_its_own_application(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist(
        site,
        "svt-self",
        {"svt_self/cli.py": "entry_points(group='svt_self.commands')\n"},
        entry_points="[sandboxverify.hosts]\nsvt_self.commands = svt_self.cli:host\n",
    )
    found = scan(tmp_path, site, {"svt_self.commands": None}, own="svt-self")
    assert found["groups"]["svt_self.commands"] == {
        "application": None,
        "itself": True,
        "host": None,  # a distribution never judges itself with a host of its own
    }


def test_a_plugin_that_merely_quotes_its_group_is_not_its_application(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist(site, "svt-plugin", {"svt_plugin/__init__.py": "# registers under 'other.plugins'\n"})
    found = scan(tmp_path, site, {"other.plugins": None})
    assert found["groups"]["other.plugins"]["itself"] is False


def test_the_host_an_application_ships_is_found_with_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist(
        site,
        "svt-app",
        {"svt_app/__init__.py": "GROUP = 'svt_app.widgets'\n"},
        entry_points="[sandboxverify.hosts]\nsvt_app.widgets = svt_app.verify:host\n"
        "other.group = svt_app.verify:other\n",
    )
    found = scan(tmp_path, site, {"svt_app.widgets": None})
    assert found["groups"]["svt_app.widgets"]["host"] == {
        "dist": "svt-app",
        "value": "svt_app.verify:host",
    }


def test_a_registry_application_is_looked_up_by_name_and_said_whether_it_names_the_group(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    dist(site, "Svt_Known", {"svt_known/__init__.py": ""})
    found = scan(tmp_path, site, {"known.plugins": "svt-known", "gone.plugins": "svt-gone"})
    assert found["groups"]["known.plugins"]["application"] == {
        "name": "Svt_Known",
        "version": "1.0",
        "names_group": False,
    }
    assert application(found, "gone.plugins") is None


def test_the_plugin_s_extras_are_listed_for_the_host_side_to_choose_from(tmp_path: Path) -> None:
    site = tmp_path / "site"
    requires = ("svt-dep>=1", 'keyring>=20; extra == "test"', "xarray ; extra == 'xarray'")
    dist(site, "svt-plugin", {"svt_plugin/__init__.py": ""}, requires=requires)
    found = scan(tmp_path, site, {"keyring.backends": None})
    assert found["extras"] == [
        {"extra": "test", "requirement": 'keyring>=20; extra == "test"'},
        {"extra": "xarray", "requirement": "xarray ; extra == 'xarray'"},
    ]


def test_a_fetched_candidate_is_scanned_where_it_was_unpacked(tmp_path: Path) -> None:
    site, fetched = tmp_path / "site", tmp_path / "fetched"
    dist(site, "svt-plugin", {"svt_plugin/__init__.py": ""})
    dist(fetched, "svt-cand", {"svt_cand/__init__.py": "entry_points(group='svt_cand.x')\n"})
    found = scan(
        tmp_path, site, {"svt_cand.x": "svt-cand", "svt_cand.y": "svt-cand"}, paths=[str(fetched)]
    )
    assert found["groups"]["svt_cand.x"]["application"]["names_group"] is True
    assert found["groups"]["svt_cand.y"]["application"]["names_group"] is False
    assert found["extras"] == []
