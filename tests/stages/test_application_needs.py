"""The application's own undeclared import: found only in the application's own files."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.report import ApplicationRecord, Failure, PluginError, PluginRecord
from sandboxverify.stages import application_needs


def venv_with(tmp_path: Path) -> Path:
    """A venv holding the application (svtest-lamp, module ``lamp``) and the plugin."""
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.12" / "site-packages"
    for dist, files in (
        ("svtest_lamp-2.0", ["lamp/__init__.py", "lamp/lint/__init__.py"]),
        ("svtest_lamp_plugin-1.0", ["svtest_lamp_plugin/__init__.py"]),
    ):
        info = site / f"{dist}.dist-info"
        info.mkdir(parents=True)
        records = [*files, f"{dist}.dist-info/METADATA"]
        (info / "RECORD").write_text("".join(f"{name},sha256=x,1\n" for name in records))
    return venv


def failed(venv: Path, raised_in: str, module: str, *, installed: bool = True) -> PluginRecord:
    site = venv / "lib" / "python3.12" / "site-packages"
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "{site}/svtest_lamp_plugin/__init__.py", line 1, in <module>\n'
        "    from lamp.lint import Linter\n"
        f'  File "{site}/{raised_in}", line 10, in <module>\n'
        f"    import {module}\n"
        f"ModuleNotFoundError: No module named '{module}'\n"
    )
    error = PluginError("ModuleNotFoundError", f"No module named '{module}'", traceback, "import")
    application = ApplicationRecord("svtest-lamp", "2.0", "name", installed=installed)
    return PluginRecord(
        "linter", "lamp.linter", "svtest_lamp_plugin:L", ok=False, error=error,
        application=application,
    )  # fmt: skip


def needs(venv: Path, plugin: PluginRecord) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    failures = [Failure("plugin_load_failed", "", plugin=plugin.name)]
    return [
        (n.module, n.application, n.provider, n.raised_in, n.plugins)
        for n in application_needs(failures, [plugin], venv)
    ]


def test_a_module_the_application_imports_without_declaring_it_is_provided(
    tmp_path: Path,
) -> None:
    venv = venv_with(tmp_path)
    plugin = failed(venv, "lamp/lint/__init__.py", "pkg_resources")

    assert needs(venv, plugin) == [
        ("pkg_resources", "svtest-lamp", "setuptools<82", "lamp/lint/__init__.py", ("linter",))
    ]
    [need] = application_needs([Failure("plugin_load_failed", "", plugin="linter")], [plugin], venv)
    assert need.note("svtest-lamp-plugin") == (
        "plugin(s) 'linter' judged with setuptools<82 installed: svtest-lamp, the application "
        "that loads them, imports 'pkg_resources' without declaring it (in "
        "lamp/lint/__init__.py); its users have it, or svtest-lamp fails for them whatever "
        "svtest-lamp-plugin does"
    )
    # a module named as its distribution is provided by that name
    assert needs(venv, failed(venv, "lamp/__init__.py", "lampshade"))[0][2] == "lampshade"


def test_the_plugins_own_import_or_an_application_the_user_installed_is_not(
    tmp_path: Path,
) -> None:
    venv = venv_with(tmp_path)
    # the plugin's own file: a dependency it must declare
    assert needs(venv, failed(venv, "svtest_lamp_plugin/__init__.py", "pkg_resources")) == []
    # a file of no installed distribution
    assert needs(venv, failed(venv, "elsewhere/mod.py", "pkg_resources")) == []
    # the application was not installed by sandboxverify: the plugin declares it
    plugin = failed(venv, "lamp/lint/__init__.py", "pkg_resources", installed=False)
    assert needs(venv, plugin) == []
