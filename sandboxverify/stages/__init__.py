"""What runs against an installed sandbox: the probe (discovery and plugin loads), the
expectations it is judged by, every module imported, console scripts, the smoke playbook.

Imports build, sandbox and report; talks to the runtime only through its JSON protocol.

Its names are imported when first used (``__getattr__``): a check imports the stages it runs,
and those after the build on a thread of their own while the build runs (``_headstart``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandboxverify.runtime import imported_on_first_use

if TYPE_CHECKING:
    from sandboxverify.stages._application_needs import ApplicationNeed, application_needs
    from sandboxverify.stages._applications import Finder, Found, ShippedHost
    from sandboxverify.stages._dependents import (
        Confirmed,
        Dependent,
        as_installed,
        confirm_dependent,
        dependent_notes,
        refused_notes,
        undeclared_missing,
    )
    from sandboxverify.stages._excuses import excuse
    from sandboxverify.stages._expectations import Expectations, Judgement, evaluate
    from sandboxverify.stages._hosts import (
        PlannedPlugin,
        PluginPlan,
        default_groups,
        no_smoke_driver,
        plan_plugins,
        smoke_driver,
        with_applications,
    )
    from sandboxverify.stages._imports import (
        ImportRun,
        Settled,
        judge_imports,
        run_imports,
        unexplained_failures,
    )
    from sandboxverify.stages._live_recording import failure_error, record_live_session
    from sandboxverify.stages._named_modules import named_extensions
    from sandboxverify.stages._plugin_extras import loaded_with_extras
    from sandboxverify.stages._plugin_modules import (
        failed_plugin_modules,
        left_out_by_application,
        loaded_with_extra,
    )
    from sandboxverify.stages._probe import ProbeOutcome, early_discovery, probe
    from sandboxverify.stages._runtime_call import EarlyResult, ProbeError
    from sandboxverify.stages._scripts import ScriptsOutcome, check_scripts
    from sandboxverify.stages._smoke import Playbook, load_smoke_playbook, run_smoke
    from sandboxverify.stages._test_support import TEST_SUPPORT

__all__ = [
    "TEST_SUPPORT",
    "ApplicationNeed",
    "Confirmed",
    "Dependent",
    "EarlyResult",
    "Expectations",
    "Finder",
    "Found",
    "ImportRun",
    "Judgement",
    "PlannedPlugin",
    "Playbook",
    "PluginPlan",
    "ProbeError",
    "ProbeOutcome",
    "ScriptsOutcome",
    "Settled",
    "ShippedHost",
    "application_needs",
    "as_installed",
    "check_scripts",
    "confirm_dependent",
    "default_groups",
    "dependent_notes",
    "early_discovery",
    "evaluate",
    "excuse",
    "failed_plugin_modules",
    "failure_error",
    "judge_imports",
    "left_out_by_application",
    "load_smoke_playbook",
    "loaded_with_extra",
    "loaded_with_extras",
    "named_extensions",
    "no_smoke_driver",
    "plan_plugins",
    "probe",
    "record_live_session",
    "refused_notes",
    "run_imports",
    "run_smoke",
    "smoke_driver",
    "undeclared_missing",
    "unexplained_failures",
    "with_applications",
]

_LAZY = {
    "ApplicationNeed": "sandboxverify.stages._application_needs",
    "Confirmed": "sandboxverify.stages._dependents",
    "Dependent": "sandboxverify.stages._dependents",
    "Expectations": "sandboxverify.stages._expectations",
    "Finder": "sandboxverify.stages._applications",
    "Found": "sandboxverify.stages._applications",
    "ImportRun": "sandboxverify.stages._imports",
    "Judgement": "sandboxverify.stages._expectations",
    "PlannedPlugin": "sandboxverify.stages._hosts",
    "Playbook": "sandboxverify.stages._smoke",
    "PluginPlan": "sandboxverify.stages._hosts",
    "ProbeError": "sandboxverify.stages._runtime_call",
    "EarlyResult": "sandboxverify.stages._runtime_call",
    "ProbeOutcome": "sandboxverify.stages._probe",
    "ScriptsOutcome": "sandboxverify.stages._scripts",
    "Settled": "sandboxverify.stages._imports",
    "ShippedHost": "sandboxverify.stages._applications",
    "TEST_SUPPORT": "sandboxverify.stages._test_support",
    "application_needs": "sandboxverify.stages._application_needs",
    "as_installed": "sandboxverify.stages._dependents",
    "check_scripts": "sandboxverify.stages._scripts",
    "confirm_dependent": "sandboxverify.stages._dependents",
    "default_groups": "sandboxverify.stages._hosts",
    "dependent_notes": "sandboxverify.stages._dependents",
    "early_discovery": "sandboxverify.stages._probe",
    "evaluate": "sandboxverify.stages._expectations",
    "excuse": "sandboxverify.stages._excuses",
    "failed_plugin_modules": "sandboxverify.stages._plugin_modules",
    "failure_error": "sandboxverify.stages._live_recording",
    "judge_imports": "sandboxverify.stages._imports",
    "left_out_by_application": "sandboxverify.stages._plugin_modules",
    "loaded_with_extra": "sandboxverify.stages._plugin_modules",
    "load_smoke_playbook": "sandboxverify.stages._smoke",
    "loaded_with_extras": "sandboxverify.stages._plugin_extras",
    "named_extensions": "sandboxverify.stages._named_modules",
    "no_smoke_driver": "sandboxverify.stages._hosts",
    "plan_plugins": "sandboxverify.stages._hosts",
    "probe": "sandboxverify.stages._probe",
    "record_live_session": "sandboxverify.stages._live_recording",
    "refused_notes": "sandboxverify.stages._dependents",
    "run_imports": "sandboxverify.stages._imports",
    "run_smoke": "sandboxverify.stages._smoke",
    "smoke_driver": "sandboxverify.stages._hosts",
    "undeclared_missing": "sandboxverify.stages._dependents",
    "unexplained_failures": "sandboxverify.stages._imports",
    "with_applications": "sandboxverify.stages._hosts",
}


__getattr__ = imported_on_first_use(globals(), _LAZY)
