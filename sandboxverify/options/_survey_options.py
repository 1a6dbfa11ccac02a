"""The options table's part for ``survey`` (each plugin of an application checked against its
baseline and its candidate release), and :class:`SurveyOptions`, what a survey is asked to do."""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.options._kinds import FilePath, Flag, Kind, Problem, ReportFile, Whole
from sandboxverify.options._option import CommandName, Option
from sandboxverify.sandbox import InstallerChoice, IsolationChoice

SURVEY: tuple[CommandName, ...] = ("survey",)
#: where a survey's results stream to unless told
DEFAULT_RESULTS = "survey.jsonl"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(Kind):
    """``K/N``: the K-th of N shares of the plugins (1 <= K <= N)."""

    expected: ClassVar[str] = "K/N, e.g. 2/4"

    def problem(self, flag: str, value: Any) -> Problem | None:
        if parse_shard(value) is None:
            return Problem(
                f"{flag} {value!r} is not K/N with 1 <= K <= N",
                f"e.g. {flag} 1/4 for the first of four shards (a CI matrix's job index + 1)",
            )
        return None


def parse_shard(value: object) -> tuple[int, int] | None:
    """``(K, N)`` from ``K/N``, or ``None`` when it is not one."""
    match = _SHARD.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    index, count = int(match[1]), int(match[2])
    return (index, count) if 1 <= index <= count else None


SURVEY_OPTIONS: tuple[Option, ...] = (
    Option(
        "application",
        Kind(example="'datasette==1.0a41' or ./datasette"),
        "The candidate release of the application: a requirement (pinned to the newest release "
        "it allows), a project directory (built once) or a wheel.",
        SURVEY,
        metavar="CANDIDATE",
        required=SURVEY,
    ),
    Option(
        "baseline",
        Kind(example="'datasette==0.65.1'"),
        "The release to compare with, given as --application is.",
        SURVEY,
        default_text="the newest final release on the index older than the candidate",
        metavar="BASELINE",
    ),
    Option(
        "jobs",
        Whole(minimum=1),
        "How many plugins are checked at once (each in fresh sandboxes of its own).",
        SURVEY,
        short="-j",
        default_text="the number of CPUs",
        metavar="N",
    ),
    Option(
        "shard",
        Shard(),
        "Check only the K-th of N shares of the plugins (split by a stable hash of each "
        "requirement, whatever the list's order); 'sandboxverify merge' puts the shards' "
        "results together.",
        SURVEY,
        metavar="K/N",
    ),
    Option(
        "results",
        FilePath(example="survey.jsonl"),
        "The JSON Lines file each plugin's result is appended to as it is found; a survey "
        "run again with the same file skips what it holds.",
        SURVEY,
        default=DEFAULT_RESULTS,
        metavar="FILE",
    ),
    Option(
        "retry-errors",
        Flag(),
        "Check again the plugins the results file has as 'error' (a download or an install "
        "that failed), instead of skipping them.",
        SURVEY,
        default=False,
    ),
    Option(
        "html",
        ReportFile(),
        {
            "survey": "Write the survey as a self-contained HTML page (a table that sorts and "
            "filters by class) to FILE.",
            "merge": "With survey results: write the merged survey as a self-contained HTML page "
            "to FILE.",
        },
        ("survey", "merge"),
        metavar="FILE",
        project=False,
    ),
)


@frozen
class SurveyOptions:
    """What ``sandboxverify survey`` is asked to do (see ``sandboxverify survey --help``)."""

    plugins: tuple[str, ...]
    application: str
    baseline: str | None = None
    jobs: int | None = None
    shard: str | None = None
    results: str = DEFAULT_RESULTS
    retry_errors: bool = False
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    installer: InstallerChoice = "auto"
    isolation: IsolationChoice = "auto"

    def __post_init__(self) -> None:
        for option in SURVEY_OPTIONS:
            value = getattr(self, option.dest, None)
            problem = option.kind.problem(option.flag, value) if value is not None else None
            if problem is not None:
                raise UsageError(problem.message, hint=problem.hint)

    @property
    def workers(self) -> int:
        return self.jobs or max(1, os.cpu_count() or 1)

    @property
    def share(self) -> tuple[int, int] | None:
        return parse_shard(self.shard) if self.shard else None
