"""Modules judged the way users meet them: the rules, on failures shaped as the runtime reports
them for real published packages (pytest-benchmark, keyrings.alt, pywebview, hvplot,
duckdb-engine, nuitka, catppuccin), and the platform table held to this interpreter."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from sandboxverify.stages._excuses import settle, triage
from sandboxverify.stages._extras import ExtraRun, Extras, parse_extras
from sandboxverify.stages._integrations import unreferenced
from sandboxverify.stages._platform_names import PLATFORM_NAMES, elsewhere, this_platform
from sandboxverify.stages._plugin_modules import left_out_by_application
from sandboxverify.stages._test_support import is_test_module

METADATA = """\
Metadata-Version: 2.1
Name: pytest-benchmark
Version: 5.3.1
Requires-Dist: pytest>=8.1
Requires-Dist: py-cpuinfo
Provides-Extra: aspect
Requires-Dist: aspectlib; extra == "aspect"
Provides-Extra: histogram
Requires-Dist: pygal; extra == "histogram"
Requires-Dist: pygaljs; extra == "histogram"
Requires-Dist: setuptools; extra == "histogram" and python_version >= "3.12"
Provides-Extra: elasticsearch
Requires-Dist: elasticsearch; extra == "elasticsearch"
Provides-Extra: windows
Requires-Dist: pywin32; extra == "windows" and sys_platform == "win32"
Provides-Extra: tests
Requires-Dist: xarray; extra == "tests"
"""
EXTRAS = parse_extras(METADATA, "pytest-benchmark", (3, 11, 7))


def failed(
    module: str, *missing: str, names: Any = (), skip: bool = False, **more: Any
) -> dict[str, Any]:
    cause = {"missing": list(missing), "names": [list(n) for n in names], "skip": skip}
    error = {"type": "ImportError", "message": "…", "traceback": ""}
    return {"module": module, "ok": False, "error": error, "cause": cause, **more}


def sort(*items: dict[str, Any], extras: Extras = EXTRAS, modules: tuple[str, ...] = ()) -> Any:
    own = {str(item["module"]).split(".")[0] for item in items}
    return triage(
        items, own=own, extras=extras, installed=["pytest", "py-cpuinfo"], modules=modules
    )


def test_the_extras_of_metadata_with_their_markers_evaluated_here() -> None:
    assert dict(EXTRAS.requirements) == {
        "aspect": ("aspectlib",),
        "elasticsearch": ("elasticsearch",),
        "histogram": ("pygal", "pygaljs"),  # setuptools only from Python 3.12
        "tests": ("xarray",),
    } | ({"windows": ("pywin32",)} if sys.platform == "win32" else {})
    assert EXTRAS.providing("pygal.graph.box") == ["histogram"]
    assert EXTRAS.providing("xarray") == ["tests"] and EXTRAS.for_users("xarray") == []
    assert EXTRAS.not_installed(["pygal", "pygaljs"]) == ["aspect", "elasticsearch", "tests"]
    on_312 = parse_extras(METADATA, "pytest-benchmark", (3, 12, 1))
    assert on_312.requirements["histogram"] == ("pygal", "pygaljs", "setuptools")
    # what it requires with no extra, as written: an older release of it may be tried
    assert dict(EXTRAS.base) == {"pytest": "pytest>=8.1", "py-cpuinfo": "py-cpuinfo"}


def test_an_extra_naming_the_distributions_own_extras_brings_what_they_bring() -> None:
    """pydantic-ai-slim 2.68.0: ``openai-realtime = ["pydantic-ai-slim[openai,realtime]"]``.
    Read as naming only pydantic-ai-slim, it brought nothing: the modules that need both
    websockets and openai were never tried with it. A loop of extras ends."""
    metadata = (
        "Name: pydantic-ai-slim\n"
        'Provides-Extra: openai\nRequires-Dist: openai>=1; extra == "openai"\n'
        'Provides-Extra: realtime\nRequires-Dist: websockets>=14; extra == "realtime"\n'
        "Provides-Extra: openai-realtime\n"
        'Requires-Dist: pydantic-ai-slim[openai,realtime]; extra == "openai-realtime"\n'
        'Provides-Extra: all\nRequires-Dist: pydantic_ai_slim[openai-realtime]; extra == "all"\n'
        'Provides-Extra: loop\nRequires-Dist: pydantic-ai-slim[loop,all]; extra == "loop"\n'
    )
    extras = parse_extras(metadata, "pydantic-ai-slim", (3, 11, 7))
    assert dict(extras.requirements) == {
        "all": ("openai", "websockets"),
        "loop": ("openai", "websockets"),
        "openai": ("openai",),
        "openai-realtime": ("openai", "websockets"),
        "realtime": ("websockets",),
    }
    found = triage(
        [failed("pydantic_ai.realtime.azure", "websockets")],
        own={"pydantic_ai"},
        extras=extras,
        installed=[],
    )
    assert dict(found.needs) == {"pydantic_ai.realtime.azure": "realtime"}
    # with realtime alone it lacks openai: the extras that bring both come next
    assert found.alternatives["pydantic_ai.realtime.azure"] == ("all", "loop")


def test_a_module_missing_what_an_extra_declares_is_verified_with_that_extra() -> None:
    found = sort(
        failed("pytest_benchmark.histogram", "pygal"),
        failed("pytest_benchmark.storage.elasticsearch", "elasticsearch"),
    )
    assert dict(found.needs) == {
        "pytest_benchmark.histogram": "histogram",
        "pytest_benchmark.storage.elasticsearch": "elasticsearch",
    }
    assert found.excused == {} and found.unmapped == () and found.fallback == ()
    assert found.extras == ["histogram", "elasticsearch"]


def test_a_module_that_caught_what_an_extra_declares_is_verified_with_that_extra() -> None:
    """kombu's Kafka transport catches the ImportError of confluent_kafka and fails with a
    NameError: what its import looked for in vain maps it to the extra, where its own words
    say nothing. A module that lacked a name of an installed package is not so mapped."""
    caught = failed("pytest_benchmark.histogram")
    caught["cause"]["swallowed"] = ["pygal", "ujson"]
    lacking_a_name = failed("pytest_benchmark.storage.bars", names=[("pytest", "Bar")])
    lacking_a_name["cause"]["swallowed"] = ["pygal"]

    found = sort(caught, lacking_a_name)

    assert dict(found.needs) == {"pytest_benchmark.histogram": "histogram"}
    assert found.unmapped == ()


def test_a_package_no_extra_names_is_tried_with_the_smallest_extras_not_installed() -> None:
    found = sort(failed("pytest_benchmark.yaml_storage", "yaml"))
    assert found.needs == {} and found.unmapped == ("pytest_benchmark.yaml_storage",)
    assert found.fallback == ("aspect", "elasticsearch", "tests")  # three at most, smallest first


def test_an_extra_of_the_missing_packages_family_is_tried_first() -> None:
    """sentry-sdk's langchain integration stops at langchain_core, which its extra langchain
    brings (the langchain distribution requires langchain-core): among dozens of extras, that
    one is tried before the smallest."""
    metadata = "Name: sentry-sdk\n" + "".join(
        f'Provides-Extra: {name}\nRequires-Dist: {name}; extra == "{name}"\n'
        for name in ("aiohttp", "arq", "bottle", "celery", "langchain", "pydantic-ai")
    )
    extras = parse_extras(metadata, "sentry-sdk", (3, 11, 7))
    assert extras.not_installed([], near=["langchain_core.callbacks"])[:2] == [
        "langchain",
        "aiohttp",
    ]
    # a member of the family names the root too: pydantic-ai for pydantic
    assert extras.not_installed([], near=["pydantic"])[0] == "pydantic-ai"
    # nothing of the family: the smallest, as before
    assert extras.not_installed([], near=["yaml"])[:3] == ["aiohttp", "arq", "bottle"]
    found = triage(
        [failed("sentry_sdk.integrations.langchain", "langchain_core")],
        own={"sentry_sdk"},
        extras=extras,
        installed=[],
    )
    assert found.fallback[0] == "langchain"


def test_an_extra_named_as_the_module_is_tried_first() -> None:
    """sentry-sdk's starlite integration stops at pydantic, which no extra lists and the extra
    starlite brings (starlite requires it): the module's name says which extra its users
    install, tried before the family's and the smallest, beyond their number."""
    metadata = "Name: sentry-sdk\n" + "".join(
        f'Provides-Extra: {name}\nRequires-Dist: {name}; extra == "{name}"\n'
        for name in ("aiohttp", "arq", "bottle", "pydantic-ai", "starlite", "tests")
    )
    extras = parse_extras(metadata, "sentry-sdk", (3, 11, 7))
    found = triage(
        [
            failed("sentry_sdk.integrations.starlite", "pydantic"),
            # the project's own test code is named for no extra its users install
            failed("sentry_sdk.tests.helpers", "pydantic"),
        ],
        own={"sentry_sdk"},
        extras=extras,
        installed=[],
    )
    assert found.fallback == ("starlite", "pydantic-ai", "aiohttp", "arq")
    # a module named for none: as before
    plain = triage(
        [failed("sentry_sdk.utils", "yaml")], own={"sentry_sdk"}, extras=extras, installed=[]
    )
    assert plain.fallback == ("aiohttp", "arq", "bottle")


