"""Environments for subprocesses, built from allowlists, never from the caller's whole environment.

Three audiences:
- the *installer* (pip/uv, also installing a build's requirements) needs network settings, CA
  bundles and its own configuration, which may carry index credentials; it is trusted and runs
  outside the OS sandbox;
- the *build backend* runs the project's build code: network settings, compiler and build-tool
  variables, a private ``HOME`` and ``TMPDIR``; no installer settings (``PIP_*``, ``UV_*``), no
  real home with its configuration files;
- *plugin code* (probe, smoke) gets a minimal environment: a private ``HOME`` and ``TMPDIR``
  inside the sandbox and nothing that looks like a credential, not even the installer's.

Variables the user names with ``--pass-env`` (shell-style globs) reach all three; a variable that
looks like a credential (``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*KEY*``, ``TWINE_*``,
``UV_PUBLISH_*``) reaches untrusted code only when ``--pass-env`` names it exactly, never
through a glob.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

_BASE = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "NO_COLOR",
    # Windows needs these to start processes at all
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "PROCESSOR_ARCHITECTURE",
)
_NETWORK = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
)
_INSTALLER = (
    "PIP_*",
    "UV_*",
    "VIRTUALENV_*",
    "HOME",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "NETRC",
)
_BUILD = (
    "SOURCE_DATE_EPOCH",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "PKG_CONFIG_PATH",
    "ARCHFLAGS",
    "MACOSX_DEPLOYMENT_TARGET",
    "SETUPTOOLS_SCM_*",
    "CARGO_HOME",
    "RUSTUP_HOME",
)

#: Never passed on, whatever an allowlist pattern says: the caller's Python setup must not leak
#: into builds and sandboxes.
_NEVER = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
)


#: Names that reach untrusted code (build backends, plugins) only when ``--pass-env`` names them
#: exactly: credentials, and the settings of publishing tools.
_CREDENTIAL = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|^TWINE_|^UV_PUBLISH_", re.I)


def installer_env(
    tmp: Path, pass_env: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``tmp``: the check's own temporary directory, so whatever an installer leaves in its
    temporary directory (uv's lock files, pip's build trees) goes with the check."""
    env = _select(_BASE + _NETWORK + _INSTALLER, pass_env, environ)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    env.setdefault("PIP_NO_INPUT", "1")
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(_temporary(tmp))
    return env


def backend_env(
    scripts: Path,
    home: Path,
    tmp: Path,
    pass_env: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What a build backend sees: ``scripts`` (its build environment's) first on ``PATH``,
    network and build-tool settings, a private home; nothing of the installer's."""
    return _untrusted(
        _BASE + _NETWORK + _BUILD, scripts, home=home, tmp=tmp, pass_env=pass_env, environ=environ
    )


def build_inputs(
    pass_env: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables that can change what a build produces: the build tools' own (compilers,
    ``SOURCE_DATE_EPOCH``, ``SETUPTOOLS_SCM_*``...), the installer's settings (which backend
    version gets installed) and ``--pass-env``. Not paths of the moment (``TMPDIR``) nor
    network settings, which change where things come from, not what is built."""
    return _select((*_BUILD, "PIP_*", "UV_*"), pass_env, environ)


def plugin_env(
    sandbox_bin: Path,
    home: Path,
    tmp: Path,
    pass_env: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What plugin code sees: no credentials, no installer settings, a private home; and, with
    no display passed on, Qt's headless platform, as a CI job sets it (Qt aborts the whole
    interpreter when it finds no display: a GUI plugin would seem to crash on load)."""
    env = _untrusted(_BASE, sandbox_bin, home=home, tmp=tmp, pass_env=pass_env, environ=environ)
    env["PYTHONUTF8"] = "1"
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def _untrusted(
    patterns: tuple[str, ...],
    scripts: Path,
    *,
    home: Path,
    tmp: Path,
    pass_env: Iterable[str],
    environ: Mapping[str, str] | None,
) -> dict[str, str]:
    """The environment of code from the package: what ``patterns`` allow (credentials only when
    ``--pass-env`` names them), ``scripts`` first on ``PATH``, a private HOME and TMPDIR."""
    env = _select(patterns, pass_env, environ, untrusted=True)
    env["PATH"] = os.pathsep.join(p for p in (str(scripts), env.get("PATH", "")) if p)
    env["HOME"] = str(home)
    if sys.platform == "win32":  # pragma: no cover
        env["USERPROFILE"] = str(home)
    env.update(_temporary(tmp))
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _temporary(tmp: Path) -> dict[str, str]:
    tmp.mkdir(parents=True, exist_ok=True)
    return {name: str(tmp) for name in ("TMPDIR", "TEMP", "TMP")}


def _select(
    patterns: Iterable[str],
    extra: Iterable[str],
    environ: Mapping[str, str] | None,
    *,
    untrusted: bool = False,
) -> dict[str, str]:
    """The variables ``patterns`` or ``extra`` (``--pass-env``) match. For ``untrusted`` code a
    credential-like name must be named exactly in ``extra``: ``--pass-env '*'`` is not consent
    to hand every token to the package under test."""
    source = os.environ if environ is None else environ
    extra = list(extra)
    wanted = _matcher((*patterns, *extra))
    selected: dict[str, str] = {}
    for name, value in source.items():
        if name in _NEVER or not wanted(name):
            continue
        if untrusted and _CREDENTIAL.search(name) and name not in extra:
            continue
        selected[name] = value
    return selected


@functools.cache
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """Whether a name matches one of ``patterns`` (``fnmatch``, case-sensitive), as one
    expression: each step asks this of every variable, and a check has several steps."""
    if not patterns:  # an empty expression would match every name
        return lambda name: None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match
