"""An application's own undeclared import: a plugin fails to load because the application
sandboxverify installed for it (the plugin leaves it to its users, who run it) imports a module
the application does not declare (pylama 8.4.1 imports ``pkg_resources`` and declares no
setuptools). The application's users have that module, or the application fails for them
whatever the plugin; so the distribution that provides it is installed next to it and the plugin
is judged again (``pipeline/_dependents``), with a note. Only where the failing import is in the
application's own files: a module the plugin's code, or a dependency it declares, imports
without it is a failure its users meet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure, PluginRecord
from sandboxverify.stages._dependents import missing_top

#: modules whose distribution is named otherwise (else a module's provider is its own name)
_PROVIDERS = {
    # setuptools 82 removed pkg_resources: an application that still imports it works only
    # where its users kept an older one
    "pkg_resources": "setuptools<82",
    "yaml": "PyYAML",
    "PIL": "Pillow",
    "attr": "attrs",
    "dateutil": "python-dateutil",
    "bs4": "beautifulsoup4",
    "sklearn": "scikit-learn",
    "jwt": "PyJWT",
    "dotenv": "python-dotenv",
    "serial": "pyserial",
    "git": "GitPython",
    "OpenSSL": "pyOpenSSL",
    "Crypto": "pycryptodome",
    "magic": "python-magic",
    "docx": "python-docx",
    "cv2": "opencv-python",
}
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+', re.MULTILINE)


@frozen
class ApplicationNeed:
    """A module the application imports without declaring it, and who failed for it."""

    module: str
    application: str
    #: the requirement that provides the module
    provider: str
    #: the application's file the import failed in, relative to site-packages
    raised_in: str
    plugins: tuple[str, ...]

    def note(self, dist: str) -> str:
        named = ", ".join(repr(p) for p in self.plugins)
        return (
            f"plugin(s) {named} judged with {self.provider} installed: {self.application}, the "
            f"application that loads them, imports {self.module!r} without declaring it (in "
            f"{self.raised_in}); its users have it, or {self.application} fails for them "
            f"whatever {dist} does"
        )


def application_needs(
    failures: Sequence[Failure], plugins: Sequence[PluginRecord], venv: Path
) -> list[ApplicationNeed]:
    """The modules whose absence made a plugin fail inside the files of the application that
    sandboxverify installed for it (``venv``: the sandbox's environment)."""
    errors = {p.name: p for p in plugins if p.error is not None}
    found: dict[tuple[str, str], ApplicationNeed] = {}
    for failure in failures:
        record = errors.get(str(failure.plugin)) if failure.code == "plugin_load_failed" else None
        application = record.application if record is not None else None
        if record is None or record.error is None or application is None:
            continue
        if not application.installed or application.name is None:
            continue
        if application.found_by == "dependent":  # its own judgement, by its own rules
            continue
        top = missing_top(record.error.type, record.error.message)
        frames = _FRAME.findall(record.error.traceback)
        owned = _owned_by(venv, frames[-1]) if top and frames else None
        if top is None or owned is None:
            continue
        owner, relative = owned
        if canonicalize_name(owner) != canonicalize_name(application.name):
            continue
        key = (top, application.name)
        known = found.get(key)
        names = (*known.plugins, record.name) if known else (record.name,)
        provider = _PROVIDERS.get(top, top)
        found[key] = ApplicationNeed(top, application.name, provider, relative, names)
    return list(found.values())


def _owned_by(venv: Path, file: str) -> tuple[str, str] | None:
    """The installed distribution whose RECORD lists ``file`` (an absolute path in ``venv``'s
    site-packages), and the file relative to site-packages."""
    path = Path(file)
    for site in [*venv.glob("lib/python*/site-packages"), *venv.glob("Lib/site-packages")]:
        try:
            relative = path.relative_to(site).as_posix()
        except ValueError:
            continue
        for info in site.glob("*.dist-info"):
            try:
                record = (info / "RECORD").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if any(line.split(",", 1)[0] == relative for line in record.splitlines()):
                return info.name[: -len(".dist-info")].rsplit("-", 1)[0], relative
    return None
