"""Stage ``imports`` judges modules the way users meet them, through the real pipeline: a module
that needs an extra is imported with it, another platform's module and shipped test code are
excused with their reason, and a module an entry point reaches never is."""

from __future__ import annotations

import io
import shutil
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandboxverify import Report
from sandboxverify.report import ExtraRecord
from sandboxverify.report._excused import ExcusedModule
from tests.e2e.test_fixtures import codes, verify
from tests.helpers import (
    assert_valid_report,
    copy_fixture,
    edited_fixture,
    fixture,
    run_cli,
    uv_wheel,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_uv")]


@pytest.fixture(scope="module")
def find_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory holding the wheels of ``svfix-extra-dep`` and ``svfix-tracer``, the
    dependencies the extras declare: they install from it, never from an index."""
    root = tmp_path_factory.mktemp("find-links")
    (root / "wheels").mkdir()
    for name in ("extra-dep", "tracer-dep"):
        built = uv_wheel(copy_fixture(name, root / "src" / name), root / "built" / name)
        shutil.copy2(built, root / "wheels")
    return str(root / "wheels")


def check_with_extras(name: str, find_links: str, **options: object) -> Report:
    return verify(fixture(name), find_links=(find_links,), **options)


def sole_excuse(report: Report) -> ExcusedModule:
    """The one module a passing check excused."""
    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    [excused] = imports.excused
    return excused


def stages(report: Report) -> dict[str, str]:
    return {stage.name: stage.status for stage in report.runs[0].stages}


def test_a_module_that_needs_an_extra_passes_once_imported_with_it(find_links: str) -> None:
    report = check_with_extras("good-extra-module", find_links)

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    assert imports.failed == ()
    assert imports.excused == (
        ExcusedModule(
            "svfix_good_extra_module.chart",
            "extra",
            "imports with the extra installed (svfix-good-extra-module[chart])",
            extra="chart",
        ),
    )
    [extra] = imports.extras
    assert (extra.name, extra.requirement, extra.installed) == (
        "chart",
        "svfix-good-extra-module[chart]",
        True,
    )
    assert extra.modules == extra.imported == ("svfix_good_extra_module.chart",)
    assert stages(report)["imports"] == "passed"
    assert_valid_report(report.to_json())


def test_a_module_named_for_an_extra_is_verified_with_it(find_links: str, tmp_path: Path) -> None:
    """sentry-sdk's integrations.starlite lacks pydantic, which no extra lists and its extra
    starlite brings: the module's name says which extra its users install. The plugin
    imports it when a user asks, so nothing else would excuse it (without exporters.py, whose
    extra would bring it too)."""
    project = copy_fixture("good-named-extra", tmp_path)
    (project / "svfix_good_named_extra" / "exporters.py").unlink()
    report = verify(project, find_links=(find_links,))

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module: e for e in imports.excused}
    assert list(excused) == ["svfix_good_named_extra.integrations.tracing"]
    tracing = excused["svfix_good_named_extra.integrations.tracing"]
    assert (tracing.reason, tracing.extra) == ("extra", "tracing")
    assert "svfix-good-named-extra[tracing]" in tracing.detail
    assert imports.extras[0].name == "tracing"


def test_a_module_that_names_its_extra_in_its_words_is_tried_with_it_first(
    find_links: str,
) -> None:
    """pydantic-ai-slim's realtime.openai says to install pydantic-ai-slim[openai-realtime]:
    the smallest extras that bring websockets lack openai, and three were tried before."""
    report = check_with_extras("good-named-extra", find_links)

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module: e for e in imports.excused}
    exporters = excused["svfix_good_named_extra.exporters"]
    assert (exporters.reason, exporters.extra) == ("extra", "full")
    assert {e.name: e.modules for e in imports.extras}["full"] == (
        "svfix_good_named_extra.exporters",
    )


def test_a_module_named_for_an_extra_it_fails_with_stays_a_failure(
    find_links: str, tmp_path: Path
) -> None:
    project = edited_fixture(
        "good-named-extra",
        tmp_path,
        "svfix_good_named_extra/integrations/tracing.py",
        lambda text: text + "\nimport svfix_absent_exporter\n",
    )
    report = verify(project, find_links=(find_links,))

    assert codes(report) == ["import_failed"]
    assert report.failures[0].module == "svfix_good_named_extra.integrations.tracing"


def test_a_module_that_caught_the_import_its_extra_brings_is_verified_with_it(
    find_links: str,
) -> None:
    """kombu 5.7.0's transport.confluentkafka catches the ImportError of confluent_kafka, then
    fails with NameError: nothing in the failure says what it lacked, but its import looked
    for it in vain, and with the extra that brings it the module imports."""
    report = check_with_extras("good-guarded-extra", find_links)

    excused = sole_excuse(report)
    assert (excused.module, excused.reason, excused.extra) == (
        "svfix_good_guarded_extra.bars",
        "extra",
        "bars",
    )


def test_a_module_that_caught_an_import_and_fails_with_its_extra_stays_a_failure(
    find_links: str, tmp_path: Path
) -> None:
    project = edited_fixture(
        "good-guarded-extra",
        tmp_path,
        "svfix_good_guarded_extra/bars.py",
        lambda text: text + "\nundefined_everywhere\n",
    )
    report = verify(project, find_links=(find_links,))

    assert codes(report) == ["import_failed"]
    assert report.failures[0].module == "svfix_good_guarded_extra.bars"
    assert "with the extra" in report.failures[0].message


def test_a_module_allowed_to_fail_is_not_verified_with_its_extra(find_links: str) -> None:
    report = check_with_extras(
        "good-extra-module", find_links, import_allow_fail=("svfix_good_extra_module.chart",)
    )

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    assert [f.module for f in imports.allowed_failures] == ["svfix_good_extra_module.chart"]
    assert imports.excused == () and imports.extras == ()


def test_a_module_that_fails_even_with_its_extra_reports_the_real_cause(find_links: str) -> None:
    report = check_with_extras("broken-extra-module", find_links)

    assert codes(report) == ["import_failed"]
    [failure] = report.failures
    assert failure.module == "svfix_broken_extra_module.chart"
    assert failure.message.startswith(
        "module 'svfix_broken_extra_module.chart' failed to import with the extra 'chart' "
        "installed (svfix-broken-extra-module[chart]): ImportError: cannot import name 'pie' "
        "from 'svfix_extra_dep'"
    )
    assert failure.details is not None and "from svfix_extra_dep import pie" in failure.details
    imports = report.runs[0].imports
    assert imports is not None and imports.excused == ()
    assert [f.type for f in imports.failed] == ["ImportError"]
    assert [plugin.ok for plugin in report.runs[0].plugins] == [True]


def test_an_extra_that_does_not_install_is_a_failure_with_the_installer_s_words(
    find_links: str,
) -> None:
    report = check_with_extras("broken-extra-install", find_links)

    assert codes(report) == ["install_failed"]
    [failure] = report.failures
    assert failure.message.startswith(
        "the extra 'chart' (svfix-broken-extra-install[chart]), which module(s) "
        "svfix_broken_extra_install.chart need, does not install:"
    )
    assert failure.module == "svfix_broken_extra_install.chart"
    assert failure.details is not None and "svfix-extra-dep>=99" in failure.details
    imports = report.runs[0].imports
    assert imports is not None
    [extra] = imports.extras
    assert not extra.installed and extra.error is not None
    assert stages(report) == {
        "build": "passed",
        "venv": "passed",
        "install": "passed",
        "probe": "passed",
        "imports": "failed",
        "scripts": "passed",
    }


def _sdist_links(root: Path, *, buildable: bool) -> str:
    """A directory holding ``svfix-extra-dep`` as an sdist only (whose build backend does not
    exist unless ``buildable``): pip and uv build it for a user who installs the extra."""
    source = copy_fixture("extra-dep", root / "src")
    if not buildable:
        pyproject = source / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        text = text.replace('requires = ["hatchling"]', "requires = []")
        pyproject.write_text(text.replace("hatchling.build", "svfix_no_such_backend"), "utf-8")
    links = root / "links"
    links.mkdir()
    with tarfile.open(links / "svfix_extra_dep-1.0.0.tar.gz", "w:gz") as sdist:
        sdist.add(source, arcname="svfix_extra_dep-1.0.0")
        info = tarfile.TarInfo("svfix_extra_dep-1.0.0/PKG-INFO")
        metadata = b"Metadata-Version: 2.1\nName: svfix-extra-dep\nVersion: 1.0.0\n"
        info.size = len(metadata)
        sdist.addfile(info, io.BytesIO(metadata))
    return str(links)


@pytest.fixture(scope="module")
def sdist_only_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _sdist_links(tmp_path_factory.mktemp("sdist-only"), buildable=True)


@pytest.fixture(scope="module")
def unbuildable_links(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _sdist_links(tmp_path_factory.mktemp("unbuildable"), buildable=False)


def _chart_excused(report: Report, reason: str) -> tuple[ExcusedModule, ExtraRecord]:
    """The passing report's one excused module, the chart module of good-extra-module, with
    ``reason``; and its extra's record."""
    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None and imports.failed == ()
    [excused] = imports.excused
    assert (excused.module, excused.reason, excused.extra) == (
        "svfix_good_extra_module.chart",
        reason,
        "chart",
    )
    [extra] = imports.extras
    return excused, extra


def test_an_extras_requirement_published_only_as_an_sdist_is_built_and_the_module_verified(
    sdist_only_links: str,
) -> None:
    """Users' installers build the extra's requirement; so does the check, confined as the
    project's build is, and the module is imported with the extra installed."""
    report = check_with_extras("good-extra-module", sdist_only_links)

    _, extra = _chart_excused(report, "extra")
    assert extra.installed
    assert extra.imported == ("svfix_good_extra_module.chart",)


def test_a_module_whose_extras_requirement_does_not_build_is_excused_as_not_verified(
    unbuildable_links: str,
) -> None:
    """Its sdist does not build here (as a compiler or a system library may be missing): the
    module is neither a failure nor passed silently: it is listed as not verified, and why."""
    report = check_with_extras("good-extra-module", unbuildable_links)

    excused, extra = _chart_excused(report, "unbuilt")
    assert excused.detail.startswith(
        "not verified: the extra 'chart' (svfix-good-extra-module[chart]) requires "
        "svfix-extra-dep==1.0.0, published only as a source distribution"
    )
    assert "building it here failed: " in excused.detail
    assert not extra.installed
    assert_valid_report(report.to_json())


def test_the_text_output_says_the_module_is_not_verified_and_why(unbuildable_links: str) -> None:
    args = ["check", str(fixture("good-extra-module")), "--installer", "uv", "--verbose"]
    result = run_cli([*args, "--find-links", unbuildable_links])
    assert result.code == 0, result.stdout + result.stderr
    assert "svfix_good_extra_module.chart  excused (unbuilt): not verified: " in result.stdout
    assert "svfix-good-extra-module[chart]  not installed: a requirement needs its sdist" in (
        result.stdout
    )
    assert "did not install" not in result.stdout


def test_an_extra_that_does_not_resolve_stays_a_failure_beside_sdist_only_links(
    sdist_only_links: str,
) -> None:
    """No release matches at all (``>=99``): no build would help, users meet it too."""
    report = check_with_extras("broken-extra-install", sdist_only_links)
    assert codes(report) == ["install_failed"]


def test_another_platform_s_module_is_excused_as_such() -> None:
    report = verify(fixture("good-platform-module"))

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module.rsplit(".", 1)[-1]: e for e in imports.excused}
    assert {name: e.reason for name, e in excused.items()} == {
        "registry": "platform",  # a name of another platform's
        "console_win": "platform",  # assert sys.platform == "win32"
        "mac_keychain": "platform",  # if sys.platform != "darwin": raise ImportError
    }
    assert "winreg" in excused["registry"].detail
    assert excused["console_win"].detail == "says at import that it runs on windows only"
    assert excused["mac_keychain"].detail == "says at import that it runs on macos only"
    assert imports.extras == ()  # nothing to install for them


