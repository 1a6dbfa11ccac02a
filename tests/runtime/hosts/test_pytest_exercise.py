"""The pytest host's generated run against the real pytest: a plain test, a parametrized one and
one test per fixture of the plugin, each bounded in time; what breaks fails the plugin with
pytest's message, what needs a service this machine does not have is noted."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts import HostContext, LoadedPlugin, PluginLoadError, load_plugin
from tests.runtime.hosts.conftest import Install


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def load(ref: EntryPointRef, timeout: float = 60.0) -> LoadedPlugin:
    return load_plugin("pytest", ref, Registry(), HostContext(timeout=timeout))


def load_error(ref: EntryPointRef, timeout: float = 60.0) -> PluginLoadError:
    with pytest.raises(PluginLoadError) as info:
        load(ref, timeout)
    return info.value


def exercised(loaded: LoadedPlugin) -> dict[str, tuple[Any, Any]]:
    return {
        f"{tool['kind']}:{tool['name']}": (tool["exercise"], tool["exercise_note"])
        for tool in loaded.tools
    }


def test_every_fixture_is_used_by_a_test_and_the_hooks_pytest_called_are_exercised(
    install: Install,
) -> None:
    ref = install(
        "svpt_used",
        """
        import pytest

        USED = []

        def pytest_addoption(parser):
            parser.addoption("--svpt-used", action="store_true", help="Unused.")

        def pytest_collection_modifyitems(items):
            USED.append(len(items))

        def pytest_keyboard_interrupt(excinfo):
            pass

        @pytest.fixture(params=["a", "b"])
        def svpt_letter(request):
            USED.append(request.param)
            return request.param

        @pytest.fixture(name="svpt-dashed", scope="session")
        def _dashed():
            USED.append("dashed")
            yield 1
            USED.append("torn down")
        """,
    )
    assert exercised(load(ref)) == {
        "fixture:svpt-dashed": ("passed", None),
        "fixture:svpt_letter": ("passed", None),
        "option:--svpt-used": ("passed", None),
        "hook:pytest_addoption": ("passed", None),
        "hook:pytest_collection_modifyitems": ("passed", None),
        "hook:pytest_keyboard_interrupt": (
            "not_exercised",
            "the generated tests (a plain test, a parametrized one, one per fixture) do not "
            "call it",
        ),
    }
    import svpt_used  # type: ignore[import-not-found]  # noqa: PLC0415 - the plugin, installed above

    # collect-only saw no test; the generated run six: the plain one, the parametrized one
    # twice, and the fixtures' tests (one per param)
    assert svpt_used.USED[:2] == [0, 6]
    assert {"a", "b", "dashed", "torn down"} <= set(svpt_used.USED)


def test_a_plugin_that_breaks_parametrized_tests_fails_with_pytests_message(
    install: Install,
) -> None:
    ref = install(
        "svpt_no_params",
        """
        def pytest_generate_tests(metafunc):
            for marker in metafunc.definition.iter_markers("parametrize"):
                raise TypeError(f"cannot parametrize {marker.args[0]!r}")
        """,
    )
    error = load_error(ref)
    assert error.stage == "exercise"
    assert type(error.cause).__name__ == "GeneratedRunFailed"
    assert str(error.cause).startswith("pytest could not collect the generated tests: ")
    assert "TypeError: cannot parametrize 'sv_value'" in str(error.cause)


def test_a_fixture_that_raises_when_used_fails_the_plugin(install: Install) -> None:
    ref = install(
        "svpt_broken_fixture",
        """
        import pytest

        @pytest.fixture
        def svpt_config():
            return {"name": "x"}["path"]
        """,
    )
    error = load_error(ref)
    assert error.stage == "exercise"
    assert isinstance(error.cause, KeyError)
    assert error.message == "'path' (in fixture 'svpt_config', at setup)"


def test_a_hook_that_raises_on_each_test_fails_the_plugin_naming_the_hook(
    install: Install,
) -> None:
    ref = install(
        "svpt_setup_hook",
        """
        def pytest_runtest_setup(item):
            raise RuntimeError(f"no setup for {item.name}")
        """,
    )
    error = load_error(ref)
    assert error.stage == "exercise"
    assert error.message == (
        "no setup for test_sv_plain (in test test_sv_plain, at setup, in the plugin's "
        "pytest_runtest_setup hook)"
    )


@pytest.mark.parametrize(
    "body",
    [
        # refused: a ConnectionRefusedError
        "socket.create_connection(('127.0.0.1', PORT), timeout=1)",
        # its own exception, the refusal hidden: what it reached for tells
        """try:
                socket.create_connection(('127.0.0.1', PORT), timeout=1)
            except OSError:
                raise ServiceDown('the database is not up') from None""",
        # polling until the test's time is up
        """while True:
                try:
                    socket.create_connection(('127.0.0.1', PORT), timeout=1)
                except OSError:
                    time.sleep(0.2)""",
    ],
    ids=["refused", "own-exception", "polls"],
)
def test_a_fixture_that_needs_an_unreachable_service_is_noted_not_failed(
    install: Install, closed_port: int, body: str
) -> None:
    ref = install(
        f"svpt_service_{abs(hash(body))}",
        f"""
        import socket, time

        import pytest

        PORT = {closed_port}

        class ServiceDown(Exception):
            pass

        @pytest.fixture(scope="session")
        def svpt_database():
            {body}

        @pytest.fixture
        def svpt_session(svpt_database):
            return svpt_database
        """,
    )
    found = exercised(load(ref, timeout=12))
    for fixture in ("fixture:svpt_database", "fixture:svpt_session"):
        verdict, note = found[fixture]
        assert verdict == "unavailable"
        assert note.startswith("needs a service it cannot reach")
    assert "socket.connect ('127.0.0.1', " in found["fixture:svpt_database"][1]


def test_a_programming_error_after_reaching_out_is_a_break(
    install: Install, closed_port: int
) -> None:
    ref = install(
        "svpt_typo_after_connect",
        f"""
        import socket

        import pytest

        @pytest.fixture
        def svpt_client():
            try:
                socket.create_connection(("127.0.0.1", {closed_port}), timeout=1)
            except OSError as exc:
                return exc.erno
        """,
    )
    error = load_error(ref)
    assert error.stage == "exercise"
    assert isinstance(error.cause, AttributeError)


def test_a_fixture_that_hangs_without_reaching_out_is_a_timeout(install: Install) -> None:
    ref = install(
        "svpt_hangs",
        """
        import time

        import pytest

        @pytest.fixture
        def svpt_slow():
            while True:
                time.sleep(0.1)
        """,
    )
    error = load_error(ref, timeout=8)
    assert error.stage == "exercise"
    assert type(error.cause).__name__ == "ServerFailure"
    assert error.cause.code == "timeout"  # type: ignore[attr-defined]
    assert "fixture 'svpt_slow' at setup: pytest: " in str(error.cause)
    assert "did not finish within" in str(error.cause)


def test_fixtures_that_skip_or_need_the_projects_fixture_are_not_exercised(
    install: Install,
) -> None:
    ref = install(
        "svpt_needs_project",
        """
        import pytest

        @pytest.fixture
        def svpt_client(app):
            return app.test_client()

        @pytest.fixture
        def svpt_docker():
            pytest.skip("docker is not available")

        @pytest.fixture
        def svpt_async():
            raise ImportError("svpt_async needs anyio: pip install 'svpt-needs-project[async]'")
        """,
    )
    found = exercised(load(ref))
    assert found["fixture:svpt_client"] == (
        "not_exercised",
        "needs the fixture 'app', which a project defines",
    )
    assert found["fixture:svpt_docker"][0] == "not_exercised"
    assert found["fixture:svpt_docker"][1].startswith("skipped: ")
    assert "docker is not available" in found["fixture:svpt_docker"][1]
    assert found["fixture:svpt_async"][0] == "unavailable"
    assert found["fixture:svpt_async"][1].startswith("needs an extra that is not installed")


def test_the_cache_stays_on_for_plugins_that_use_it(install: Install) -> None:
    ref = install(
        "svpt_cached",
        """
        def pytest_configure(config):
            config.cache.set("svpt/seen", True)
        """,
    )
    assert exercised(load(ref))["hook:pytest_configure"] == ("passed", None)


def test_a_fixture_needing_its_framework_is_unavailable_one_needing_a_marker_not_exercised(
    install: Install,
) -> None:
    ref = install(
        "svpt_zork",
        """
        import pytest

        @pytest.fixture
        def zork_isolated(request):
            if request.node.get_closest_marker("zork_apps") is None:
                raise pytest.UsageError("zork_isolated requires @pytest.mark.zork_apps([...])")

        @pytest.fixture
        def zork_client():
            import zork.test  # the framework the plugin is for; its users' projects bring it

            return zork.test.Client()
        """,
    )
    verdicts = exercised(load(ref))
    assert verdicts["fixture:zork_isolated"] == (
        "not_exercised",
        "needs what a test gives it: zork_isolated requires @pytest.mark.zork_apps([...])",
    )
    verdict, note = verdicts["fixture:zork_client"]
    assert verdict == "unavailable"
    assert note == (
        "needs zork, which the plugin is named for and leaves to the project it tests: it is "
        "not installed here (at setup)"
    )


def test_a_fixture_needing_a_module_the_plugin_is_not_named_for_breaks(install: Install) -> None:
    ref = install(
        "svpt_zork_other",
        """
        import pytest

        @pytest.fixture
        def zork_cache():
            import quux_undeclared  # a dependency the plugin forgot to declare

            return quux_undeclared
        """,
    )
    error = load_error(ref)
    assert error.stage == "exercise"
    assert isinstance(error.cause, ModuleNotFoundError)
    assert error.where == "fixture 'zork_cache', at setup"


def test_a_fixture_of_an_extra_or_that_wants_a_test_of_its_own_kind_is_not_a_break(
    install: Install, site: Path
) -> None:
    ref = install(
        "svpt_mailer",
        """
        import pytest

        @pytest.fixture
        def svpt_smtp():
            import svpt_smtpd_missing  # only the plugin's smtp extra installs it

        @pytest.fixture
        def svpt_loop():
            raise RuntimeError("svpt_loop can only be used by async tests")

        @pytest.fixture
        def svpt_data(request):
            return (request.path.parent / "data" / "expected.json").read_text()

        @pytest.fixture
        def svpt_unordered():
            pytest.fail("the test could not be ordered")  # injected where that is so
        """,
    )
    (site / "svpt_mailer-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: svpt-mailer\nVersion: 1.0\nProvides-Extra: smtp\n"
        "Requires-Dist: svpt-smtpd-missing>=1; extra == 'smtp'\n"
    )
    verdicts = exercised(load(ref))
    assert verdicts["fixture:svpt_smtp"] == (
        "unavailable",
        "needs the extra svpt-mailer[smtp] (svpt-smtpd-missing>=1; extra == 'smtp'), which is "
        "not installed (at setup)",
    )
    assert verdicts["fixture:svpt_data"] == (
        "not_exercised",
        "needs a file a project keeps next to its tests: data/expected.json",
    )
    assert verdicts["fixture:svpt_unordered"] == (
        "not_exercised",
        "the plugin refuses it in a plain test: Failed: the test could not be ordered",
    )
    assert verdicts["fixture:svpt_loop"] == (
        "not_exercised",
        "the plugin refuses it in a plain test: RuntimeError: svpt_loop can only be used by "
        "async tests",
    )
