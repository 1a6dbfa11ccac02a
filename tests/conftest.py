from __future__ import annotations

import compileall
import importlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sandboxverify
from sandboxverify._errors import ConfigError
from sandboxverify.options import _pyproject as _config
from sandboxverify.report._model import Report
from sandboxverify.sandbox._toolchain import find_uv
from sandboxverify.stages.playbook import _document
from tests.helpers import (
    assert_valid_junit,
    assert_valid_report,
    is_our_junit,
    is_our_report,
    schema_errors,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older hosts
    import tomli as tomllib


def pytest_configure(config: pytest.Config) -> None:
    """Compile sandboxverify's own modules once, as installing its wheel does. The suite
    starts hundreds of ``python -m sandboxverify`` processes; where bytecode is not written
    (``PYTHONDONTWRITEBYTECODE``, set on some CI machines) each would compile them again."""
    if sys.dont_write_bytecode:
        compileall.compile_dir(Path(sandboxverify.__file__).parent, quiet=2)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than there are cores. The suite's tests mostly wait on
    processes and the network (builds, installs, the package index), so workers beyond the
    cores keep them busy; ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides where it is set."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if chosen.isdigit():
        return int(chosen)
    return (os.cpu_count() or 1) + 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that build and install (marked ``slow``) run first: with several workers,
    the quick ones then fill the end evenly instead of one worker finishing a long test
    alone while the others wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def needs_uv() -> None:
    if find_uv() is None:  # pragma: no cover - the test extra installs uv
        pytest.fail("uv is not installed; install the test extra: pip install -e '.[test]'")


pytest_plugins = ["pytester", "tests.os_sandbox"]


@pytest.fixture(autouse=True)
def _not_on_a_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks run by the suite must not annotate or summarise the CI job running the suite.

    CI is cleared too: it switches snapshot writing off, so a test that depends on it sets it.
    """
    for name in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_configuration_of_the_callers_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Checks run by the suite read no configuration of the person or machine running it (a
    test that needs one writes it and points SANDBOXVERIFY_CONFIG at it)."""
    absent = tmp_path_factory.getbasetemp() / "no-user-config.toml"
    monkeypatch.setenv("SANDBOXVERIFY_CONFIG", str(absent))


@pytest.fixture(autouse=True, scope="session")
def _every_report_matches_its_schema() -> Iterator[None]:
    """Every report the suite makes in-process (``check``, the command line run in-process,
    the renderings' inputs) matches report-v1.schema.json, with no field it does not list."""
    to_json = Report.to_json

    def validated(self: Report) -> dict[str, Any]:
        document = to_json(self)
        assert_valid_report(document)
        return document

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Report, "to_json", validated)
        yield


@pytest.fixture(autouse=True, scope="session")
def _configs_and_playbooks_match_their_schemas() -> Iterator[None]:
    """Every ``[tool.sandboxverify]`` and TOML playbook the suite loads in-process is judged
    alike by the loader and the shipped schema: a table the loader accepts matches
    config.schema.json and one it refuses does not; a playbook it accepts matches
    playbook.schema.json (some of its refusals, such as a reference to no capture, are beyond
    what a schema can say)."""
    load_config = _config.load_config
    parse_playbook = _document.parse_playbook

    def checked_config(pyproject: Path) -> dict[str, Any]:
        try:
            values = load_config(pyproject)
        except ConfigError:
            table = _tool_table(pyproject)
            if table is not None:
                assert schema_errors("config", table), f"config.schema.json accepts {table}"
            raise
        errors = schema_errors("config", _tool_table(pyproject) or {})
        assert not errors, f"{pyproject}: " + "; ".join(errors)
        return values

    def checked_playbook(text: str, source: str) -> dict[str, Any]:
        spec = parse_playbook(text, source)
        errors = schema_errors("playbook", tomllib.loads(text))
        assert not errors, f"{source}: " + "; ".join(errors)
        return spec

    with pytest.MonkeyPatch.context() as patch:
        _replace_everywhere(patch, load_config, checked_config)
        _replace_everywhere(patch, parse_playbook, checked_playbook)
        yield


def _replace_everywhere(patch: pytest.MonkeyPatch, original: object, replacement: object) -> None:
    """``original`` replaced wherever a module of ours holds it: where it is defined, in its
    room's face, and in every module that imported it by name (the command line's check is
    imported here first, as a check would import it)."""
    importlib.import_module("sandboxverify.cli._check")
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("sandboxverify"):
            continue
        for name, value in list(vars(module).items()):
            if value is original:
                patch.setattr(module, name, replacement)


def _tool_table(pyproject: Path) -> dict[str, Any] | None:
    """``[tool.sandboxverify]`` as written, if the file is TOML and the table a table."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    table = data.get("tool", {}).get("sandboxverify", {})
    return table if isinstance(table, dict) else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Every JUnit file and JSON report a passing test leaves in its ``tmp_path`` (the real
    command line's, in-process or in a subprocess) validates: JUnit against junit-10.xsd, the
    report against report-v1.schema.json."""
    result = yield
    root = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(root, Path):
        for path in _files(root, (".xml", ".json")):
            if path.suffix == ".xml" and is_our_junit(path):
                assert_valid_junit(path)
            elif path.suffix == ".json" and is_our_report(path):
                assert_valid_report(json.loads(path.read_text(encoding="utf-8")))
    return result


def _files(root: Path, suffix: tuple[str, ...]) -> Iterator[Path]:
    """Files under ``root`` ending with ``suffix``, not looking inside virtual environments."""
    for folder, dirs, files in os.walk(root):
        if "pyvenv.cfg" in files:
            dirs.clear()
            continue
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git", "node_modules")]
        yield from (Path(folder, name) for name in files if name.endswith(suffix))


@pytest.fixture(autouse=True)
def _an_empty_artifact_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each test builds what it checks: no test reuses another's build (the cache's own tests
    fill it on purpose), and nothing is written to the user's cache. The compiled
    ``pyproject.toml`` validator, the build environments' bytecode and the kept runtime are
    code kept by content, not builds: the tests of one worker share them."""
    cache = tmp_path_factory.mktemp("artifact-cache")
    for name in ("validate-pyproject", "bytecode", "runtime"):
        shared = tmp_path_factory.getbasetemp() / name
        shared.mkdir(exist_ok=True)
        (cache / name).symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv("SANDBOXVERIFY_CACHE_DIR", str(cache))