def test_shipped_test_code_is_a_warning_about_the_wheel_not_a_failure() -> None:
    result = run_cli(
        ["check", str(fixture("good-test-module")), "--installer", "uv", "--json", "-", "--quiet"]
    )

    assert result.code == 0, result.stdout + result.stderr
    document = result.json()
    assert_valid_report(document)
    assert document["runs"][0]["imports"]["excused"] == [
        {
            "module": "svfix_good_test_module.test_e2e",
            "reason": "test",
            "detail": "a test module shipped in the wheel; it needs pytest, which only tests use",
        },
        {  # its test suite's configuration, read from the checkout: it misses no package
            "module": "svfix_good_test_module.testing.config",
            "reason": "test",
            "detail": "a test module shipped in the wheel; it raises at import outside its test "
            "run (it misses no package)",
        },
    ]
    [note] = document["notes"]
    assert "svfix_good_test_module.test_e2e, svfix_good_test_module.testing.config" in note
    assert "do not belong in the wheel" in note


def test_shipped_test_support_not_named_as_a_test_is_a_warning_not_a_failure() -> None:
    """A module no entry point reaches whose import fails only inside test machinery (another
    distribution's testing package, a test framework) is test support, whatever its name."""
    result = run_cli(
        ["check", str(fixture("good-test-support")), "--installer", "uv", "--json", "-", "--quiet"]
    )

    assert result.code == 0, result.stdout + result.stderr
    document = result.json()
    assert_valid_report(document)
    support = "test support for its application's test suite: imports {}, which only test runs have"
    assert document["runs"][0]["imports"]["excused"] == [
        {
            "module": "svfix_good_test_support.fixtures",
            "reason": "test",
            "detail": support.format("pytest"),
        },
        {
            "module": "svfix_good_test_support.requirements",
            "reason": "test",
            "detail": support.format("svfix_absent_migrations.testing.requirements"),
        },
    ]
    assert [plugin["name"] for plugin in document["runs"][0]["plugins"]] == ["count"]
    [note] = document["notes"]
    assert note.startswith("the wheel ships 2 test-support module(s) that import test machinery")
    assert "svfix_good_test_support.fixtures, svfix_good_test_support.requirements;" in note


