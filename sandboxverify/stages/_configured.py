"""Modules that import only inside their configured application: a Django app's.

Django imports an app's models, admin and views after ``django.setup()``, with settings and
the app in ``INSTALLED_APPS``; imported alone they raise ``AppRegistryNotReady: Apps aren't
loaded yet`` or ``ImproperlyConfigured: ... settings are not configured``. Such modules are
imported again, in the plain sandbox, once Django is set up with the package's apps
(``runtime._configured``), and judged by that: excused if they import there, else failed for
what stopped them there (a missing package is then judged as any).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sandboxverify.artifacts import Artifact
from sandboxverify.report import ExcusedModule, Failure, ImportFailure
from sandboxverify.sandbox import RunContext, Sandbox
from sandboxverify.stages._imports import Settled, run_imports
from sandboxverify.stages._test_support import is_test_module

#: what Django raises for a module imported before it is set up
_NOT_SET_UP = re.compile(
    r"Apps aren't loaded yet|settings are not configured|DJANGO_SETTINGS_MODULE"
)
_DJANGO_ERRORS = frozenset({"AppRegistryNotReady", "ImproperlyConfigured"})


def django_apps(modules: Sequence[str]) -> list[str]:
    """The wheel's Django apps, as Django's conventions make them: its packages with an
    ``apps`` module (the app's ``AppConfig``), or with ``models`` beside a ``migrations``
    package; but test apps (``testapp``, a ``tests`` package's) and a project's own apps (a
    project package above them, :func:`_project`: they import only from its checkout). A
    ``models`` package, or ``models`` that only a module of forms or a backend keeps, is not
    an app of its own."""
    names = set(modules)
    packages = {module.rpartition(".")[0] for module in modules if "." in module}
    apps: set[str] = set()
    for module in modules:
        package, _, leaf = module.rpartition(".")
        if not package or not (
            leaf == "apps" or (leaf == "models" and f"{package}.migrations" in names)
        ):
            continue
        parts = package.split(".")
        in_project = any(_project(".".join(parts[:n]), names) for n in range(1, len(parts) + 1))
        if not in_project and not is_test_module(package, packages):
            apps.add(package)
    return sorted(apps)


def _project(package: str, names: Collection[str]) -> bool:
    """A Django project's package, as ``startproject`` makes it: its ``settings`` beside its
    ``wsgi`` or ``asgi`` module (an app's own ``settings``, as DRF's, is its defaults)."""
    return f"{package}.settings" in names and (
        f"{package}.wsgi" in names or f"{package}.asgi" in names
    )


def in_configured_application(
    failed: Sequence[Mapping[str, Any]],
    *,
    modules: Sequence[str],
    sandbox: Sandbox,
    wheel: Artifact,
    ctx: RunContext,
) -> tuple[list[Mapping[str, Any]], Settled]:
    """``failed`` without the modules that raised for want of Django's setup, and how those
    did once Django was set up with the package's apps (if it has any: a library for Django
    projects, hypothesis's ``extra.django``, has none): excused, or failed for what stopped
    them there."""
    waiting = [str(item["module"]) for item in failed if not_set_up(item)]
    apps = django_apps(modules)
    nothing = Settled((), {}, (), ())
    if not waiting:
        return list(failed), nothing
    ran = run_imports(
        sandbox, wheel=wheel, skip=(), exclude={}, ctx=ctx, only=waiting, configure={"django": apps}
    )
    results = {str(item.get("module")): item for item in ran.result.get("results") or ()}
    if ran.failures or not results:
        return list(failed), nothing
    setup = (
        f"once Django is set up with the package's apps installed ({', '.join(apps)})"
        if apps
        else "once Django is set up (a library for Django projects, with no app of its own)"
    )
    excused: list[ExcusedModule] = []
    still: dict[str, ImportFailure] = {}
    failures: list[Failure] = []
    python = sandbox.interpreter.version
    for item in failed:
        module, again = str(item["module"]), results.get(str(item["module"]))
        if module not in waiting or again is None:
            continue
        if again.get("ok") is True:
            alone = (item.get("error") or {}).get("type")
            excused.append(
                ExcusedModule(
                    module,
                    "configured",
                    f"imports {setup}, as Django imports it; alone it raises {alone}",
                )
            )
            continue
        error = again.get("error") if isinstance(again.get("error"), Mapping) else {}
        kind, message = str(error.get("type")), str(error.get("message") or "")
        first = message.splitlines()[0] if message else ""
        still[module] = ImportFailure(module, kind, message)
        failures.append(
            Failure(
                "import_failed",
                f"module {module!r} failed to import {setup}: {kind}: {first}",
                python=python,
                hint=f"{module} raises inside a configured Django too: fix it (traceback in "
                "details); Django raises the same when it loads the app",
                details=str(error.get("traceback") or "") or None,
                module=module,
            )
        )
    left = [
        item for item in failed if str(item["module"]) not in {*still, *(e.module for e in excused)}
    ]
    return left, Settled(tuple(excused), still, tuple(failures), ())


def not_set_up(item: Mapping[str, Any]) -> bool:
    """A module's import result: it failed for want of Django's setup."""
    # an entry point's module too: its users load the plugin in their set-up project, as the
    # probe loads it once Django's not being set up stopped it
    error = item.get("error")
    if not isinstance(error, Mapping):
        return False
    return django_not_set_up(str(error.get("type")), str(error.get("message")))


def django_not_set_up(kind: str, message: str) -> bool:
    """What Django raises for code that runs before it is set up."""
    return kind in _DJANGO_ERRORS and _NOT_SET_UP.search(message) is not None
