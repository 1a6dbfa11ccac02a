"""Which failures call for the application that depends on the plugin, and what confirms one;
the fetch and the second judging are end to end (``tests/e2e/test_dependents.py``)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from sandboxverify.artifacts._artifacts import Artifact
from sandboxverify.report._model import Failure, PluginError, PluginRecord
from sandboxverify.report._records import ImportFailure, ImportsRecord
from sandboxverify.sandbox._interpreters import Interpreter
from sandboxverify.sandbox._venv import Sandbox
from sandboxverify.sandbox._workspace import SandboxPaths
from sandboxverify.stages._dependents import (
    Confirmed,
    Dependent,
    Missing,
    as_installed,
    dependent_notes,
    named_after,
    named_for,
    requiring,
    undeclared_missing,
)

METADATA = """Metadata-Version: 2.1
Name: svtest-pkg
Version: 1.0
Requires-Dist: declared-dep
Provides-Extra: gui
Requires-Dist: guilib; extra == "gui"
Provides-Extra: testing
Requires-Dist: parentapp[qt]; extra == "testing"
"""


#: a module that imports a library of its application's before the application itself
CONSOLE = """import os
import docutils.nodes
from . import helpers
import svtest_pkg.helpers
from declared_dep import x
from ParentApp.core import shell
import guilib
"""


def wheel(tmp_path: Path) -> Artifact:
    path = tmp_path / "svtest_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("svtest_pkg-1.0.dist-info/METADATA", METADATA)
        archive.writestr("svtest_pkg/console.py", CONSOLE)
    return Artifact(
        "wheel",
        path,
        canonicalize_name("svtest-pkg"),
        Version("1.0"),
        "0" * 64,
        top_level=frozenset({"svtest_pkg"}),
        dependencies=frozenset({"declared-dep"}),
    )


def load_failure(name: str, message: str, kind: str = "ModuleNotFoundError") -> PluginRecord:
    error = PluginError(kind, message, "", "import")
    return PluginRecord(name, "g", f"svtest_pkg.{name}:x", ok=False, error=error)


def missing_of(
    tmp_path: Path, plugins: list[PluginRecord], modules: list[ImportFailure]
) -> list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
    failures = [Failure("plugin_load_failed", "", plugin=p.name) for p in plugins]
    failures += [Failure("import_failed", "", module=m.module) for m in modules]
    found = undeclared_missing(
        failures,
        plugins,
        ImportsRecord(failed=tuple(modules)),
        wheel=wheel(tmp_path),
        python=(3, 12),
    )
    return [(m.module, m.plugins, m.modules, m.candidates) for m in found]


def test_a_module_no_requirement_names_is_looked_for_by_its_top_level_name(
    tmp_path: Path,
) -> None:
    plugins = [load_failure("inline", "No module named 'ParentApp.core'")]
    modules = [
        ImportFailure("svtest_pkg.console", "ModuleNotFoundError", "No module named 'ParentApp'")
    ]

    assert missing_of(tmp_path, plugins, modules) == [
        ("ParentApp", ("inline",), ("svtest_pkg.console",), ("ParentApp", "docutils"))
    ]


def test_a_development_extra_does_not_bring_the_module_to_users(tmp_path: Path) -> None:
    """``parentapp`` is only in the ``testing`` extra: users never install it."""
    plugins = [load_failure("inline", "No module named 'parentapp'")]

    assert missing_of(tmp_path, plugins, []) == [("parentapp", ("inline",), (), ("parentapp",))]


def test_the_other_undeclared_modules_the_failing_module_imports_are_candidates_too(
    tmp_path: Path,
) -> None:
    """docutils is missing first, but the application (ParentApp) is imported after it: both
    are looked for, the missing one first; stdlib, relative, own, declared modules are not."""
    modules = [
        ImportFailure("svtest_pkg.console", "ModuleNotFoundError", "No module named 'docutils'")
    ]

    assert missing_of(tmp_path, [], modules) == [
        ("docutils", (), ("svtest_pkg.console",), ("docutils", "ParentApp"))
    ]


def test_an_application_whose_name_ours_extends_is_a_candidate_for_its_module(
    tmp_path: Path,
) -> None:
    """``mkdocs-material-extensions`` imports ``material``, which ``mkdocs-material``
    provides: the distribution whose name ours extends and that ends in the module's name."""
    path = tmp_path / "svtest_deck_app_extensions-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "svtest_deck_app_extensions-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: svtest-deck-app-extensions\nVersion: 1.0\n",
        )
    extensions = Artifact(
        "wheel",
        path,
        canonicalize_name("svtest-deck-app-extensions"),
        Version("1.0"),
        "0" * 64,
        top_level=frozenset({"deck_app_extensions"}),
    )
    plugins = [load_failure("emoji", "No module named 'app.emoji'")]
    failures = [Failure("plugin_load_failed", "", plugin="emoji")]

    [found] = undeclared_missing(failures, plugins, None, wheel=extensions, python=(3, 12))
    assert found.candidates == ("svtest-deck-app", "app")
    assert named_after("svtest-deck-app-extensions", "deck_app") == ["svtest-deck-app"]
    assert named_after("svtest-deck-app-extensions", "extensions") == []  # never our own name
    assert named_after("svtest-deck-app-extensions", "app") == ["svtest-deck-app"]
    assert named_after("svtest-deck-app-extensions", "other") == []
    confirmed = Confirmed("svtest-deck-app", "2.0", "svtest-deck-app", "svtest-deck-app-extensions")
    [note] = dependent_notes("svtest-deck-app-extensions", [Dependent(confirmed, found)])
    assert "svtest-deck-app-extensions imports 'app', which svtest-deck-app brings, without" in note


