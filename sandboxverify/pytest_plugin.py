"""pytest plugin (entry point ``pytest11``): harness sessions and sandbox checks as fixtures.

- ``harness(plugins=None, **options)`` creates a :class:`~sandboxverify.harness.TestSession`
  (closed after the test); by default it loads the plugins of the project under test.
- ``playbook(path, **options)`` runs a declarative ``.toml`` playbook in-process, with the same
  checks as ``run`` and ``check --smoke`` (``nothing_called`` included, recorded results
  compared), and returns the session, for assertions on its events. ``--llm-mode`` (or
  ``SANDBOXVERIFY_LLM``) moves every such test at once: ``record`` records each playbook again
  first, ``live`` runs it live against its model; under CI only ``replay`` unless given here.
- ``sandbox_check(target=".", **options)`` runs ``sandboxverify check`` and returns the report;
  identical calls within one test session share one result (a check builds and installs).
- ``--update-snapshots`` rewrites snapshots taken with ``session.assert_snapshot``, whoever
  created the session; unnamed snapshots are numbered per test, across its sessions.
- After a test that passed, the ``harness`` fixture's sessions must have used every entry of
  their list mocks and UI answers (``mocks_unused``), as a ``with`` block checks at its end.

pytest loads this module in every session of every project where sandboxverify is installed, so
it imports only what registering the option, the hooks and the fixtures needs: the harness, the
playbook reader and the check pipeline are imported by the fixture that uses them, when a test
asks for it. A pytest run that uses none of the fixtures pays for none of it. The snapshot module
is imported only for ``--update-snapshots``; otherwise the hooks touch it only once something
else has imported it (before that, it has no numbers to restart and updates are off).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from types import ModuleType

    from sandboxverify.report import Report
    from sandboxverify.runtime.harness import TestSession

    HarnessFactory = Callable[..., TestSession]

_TEST_FAILED = pytest.StashKey[bool]()
_SNAPSHOT_MODULE = "sandboxverify.runtime.harness._snapshot"


def _snapshots_if_loaded() -> ModuleType | None:
    return sys.modules.get(_SNAPSHOT_MODULE)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sandboxverify")
    group.addoption(
        "--update-snapshots",
        action="store_true",
        default=False,
        help="sandboxverify: rewrite stored snapshots instead of comparing against them",
    )
    group.addoption(
        "--llm-mode",
        choices=("replay", "record", "live"),
        default=None,
        help="sandboxverify: what the playbook fixture does with recorded playbooks: replay them "
        "(the default), record each again first, or run them live against the model "
        "(default: $SANDBOXVERIFY_LLM, else replay; under CI only replay unless given here)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("update_snapshots", False):
        from sandboxverify.runtime.harness import request_updates  # noqa: PLC0415

        request_updates(True)


def pytest_unconfigure(config: pytest.Config) -> None:
    snapshots = _snapshots_if_loaded()
    if snapshots is not None:
        snapshots.request_updates(False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    snapshots = _snapshots_if_loaded()
    if snapshots is not None:
        snapshots.restart_numbers()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    if outcome.get_result().failed:
        item.stash[_TEST_FAILED] = True


@pytest.fixture
def harness(request: pytest.FixtureRequest) -> Iterator[HarnessFactory]:
    from sandboxverify.runtime.harness import create_test_session  # noqa: PLC0415

    sessions: list[TestSession] = []
    update = bool(request.config.getoption("update_snapshots"))

    def factory(plugins: Any = None, **options: Any) -> TestSession:
        options.setdefault("update_snapshots", update)
        session = create_test_session(plugins, **options)
        sessions.append(session)
        return session

    yield factory
    try:
        if not request.node.stash.get(_TEST_FAILED, False):
            for session in sessions:
                if session.failure is None and session.auto_assert:
                    session.assert_mocks_used()
    finally:
        for session in sessions:
            session.close()


@pytest.fixture
def playbook(harness: HarnessFactory, request: pytest.FixtureRequest) -> Callable[..., TestSession]:
    from sandboxverify.runtime.harness import run_spec, spec_plugins  # noqa: PLC0415
    from sandboxverify.stages.playbook import llm_mode, load_playbook  # noqa: PLC0415

    mode = llm_mode(request.config.getoption("llm_mode"), os.environ)

    def run(path: str | Path, **options: Any) -> TestSession:
        if mode == "record":
            _record_again(Path(path))
        spec = load_playbook(Path(path))
        if mode == "live":
            return _live(spec, options)
        options.setdefault("mock_tools", spec.get("mock_tools") or {})
        options.setdefault("mock_ui", spec.get("mock_ui") or {})
        options.setdefault("has_ui", spec.get("has_ui", True))
        options.setdefault("host", spec.get("host"))
        session = harness(options.pop("plugins", None) or spec_plugins(spec), **options)
        run_spec(spec, session)  # the harness fixture closes the session after the test
        return session

    return run


def _record_again(path: Path) -> None:
    """``--llm-mode record``: the playbook recorded again from its own prompts and settings."""
    from sandboxverify.report import Redactor  # noqa: PLC0415
    from sandboxverify.runtime import record  # noqa: PLC0415
    from sandboxverify.runtime.harness import HarnessError  # noqa: PLC0415
    from sandboxverify.stages.playbook import RecordingSettings  # noqa: PLC0415

    settings = RecordingSettings.of_playbook(path)
    result = record(settings.request(path.with_suffix(".jsonl"), path.resolve().parent))
    text = settings.text(result, path, Redactor()) if result.get("ok") else None
    if text is None:
        error = result.get("error") or {}
        raise HarnessError(
            str(error.get("code") or "model_failed"),
            f"{path}: recording it again failed: {error.get('message')}",
        )
    path.write_text(text, encoding="utf-8")


def _live(spec: dict[str, Any], options: dict[str, Any]) -> TestSession:
    """``--llm-mode live``: the contract run; the live session, if the model kept to the
    recording."""
    from sandboxverify.runtime import live_session_of  # noqa: PLC0415
    from sandboxverify.runtime.harness import HarnessError  # noqa: PLC0415

    result, session = live_session_of({**options, "spec": spec})
    if not result.get("ok"):
        error = result.get("error") or {}
        steps = [
            f"turn {d['turn']}, step {d['step']}: recorded {d['recorded']}, live {d['live']}"
            for d in result.get("divergences") or []
        ]
        raise HarnessError(
            str(error.get("code") or "model_failed"),
            "; ".join([f"{spec.get('source')}: {error.get('message')}", *steps]),
        )
    assert session is not None
    live: TestSession = session
    return live


@pytest.fixture(scope="session")
def sandbox_check() -> Callable[..., Report]:
    from sandboxverify.options import CheckOptions  # noqa: PLC0415
    from sandboxverify.pipeline import check  # noqa: PLC0415

    reports: dict[tuple[Any, ...], Report] = {}

    def run(target: str | Path = ".", *, config: bool = True, **options: Any) -> Report:
        frozen: dict[str, Any] = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in options.items()
        }
        key = (str(target), config, tuple(sorted(frozen.items())))
        if key not in reports:  # config: the project's [tool.sandboxverify], as the CLI reads it
            reports[key] = check(CheckOptions(targets=(str(target),), **frozen), config=config)
        return reports[key]

    return run
