"""Stage ``probe``: discover the distribution's plugins in the sandbox and load each one.

Discovery and every load are requests to the runtime (see ``_runtime_call``), so only a verified
result counts. Every plugin loads in its own process, in parallel with each other and with
discovery, under its own timeout, so one plugin that hangs or kills the interpreter is reported
by name and cannot take the others down. Discovery is sent by the import run before it imports
anything (:func:`early_discovery`); it has a process of its own only when none came whole.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Callable

from packaging.utils import canonicalize_name as canonical

from sandboxverify._frozen import frozen
from sandboxverify.report import Failure, PluginError, PluginRecord, ToolRecord, exercise_of
from sandboxverify.runtime import EntryPointRef
from sandboxverify.sandbox import RunContext, Sandbox, parallel_map
from sandboxverify.stages._configured import django_apps, django_not_set_up
from sandboxverify.stages._hosts import PlannedPlugin
from sandboxverify.stages._runtime_call import (
    EARLY_RESULTS,
    EarlyResult,
    ProbeError,
    Subject,
    request_runtime,
    runtime_timeout,
    safe_label,
)
from sandboxverify.stages._wheel_imports import module_names

_MAX_PARALLEL_LOADS = 4
#: how much longer than a runtime request may take discovery is waited for from the import run
_EARLY_GRACE = 5.0


@frozen
class Discovery:
    dist: str
    version: str
    plugins: tuple[dict[str, str], ...]
    declared_groups: tuple[str, ...]
    others: tuple[dict[str, str], ...]
    sys_path: tuple[str, ...]
    prefix: str = ""
    base_prefix: str = ""
    isolated: bool = False
    #: directories ``.pth`` files in the sandbox's site-packages add to ``sys.path``:
    #: ``{directory: {"pth": file name, "shipped": by the distribution under test}}``
    path_sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: every distribution in the sandbox: ``{"name", "version"}``
    installed: tuple[dict[str, str], ...] = ()


@frozen
class PluginLoad:
    record: PluginRecord
    tools: tuple[ToolRecord, ...]
    failure: Failure | None
    #: llm hooks the plugin implements (to explain a plugin that registers no tools)
    hooks: tuple[str, ...] = ()
    #: why its application leaves it out here by design: a note, not a failure
    skipped: str | None = None


def early_discovery(dist: str, groups: tuple[str, ...]) -> EarlyResult | None:
    """Discovery for the import run to send before it imports anything (``None`` where early
    results cannot travel): :func:`probe` reads it instead of starting a process of its own."""
    return EarlyResult({"dist": dist, "groups": list(groups)}) if EARLY_RESULTS else None


def discover(
    sandbox: Sandbox,
    dist: str,
    groups: tuple[str, ...],
    ctx: RunContext,
    early: EarlyResult | None = None,
) -> Discovery:
    """The distribution's entry points as its installed metadata says, and the sandbox's
    ``sys.path``: sent by the import run (``early``), or, when none came whole, asked for."""
    result = early.receive(ctx.plugin_timeout + _EARLY_GRACE) if early is not None else None
    if result is None:
        request = {"action": "discover", "dist": dist, "groups": list(groups)}
        result = request_runtime(
            sandbox, request, label="discover", ctx=ctx, subject=Subject("plugin discovery")
        )
    if not result.get("ok"):
        error = result.get("error") or {}
        raise ProbeError(
            Failure(
                "probe_crashed",
                f"discovery failed: {error.get('message', 'no reason given')}",
                python=sandbox.interpreter.version,
                hint="the installed distribution is not what was built; re-run with -v",
            )
        )
    dist_info = result["dist"]
    return Discovery(
        dist=str(dist_info["name"]),
        version=str(dist_info["version"]),
        plugins=tuple(result["plugins"]),
        declared_groups=tuple(result["declared_groups"]),
        others=tuple(result["others"]),
        sys_path=tuple(result["sys_path"]),
        prefix=str(result.get("prefix", "")),
        base_prefix=str(result.get("base_prefix", "")),
        isolated=bool((result.get("flags") or {}).get("isolated")),
        path_sources=dict(result.get("path_sources") or {}),
        installed=tuple(
            {"name": str(d["name"]), "version": str(d["version"])}
            for d in result.get("installed") or ()
        ),
    )


@frozen
class ProbeOutcome:
    discovery: Discovery | None
    loads: tuple[PluginLoad, ...]
    failures: tuple[Failure, ...]


def probe(
    sandbox: Sandbox,
    *,
    dist: str,
    groups: tuple[str, ...],
    planned: Sequence[EntryPointRef],
    to_load: Sequence[PlannedPlugin],
    ctx: RunContext,
    wheel: Path | None = None,
    early: EarlyResult | None = None,
) -> ProbeOutcome:
    """Discovery and every plugin load, all at once, each plugin with its own host; discovery
    as the import run sends it (``early``, from :func:`early_discovery`), if it does.

    The wheel's entry_points.txt says which plugins to load, so loads need not wait for
    discovery; discovery still runs in the sandbox and must agree with the wheel (``planned``),
    so the installed metadata stays the authority. ``to_load`` is usually the planned plugins;
    an MCP server command given on the command line replaces them.
    """
    tasks: list[Callable[[], Discovery | PluginLoad]] = [
        lambda: discover(sandbox, dist, groups, ctx, early)
    ]
    tasks += [
        functools.partial(load, sandbox, plugin, ctx, index) for index, plugin in enumerate(to_load)
    ]

    def attempt(task: Callable[[], Discovery | PluginLoad]) -> Discovery | PluginLoad | Failure:
        try:
            return task()
        except ProbeError as exc:
            return exc.failure

    results = parallel_map(attempt, tasks, _MAX_PARALLEL_LOADS + 1)
    found, loads = results[0], tuple(r for r in results[1:] if isinstance(r, PluginLoad))
    if wheel is not None:
        loads = _in_configured_django(loads, to_load, sandbox, ctx, wheel)
    if isinstance(found, Failure):
        return ProbeOutcome(None, loads, (found,))
    assert isinstance(found, Discovery)
    leaks = isolation_leaks(found, ctx.runtime_copy)
    if leaks:
        return ProbeOutcome(found, loads, (_leak_failure(found, leaks, sandbox),))
    loads = tuple(_application_version(load, found.installed) for load in loads)
    installed = [EntryPointRef.from_json(plugin) for plugin in found.plugins]
    if sorted(installed, key=repr) != sorted(planned, key=repr):
        mismatch = Failure(
            "probe_crashed",
            "the installed distribution declares entry points "
            f"{_names(installed)} in {', '.join(groups)}, but the wheel declares {_names(planned)}",
            python=sandbox.interpreter.version,
            hint="something rewrote the installed metadata; re-run with -v and --keep to inspect",
        )
        return ProbeOutcome(found, loads, (mismatch,))
    return ProbeOutcome(found, loads, ())


def _in_configured_django(
    loads: tuple[PluginLoad, ...],
    to_load: Sequence[PlannedPlugin],
    sandbox: Sandbox,
    ctx: RunContext,
    wheel: Path,
) -> tuple[PluginLoad, ...]:
    """``loads``, each that failed because Django was not set up loaded again once it is, with
    the package's apps installed: its users load it in their configured project
    (django-celery-beat's scheduler in celery beat, an IPython extension in ``shell_plus``)."""
    waiting = [
        index
        for index, done in enumerate(loads)
        if done.record.error is not None
        and django_not_set_up(done.record.error.type, done.record.error.message)
    ]
    if not waiting:
        return loads
    apps = django_apps(module_names(wheel))
    setup = {"django": apps}
    again = parallel_map(
        lambda index: load(sandbox, to_load[index], ctx, index, configure=setup),
        waiting,
        _MAX_PARALLEL_LOADS,
    )
    why = (
        f"loaded once Django was set up with the package's apps ({', '.join(apps)}), as its "
        "users' projects set it up"
        if apps
        else "loaded once Django was set up, as its users' projects set it up"
    )
    redone = list(loads)
    for index, done in zip(waiting, again):
        said = done.record.host_reason
        reason = f"{said}; {why}" if said else why
        redone[index] = replace(done, record=replace(done.record, host_reason=reason))
    return tuple(redone)


def _application_version(load: PluginLoad, installed: Sequence[dict[str, str]]) -> PluginLoad:
    """The plugin's application with the version the sandbox holds, as discovery saw it."""
    application = load.record.application
    if application is None or application.name is None:
        return load
    wanted = canonical(application.name)
    version = next((d["version"] for d in installed if canonical(d["name"]) == wanted), None)
    if version is None or version == application.version:
        return load
    record = replace(load.record, application=replace(application, version=version))
    return replace(load, record=record)


def isolation_leaks(found: Discovery, runtime: Path) -> list[str]:
    """What on the sandbox's ``sys.path`` is neither the venv, the interpreter's own standard
    library nor our runtime: anything else would let plugin code import what the user's users
    will not have."""
    prefix, base = Path(found.prefix), Path(found.base_prefix)
    leaks = [] if found.isolated else ["the caller's environment (not running with -I)"]
    for entry in found.sys_path:
        path = Path(entry)
        if not entry or not path.is_absolute():
            leaks.append(f"the working directory ({entry!r})")
            continue
        in_venv = _within(path, prefix)
        third_party = any(part in ("site-packages", "dist-packages") for part in path.parts)
        # installed packages only from the venv; anything else only from the stdlib or us
        allowed = in_venv or (not third_party and (_within(path, base) or _within(path, runtime)))
        if not allowed:
            leaks.append(entry)
    return leaks


def _leak_failure(found: Discovery, leaks: list[str], sandbox: Sandbox) -> Failure:
    """Who opened the hole: a ``.pth`` file the distribution ships is the project's own bug."""
    sources = {entry: _pth_source(found, entry) for entry in leaks}
    shipped = [entry for entry in leaks if sources[entry].get("shipped")]
    others = [entry for entry in leaks if entry not in shipped]
    if shipped:
        return Failure(
            "venv_failed",
            "the installed distribution puts directories outside the sandbox on sys.path: "
            + "; ".join(f"{entry} (from its {sources[entry]['pth']})" for entry in shipped)
            + "; plugin code could import what its users will not have"
            + (f" (also importable: {', '.join(others)})" if others else ""),
            python=sandbox.interpreter.version,
            hint="a wheel must not ship a .pth file that points outside its own install "
            "location (e.g. at a source tree): remove it from the wheel",
        )
    described = [
        entry + (f" (from {sources[entry]['pth']})" if sources[entry] else "") for entry in leaks
    ]
    return Failure(
        "venv_failed",
        "the sandbox is not isolated: plugin code could import from " + ", ".join(described),
        python=sandbox.interpreter.version,
        hint="a .pth file or sitecustomize of the base interpreter adds paths to every "
        "environment made from it; use a clean interpreter for --python",
    )


def _pth_source(found: Discovery, entry: str) -> dict[str, Any]:
    if not entry or not os.path.isabs(entry):
        return {}
    source = found.path_sources.get(os.path.realpath(entry))
    return source if isinstance(source, dict) else {}


def _within(path: Path, root: Path) -> bool:
    return bool(root.parts) and (path == root or root in path.parents)


def _names(refs: Sequence[EntryPointRef]) -> str:
    return "[" + ", ".join(f"{ref.name} = {ref.value}" for ref in refs) + "]"


def load(
    sandbox: Sandbox,
    planned: PlannedPlugin,
    ctx: RunContext,
    index: int = 0,
    configure: Mapping[str, Any] | None = None,
) -> PluginLoad:
    """One plugin loaded by its host; ``configure``: the application set up first
    (``runtime._configured``)."""
    plugin = planned.ref.to_json()
    name = plugin["name"]
    # the runtime bounds its own waits (an MCP server that never answers) a little earlier, so
    # its report, with the server's stderr, arrives before this process is killed
    request: dict[str, Any] = {
        "action": "load",
        "host": planned.host,
        "plugin": plugin,
        "timeout": runtime_timeout(ctx.plugin_timeout),
        "options": planned.load_options(),
    }
    if configure is not None:
        request["configure"] = dict(configure)
    try:
        result = request_runtime(
            sandbox,
            request,
            label=f"load-{index}-{safe_label(name)}",
            ctx=ctx,
            subject=Subject(f"plugin {name!r}", name),
        )
    except ProbeError as exc:
        crash = PluginError(
            type=exc.failure.code, message=exc.failure.message, traceback="", stage="probe"
        )
        return PluginLoad(_record(planned, ok=False, error=crash), (), exc.failure)
    error_data = result.get("error")
    if error_data and error_data.get("code") in ("probe_crashed", "timeout"):
        return _server_failure(sandbox, planned, error_data, ctx.plugin_timeout)
    error: PluginError | None = None
    if error_data:
        error = PluginError(
            type=str(error_data.get("type", "Error")),
            message=str(error_data.get("message", "")),
            traceback=str(error_data.get("traceback", "")),
            stage=str(error_data.get("stage", "import")),
        )
    record = _record(
        planned,
        ok=bool(result.get("ok")) and error is None,
        error=error,
        seconds=float(result.get("seconds", 0.0)),
        handlers=dict(result.get("handlers") or {}),
    )
    hooks = tuple(result.get("hooks") or ())
    skipped = str(result["skipped"]) if result.get("skipped") else None
    return PluginLoad(record, _tools(result, name, record.group), None, hooks, skipped)


def _tools(result: dict[str, Any], plugin: str, group: str) -> tuple[ToolRecord, ...]:
    """What a plugin registered, as the runtime said."""
    return tuple(
        ToolRecord(
            name=str(tool["name"]),
            plugin=plugin,
            description=tool.get("description"),
            parameters=tool.get("parameters"),
            kind=str(tool.get("kind") or "tool"),
            exercise=exercise_of(tool.get("exercise")),
            exercise_note=tool.get("exercise_note"),
            group=group,
        )
        for tool in result.get("tools") or []
    )


def _record(
    planned: PlannedPlugin,
    *,
    ok: bool,
    error: PluginError | None,
    seconds: float = 0.0,
    handlers: dict[str, int] | None = None,
) -> PluginRecord:
    """The report's record of one planned plugin's load."""
    ref = planned.ref
    return PluginRecord(
        name=ref.name,
        group=ref.group,
        value=ref.value,
        ok=ok,
        error=error,
        seconds=seconds,
        handlers=handlers or {},
        host=planned.host,
        host_reason=planned.reason,
        application=planned.found,
    )


def _server_failure(
    sandbox: Sandbox, planned: PlannedPlugin, error: dict[str, Any], timeout: float
) -> PluginLoad:
    """A server the runtime started died, spoke no protocol, or never answered (or a step of
    an application it ran with the plugin outlasted its time)."""
    ref = planned.ref
    name, code = ref.name, str(error["code"])
    message = str(error.get("message", ""))
    if code == "timeout":  # the runtime stops a little early to collect the server's output
        message += f" (--timeout {timeout:g}s, less a margin to collect its output)"
    crash = PluginError(type=code, message=message, traceback="", stage="server")
    record = _record(planned, ok=False, error=crash)
    if code != "timeout":
        hint = "run the server command by hand in a fresh environment; its stderr is below"
    elif planned.host == "mcp":
        hint = (
            "the server must answer initialize and tools/list promptly; if it is only slow to "
            "start, raise --timeout"
        )
    else:  # a step of the application the runtime ran with the plugin
        hint = (
            "the plugin must not keep its application waiting (a hook or a fixture that "
            "blocks, or waits for what never answers); if it is only slow, raise --timeout"
        )
    failure = Failure(
        "timeout" if code == "timeout" else "probe_crashed",
        message,
        python=sandbox.interpreter.version,
        plugin=name,
        hint=hint,
        details=str(error.get("details") or "") or None,
    )
    return PluginLoad(record, (), failure)