@pytest.mark.parametrize(
    ("module", "missing", "names"),
    [
        ("keyrings.alt._win_crypto", (), [("ctypes", "WINFUNCTYPE")]),
        ("webview.platforms.win32", (), [("ctypes", "windll")]),
        ("webview.platforms.winforms", ("winreg",), ()),
        ("webview.platforms.cocoa", ("AppKit",), ()),
        ("webview.platforms.android.app", ("android",), ()),
        ("sqlalchemy_access", ("win32com.client",), ()),
        ("compat.registry", ("_winreg", "winreg"), ()),  # py2 name tried after py3's
    ],
)
def test_a_module_missing_only_another_platform_s_names_is_that_platform_s(
    module: str, missing: tuple[str, ...], names: Any
) -> None:
    if this_platform() in ("windows", "macos"):
        pytest.skip("these names exist on this platform")  # the rows say where they exist
    found = sort(failed(module, *missing, names=names))
    assert found.excused[module].reason == "platform"
    assert found.needs == {} and found.unmapped == ()


def test_one_name_of_this_platform_or_of_no_platform_is_no_excuse() -> None:
    assert elsewhere(["winreg", "svtest_nowhere"], [], platform="linux") == []
    assert elsewhere(["fcntl"], [], platform="linux") == []
    assert [row.name for row in elsewhere(["fcntl"], [], platform="windows")] == ["fcntl"]
    assert elsewhere([], [], platform="linux") == []