def test_a_module_an_entry_point_reaches_is_never_excused() -> None:
    report = verify(fixture("broken-reached-platform-module"))

    assert sorted(codes(report)) == ["import_failed", "script_failed"]
    [failure] = [f for f in report.failures if f.code == "import_failed"]
    assert failure.module == "svfix_broken_reached_platform_module.cli"
    assert failure.message == (
        "module 'svfix_broken_reached_platform_module.cli' failed to import: "
        "ModuleNotFoundError: No module named 'winreg'"
    )
    assert failure.hint is not None and failure.hint.startswith(
        "entry point console_scripts:svfix-broken-reached-platform-module imports "
        "svfix_broken_reached_platform_module.cli, so users meet this failure"
    )
    imports = report.runs[0].imports
    assert imports is not None and imports.excused == ()


def test_every_surface_lists_the_excused_modules(find_links: str, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = run_cli(
        [
            "check",
            str(fixture("good-extra-module")),
            "--installer",
            "uv",
            "--find-links",
            find_links,
            "--junit-xml",
            str(junit),
        ]
    )

    assert result.code == 0, result.stdout + result.stderr
    assert (
        "svfix_good_extra_module.chart  excused (extra 'chart'): imports with the extra "
        "installed (svfix-good-extra-module[chart])"
    ) in result.stdout
    properties = {prop.get("name"): prop.get("value") for prop in ET.parse(junit).iter("property")}
    assert properties["imports.excused"] == (
        "svfix_good_extra_module.chart (extra chart: imports with the extra installed "
        "(svfix-good-extra-module[chart]))"
    )


def _wheels_of(root: Path, *fixtures: str) -> str:
    """A directory holding a wheel of each of ``fixtures``, to pass with ``--find-links``."""
    wheels = root / "wheels"
    wheels.mkdir()
    for name in fixtures:
        built = uv_wheel(copy_fixture(name, root / name), root / name / "dist")
        shutil.copy2(built, wheels)
    return str(wheels)


@pytest.fixture(scope="module")
def two_releases(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Releases 1.0.0 and 2.0.0 of ``svfix-release-dep``; 2.0.0 dropped ``old_api``."""
    return _wheels_of(tmp_path_factory.mktemp("releases"), "release-dep-v1", "release-dep-v2")


def test_a_module_for_an_older_release_of_a_requirement_is_excused_once_it_imports_there(
    two_releases: str,
) -> None:
    """The plain install has release 2: the module for release 1 that the package imports
    fails there, and imports with release 1; the module broken on both releases still fails,
    for its own cause, and so does the one for release 1 that nothing of the package imports."""
    report = verify(fixture("release-gated-modules"), find_links=(two_releases,))

    assert codes(report) == ["import_failed", "import_failed"]
    broken, stale = sorted(report.failures, key=lambda failure: str(failure.module))
    assert broken.module == "svfix_release_gated.broken"
    assert "never_released" in broken.message
    assert broken.hint is not None
    assert broken.hint.startswith("it fails with svfix-release-dep==1.0.0 too, not only with")
    assert stale.module == "svfix_release_gated.stale_for_release_1"
    assert "old_api" in stale.message
    assert stale.hint is not None
    assert "no other module of the package imports it" in stale.hint
    imports = report.runs[0].imports
    assert imports is not None
    excused, guarded = imports.excused  # by module name
    assert (guarded.module, guarded.reason) == (
        "svfix_release_gated.guarded_for_release_1",
        "release",
    )
    assert (excused.module, excused.reason) == ("svfix_release_gated.for_release_1", "release")
    assert "svfix-release-dep==1.0.0" in excused.detail
    assert "svfix-release-dep>=1" in excused.detail
    assert "2.0.0, installed here" in excused.detail
    assert {tool.name for tool in report.runs[0].tools} == {"answer"}


@pytest.fixture(scope="module")
def two_bindings(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two distributions of the module ``svfix_alt_binding``: the first raises at import."""
    root = tmp_path_factory.mktemp("bindings")
    return _wheels_of(root, "alt-binding-broken", "alt-binding-good")


def test_a_module_that_fails_with_its_first_extra_imports_with_another_that_offers_the_same(
    two_bindings: str,
) -> None:
    report = verify(fixture("good-alternative-extras"), find_links=(two_bindings,))

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    [excused] = imports.excused
    assert (excused.module, excused.reason, excused.extra) == (
        "svfix_good_alternative_extras.window",
        "extra",
        "second",
    )
    assert "it failed with the extra 'first'" in excused.detail
    assert [(e.name, e.installed, e.imported) for e in imports.extras] == [
        ("first", True, ()),
        ("second", True, ("svfix_good_alternative_extras.window",)),
    ]


def test_a_dependency_published_as_an_sdist_only_is_built_in_the_sandbox(
    sdist_only_links: str,
) -> None:
    """Users' installers build it; the check builds it too, as it builds the project."""
    report = verify(fixture("good-sdist-only-dependency"), find_links=(sdist_only_links,))

    assert report.ok, report.failures
    [run] = report.runs
    assert any(
        note.startswith("built svfix_extra_dep-1.0.0-py3-none-any.whl from its sdist")
        for note in report.notes
    ), report.notes
    assert {tool.name for tool in run.tools} == {"chart"}
    assert any(d["name"] == "svfix-extra-dep" for d in run.installed)


def test_modules_the_package_imports_only_on_newer_pythons_are_excused_on_older_ones() -> None:
    """robotframework's typealiasresolver needs typing.TypeAliasType (3.12) and is imported
    only under ``if sys.version_info >= (3, 12):``; on 3.11 nobody meets its failure."""
    report = verify(fixture("good-version-gated-modules"), python=("3.11",))

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module.rsplit(".", 1)[-1]: e for e in imports.excused}
    assert {name: e.reason for name, e in excused.items()} == {
        "resolver312": "python",  # if sys.version_info >= (3, 12)
        "walker312": "python",  # if PY312, and the else of the opposite test
        "typed": "python",  # if TYPE_CHECKING
        "refuses_old": "python",  # its own test, then a raise
    }
    assert "under `if sys.version_info >= (3, 12)`" in excused["resolver312"].detail
    assert "under `if PY312`" in excused["walker312"].detail
    assert "only for type checkers" in excused["typed"].detail
    assert "`if sys.version_info < (3, 12):`" in excused["refuses_old"].detail


def test_a_gated_module_another_module_imports_plainly_stays_a_failure(tmp_path: Path) -> None:
    project = copy_fixture("good-version-gated-modules", tmp_path)
    cli = project / "svfix_good_version_gated" / "cli.py"
    cli.write_text("from svfix_good_version_gated.resolver312 import resolve\n")

    report = verify(project, python=("3.11",))

    assert codes(report) == ["import_failed", "import_failed"]
    assert {f.module for f in report.failures} == {
        "svfix_good_version_gated.resolver312",
        "svfix_good_version_gated.cli",
    }


def test_a_module_refusing_in_its_own_words_to_import_without_a_library_is_optional() -> None:
    """robotframework's restreader: "... requires having 'docutils' module ... installed",
    and docutils declared nowhere; users who need the feature install it. bokeh's
    io.webdriver says so for selenium through its package's helper, import_required."""
    report = verify(fixture("good-optional-feature"))
    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module: e for e in imports.excused}
    assert sorted(excused) == [
        "svfix_good_optional_feature.html_export",
        "svfix_good_optional_feature.typeset",
    ]
    assert {e.reason for e in excused.values()} == {"integration"}
    html, typeset = (
        excused[f"svfix_good_optional_feature.{m}"] for m in ("html_export", "typeset")
    )
    assert "'Exporting notes to HTML requires svfix_absent_renderer" in html.detail
    assert "'Typesetting notes needs svfix_absent_typesetter" in typeset.detail


