"""Which failed modules are tried with an older release of a requirement, and which release."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from packaging.version import Version

from sandboxverify.sandbox import IndexOptions
from sandboxverify.stages._extras import Extras
from sandboxverify.stages._releases import (
    ReleaseRun,
    _older_series,
    _series,
    release_excuses,
    release_hints,
    selected_candidates,
    written_for_other_releases,
)
from tests.helpers import make_wheel

EXTRAS = Extras("plug", {}, {"tox": "tox>=3.28", "pydantic": "pydantic<3,>=1.10"})
VERSIONS = {"tox": "4.67.15", "pydantic": "2.9.0", "click": "8.1.7", "pip": "25.0"}


def _failed(module: str, names: list[list[str]], **more: Any) -> dict[str, Any]:
    return {"module": module, "cause": {"missing": more.pop("missing", []), "names": names}, **more}


def _candidates(
    *failed: dict[str, Any], judged: tuple[str, ...] = (), applications: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    return written_for_other_releases(
        failed,
        judged=judged,
        own={"plug"},
        extras=EXTRAS,
        versions=VERSIONS,
        applications=applications,
    )


def test_a_module_lacking_a_name_of_one_requirement_is_tried_with_another_release() -> None:
    assert _candidates(
        _failed("plug.hooks3", [["tox", "hookimpl"]]),
        _failed("plug.v1", [["pydantic.v1", "BaseSettings"]]),
        _failed("plug.loader3", [["tox", "config.loader"]]),
    ) == {"tox": ["plug.hooks3", "plug.loader3"], "pydantic": ["plug.v1"]}


@pytest.mark.parametrize(
    "failed",
    [
        _failed("plug.hooks3", [["tox", "hookimpl"]], reached_by="tox:plug"),  # users meet it
        _failed("plug.hooks3", [["tox", "hookimpl"]], missing=["py"]),  # extras' business
        _failed("plug.mixed", [["tox", "hookimpl"], ["pydantic", "Field"]]),  # which release?
        _failed("plug.own", [["plug", "gone"]]),  # the wheel lacks its own name
        _failed("plug.other", []),  # raised for a reason of its own
    ],
)
def test_other_failures_are_not_tried(failed: dict[str, Any]) -> None:
    assert _candidates(failed) == {}


def test_an_undeclared_distribution_is_tried_only_as_the_plugins_application() -> None:
    """tox-pin-deps declares no tox: the check installs it as the plugin's application. Any
    other distribution the wheel does not require (one a requirement brings) is not its to
    choose a release of."""
    failed = _failed("plug.cli", [["click", "Group"]])
    assert _candidates(failed, applications=("Click",)) == {"click": ["plug.cli"]}
    assert _candidates(failed) == {}


def test_a_version_guard_naming_one_required_distribution_is_tried_with_another_release() -> None:
    """pydantic-compat's _v1 raises 'pydantic_compat._v1 only supports pydantic v1.x'."""
    guard = _failed("plug._v1", [])
    guard["error"] = {"type": "ImportError", "message": "plug._v1 only supports pydantic v1.x"}
    assert _candidates(guard) == {"pydantic": ["plug._v1"]}
    vague = _failed("plug.both", [])
    vague["error"] = {"type": "ImportError", "message": "needs tox and pydantic, or click"}
    assert _candidates(vague) == {}  # two required ones named (click is not required)
    tool = _failed("plug.pip", [["pip", "main"]])
    assert _candidates(tool) == {}  # the installers' own


def test_a_module_judged_already_is_not_tried_again() -> None:
    assert _candidates(_failed("plug.hooks3", [["tox", "hookimpl"]]), judged=("plug.hooks3",)) == {}


def test_a_release_series_is_its_major_version_or_its_minor_before_1_0() -> None:
    assert _series(Version("3.28.0")) < _series(Version("4.0.0"))
    assert _series(Version("4.0.0")) == _series(Version("4.67.15"))
    assert _series(Version("0.14.2")) < _series(Version("0.15.0"))