@pytest.mark.parametrize(
    ("module", "packages", "expected"),
    [
        ("duckdb_engine.tests.conftest", (), True),
        ("napari_svg._tests.test_get_writer", (), True),
        ("mako.testing.exclusions", (), True),
        ("flake8_debugger_test", (), True),
        ("test_linter", (), True),
        ("hvplot.tests", ("hvplot.tests",), True),  # the package itself
        ("nuitka.build.inline_copy.jinja2.jinja2.tests", (), False),  # Jinja's template tests
        ("pytest_benchmark.testing_helpers", (), False),
        ("contest", (), False),
    ],
)
def test_test_modules_are_known_by_their_names(
    module: str, packages: tuple[str, ...], expected: bool
) -> None:
    assert is_test_module(module, packages) is expected


def test_test_code_that_raises_at_import_for_a_reason_of_its_own_is_test_code() -> None:
    # mako.testing.config reads ./setup.cfg of the project's checkout (MissingConfig); thinc's
    # mypy test cases call reveal_type, which only mypy defines; a module that is no test code
    # raising the same way stays a failure
    found = sort(
        failed("mako.testing.config"),
        failed("thinc.tests.mypy.modules.success_plugin"),
        failed("mako.template"),
    )
    assert {m: e.reason for m, e in found.excused.items()} == {
        "mako.testing.config": "test",
        "thinc.tests.mypy.modules.success_plugin": "test",
    }
    assert "raises at import outside its test run" in found.excused["mako.testing.config"].detail