def test_a_module_the_package_imports_that_lacks_an_undeclared_library_stays_a_failure(
    tmp_path: Path,
) -> None:
    """The plugin's export_pdf imports it when it runs: its users meet the failure."""
    project = copy_fixture("good-optional-feature", tmp_path)
    package = project / "svfix_good_optional_feature"
    (package / "pdf_export.py").write_text("import svfix_absent_renderer\n")
    plugin = package / "plugin.py"
    plugin.write_text(
        plugin.read_text()
        + "\n\ndef export_pdf(text: str) -> str:\n"
        + "    from svfix_good_optional_feature import pdf_export\n\n"
        + "    return str(pdf_export)\n"
    )

    report = verify(project)

    assert codes(report) == ["import_failed"]
    assert report.failures[0].module == "svfix_good_optional_feature.pdf_export"


def test_a_module_nothing_of_the_package_imports_is_its_users_integration(
    tmp_path: Path,
) -> None:
    """textual's demo script needs httpx, moto's vendored parser localstack: declared
    nowhere, imported by nothing of the package; its users who import it have the library."""
    project = copy_fixture("good-optional-feature", tmp_path)
    contrib = project / "svfix_good_optional_feature" / "contrib"
    contrib.mkdir()
    (contrib / "__init__.py").write_text("")
    (contrib / "tracking.py").write_text("import svfix_absent_tracker\n")
    (contrib / "reports.py").write_text(
        "from svfix_good_optional_feature.contrib import tracking\n"
    )

    report = verify(project)

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    excused = {e.module: e for e in imports.excused}
    for module in ("contrib.tracking", "contrib.reports"):  # reports: only tracking's importer
        found = excused[f"svfix_good_optional_feature.{module}"]
        assert found.reason == "integration"
        assert "no module of the package imports it" in found.detail


