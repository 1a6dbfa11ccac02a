"""The verdict: report v1 and the renderings that need nothing but a report (JUnit XML, the
Markdown step summary), and the one-line diagnosis of a failed tool's output.

The bottom of the host side: imports nothing else of sandboxverify.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandboxverify.report._diagnostics import reached_for_network, summarize
from sandboxverify.report._excused import ExcusedModule, ExtraRecord
from sandboxverify.report._inert import inert, inert_lines
from sandboxverify.report._model import (
    ApplicationRecord,
    ArtifactRecord,
    ErrorCode,
    Exercise,
    Failure,
    FailureCode,
    FoundBy,
    PluginError,
    PluginRecord,
    Report,
    ReportError,
    ReportWarning,
    Run,
    Stage,
    StageName,
    StageStatus,
    ToolRecord,
    exercise_of,
    plugins_registering,
    registrations,
    run_of,
    stopped_report,
    wheel_origin,
)
from sandboxverify.report._records import (
    AllowedFailure,
    ImportFailure,
    ImportsRecord,
    OutsideModule,
    ScriptRecord,
    SkippedModule,
    SmokeCall,
    SmokeError,
    SmokeRecord,
)
from sandboxverify.report._redact import SECRET_NAME, Redactor, redact
from sandboxverify.runtime import imported_on_first_use

if TYPE_CHECKING:
    from sandboxverify.report._junit import junit_xml
    from sandboxverify.report._load import ReportFormatError, report_from_json
    from sandboxverify.report._merge import (
        Merged,
        Source,
        distributions,
        merge,
        merged_junit,
        merged_summary,
        problems,
    )
    from sandboxverify.report._summary import step_summary
    from sandboxverify.report._survey import (
        CLASSES,
        SURVEY_SCHEMA,
        Application,
        PluginArtifact,
        PluginList,
        PluginResult,
        SideFailure,
        SideResult,
        Survey,
        SurveyClass,
        SurveyHeader,
        classify,
    )
    from sandboxverify.report._survey_html import survey_html
    from sandboxverify.report._survey_load import (
        ResultsFile,
        SurveyFormatError,
        is_survey_results,
        merge_results,
        read_results,
    )
    from sandboxverify.report._survey_summary import survey_summary

__all__ = [
    "CLASSES",
    "SECRET_NAME",
    "SURVEY_SCHEMA",
    "AllowedFailure",
    "Application",
    "ApplicationRecord",
    "ArtifactRecord",
    "ErrorCode",
    "ExcusedModule",
    "Exercise",
    "ExtraRecord",
    "Failure",
    "FailureCode",
    "FoundBy",
    "ImportFailure",
    "ImportsRecord",
    "Merged",
    "OutsideModule",
    "PluginArtifact",
    "PluginError",
    "PluginList",
    "PluginRecord",
    "PluginResult",
    "Redactor",
    "Report",
    "ReportError",
    "ReportFormatError",
    "ReportWarning",
    "ResultsFile",
    "Run",
    "ScriptRecord",
    "SideFailure",
    "SideResult",
    "SkippedModule",
    "SmokeCall",
    "SmokeError",
    "SmokeRecord",
    "Source",
    "Stage",
    "StageName",
    "StageStatus",
    "Survey",
    "SurveyClass",
    "SurveyFormatError",
    "SurveyHeader",
    "ToolRecord",
    "classify",
    "distributions",
    "exercise_of",
    "inert",
    "inert_lines",
    "is_survey_results",
    "junit_xml",
    "merge",
    "merge_results",
    "merged_junit",
    "merged_summary",
    "plugins_registering",
    "problems",
    "reached_for_network",
    "read_results",
    "redact",
    "registrations",
    "report_from_json",
    "run_of",
    "step_summary",
    "stopped_report",
    "summarize",
    "survey_html",
    "survey_summary",
    "wheel_origin",
]

#: the writers of one surface each, and reading reports back: imported when a check or a merge
#: is asked for them, not by every check
_IMPORTED_ON_FIRST_USE = {
    "junit_xml": "_junit",
    "ReportFormatError": "_load",
    "report_from_json": "_load",
    "Merged": "_merge",
    "Source": "_merge",
    "distributions": "_merge",
    "merge": "_merge",
    "merged_junit": "_merge",
    "merged_summary": "_merge",
    "problems": "_merge",
    "step_summary": "_summary",
    "CLASSES": "_survey",
    "SURVEY_SCHEMA": "_survey",
    "Application": "_survey",
    "PluginArtifact": "_survey",
    "PluginList": "_survey",
    "PluginResult": "_survey",
    "SideFailure": "_survey",
    "SideResult": "_survey",
    "Survey": "_survey",
    "SurveyClass": "_survey",
    "SurveyHeader": "_survey",
    "classify": "_survey",
    "ResultsFile": "_survey_load",
    "SurveyFormatError": "_survey_load",
    "is_survey_results": "_survey_load",
    "merge_results": "_survey_load",
    "read_results": "_survey_load",
    "survey_html": "_survey_html",
    "survey_summary": "_survey_summary",
}


__getattr__ = imported_on_first_use(globals(), _IMPORTED_ON_FIRST_USE)
