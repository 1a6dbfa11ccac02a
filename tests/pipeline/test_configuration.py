"""The library reads ``[tool.sandboxverify]`` as the command line does: what the caller leaves at
its default, the project's table gives; what the caller sets wins; ``config=False`` opts out."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.options import CheckOptions
from sandboxverify.pipeline import _check
from sandboxverify.pipeline._request import with_configuration


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1.0"\n\n[tool.sandboxverify]\n' + table,
        encoding="utf-8",
    )
    return tmp_path


def test_the_project_table_gives_what_the_caller_left_at_its_default(tmp_path: Path) -> None:
    root = project(tmp_path, 'expect-tools = ["greet"]\nfail-on-warning = ["junk-files"]\n')
    options = with_configuration(CheckOptions(targets=(str(root),)))
    assert options.expect_tools == ("greet",)
    assert options.fail_on_warning == ("junk-files",)


def test_what_the_caller_sets_wins(tmp_path: Path) -> None:
    root = project(tmp_path, 'expect-tools = ["greet"]\ntimeout = 30\n')
    options = with_configuration(CheckOptions(targets=(str(root),), expect_tools=("add",)))
    assert options.expect_tools == ("add",)
    assert options.timeout == 30


def test_the_project_may_not_set_where_we_write(tmp_path: Path) -> None:
    root = project(tmp_path, 'dist-dir = "/tmp/elsewhere"\n')
    with pytest.raises(ConfigError):
        with_configuration(CheckOptions(targets=(str(root),)))


def test_the_library_opts_out_with_config_false(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, 'expect-tools = ["greet"]\n')
    seen: list[CheckOptions] = []

    def stop(options: CheckOptions) -> None:
        seen.append(options)
        raise KeyboardInterrupt  # no build: only what check() was given matters

    monkeypatch.setattr(_check, "validated", stop)
    for config in (True, False):
        with pytest.raises(KeyboardInterrupt):
            _check.check(CheckOptions(targets=(str(root),)), config=config)
    assert [options.expect_tools for options in seen] == [("greet",), ()]