def test_console_scripts_asking_for_an_extra_run_with_it(find_links: str) -> None:
    """httpx's ``httpx`` asks for ``httpx[cli]`` in its own words; another script stops at a
    package only the extra declares: each runs --help again with the extra installed."""
    report = check_with_extras("good-script-extra", find_links)

    assert report.ok, report.failures
    scripts = report.runs[0].scripts
    assert scripts is not None
    assert {s.name: (s.help, s.exit_code, s.extra) for s in scripts} == {
        "svfix-chart": ("passed", 0, "cli"),
        "svfix-chart-plain": ("passed", 0, "cli"),
    }


def test_a_script_that_fails_with_the_extra_it_asks_for_stays_a_failure(
    find_links: str, tmp_path: Path
) -> None:
    project = copy_fixture("good-script-extra", tmp_path)
    cli = project / "svfix_good_script_extra" / "cli.py"
    cli.write_text(cli.read_text() + "\nraise RuntimeError('the chart command is broken')\n")

    report = verify(project, find_links=(find_links,))

    scripts = [f for f in report.failures if f.code == "script_failed"]
    assert {f.plugin for f in scripts} == {"svfix-chart", "svfix-chart-plain"}
    assert all("with the extra 'cli' it asks for installed" in f.message for f in scripts)


