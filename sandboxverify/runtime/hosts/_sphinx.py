"""The ``sphinx`` host: one ``sphinx.html_themes`` or ``sphinx.builders`` plugin, in a real build.

Sphinx finds both kinds by name among the installed entry points and loads the entry point's
module as an extension (its ``setup(app)`` registers the theme or the builder): a theme when
``conf.py`` says ``html_theme = "<name>"``, a builder when ``sphinx-build -b <name>`` asks for it.
This host imports the module (an import error is the plugin's own), then runs ``sphinx-build``
in-process (``sphinx.cmd.build.build_main``) on a one-page project in a fresh temporary
directory: quiet, a fresh environment (``-E``), no colour. A non-zero exit fails at stage
``application`` with Sphinx's error output, warnings included; the traceback Sphinx saves is
reported in its place.

A theme registers its name (kind ``theme``), a builder its name (kind ``builder``). Sphinx is
imported at call time only, never by the runtime.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    HostContext,
    LoadedPlugin,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
    tail,
)

_KINDS = {"sphinx.html_themes": "theme", "sphinx.builders": "builder"}

INDEX = """\
sandboxverify
=============

A page for a plugin to build, with a little of everything.

.. toctree::
   :maxdepth: 1

Section
-------

Some *emphasis*, **strong** text, ``code``, a `link <https://example.invalid/>`_ and a
reference to :ref:`the-list`.

.. _the-list:

A list
------

- one
- two

.. code-block:: python

   print("hello")

.. note::

   A note.
"""

#: where Sphinx's own output stops saying what went wrong and starts asking for a bug report
_BOILERPLATE = ("The full traceback has been saved in", "To report this error to the developers")


def load_sphinx(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """Build a one-page project with the theme or the builder; raises :class:`PluginLoadError`:
    ``application`` (Sphinx missing, or the build failed), ``import``."""
    del registry, context  # a Sphinx plugin registers no tools, and needs no limits
    kind = kind_of_group(_KINDS, "Sphinx", ref.group)
    build = import_application("sphinx.cmd.build", "sphinx", ref.group)
    # Sphinx imports the entry point's module (whatever follows a colon) as an extension
    module = resolve(EntryPointRef(ref.name, ref.group, ref.module))
    _build(build, ref, kind)
    registration = {
        "name": ref.name,
        "kind": kind,
        "description": summary(module),
        "parameters": None,
    }
    return LoadedPlugin(ref=ref, tools=[registration], handlers={})


def _build(build: Any, ref: EntryPointRef, kind: str) -> None:
    with tempfile.TemporaryDirectory(prefix="sandboxverify-sphinx-") as tmp:
        source = Path(tmp, "source")
        source.mkdir()
        conf = 'project = "sandboxverify"\n'
        if kind == "theme":
            conf += f"html_theme = {ref.name!r}\n"
        (source / "conf.py").write_text(conf, encoding="utf-8")
        (source / "index.rst").write_text(INDEX, encoding="utf-8")
        builder = ref.name if kind == "builder" else "html"
        argv = ["-b", builder, "-E", "-q", "-N", str(source), str(Path(tmp, "build"))]
        shown = f"html_theme = {ref.name!r}" if kind == "theme" else f"-b {ref.name}"
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), _saved_tracebacks_in(tmp):
                status = build.build_main(argv)
        except (Exception, SystemExit) as exc:  # build_main catches the build's own errors
            raise PluginLoadError("application", exc, where=f"sphinx-build with {shown}") from exc
        if status == 0:
            return
        message = _error_output(errors.getvalue())
        failure = ApplicationFailed(
            f"sphinx-build with {shown} exited with status {status}"
            + (f":\n{message}" if message else ""),
            details=_saved_traceback(Path(tmp)),
        )
        raise PluginLoadError("application", failure)


@contextlib.contextmanager
def _saved_tracebacks_in(directory: str) -> Iterator[None]:
    """Sphinx saves a failed build's traceback in a temporary file: keep it in ``directory``,
    to report it and then remove it with the build."""
    before = tempfile.tempdir
    tempfile.tempdir = directory
    try:
        yield
    finally:
        tempfile.tempdir = before


def _error_output(text: str) -> str:
    """Sphinx's warnings and error, without its bug-report sections (versions, last messages,
    extensions) and with only the last line of the traceback it prints: the exception."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith(_BOILERPLATE):
            break
        lines.append(line.rstrip())
    kept: list[str] = []
    section: str | None = None
    exception = ""
    for index, line in enumerate(lines):
        underline = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if line.strip() and underline and set(underline) == {"="}:
            section = line.strip()  # Sphinx 8+: "Versions", ..., "Traceback"
        elif section is None:
            kept.append(line)
        elif section == "Traceback" and line.strip() and set(line.strip()) != {"="}:
            exception = line.strip()
    if exception:
        kept.append(exception)
    return tail("\n".join(kept))


def _saved_traceback(directory: Path) -> str:
    """The traceback in the log a failed build saved (Sphinx's ``sphinx-err-*.log``)."""
    for log in sorted(directory.glob("sphinx-err-*.log")):
        text = log.read_text(encoding="utf-8", errors="replace")
        marker = text.find("Traceback (most recent call last)")
        if marker < 0:
            return text.strip()
        return textwrap.dedent(text[text.rfind("\n", 0, marker) + 1 :]).strip()
    return ""