def test_only_modules_that_imported_with_the_older_release_are_excused() -> None:
    run = ReleaseRun(
        "tox>=3.28",
        ("tox==3.28.0", "tox==2.9.1"),
        "4.67.15",
        ("plug.hooks3", "plug.hooks2", "plug.loader3"),
        {"plug.hooks3": "tox==3.28.0", "plug.hooks2": "tox==2.9.1"},
        {"plug.loader3": {"ok": False}},
    )
    excused, second = release_excuses([run])
    assert (excused.module, excused.reason) == ("plug.hooks3", "release")
    assert (second.module, second.reason) == ("plug.hooks2", "release")
    assert "it imports with tox==2.9.1 " in second.detail
    assert excused.detail == (
        "written for another release of tox: it imports with tox==3.28.0 (the requirement "
        "tox>=3.28 allows it), and fails only with tox 4.67.15, installed here"
    )
    assert release_excuses([ReleaseRun("tox", (), "4.67.15", ("plug.hooks3",), {}, {})]) == []


def test_a_module_still_failing_says_which_release_it_was_tried_with() -> None:
    error = {"type": "ImportError", "message": "cannot import name 'url_quote'\nmore"}
    tried = ReleaseRun(
        "tox>=3.28",
        ("tox==3.28.0", "tox==2.9.1"),
        "4.67.15",
        ("plug.a", "plug.b", "plug.d"),
        {"plug.d": "tox==2.9.1"},
        {"plug.a": {"ok": False, "error": error}, "plug.b": {}},
    )
    untried = ReleaseRun("tox>=4", (), "4.67.15", ("plug.c",), {}, {})
    assert release_hints([tried, untried]) == {
        "plug.a": "it fails with tox==3.28.0 and tox==2.9.1 too, not only with 4.67.15 (there: "
        "ImportError: cannot import name 'url_quote')",
        "plug.b": "it could not be tried with tox==3.28.0 and tox==2.9.1: that did not install",
        "plug.c": "tox>=4 allows no release older than 4.67.15's major version with a wheel "
        "for this Python, so it was not tried with another release",
    }


def test_an_excuse_with_an_undeclared_application_says_so() -> None:
    run = ReleaseRun(
        "tox", ("tox==3.28.0",), "4.67.15", ("p.plugin",), {"p.plugin": "tox==3.28.0"}, {}, False
    )
    [excused] = release_excuses([run])
    assert "the wheel does not require tox: installed as the application of its plugins" in (
        excused.detail
    )


def test_the_newest_release_of_each_older_series_with_a_wheel_is_tried_newest_first(
    tmp_path: Path,
) -> None:
    for version in ("4.1.0", "4.0.0", "3.2.0", "3.1.0", "2.0.0", "1.0.0", "0.9.0"):
        (tmp_path / f"svfix_dep-{version}-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "svfix_dep-3.3.0.tar.gz").write_bytes(b"")  # no wheel: 3.2.0 stands for 3
    sandbox: Any = SimpleNamespace(interpreter=SimpleNamespace(version_info=(3, 11, 7)))
    ctx: Any = SimpleNamespace(index=IndexOptions(None, (str(tmp_path),)))
    assert _older_series("svfix-dep>=1", "4.1.0", sandbox, ctx) == (
        "svfix-dep==3.2.0",
        "svfix-dep==2.0.0",
        "svfix-dep==1.0.0",
    )
    assert _older_series("svfix-dep>=3", "4.1.0", sandbox, ctx) == ("svfix-dep==3.2.0",)
    assert _older_series("svfix-dep>=4", "4.1.0", sandbox, ctx) == ()


def test_only_a_module_another_module_of_the_package_imports_is_tried(tmp_path: Path) -> None:
    """A module written for tox 3 that the package selects is tried with tox 3; one that
    nothing imports, or only the package's tests, is met by every user of tox 4."""
    files = {
        "plug/__init__.py": "",
        "plug/loader.py": "try:\n    from . import hooks4\nexcept ImportError:\n"
        "    from . import hooks3\n",
        "plug/hooks3.py": "",
        "plug/stale3.py": "",
        "plug/tested3.py": "",
        "plug/tests/test_tested3.py": "import plug.tested3\n",
    }
    path = make_wheel(tmp_path, "plug-1.0-py3-none-any.whl", name="plug", files=files)
    wheel: Any = SimpleNamespace(path=path)
    found = {"tox": ["plug.hooks3", "plug.stale3", "plug.tested3"]}
    candidates, hints = selected_candidates(found, wheel, VERSIONS)
    assert candidates == {"tox": ["plug.hooks3"]}
    assert sorted(hints) == ["plug.stale3", "plug.tested3"]
    assert hints["plug.stale3"] == (
        "it may be written for an older release of tox, but no other module of the package "
        "imports it, so nothing selects it for that release and its users on tox 4.67.15 meet "
        "this failure: import it from the module that chooses by release, or remove it"
    )
