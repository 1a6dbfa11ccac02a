"""[tool.sandboxverify]: names, types, relative paths, and errors that name the file and key;
values come back by the keyword the command receives them as."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxverify._errors import ConfigError
from sandboxverify.options._pyproject import find_pyproject, load_user_config
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
timeout = 5
install_timeout = 300
verbose = 1
quiet = false
server_command = "my-server --stdio"
import_all = false
import-skip = "mypkg.windows.*"
import_allow_fail = ["mypkg.contrib.*"]
plugin-allow-fail = ["material/info"]
expect-files = ["mypkg/data/*.json"]
skip_script_help = ["mypkg-daemon"]
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
        "timeout": 5.0,
        "install_timeout": 300.0,
        "verbose": 1,
        "quiet": False,
        "server_command": "my-server --stdio",
        "import_all": False,
        "import_skip": ("mypkg.windows.*",),
        "import_allow_fail": ("mypkg.contrib.*",),
        "plugin_allow_fail": ("material/info",),
        "expect_files": ("mypkg/data/*.json",),
        "skip_script_help": ("mypkg-daemon",),
        "github": True,
    }


def test_no_table_is_no_config(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n")
    assert load(path) == {}


def test_json_true_means_stdout_in_the_callers_own_configuration(tmp_path: Path) -> None:
    own = tmp_path / "config.toml"
    own.write_text("json = true\n")
    assert load_user_config(own)["json_out"] == "-"


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


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('pass-env = ["GITHUB_TOKEN"]', "cannot set 'pass-env'"),
        ('index-url = "https://evil.invalid/simple"', "cannot set 'index-url'"),
        ('find-links = ["vendor"]', "cannot set 'find-links'"),
        ("keep = true", "cannot set 'keep'"),
        ('json = "report.json"', "cannot set 'json'"),
        ('junit-xml = "junit.xml"', "cannot set 'junit-xml'"),
        ("network = true", "cannot set 'network'"),
        ('isolation = "process"', "process isolation"),
        ('python = ["tools/python3"]', "an interpreter given by path"),
        ('python = "./python"', "an interpreter given by path"),
        ('with = ["evil @ file:///tmp/evil-1.tar.gz"]', "a direct reference"),
        ("timeout = 86400", "more than 600 seconds"),
        ("install-timeout = 7200", "more than 3600 seconds"),
    ],
)
def test_the_project_may_not_widen_what_its_code_reaches(
    tmp_path: Path, line: str, reason: str
) -> None:
    """The checked project is untrusted: these come from the command line or the caller's own
    configuration, never from its [tool.sandboxverify]."""
    with pytest.raises(ConfigError) as info:
        load(pyproject(tmp_path, line))
    said = reason if reason.startswith("cannot set") else f"asks for {reason}"
    assert said in info.value.message
    assert "[tool.sandboxverify]" in info.value.message
    assert "the checked project may not" in info.value.message
    assert info.value.hint is not None
    assert "on the command line" in info.value.hint
    assert "your own configuration" in info.value.hint


def test_the_project_may_make_the_check_stricter(tmp_path: Path) -> None:
    config = load(
        pyproject(
            tmp_path,
            'isolation = "strict"\npython = ["3.12", "min"]\nwith = ["pytest>=8", "llm[x]"]\n'
            "timeout = 600\n",
        )
    )
    assert config["isolation"] == "strict"
    assert config["with_requirements"] == ("pytest>=8", "llm[x]")


def test_a_path_in_the_projects_file_stays_inside_the_project(tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text("[[turns]]\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pb.toml").symlink_to(secret)
    for value in ("pb.toml", "../secret.toml", str(secret)):
        with pytest.raises(ConfigError, match="a path outside the project"):
            load(pyproject(project, f"smoke = {value!r}"))
    (project / "smoke.toml").write_text("[[turns]]\n")
    assert load(pyproject(project, 'smoke = "smoke.toml"'))["smoke"] == str(project / "smoke.toml")


def test_the_callers_own_configuration_may_set_every_option(tmp_path: Path) -> None:
    own = tmp_path / "config.toml"
    own.write_text(
        'pass-env = ["MY_TOKEN"]\nfind-links = ["wheels"]\nindex-url = "https://x.invalid/s"\n'
        'keep = true\njunit-xml = "out/junit.xml"\nisolation = "process"\ntimeout = 7200\n'
    )
    config = load_user_config(own)
    assert config["pass_env"] == ("MY_TOKEN",)
    assert config["isolation"] == "process"
    assert config["timeout"] == 7200.0
    assert config["junit_xml"] == str(tmp_path / "out/junit.xml")


def test_no_configuration_of_ones_own_is_none(tmp_path: Path) -> None:
    assert load_user_config(tmp_path / "absent.toml") == {}
