"""[tool.sandboxverify]: names, types, relative paths, and errors that name the file and key;
values come back by the keyword the command receives them as."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.options._pyproject import find_pyproject
from sandboxverify.options._pyproject import load_config as load


def pyproject(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[project]\nname = 'x'\nversion = '1'\n\n[tool.sandboxverify]\n{table}\n")
    return path


def test_every_option_with_either_spelling(tmp_path: Path) -> None:
    config = load(
        pyproject(
            tmp_path,
            """
host = "entrypoints"
group = "myapp.plugins"
expect_tools = ["a", "b"]
exact = true
expect-plugins = 2
python = ["3.10", "3.12"]
installer = "pip"
isolation = "strict"
index-url = "https://example.invalid/simple"
find-links = ["wheels", "https://example.invalid/links"]
timeout = 5
install_timeout = 300
pass-env = ["MY_*"]
json = "out/report.json"
keep = false
verbose = 1
quiet = false
server_command = "my-server --stdio"
import_all = false
import-skip = "mypkg.windows.*"
import_allow_fail = ["mypkg.contrib.*"]
plugin-allow-fail = ["material/info"]
expect-files = ["mypkg/data/*.json"]
skip_script_help = ["mypkg-daemon"]
junit_xml = "out/junit.xml"
github = true
""",
        )
    )

    assert config == {
        "host": "entrypoints",
        "groups": ("myapp.plugins",),
        "expect_tools": ("a", "b"),
        "exact": True,
        "expect_plugins": 2,
        "python": ("3.10", "3.12"),
        "installer": "pip",
        "isolation": "strict",
        "index_url": "https://example.invalid/simple",
        "find_links": (str(tmp_path / "wheels"), "https://example.invalid/links"),
        "timeout": 5.0,
        "install_timeout": 300.0,
        "pass_env": ("MY_*",),
        "json_out": str(tmp_path / "out/report.json"),
        "keep": False,
        "verbose": 1,
        "quiet": False,
        "server_command": "my-server --stdio",
        "import_all": False,
        "import_skip": ("mypkg.windows.*",),
        "import_allow_fail": ("mypkg.contrib.*",),
        "plugin_allow_fail": ("material/info",),
        "expect_files": ("mypkg/data/*.json",),
        "skip_script_help": ("mypkg-daemon",),
        "junit_xml": str(tmp_path / "out/junit.xml"),
        "github": True,
    }


def test_no_table_is_no_config(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n")
    assert load(path) == {}


def test_json_true_means_stdout(tmp_path: Path) -> None:
    assert load(pyproject(tmp_path, "json = true"))["json_out"] == "-"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("expect-tool = ['a']", "did you mean 'expect-tools'?"),
        ("installer = 'poetry'", "installer must be one of auto, pip, uv"),
        ("isolation = 'none'", "isolation must be one of auto, strict, process"),
        ("timeout = 0", "timeout must be a number of seconds, more than 0 and at most 86400"),
        ("expect-plugins = -1", "expect-plugins must be a whole number"),
        ("expect-plugins = true", "expect-plugins must be a whole number"),
        ("group = [1]", "group must be a string or a list of strings"),
        ("keep = 'no'", "keep must be true or false"),
    ],
)
def test_bad_values_name_the_file_and_key(tmp_path: Path, table: str, message: str) -> None:
    path = pyproject(tmp_path, table)
    with pytest.raises(ConfigError) as info:
        load(path)
    rendered = info.value.message + " " + (info.value.hint or "")
    assert message in rendered
    assert str(path) in info.value.message


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load(path)


def test_the_table_must_be_a_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool]\nsandboxverify = 1\n")
    with pytest.raises(ConfigError, match="must be a table"):
        load(path)


def test_find_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_pyproject(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text("")
    assert find_pyproject(tmp_path) == tmp_path / "pyproject.toml"
    monkeypatch.chdir(tmp_path)
    assert find_pyproject(None) == Path.cwd() / "pyproject.toml"
