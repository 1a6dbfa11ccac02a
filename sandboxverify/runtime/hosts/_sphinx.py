"""The ``sphinx`` host: one ``sphinx.html_themes`` or ``sphinx.builders`` plugin, or one
extension its users name in ``conf.py`` (no entry point), in a real build.

Sphinx finds both kinds by name among the installed entry points and loads the entry point's
module as an extension (its ``setup(app)`` registers the theme or the builder): a theme when
``conf.py`` says ``html_theme = "<name>"``, a builder when ``sphinx-build -b <name>`` asks for it.
This host imports the module (an import error is the plugin's own), then runs ``sphinx-build``
in-process (``sphinx.cmd.build.build_main``) on a one-page project in a fresh temporary
directory: quiet, a fresh environment (``-E``), no colour. A non-zero exit fails at stage
``application`` with Sphinx's error output, warnings included; the traceback Sphinx saves is
reported in its place.

An extension named in ``conf.py`` (group ``sphinx:extensions``: its module, which defines
``setup(app)``) is built into the same page with ``extensions = [module]``, after Sphinx's
own extensions that its import brings in (``sphinx.ext.autodoc``), as its users list them. One
whose build stops for a configuration value of its own (``bibtex_bibfiles``), or for a Sphinx
error its own handler raises (a program or a file its users' project provides), needs what
each user's project gives it: that is said, not failed (``_sphinx_asks``).

A theme registers its name (kind ``theme``), a builder its name (kind ``builder``), an
extension its module (kind ``extension``). Sphinx is imported at call time only, never by the
runtime.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
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
from sandboxverify.runtime.hosts._sphinx_asks import asked_of_users

_KINDS = {
    "sphinx.html_themes": "theme",
    "sphinx.builders": "builder",
    "sphinx:extensions": "extension",
}

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
    before = set(sys.modules)
    # Sphinx imports the entry point's module (whatever follows a colon) as an extension
    module = resolve(EntryPointRef(ref.name, ref.group, ref.module))
    companions = _bundled_extensions(set(sys.modules) - before) if kind == "extension" else []
    with asked_of_users(ref.module.split(".")[0]) as asked:
        try:
            _build_with_companions(build, ref, kind, companions)
        except PluginLoadError as exc:
            needs = asked.explains(exc.message) if kind == "extension" else None
            if needs is None:
                raise
            return LoadedPlugin(
                ref=ref,
                tools=[],
                handlers={},
                skipped=f"{needs}: sphinx-build stopped without it: {exc.message.splitlines()[-1]}",
            )
    registration = {
        "name": ref.name,
        "kind": kind,
        "description": summary(module),
        "parameters": None,
    }
    return LoadedPlugin(ref=ref, tools=[registration], handlers={})


def _build_with_companions(
    build: Any, ref: EntryPointRef, kind: str, companions: list[str]
) -> None:
    """:func:`_build`; an extension that connects to an event of one of Sphinx's own
    extensions it does not import (``autodoc-process-docstring``: Sphinx names each event after
    its extension) is built again with that extension listed first, as its users list it."""
    while True:
        try:
            _build(build, ref, kind, companions)
            return
        except PluginLoadError as exc:
            match = _UNKNOWN_EVENT.search(exc.message)
            needed = f"sphinx.ext.{match[1]}" if match else ""
            if kind != "extension" or not needed or needed in companions:
                raise
            if importlib.util.find_spec(needed) is None:
                raise
            companions = [*companions, needed]


#: Sphinx's words for ``app.connect`` to an event no loaded extension added
_UNKNOWN_EVENT = re.compile(r"Unknown event name: ([a-z]+)-")


def _bundled_extensions(imported: set[str]) -> list[str]:
    """Sphinx's own extensions (``sphinx.ext.autodoc``) among the modules an extension's import
    brought in: it builds on them, and its users list them before it."""
    return sorted(
        name
        for name in imported
        if name.startswith("sphinx.ext.")
        and name.count(".") == 2
        and callable(getattr(sys.modules.get(name), "setup", None))
    )


def _build(build: Any, ref: EntryPointRef, kind: str, companions: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="sandboxverify-sphinx-") as tmp:
        source = Path(tmp, "source")
        source.mkdir()
        conf = 'project = "sandboxverify"\n'
        if kind == "theme":
            conf += f"html_theme = {ref.name!r}\n"
        if kind == "extension":
            conf += f"extensions = {[*companions, ref.module]!r}\n"
        (source / "conf.py").write_text(conf, encoding="utf-8")
        (source / "index.rst").write_text(INDEX, encoding="utf-8")
        builder = ref.name if kind == "builder" else "html"
        argv = ["-b", builder, "-E", "-q", "-N", str(source), str(Path(tmp, "build"))]
        shown = {
            "theme": f"html_theme = {ref.name!r}",
            "builder": f"-b {ref.name}",
            "extension": f"extensions = {[*companions, ref.module]!r}",
        }[kind]
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