def test_a_django_app_s_modules_are_imported_once_django_is_set_up() -> None:
    """django-taggit's models, admin and views raise AppRegistryNotReady imported alone;
    Django imports them after django.setup(), with the app installed."""
    report = verify(fixture("good-django-app"))

    assert report.ok, report.failures
    imports = report.runs[0].imports
    assert imports is not None
    assert {e.module: e.reason for e in imports.excused} == {
        "svfix_good_django_app.admin": "configured",
        "svfix_good_django_app.models": "configured",
        "svfix_good_django_app.views": "configured",
    }
    assert "(svfix_good_django_app), as Django imports it" in imports.excused[0].detail
    [plugin] = report.runs[0].plugins
    assert plugin.ok and "loaded once Django was set up" in str(plugin.host_reason)
    assert [tool.name for tool in report.runs[0].tools] == ["count_bookmarks"]


def test_a_django_app_that_breaks_once_set_up_fails_for_that(tmp_path: Path) -> None:
    project = copy_fixture("good-django-app", tmp_path)
    models = project / "svfix_good_django_app" / "models.py"
    models.write_text(models.read_text() + "    tags = models.JSONFeld(default=list)\n")

    report = verify(project)

    assert set(codes(report)) == {"plugin_load_failed", "import_failed"}
    assert all("has no attribute 'JSONFeld'" in f.message for f in report.failures)


