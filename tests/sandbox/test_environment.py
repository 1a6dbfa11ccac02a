"""Allowlists: what each kind of subprocess may see of the caller's environment."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.sandbox._environment import _select, backend_env, installer_env, plugin_env

CALLER = {
    "PATH": "/usr/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": "/home/me",
    "GITHUB_TOKEN": "ghp_x",
    "PYPI_API_TOKEN": "pypi-x",
    "TWINE_PASSWORD": "pw",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
    "HTTPS_PROXY": "http://proxy:3128",
    "no_proxy": "localhost",
    "SSL_CERT_FILE": "/etc/ca.pem",
    "PIP_INDEX_URL": "https://user:pw@private/simple",
    "UV_INDEX_URL": "https://private/simple",
    "PYTHONPATH": "/host/site-packages",
    "VIRTUAL_ENV": "/host/venv",
    "CC": "gcc",
    "MY_APP_SETTING": "x",
}
SECRETS = {
    "GITHUB_TOKEN",
    "PYPI_API_TOKEN",
    "TWINE_PASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
}


def test_installer_keeps_network_and_installer_settings_but_no_secrets(tmp_path: Path) -> None:
    env = installer_env(tmp_path, environ=CALLER)

    assert {
        "HTTPS_PROXY",
        "no_proxy",
        "SSL_CERT_FILE",
        "PIP_INDEX_URL",
        "UV_INDEX_URL",
        "HOME",
        "PATH",
    } <= set(env)
    assert not SECRETS & set(env)
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
    assert env["PIP_NO_INPUT"] == "1"
    assert env["TMPDIR"] == env["TEMP"] == env["TMP"] == str(tmp_path)  # the check's own


def test_the_build_backend_gets_build_and_network_settings_but_nothing_of_the_installer(
    tmp_path: Path,
) -> None:
    env = backend_env(tmp_path / "bin", tmp_path / "home", tmp_path / "tmp", environ=CALLER)

    assert env["CC"] == "gcc"
    assert env["HTTPS_PROXY"] == "http://proxy:3128"
    assert not SECRETS & set(env)
    assert not [name for name in env if name.startswith(("PIP_", "UV_"))]
    assert env["HOME"] == str(tmp_path / "home")  # private: no ~/.pypirc, no pip.conf
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    assert env["PATH"].split(":")[0] == str(tmp_path / "bin")  # the build environment's
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env


def test_plugin_code_gets_no_secrets_no_installer_settings_and_a_private_home(
    tmp_path: Path,
) -> None:
    env = plugin_env(tmp_path / "bin", tmp_path / "home", tmp_path / "tmp", environ=CALLER)

    assert not SECRETS & set(env)
    assert not [name for name in env if name.startswith(("PIP_", "UV_"))]
    assert "HTTPS_PROXY" not in env
    assert env["HOME"] == str(tmp_path / "home")
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    assert env["PATH"].split(":")[0] == str(tmp_path / "bin")
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C.UTF-8"


def test_with_no_display_passed_on_qt_is_told_to_draw_offscreen(tmp_path: Path) -> None:
    """No display reaches package code; Qt without one aborts the interpreter (pytest-qt's
    ``qapp``, napari's widgets), where a CI job would set the headless platform."""
    caller = {**CALLER, "DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}
    assert plugin_env(tmp_path, tmp_path, tmp_path, environ=caller)["QT_QPA_PLATFORM"] == (
        "offscreen"
    )
    # what the caller passes on wins: their own platform, or their display (then Qt's choice)
    passed = plugin_env(tmp_path, tmp_path, tmp_path, pass_env=("QT_QPA_PLATFORM",), environ=caller)
    assert passed["QT_QPA_PLATFORM"] == "xcb"
    assert "QT_QPA_PLATFORM" not in plugin_env(
        tmp_path, tmp_path, tmp_path, pass_env=("DISPLAY",), environ={**CALLER, "DISPLAY": ":0"}
    )


def test_pass_env_adds_named_variables_by_glob(tmp_path: Path) -> None:
    env = plugin_env(tmp_path, tmp_path, tmp_path, pass_env=("MY_APP_*",), environ=CALLER)
    assert env["MY_APP_SETTING"] == "x"
    assert "GITHUB_TOKEN" not in env


CREDENTIALS = {
    "FAKE_SECRET_TOKEN": "t",
    "MY_API_KEY": "k",
    "DB_PASSWORD": "p",
    "TWINE_USERNAME": "__token__",
    "UV_PUBLISH_URL": "https://upload",
    "MY_APP_SETTING": "x",
}


def test_a_credential_reaches_untrusted_code_only_when_pass_env_names_it_exactly(
    tmp_path: Path,
) -> None:
    every = plugin_env(tmp_path, tmp_path, tmp_path, pass_env=("*",), environ=CREDENTIALS)
    assert set(CREDENTIALS) & set(every) == {"MY_APP_SETTING"}  # a glob is not consent

    named = ("FAKE_SECRET_TOKEN", "TWINE_USERNAME", "MY_*KEY")
    env = plugin_env(tmp_path, tmp_path, tmp_path, pass_env=named, environ=CREDENTIALS)
    assert {"FAKE_SECRET_TOKEN", "TWINE_USERNAME"} <= set(env)
    assert "MY_API_KEY" not in env

    backend = backend_env(tmp_path, tmp_path, tmp_path, pass_env=named, environ=CREDENTIALS)
    assert {"FAKE_SECRET_TOKEN", "TWINE_USERNAME"} <= set(backend)
    assert "UV_PUBLISH_URL" not in backend


def test_the_installer_is_trusted_with_what_pass_env_matches(tmp_path: Path) -> None:
    env = installer_env(tmp_path, pass_env=("*_TOKEN",), environ=CREDENTIALS)
    assert env["FAKE_SECRET_TOKEN"] == "t"


def test_a_variable_passes_only_when_a_pattern_matches_it_whole() -> None:
    environ = {"UV_INDEX_URL": "u", "XUV_CACHE": "x", "PIP_X": "p", "HOME": "/h"}
    selected = _select(("UV_*", "PIP_X"), ("HOME",), environ)
    assert selected == {"UV_INDEX_URL": "u", "PIP_X": "p", "HOME": "/h"}
    assert _select((), (), environ) == {}