def test_test_code_that_needs_only_test_packages_is_a_warning_not_a_failure() -> None:
    found = sort(
        failed("duckdb_engine.tests.conftest", "pytest"),
        failed("duckdb_engine.tests.test_pandas", "pandas"),  # declared by no extra at all
        failed("pytest_benchmark.tests.test_storage", "xarray"),  # only a tests extra has it
        failed("hvplot.tests.testgridplots", skip=True),
        failed("pytest_benchmark.tests.test_hist", "pygal"),  # a users' extra declares it
    )
    assert {m: e.reason for m, e in found.excused.items()} == {
        "duckdb_engine.tests.conftest": "test",
        "duckdb_engine.tests.test_pandas": "test",
        "pytest_benchmark.tests.test_storage": "test",
        "hvplot.tests.testgridplots": "test",
    }
    assert dict(found.needs) == {"pytest_benchmark.tests.test_hist": "histogram"}


def test_what_an_entry_point_reaches_or_a_module_the_wheel_left_out_is_never_excused() -> None:
    found = sort(
        failed("pkg.cli", "winreg", reached_by="console_scripts:pkg"),
        failed("pkg.tests.test_cli", "pytest", reached_by="pytest11:pkg"),
        failed("pkg.plot", "pygal", reached_by="pytest11:pkg"),
        failed("pkg.tests.test_report", "pkg.templates"),
    )
    assert found.excused == {} and found.needs == {} and found.unmapped == ()
    assert dict(found.reached_extra) == {"pkg.plot": "histogram"}


def test_a_module_a_console_script_imports_that_needs_an_extra_is_verified_with_it() -> None:
    """black's ``blackd`` needs ``black[d]``: its users install the extra; the module imports
    with it, or fails (a plugin's module, reached by its application, is never excused)."""
    found = sort(
        failed("pkg.report", "pygal", reached_by="console_scripts:pkg-report"),
        failed("pkg.plot", "pygal", reached_by="pytest11:pkg"),
        failed("pkg.win", "winreg", reached_by="console_scripts:pkg-win"),
    )
    assert dict(found.needs) == {"pkg.report": "histogram"}
    assert dict(found.reached_extra) == {"pkg.plot": "histogram"}
    assert found.excused == {}  # another platform's name is no excuse for a script's module
    helped = ran("histogram", ("pkg.report",), **{"pkg.report": {"ok": True}})
    settled = settle(found, [helped], dist="pkg", python="3.11.7", extras=EXTRAS)
    [excused] = settled.excused
    assert excused.detail == (
        "imports with the extra installed (pkg[histogram]); the console script 'pkg-report' "
        "imports it"
    )


def test_what_a_plugin_loaded_with_an_extra_imports_is_judged_with_that_extra() -> None:
    """keystoneauth1's ``extras._saml2``, which its SAML plugins import: they load with the
    extra saml2 their users install, and so does the module. A plugin loaded without one keeps
    the rule: what it reaches is never excused."""
    found = sort(
        failed("pkg.stores.draw", "pygal", reached_by="pkg.stores:chart", loaded_with="aspect"),
        failed("pkg.plot", "pygal", reached_by="pytest11:pkg"),
        failed("pkg.other", "pygal", reached_by="pkg.stores:x", loaded_with="no-such-extra"),
    )
    # the plugin's extra, not the smallest that brings what the module lacks (histogram)
    assert dict(found.needs) == {"pkg.stores.draw": "aspect"}
    assert dict(found.reached_extra) == {"pkg.plot": "histogram", "pkg.other": "histogram"}
    helped = ran("aspect", ("pkg.stores.draw",), **{"pkg.stores.draw": {"ok": True}})
    settled = settle(found, [helped], dist="pkg", python="3.11.7", extras=EXTRAS)
    [excused] = settled.excused
    assert excused.detail == (
        "imports with the extra installed (pkg[aspect]); the plugin pkg.stores:chart imports it"
    )


