"""Console scripts that need an extra: judged with it installed, as their users run them.

httpx's ``httpx`` command needs ``httpx[cli]`` and says so when it is missing ("Make sure you've
installed everything with: pip install 'httpx[cli]'"); hypothesis's ``hypothesis`` asks for
``hypothesis[cli]``; others stop at ``No module named 'click'``, a package only an extra
declares. Its ``--help`` runs again in a sandbox of its own with that extra installed, one per
extra, and the script fails only if it fails there too (or the extra does not install).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.artifacts import Artifact
from sandboxverify.report import Failure, ScriptRecord
from sandboxverify.runtime import EntryPointRef
from sandboxverify.sandbox import RunContext, Sandbox, parallel_map
from sandboxverify.stages._extras import (
    SANDBOXES_AT_ONCE,
    Extras,
    development_extra,
    extra_requirement,
    fresh_paths,
    with_extra_installed,
)
from sandboxverify.stages._import_causes import NO_MODULE_NAMED

#: ``pip install 'httpx[cli]'``, ``hypothesis[cli]``: a distribution and its extras, as
#: users write them
_WITH_EXTRAS = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\[([A-Za-z0-9._, -]+)\]")


def extra_asked_for(output: str, extras: Extras) -> str | None:
    """The users' extra a failed ``--help`` asks for: named with the distribution
    (``pip install 'httpx[cli]'``), or declaring the package its import stopped at; ``None``
    when it names none (its failure is its own)."""
    for dist, names in _WITH_EXTRAS.findall(output):
        if canonicalize_name(dist) != extras.dist:
            continue
        for name in names.split(","):
            extra = str(canonicalize_name(name.strip()))
            if extra in extras.requirements and not development_extra(extra):
                return extra
    for module in reversed(NO_MODULE_NAMED.findall(output)):
        found = extras.for_users(module)
        if found:
            return found[0]
    return None


#: one script's ``--help`` in a sandbox: its record and failure (``_scripts._run_help``)
HelpRun = Callable[[Sandbox, EntryPointRef, ScriptRecord], tuple[ScriptRecord, Failure | None]]


@frozen
class AskedFor:
    """A script whose ``--help`` failed in the plain install, and the extra it asks for."""

    ref: EntryPointRef
    record: ScriptRecord
    failure: Failure
    extra: str


def with_extras(
    asked: Sequence[AskedFor],
    *,
    sandbox: Sandbox,
    wheel: Artifact,
    also: Sequence[str],
    ctx: RunContext,
    run_help: HelpRun,
) -> dict[str, tuple[ScriptRecord, Failure | None]]:
    """Each script of ``asked`` by name: its ``--help`` run again in a fresh sandbox with its
    extra installed beside ``sandbox``, one per extra; its record says the extra. A script
    that fails there keeps its failure, which now says the extra did not help; one whose extra
    does not install fails for that."""
    grouped: dict[str, list[AskedFor]] = {}
    for item in asked:
        grouped.setdefault(item.extra, []).append(item)

    def one(extra: str) -> dict[str, tuple[ScriptRecord, Failure | None]]:
        paths = fresh_paths(sandbox, f"script-extra-{extra}")
        requirement = extra_requirement(wheel, extra)
        made, cause, _ = with_extra_installed(
            extra, interpreter=sandbox.interpreter, paths=paths, wheel=wheel, also=also, ctx=ctx
        )
        judged: dict[str, tuple[ScriptRecord, Failure | None]] = {}
        for item in grouped[extra]:
            if made is None:
                judged[item.ref.name] = (
                    item.record,
                    replace(
                        item.failure,
                        message=f"{item.failure.message} (it asks for the extra {extra!r}, "
                        f"and {requirement} does not install: {cause})",
                    ),
                )
                continue
            record, failure = run_help(made, item.ref, item.record)
            record = replace(record, extra=extra)
            if failure is not None:
                failure = replace(
                    failure,
                    message=f"{failure.message} (with the extra {extra!r} it asks for "
                    f"installed: {requirement})",
                )
            judged[item.ref.name] = (record, failure)
        return judged

    found: dict[str, tuple[ScriptRecord, Failure | None]] = {}
    for judged in parallel_map(one, list(grouped), SANDBOXES_AT_ONCE):
        found.update(judged)
    return found
