"""The probe: runs inside a sandbox, reads one request, writes one JSON result file.

The request arrives on standard input (so plugin code cannot read the result path or the nonce
from ``sys.argv``); the result goes to the file the request names, written atomically, and
echoes the nonce. Standard output and error belong to the plugins: they may print anything.

Actions:
- ``discover``: the distribution's entry points in the requested groups, plus what else it
  declares and the interpreter's ``sys.path`` (so the host can check isolation);
- ``load``: import one entry point and collect its tools with the requested host. It never
  imports ``importlib.metadata``: plugin loads only pay for what the plugin itself imports;
- ``smoke``: run a playbook against the installed plugins (see ``_smoke``);
- ``imports``: import every module the distribution ships, one by one (see ``_imports``);
  asked to (``early``), it first sends discovery down a pipe it then closes (``send_early``),
  so a check needs no process for discovery alone;
- ``applications``: which installed distribution loads each of some groups, and the host it
  ships for them (see ``_applications``); it reads files, never imports what it scans;
- ``record``: a live model drives the installed plugins' tools (``record --sandbox``; see
  ``_recording``).

Every sandbox process starts here, several per check and in parallel, so each action imports
what it needs when it runs (the hosts for ``load``, ``importlib.metadata`` for ``discover`` and
``imports``): none pays for another's, and none for ``platform`` or ``pathlib``.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time

from sandboxverify.runtime._protocol import PROTOCOL, EntryPointRef
from sandboxverify.runtime._tracebacks import format_traceback

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (~10 ms in every sandbox process)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any


def main(runtime: str | None = None) -> None:
    """Run the request on stdin. ``runtime``: the directory the runtime was imported from, in an
    interpreter started with ``-S`` (see ``open_site``)."""
    request = json.loads(sys.stdin.read())
    # Plugins must not be able to read the request (result path, nonce) from stdin later; what
    # they find instead is an empty stdin, binary buffer included (MkDocs compares against it).
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    if runtime is not None:
        open_site(runtime)
    result: dict[str, Any] = {
        "protocol": PROTOCOL,
        "nonce": request["nonce"],
        "action": request["action"],
        "python": python_version(),
    }
    started = time.perf_counter()
    if request["action"] == "discover":
        result.update(discover(request))
    elif request["action"] == "load":
        result.update(load(request))
    elif request["action"] == "smoke":
        from sandboxverify.runtime._smoke import smoke  # noqa: PLC0415 - only smoke runs pay

        result.update(smoke(request))
    elif request["action"] == "imports":
        if isinstance(request.get("early"), dict):
            send_early(request["early"], result)
        from sandboxverify.runtime._imports import import_all  # noqa: PLC0415

        result.update(import_all(request))
    elif request["action"] == "applications":
        result.update(applications(request))
    elif request["action"] == "record":
        from sandboxverify.runtime._recording import record  # noqa: PLC0415 - imports llm

        result.update(record(request))
    else:
        result.update(
            ok=False, error=_error_record(ValueError(f"unknown action {request['action']!r}"))
        )
    result["seconds"] = round(time.perf_counter() - started, 4)
    write_result(request["result"], result)
    # Plugin code may leave non-daemon threads or atexit hooks behind; the result is written,
    # so end here instead of waiting on them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def discover(request: dict[str, Any]) -> dict[str, Any]:
    # imported here, not at the top: plugin loads must not pay for importlib.metadata
    from sandboxverify.runtime._discovery import (  # noqa: PLC0415
        declared_groups,
        entry_points_of,
        find_distribution,
        installed_distributions,
        others_in_groups,
        record_entries,
    )

    groups = list(request["groups"])
    dist = find_distribution(request["dist"])
    base = {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "sys_path": list(sys.path),
        "flags": {
            "isolated": bool(sys.flags.isolated),
            "no_user_site": bool(sys.flags.no_user_site),
        },
    }
    if dist is None:
        return {
            **base,
            "ok": False,
            "error": {
                "type": "PackageNotFoundError",
                "message": f"distribution {request['dist']!r} is not installed in the sandbox",
                "traceback": "",
            },
        }
    from sandboxverify.runtime._sitedirs import is_pth, path_sources, site_packages  # noqa: PLC0415

    plugins = entry_points_of(dist, groups)
    own = [dist.locate_file(entry) for entry in record_entries(dist) or () if is_pth(entry)]
    return {
        **base,
        "ok": True,
        "error": None,
        "dist": {"name": dist.name, "version": dist.version},
        "plugins": [ref.to_json() for ref in plugins],
        "declared_groups": declared_groups(dist),
        "others": others_in_groups(request["dist"], groups),
        # which .pth file put a directory on sys.path, to explain an isolation leak
        "path_sources": path_sources(site_packages(), own),
        "installed": installed_distributions(),
    }


def send_early(early: dict[str, Any], head: dict[str, Any]) -> None:
    """Discovery, sent before the ``imports`` action imports anything of the package: one JSON
    line (``head`` with the early request's nonce) down the pipe whose descriptor the request
    names, which is then closed, so the package's code never holds it. A discovery that raises
    sends nothing: the host then asks for it in a process of its own, which reports why."""
    import contextlib  # noqa: PLC0415 - importlib.metadata imports it for discovery anyway

    descriptor = int(early["fd"])
    # the host stops reading at its own timeout; it then asks again, as it does when nothing came
    with contextlib.suppress(OSError):
        try:
            found = discover(early)
        except Exception:
            found = None
        if found is not None:
            message = {**head, "nonce": early["nonce"], "action": "discover", **found}
            line = (json.dumps(message, default=repr) + "\n").encode()
            while line:
                line = line[os.write(descriptor, line) :]
    with contextlib.suppress(OSError):
        os.close(descriptor)


def applications(request: dict[str, Any]) -> dict[str, Any]:
    """Which installed distribution loads each group, and the host it ships (see
    ``_applications``: it reads files, never imports what it scans)."""
    from sandboxverify.runtime._applications import applications as find  # noqa: PLC0415

    return find(request)


def load(request: dict[str, Any]) -> dict[str, Any]:
    # only plugin loads pay for the hosts (load_plugin imports the requested one alone)
    from sandboxverify.runtime._registrations import Registry  # noqa: PLC0415
    from sandboxverify.runtime.hosts import (  # noqa: PLC0415
        DEFAULT_TIMEOUT,
        ApplicationFailed,
        HostContext,
        PluginLoadError,
        ServerFailure,
        load_plugin,
    )

    ref = EntryPointRef.from_json(request["plugin"])
    registry = Registry()
    options = request.get("options") or {}
    context = HostContext(
        timeout=float(request.get("timeout") or DEFAULT_TIMEOUT),
        require_callable=options.get("callable"),
        kind=str(options.get("kind") or "tool"),
        hookspecs=options.get("hookspecs"),
    )
    if isinstance(request.get("configure"), dict):
        from sandboxverify.runtime._configured import configure  # noqa: PLC0415 - rarely

        try:
            configure(request["configure"])
        except Exception as exc:  # the package's own apps run as Django sets them up
            record = _error_record(exc)
            # setting Django up imports the apps' models: the package's code failed to import
            record["message"] = f"setting its application up failed: {exc}"
            record["stage"] = "import"
            return {"ok": False, "error": record, "tools": [], "handlers": {}}
    try:
        shipped = options.get("shipped")
        loaded = load_plugin(request["host"], ref, registry, context, shipped=shipped)
    except PluginLoadError as exc:
        record = _error_record(exc.cause)
        record["message"] = exc.message
        record["stage"] = exc.stage
        if isinstance(exc.cause, ApplicationFailed) and exc.cause.details:
            record["traceback"] = exc.cause.details  # the application's own account
        if isinstance(exc.cause, ServerFailure):
            record["code"] = exc.cause.code
            record["details"] = exc.cause.details
        return {"ok": False, "error": record, "tools": [], "handlers": {}}
    finally:
        registry.close()
    result: dict[str, Any] = {
        "ok": True,
        "error": None,
        "tools": loaded.tools,
        "handlers": loaded.handlers,
    }
    if loaded.skipped:
        result["skipped"] = loaded.skipped
    if request["host"] == "llm" and not loaded.tools:  # its hooks registered nothing: say which
        from sandboxverify.runtime.hosts import describe_hooks  # noqa: PLC0415

        result["hooks"] = describe_hooks(ref.name)
    return result


def open_site(runtime: str) -> None:
    """What ``python -S`` left out, now that the runtime is imported from its own directory
    and has read its request: the sandbox's site-packages and their ``.pth`` files (the first
    package code that runs), then the runtime's directory last on ``sys.path``. Nothing
    installed can stand in for the runtime any more: ``sandboxverify`` and everything below
    ``sandboxverify.runtime`` are already the runtime's. An installed sandboxverify (the
    distribution under test may be sandboxverify itself) still provides what the runtime does
    not carry (``sandboxverify.pytest_plugin``): its directories come after the runtime's in
    ``sandboxverify.__path__``."""
    import site  # noqa: PLC0415 - after the runtime, on purpose

    site.main()
    sys.path.append(runtime)
    package = sys.modules["sandboxverify"]
    for entry in sys.path:
        installed = os.path.join(entry, "sandboxverify")
        if entry != runtime and os.path.isdir(installed) and installed not in package.__path__:
            package.__path__.append(installed)


def write_result(path: str, result: dict[str, Any]) -> None:
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(result, default=repr))
    os.replace(partial, path)


def python_version() -> str:
    """What ``platform.python_version()`` returns (``3.12.1``, ``3.13.0rc1``, a development
    build's ``3.14.0a1+``) without importing ``platform``: it is the first word of
    ``sys.version``, where ``platform`` parses it from."""
    return sys.version.split(maxsplit=1)[0]


def _error_record(exc: BaseException) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": format_traceback(exc),
    }
