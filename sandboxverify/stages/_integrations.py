"""A module for libraries it lacks, which no extra declares: its integration with them, for
users who have them. It says so by its name (``hvplot.ibis``, syrupy's ``pydantic_plugin``),
or in its own words as it refuses to import without them (robotframework's ``restreader``:
"Using reStructuredText test data requires having 'docutils' module ... installed"). Judged
last, once no extra tried brought what it lacks (``_excuses.settle``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from packaging.utils import canonicalize_name

from sandboxverify.report import ExcusedModule
from sandboxverify.runtime import name_words
from sandboxverify.stages._import_names import distributions_of


def integration_excuse(
    module: str, lacking: Sequence[str], said: str | None = None
) -> ExcusedModule | None:
    """A module named for the libraries it lacks (``hvplot.ibis``, ``syrupy``'s
    ``pydantic_plugin``), which no extra declares: its integration with them, for users who
    have them (each library a word of the module's dotted name, a whole part of it
    (django-polymorphic's ``contrib.extra_views``), or that word without a plural ``s``:
    ``attrs_plugin`` for ``attr``)."""
    words = set(name_words(module)) | {part.lower() for part in module.split(".")}
    words |= {word[:-1] for word in words if word.endswith("s")}
    tops = [name.lower() for name in lacking]
    named = ", ".join(lacking)
    if said and tops:
        return ExcusedModule(
            module,
            "integration",
            f"it needs {named}, which no extra declares, and says so as it refuses to import "
            f"without {'them' if len(lacking) > 1 else 'it'}: {said!r}; for users who have "
            f"{'them' if len(lacking) > 1 else 'it'}",
        )
    if not tops or any(len(top) < 3 or top not in words for top in tops):
        return None
    return ExcusedModule(
        module,
        "integration",
        f"its integration with {named}, as its name says, for users who have "
        f"{'them' if len(lacking) > 1 else 'it'}: no extra declares {named}, and it is not "
        "installed here",
    )


def own_words(module: str, lacking: Sequence[str], item: Mapping[str, Any]) -> str | None:
    """The first line of what ``module`` raised, when its own code refused to import without
    the libraries it lacks and its words name each of them (``except ImportError: raise
    DataError("... requires having 'docutils' module ...")``), itself or through a helper of
    its package (:func:`_refused_by_own_code`); ``None`` for the interpreter's own "No module
    named ..." or a failure deeper in another module."""
    cause = item.get("cause")
    frames = cause.get("frames") if isinstance(cause, Mapping) else None
    first = own_first_line(item)
    if not lacking or not first:
        return None
    if not isinstance(frames, list) or not _refused_by_own_code(module, frames):
        return None
    # each named as imported or as distributed, in any case: "ReportLab", "requires
    # PyGObject" for ``gi``, "Did you install mysqlclient?" for ``MySQLdb``; in its first
    # lines (docutils lists the packages CommonMark parsing may use below its first line)
    error = item.get("error")
    message = str(error.get("message") or "") if isinstance(error, Mapping) else ""
    opening = "\n".join(message.strip().splitlines()[:_LINES_READ])
    spoken = {canonicalize_name(word) for word in _WORD.findall(opening)}
    return first if all(distributions_of(name) & spoken for name in lacking) else None


def own_first_line(item: Mapping[str, Any]) -> str:
    """The first line of what a failed module raised, when those are its author's words:
    ``""`` when it said nothing, or the interpreter spoke ("No module named ...", "cannot
    import name ...": nobody's deliberate refusal)."""
    error = item.get("error")
    message = str(error.get("message") or "") if isinstance(error, Mapping) else ""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return "" if _INTERPRETER_WORDS.match(first) else first


def _refused_by_own_code(module: str, frames: Sequence[Any]) -> bool:
    """Whether the way in to the failure (``frames``, outermost first) ends in ``module``'s
    own statement, or goes on from it only through calls into helpers of its own package and
    the import machinery they call: bokeh's ``io.webdriver`` calls
    ``import_required("selenium.webdriver", "To use ... you need selenium")``, which raises in
    ``bokeh.util.dependencies``. Never when a statement on the way imports another module of
    the package: the failure, and the words, are that module's."""
    names = [
        str(frame.get("module") or "") if isinstance(frame, Mapping) else "" for frame in frames
    ]
    if module not in names:
        return False
    at = len(names) - 1 - names[::-1].index(module)
    package = module.partition(".")[0]
    for frame, name in zip(frames[at:], names[at:]):
        imports = frame.get("imports") if isinstance(frame, Mapping) else None
        if any(str(i).partition(".")[0] == package for i in imports or ()):
            return False
        if name.partition(".")[0] not in (package, *_IMPORT_HELPERS):
            return False
    return True


#: the standard library's import helpers a package's own helper calls (``import_module``)
_IMPORT_HELPERS = ("importlib",)
_WORD = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
#: the lines of a message read for the libraries it names
_LINES_READ = 5
#: what the interpreter says of a missing module, which is nobody's deliberate refusal
_INTERPRETER_WORDS = re.compile(r"No module named |cannot import name ")


def unreferenced(modules: Collection[str], importers: Mapping[str, Sequence[str]]) -> set[str]:
    """Those of ``modules`` no other module of the package imports but one of ``modules``
    itself (moto's vendored ``parser.backend.store``, imported only by ``parser.provider``,
    which nothing imports). ``importers``: those that import each, letting its failure
    through (``_version_gates.importers_here``)."""
    alone = set(modules)
    while True:
        reached = {m for m in alone if any(i not in alone for i in importers.get(m, ()))}
        if not reached:
            return alone
        alone -= reached


def unreferenced_excuse(module: str, lacking: Sequence[str]) -> ExcusedModule:
    """A module only its users import, for a library no requirement or extra declares: an
    integration for users who have it (textual's demo script, moto's vendored parser,
    django-polymorphic's ``contrib.drf``)."""
    named = ", ".join(lacking)
    return ExcusedModule(
        module,
        "integration",
        f"it needs {named}, which no requirement or extra declares, and no module of the "
        "package imports it but where its failure is caught: an integration for users who "
        "have "
        f"{'them' if len(lacking) > 1 else 'it'} (declare {named} in an extra, so that "
        "installers can bring it)",
        lacks=tuple(lacking),
    )