def test_what_only_a_plugin_its_application_leaves_out_reaches_is_judged_like_any_module() -> None:
    # morefs (fsspec skips a protocol whose extra is missing), sqlalchemy-cockroachdb (a dialect
    # whose DBAPI driver the user installs), opentelemetry instrumentors (the library they
    # instrument): the probe said why the application leaves the entry point out here
    left_out = {
        "pytest11:hist": "needs pygal, which comes with the extra histogram",
        "sqlalchemy.dialects:pkg.pg": "the DBAPI driver psycopg is the user's to install",
    }
    items = left_out_by_application(
        [
            failed("pytest_benchmark.histogram", "pygal", reached_by="pytest11:hist"),
            failed("pkg.pg", "psycopg", reached_by="sqlalchemy.dialects:pkg.pg"),
            failed("pkg.shared", "psycopg", reached_by="sqlalchemy.dialects:pkg.pg"),
            failed("pkg.cli", "winreg", reached_by="console_scripts:pkg"),
        ],
        left_out,
        plugin_modules={"pkg.shared"},  # a plugin the application loads names it too
    )
    found = sort(*items)
    assert dict(found.needs) == {"pytest_benchmark.histogram": "histogram"}
    assert list(found.excused) == ["pkg.pg"]
    assert found.excused["pkg.pg"].reason == "application"
    assert "the DBAPI driver psycopg is the user's to install" in found.excused["pkg.pg"].detail
    assert found.reached_extra == {} and found.unmapped == ()  # the others: users meet them


def ran(extra: str, modules: tuple[str, ...], **results: Any) -> ExtraRun:
    return ExtraRun(extra, f"pytest-benchmark[{extra}]", modules, (), True, results=results)


def test_the_extra_s_sandbox_decides_excused_or_the_real_cause() -> None:
    found = sort(
        failed("pytest_benchmark.histogram", "pygal"),
        failed("pytest_benchmark.storage.elasticsearch", "elasticsearch"),
    )
    broken = {"type": "AttributeError", "message": "no attribute 'core'", "traceback": "tb"}
    settled = settle(
        found,
        [
            ran(
                "histogram",
                ("pytest_benchmark.histogram",),
                **{"pytest_benchmark.histogram": {"ok": True}},
            ),
            ran(
                "elasticsearch",
                ("pytest_benchmark.storage.elasticsearch",),
                **{"pytest_benchmark.storage.elasticsearch": {"ok": False, "error": broken}},
            ),
        ],
        dist="pytest-benchmark",
        python="3.11.7",
        extras=EXTRAS,
    )
    assert [(e.module, e.reason, e.extra) for e in settled.excused] == [
        ("pytest_benchmark.histogram", "extra", "histogram")
    ]
    [failure] = settled.failures
    assert (failure.code, failure.module, failure.details) == (
        "import_failed",
        "pytest_benchmark.storage.elasticsearch",
        "tb",
    )
    assert "with the extra 'elasticsearch' installed" in failure.message
    assert [(r.name, r.imported) for r in settled.records] == [
        ("histogram", ("pytest_benchmark.histogram",)),
        ("elasticsearch", ()),
    ]


def test_an_extra_that_did_not_install_fails_for_the_modules_that_need_it() -> None:
    found = sort(failed("pytest_benchmark.histogram", "pygal"))
    refused = ExtraRun(
        "histogram",
        "pytest-benchmark[histogram]",
        ("pytest_benchmark.histogram",),
        (),
        installed=False,
        error="exited with code 1: no matching distribution for pygal",
        details="the installer's log",
    )
    settled = settle(found, [refused], dist="pytest-benchmark", python="3.11.7", extras=EXTRAS)
    [failure] = settled.failures
    assert failure.code == "install_failed" and failure.details == "the installer's log"
    assert "no matching distribution for pygal" in failure.message
    assert list(settled.failed) == ["pytest_benchmark.histogram"] and settled.excused == ()


