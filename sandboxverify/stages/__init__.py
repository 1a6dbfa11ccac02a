"""What runs against an installed sandbox: the probe (discovery and plugin loads), the
expectations it is judged by, every module imported, console scripts, the smoke playbook.

Imports build, sandbox and report; talks to the runtime only through its JSON protocol.
"""

from __future__ import annotations

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
from sandboxverify.stages._excuses import excuse, left_out_by_application
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
    failed_plugin_modules,
    judge_imports,
    run_imports,
    unexplained_failures,
)
from sandboxverify.stages._live_recording import failure_error, record_live_session
from sandboxverify.stages._probe import ProbeOutcome, probe
from sandboxverify.stages._runtime_call import ProbeError
from sandboxverify.stages._scripts import ScriptsOutcome, check_scripts
from sandboxverify.stages._smoke import Playbook, load_smoke_playbook, run_smoke
from sandboxverify.stages._test_support import TEST_SUPPORT

__all__ = [
    "TEST_SUPPORT",
    "ApplicationNeed",
    "Confirmed",
    "Dependent",
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
    "evaluate",
    "excuse",
    "failed_plugin_modules",
    "failure_error",
    "judge_imports",
    "left_out_by_application",
    "load_smoke_playbook",
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
