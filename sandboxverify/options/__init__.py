"""What a check is asked to do: every command's options declared once (``_table``), the kinds of
value they take and how each is checked (``_kinds``), ``[tool.sandboxverify]`` read by the same
rules (``_pyproject``) with its JSON Schema (``_schema``), and :class:`CheckOptions`.

Below the command line and the pipeline, above the stages: both read the configuration alike.
"""

from __future__ import annotations

from sandboxverify.options._check_options import CheckOptions, HostName, validate
from sandboxverify.options._kinds import MAX_TIMEOUT, Problem, Shape, split_commas
from sandboxverify.options._option import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_MAX_STEPS,
    DEFAULT_TIMEOUT,
    CommandName,
    Option,
)
from sandboxverify.options._pyproject import (
    config_options,
    configured,
    find_pyproject,
    load_config,
    load_user_config,
    report_values,
)
from sandboxverify.options._survey_options import SurveyOptions, parse_shard
from sandboxverify.options._table import OPTIONS, options_of

__all__ = [
    "DEFAULT_INSTALL_TIMEOUT",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "OPTIONS",
    "CheckOptions",
    "CommandName",
    "HostName",
    "Option",
    "Problem",
    "Shape",
    "SurveyOptions",
    "config_options",
    "configured",
    "find_pyproject",
    "load_config",
    "load_user_config",
    "options_of",
    "parse_shard",
    "report_values",
    "split_commas",
    "validate",
]