@pytest.mark.parametrize("row", [r for r in PLATFORM_NAMES if r.stdlib], ids=lambda r: r.name)
def test_each_standard_library_row_holds_on_this_interpreter(row: Any) -> None:
    """A row for this platform exists here; a row for others does not."""
    module, _, attribute = row.name.partition(".")
    try:
        found = importlib.import_module(module)
    except ImportError:
        exists = False
    else:
        exists = not attribute or hasattr(found, attribute)
    assert exists is (this_platform() in row.platforms), row.source


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is 3.10+")
def test_the_other_rows_are_no_standard_library_names() -> None:
    others = [row.name.split(".")[0] for row in PLATFORM_NAMES if not row.stdlib]
    assert others and not set(others) & set(sys.stdlib_module_names)


def test_a_module_no_extra_helped_says_which_extras_it_was_tried_with() -> None:
    found = sort(failed("webview.platforms.gtk", "gi"))
    tried = [ran(extra, ()) for extra in found.fallback]
    settled = settle(found, tried, dist="pytest-benchmark", python="3.11.7", extras=EXTRAS)
    assert settled.excused == () and settled.failures == ()
    assert settled.hints["webview.platforms.gtk"] == (
        "no extra declares a distribution named gi, and it did not import with the extras "
        "tried (aspect, elasticsearch, tests)"
    )
    helped = ran("tests", (), **{"webview.platforms.gtk": {"ok": True}})
    settled = settle(found, [helped], dist="pywebview", python="3.11.7", extras=EXTRAS)
    assert [(e.module, e.extra) for e in settled.excused] == [("webview.platforms.gtk", "tests")]


@pytest.mark.parametrize(
    ("module", "missing", "excused"),
    [
        ("hvplot.ibis", ("ibis",), True),
        ("syrupy.extensions.amber.pydantic_plugin", ("pydantic",), True),
        ("syrupy.extensions.amber.attrs_plugin", ("attr",), True),  # attrs: attr's plural
        ("pkg.contrib.django_tools", ("django", "rest_framework"), False),  # not both named
        ("pkg.yaml_storage", ("yaml",), True),
        ("polymorphic.contrib.extra_views", ("extra_views",), True),  # a whole part
        ("pkg.storage", ("yaml",), False),  # not named for what it lacks
        ("pkg.io", ("io",), False),  # too short a name to tell
    ],
)
def test_a_module_named_for_the_library_no_extra_declares_is_that_librarys_integration(
    module: str, missing: tuple[str, ...], excused: bool
) -> None:
    item = failed(module, *missing)
    found = triage([item], own={module.split(".", maxsplit=1)[0]}, extras=EXTRAS, installed=[])
    assert found.unmapped == (module,)
    settled = settle(found, [], dist="pkg", python="3.11.7", extras=EXTRAS)
    if excused:
        [excuse] = settled.excused
        assert excuse.reason == "integration"
        assert excuse.detail.startswith(f"its integration with {', '.join(missing)}, as its name")
        assert module not in settled.hints
    else:
        assert settled.excused == ()
        assert settled.hints[module].startswith("no extra declares a distribution named")