def test_declared_own_or_other_failures_are_not_looked_for(tmp_path: Path) -> None:
    plugins = [
        load_failure("dep", "No module named 'declared_dep'"),
        load_failure("gui", "No module named 'guilib'"),
        load_failure("own", "No module named 'svtest_pkg.gone'"),
        load_failure("raises", "boom", kind="RuntimeError"),
        load_failure("imports", "cannot import name 'x' from 'parentapp'", kind="ImportError"),
    ]

    assert missing_of(tmp_path, plugins, []) == []


def test_a_requirement_names_the_distribution_under_any_marker_or_extra() -> None:
    requires = ["numpy", 'svtest_pkg>=1; extra == "notebook" and python_version >= "3.9"']

    assert requiring(requires, "svtest-pkg") == requires[1]
    assert requiring(["numpy", "svtest-pkg-extras"], "svtest-pkg") is None
    assert requiring(["not a requirement!", "Svtest.Pkg"], "svtest-pkg") == "Svtest.Pkg"


def installed_box(tmp_path: Path, requires: str) -> Sandbox:
    """A sandbox whose site-packages holds ParentApp 2.0, requiring ``requires``."""
    paths = SandboxPaths(tmp_path / "sandbox")
    paths.make()
    interpreter = Interpreter("python", Path(sys.executable), "3.12.1", (3, 12, 1), "cpython")
    info = paths.venv / "lib" / "python3.12" / "site-packages" / "parentapp-2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: ParentApp\nVersion: 2.0\nRequires-Dist: {requires}\n"
    )
    return Sandbox(interpreter, paths)


def test_the_version_the_installer_chose_is_confirmed_again(tmp_path: Path) -> None:
    fetched = Confirmed("ParentApp", "3.0", "ParentApp", "svtest-pkg>=2")
    box = installed_box(tmp_path, 'svtest_pkg; extra == "inline"')

    assert as_installed(box, fetched, "svtest-pkg") == Confirmed(
        "ParentApp", "2.0", "ParentApp", 'svtest_pkg; extra == "inline"'
    )


def test_a_chosen_version_that_does_not_require_the_distribution_confirms_nothing(
    tmp_path: Path,
) -> None:
    fetched = Confirmed("ParentApp", "3.0", "ParentApp", "svtest-pkg>=2")
    box = installed_box(tmp_path, "numpy")

    assert as_installed(box, fetched, "svtest-pkg") == (
        "ParentApp 2.0, which the installer chose, does not require svtest-pkg"
    )


def test_a_framework_the_distribution_is_named_for_confirms_it_as_a_word_of_its_name(
    tmp_path: Path,
) -> None:
    assert named_for("pytest-sanic", "Sanic")
    assert named_for("flask_caching_ext", "flask")
    assert not named_for("sanic", "sanic")  # itself
    assert not named_for("pytest-sanicx", "sanic")  # a word, not a part of one
    assert not named_for("svtest-pkg", "parentapp")

    box = installed_box(tmp_path, "numpy")  # ParentApp 2.0, which does not require us
    fetched = Confirmed("ParentApp", "2.0", "ParentApp", "")
    assert as_installed(box, fetched, "svtest-parentapp") == fetched

    [note] = dependent_notes("svtest-parentapp", [Dependent(fetched, Missing("parentapp", ("p",)))])
    assert note == (
        "plugin 'p' judged with ParentApp 2.0 installed: svtest-parentapp imports 'ParentApp' "
        "without declaring it, but svtest-parentapp is named for ParentApp: a plugin of it, "
        "which its users' projects install"
    )