def test_a_template_the_package_copies_into_projects_is_data() -> None:
    """alembic's templates/generic/env.py: run by alembic in its users' projects, never
    imported; imported alone it raises."""
    excused = sole_excuse(verify(fixture("good-data-template")))
    assert (excused.module, excused.reason) == (
        "svfix_good_data_template.templates.project.env",
        "data",
    )


def test_a_module_whose_extra_brings_django_imports_once_django_is_set_up() -> None:
    """hypothesis.extra.django: hypothesis[django] brings Django, and the module reads its
    settings as it imports, as it does in its users' projects."""
    excused = sole_excuse(verify(fixture("good-django-extra")))
    assert (excused.module, excused.reason, excused.extra) == (
        "svfix_good_django_extra.django_support",
        "extra",
        "django",
    )


def test_a_tombstone_nothing_imports_is_excused_with_its_words() -> None:
    """distributed's bokeh.py: 'The distributed.bokeh module has moved to
    distributed.dashboard', and nothing of distributed imports it."""
    excused = sole_excuse(verify(fixture("good-tombstone-module")))
    assert (excused.module, excused.reason) == ("svfix_good_tombstone.legacy", "refuses")
    assert "'svfix_good_tombstone.legacy has moved to svfix_good_tombstone.text" in (excused.detail)


@pytest.mark.parametrize(
    ("edit", "failed"),
    [
        # the package imports it: every user of the package meets the failure
        (("__init__.py", "from svfix_good_tombstone import legacy\n"), "svfix_good_tombstone"),
        # the interpreter's words, not the author's: a stale module, not a tombstone
        (("legacy.py", "from svfix_good_tombstone.text import gone\n"), None),
    ],
    ids=["imported-by-the-package", "stale-import"],
)
def test_a_refusal_the_package_meets_or_a_stale_module_stays_a_failure(
    tmp_path: Path, edit: tuple[str, str], failed: str | None
) -> None:
    project = copy_fixture("good-tombstone-module", tmp_path)
    name, line = edit
    path = project / "svfix_good_tombstone" / name
    path.write_text(line + path.read_text() if name == "__init__.py" else line)

    report = verify(project)

    assert "import_failed" in codes(report)
    modules = {f.module for f in report.failures}
    assert "svfix_good_tombstone.legacy" in modules or failed in modules
    imports = report.runs[0].imports
    assert imports is not None
    assert [e.reason for e in imports.excused] == []