def refused(
    module: str,
    missing: str,
    kind: str,
    message: str,
    *,
    last: str = "",
    frames: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A module that failed as the runtime reports it: ``last``, the module the way in to the
    failure ends in (its own statement raised, or one of a module it imports); ``frames``, the
    whole way in, outermost first."""
    item = failed(module, missing)
    item["error"] = {"type": kind, "message": message, "traceback": ""}
    item["cause"]["frames"] = frames or [{"module": last or module, "imports": []}]
    return item


def way_in(*frames: tuple[str, list[str]]) -> list[dict[str, Any]]:
    """Frames as the runtime records them, after its own call to ``import_module``."""
    return [
        {"module": "sandboxverify.runtime._imports", "imports": []},
        {"module": "importlib", "imports": []},
        *({"module": module, "imports": imports} for module, imports in frames),
    ]


_SELENIUM_WORDS = (
    "To use bokeh.io image export functions you need selenium ('conda install selenium' or "
    "'pip install selenium')"
)


@pytest.mark.parametrize(
    ("item", "excused"),
    [
        # robotframework 7.5's restreader: its own words, naming what it lacks
        (
            refused(
                "robot.running.builder.restreader",
                "docutils",
                "DataError",
                "Using reStructuredText test data requires having 'docutils' module version "
                "0.9 or newer installed.",
            ),
            True,
        ),
        (
            refused(
                "pkg.render",
                "jinja2",
                "ImportError",
                "pkg.render needs Jinja2: pip install jinja2\nmore words",
            ),
            True,
        ),
        # matplotlib 3.11's GTK3 backend names the distribution of gi; Django's MySQL
        # backend asks "Did you install mysqlclient?" for MySQLdb; bokeh in another case
        (
            refused(
                "m.backends.backend_gtk3",
                "gi",
                "ImportError",
                "The GTK3 backends require PyGObject",
            ),
            True,
        ),
        (
            refused(
                "d.db.backends.mysql.base",
                "MySQLdb",
                "ImproperlyConfigured",
                "Error loading MySQLdb module.\nDid you install mysqlclient?",
            ),
            True,
        ),
        (
            refused(
                "b.plotting._geo_feature",
                "cartopy",
                "ModuleNotFoundError",
                "requires the optional dependency 'Cartopy'.To use this module, install",
            ),
            True,
        ),
        # the interpreter's own words are nobody's refusal: an undeclared dependency
        (refused("pkg.render", "jinja2", "ModuleNotFoundError", "No module named 'jinja2'"), False),
        # its words name something else, or nothing it lacks
        (refused("pkg.render", "jinja2", "ImportError", "the renderer is unavailable"), False),
        # raised deeper, in another module it imports: that module's words, not this one's
        (
            refused("pkg.views", "jinja2", "ImportError", "install jinja2", last="pkg.render"),
            False,
        ),
        # the wheel's top level, which its users import, is never excused so
        (refused("pkg", "jinja2", "ImportError", "pkg needs jinja2: pip install jinja2"), False),
        # bokeh 3.9.2's io.webdriver refuses through its package's helper, which raises
        # RuntimeError(words) from the import_module call's failure
        (
            refused(
                "bokeh.io.webdriver",
                "selenium",
                "RuntimeError",
                _SELENIUM_WORDS,
                frames=way_in(
                    ("bokeh.io.webdriver", []),
                    ("bokeh.util.dependencies", []),
                    ("importlib", []),
                ),
            ),
            True,
        ),
        # the same words from a module it imports on the way: that module's refusal
        (
            refused(
                "bokeh.io.export",
                "selenium",
                "RuntimeError",
                _SELENIUM_WORDS,
                frames=way_in(
                    ("bokeh.io.export", ["bokeh.io.webdriver"]),
                    ("bokeh.io.webdriver", []),
                    ("bokeh.util.dependencies", []),
                ),
            ),
            False,
        ),
        # a helper of another distribution is not the module's own code
        (
            refused(
                "pkg.render",
                "jinja2",
                "RuntimeError",
                "pkg.render needs jinja2",
                frames=way_in(("pkg.render", []), ("lazyloader.core", []), ("importlib", [])),
            ),
            False,
        ),
    ],
)
def test_a_module_that_refuses_in_its_own_words_to_import_without_a_library_is_optional(
    item: dict[str, Any], excused: bool
) -> None:
    module = str(item["module"])
    found = triage([item], own={module.split(".", maxsplit=1)[0]}, extras=EXTRAS, installed=[])
    settled = settle(found, [], dist="pkg", python="3.11.7", extras=EXTRAS)
    if excused:
        [excuse] = settled.excused
        assert excuse.reason == "integration"
        first = str(item["error"]["message"]).splitlines()[0]
        assert f"says so as it refuses to import without it: {first!r}" in excuse.detail
    else:
        assert settled.excused == ()
        assert settled.hints[module].startswith("no extra declares a distribution named")


def test_modules_only_each_other_import_are_unreferenced() -> None:
    """moto 5.2.5: parser.backend.store is imported only by parser.provider, which nothing
    imports; a module another module of the package imports is referenced."""
    importers = {
        "moto.sfn.parser.provider": (),
        "moto.sfn.parser.backend.store": ("moto.sfn.parser.provider",),
        "pkg.used": ("pkg.api",),
        "pkg.chain": ("pkg.used",),
    }
    assert unreferenced(list(importers), importers) == {
        "moto.sfn.parser.provider",
        "moto.sfn.parser.backend.store",
    }
