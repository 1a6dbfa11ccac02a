"""The ``pylint`` host: one pylint plugin, a module its users name in ``load-plugins`` (group
``pylint:plugins``: pylint reads no entry point), run in a real pylint.

pylint imports each module ``--load-plugins`` names and calls its ``register(linter)``, where
the plugin registers its checkers (or changes pylint's own); then it checks the files it is
given. This host runs pylint in-process (``pylint.lint.Run``) on a small, ordinary module with
``--load-plugins=<module>``, with no configuration file and nothing kept between runs. It fails:

- ``import``: the module does not import;
- ``setup``: ``register(linter)`` raised (its traceback is the plugin's own);
- ``application``: pylint itself stopped, or said the plugin is impossible to load;
- ``exercise``: pylint crashed while checking the module with the plugin loaded (a checker of
  the plugin raised: ``astroid-error``, pylint's "Fatal error while checking"), or another
  fatal message.

What pylint says about the sample module itself is no failure: that is the plugin's job.
Registrations: the module (kind ``plugin``), and each checker it adds (kind ``checker``).
pylint is imported at call time only.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from pathlib import Path
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import (
    ApplicationFailed,
    CallWatch,
    HostContext,
    LoadedPlugin,
    LoadStage,
    PluginLoadError,
    import_application,
    kind_of_group,
    resolve,
    summary,
    tail,
)
from sandboxverify.runtime.hosts._exercise import captured

_KINDS = {"pylint:plugins": "plugin"}

#: what a checker meets: the common statements and definitions
SAMPLE = '''\
"""A module of the kinds of code every checker walks."""

import os
import sys
from dataclasses import dataclass
from typing import Optional


@dataclass
class Point:
    """A point."""

    x: int
    y: int = 0

    def moved(self, dx: int) -> "Point":
        """The point moved right."""
        return Point(self.x + dx, self.y)


class Base:
    """A base class."""

    name = "base"

    def __init__(self, value: Optional[str] = None) -> None:
        self.value = value or os.sep

    @property
    def size(self) -> int:
        """Its size."""
        return len(self.value)

    @staticmethod
    def make() -> "Base":
        """A new one."""
        return Base()


def total(items: list, *, start: int = 0) -> int:
    """The sum of ``items``."""
    result = start
    for item in items:
        if item is None:
            continue
        result += item
    squares = [i * i for i in range(3)]
    lookup = {k: v for k, v in zip("ab", squares)}
    try:
        result += lookup["a"]
    except KeyError as exc:
        raise ValueError(f"missing {exc}") from exc
    finally:
        sys.stdout.flush()
    with open(os.devnull, encoding="utf-8") as handle:
        handle.read()
    return result if result > 0 else -result


async def fetch(delay: float) -> float:
    """Wait."""
    value = lambda: delay  # noqa: E731
    return value()
'''


def load_pylint(ref: EntryPointRef, registry: Registry, context: HostContext) -> LoadedPlugin:
    """``pylint --load-plugins=<module>`` on :data:`SAMPLE`; raises :class:`PluginLoadError`."""
    del registry, context  # a pylint plugin registers no tools, and needs no limits
    kind_of_group(_KINDS, "pylint", ref.group)
    with tempfile.TemporaryDirectory(prefix="sandboxverify-pylint-") as tmp:
        # pylint keeps its cache and crash reports there (read when pylint is imported)
        os.environ["PYLINTHOME"] = tmp
        lint = import_application("pylint.lint", "pylint", ref.group)
        # the plugin's own import error, before pylint's message
        module = resolve(EntryPointRef(ref.name, ref.group, ref.module))
        shown = f"pylint --load-plugins={ref.module}"
        watch = CallWatch(module, "register", "linter", "pylint", snapshot=_checker_ids)
        Path(tmp, "sample.py").write_text(SAMPLE, encoding="utf-8")
        Path(tmp, "empty.rc").write_text("", encoding="utf-8")
        reporter = importlib.import_module("pylint.reporters").CollectingReporter()
        argv = [
            f"--load-plugins={ref.module}",
            "--rcfile=empty.rc",
            "--persistent=n",
            "--score=n",
            "sample.py",
        ]
        here = os.getcwd()
        # no pylintrc or pyproject.toml of anyone's is read, and messages name sample.py
        os.chdir(tmp)
        try:
            with captured() as output:
                lint.Run(argv, reporter=reporter, exit=False)
        except (Exception, SystemExit) as exc:
            watch.reraise()
            raise PluginLoadError("application", exc, where=shown) from exc
        finally:
            os.chdir(here)
    watch.reraise()  # pylint may go on without the plugin's checkers
    if not watch.called:
        raise PluginLoadError(
            "application", ApplicationFailed(f"{shown} never called {ref.module}.register(linter)")
        )
    # the plugin's checkers: those the linter has once register() ran, not before
    added = [c for c in watch.args[0].get_checkers() if id(c) not in watch.before]
    own = {msg_id for checker in added for msg_id in getattr(checker, "msgs", {})}
    refused = _fail_on_fatal(reporter.messages, shown, output.text, own)
    registrations: list[dict[str, Any]] = [
        {"name": ref.name, "kind": "plugin", "description": summary(module), "parameters": None}
    ]
    # pylint groups checkers by name: several of one name are one checker to its users
    # (pylint-odoo registers three 'odoolint' ones, as pylint's own typecheck does)
    first_of_name: dict[str, Any] = {}
    for checker in added:
        first_of_name.setdefault(checker.name, checker)
    registrations += [
        {"name": name, "kind": "checker", "description": summary(type(c)), "parameters": None}
        for name, c in first_of_name.items()
    ]
    if refused is not None:
        skipped = (
            "it needs what its users' environment gives it: pylint stopped at a fatal message "
            f"of the plugin's own ({refused})"
        )
        return LoadedPlugin(ref=ref, tools=[], handlers={}, skipped=skipped)
    return LoadedPlugin(ref=ref, tools=registrations, handlers={})


def _checker_ids(linter: Any) -> set[int]:
    return {id(checker) for checker in linter.get_checkers()}


#: pylint's messages that say it could not do its job with the plugin, not about the code
_BROKEN = frozenset({"bad-plugin-value", "method-check-failed"})


def _fail_on_fatal(messages: list[Any], shown: str, output: str, own: set[str]) -> str | None:
    """Fail on pylint's fatal messages; a fatal message of the plugin's own checkers (``own``:
    their message ids) is its deliberate refusal of this environment (pylint-django's
    ``django-not-available``): what pylint said, for a note."""
    broken = [m for m in messages if m.symbol in _BROKEN or m.msg_id.startswith("F")]
    theirs = [m for m in broken if m.msg_id not in own]
    if not theirs:
        said = "; ".join(f"{m.msg_id} ({m.symbol}): {_plain(m.msg)}" for m in broken)
        return said or None
    first = theirs[0]
    stage: LoadStage = "application" if first.symbol == "bad-plugin-value" else "exercise"
    text = "\n".join(f"{m.msg_id} ({m.symbol}): {_plain(m.msg)}" for m in theirs)
    failure = ApplicationFailed(f"{shown} on a small module: {text}", details=tail(output, 40))
    raise PluginLoadError(stage, failure)


def _plain(message: str) -> str:
    """pylint's message without its request to report the crash to pylint (the crash is the
    plugin's, and the report it names is removed with the temporary directory)."""
    return message.split(" Please open an issue", 1)[0]
