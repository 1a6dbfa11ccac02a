"""A survey's results file: JSON Lines, a header and then one line per plugin, appended as each
plugin's checks end (one write of a whole line, flushed to disk), so an interrupted run leaves
every finished result and nothing half-written. A run given a file that holds results of the
same survey keeps them and checks only the rest; a last line cut short (a run killed while
writing it) is dropped."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from packaging.utils import canonicalize_name

from sandboxverify._errors import UsageError
from sandboxverify.report import (
    PluginResult,
    Redactor,
    ResultsFile,
    SurveyFormatError,
    SurveyHeader,
    read_results,
)


class ResultsLog:
    """The results file of one run, open for appending."""

    def __init__(self, path: Path, header: SurveyHeader, *, retry_errors: bool = False) -> None:
        self.path = path
        self.header = header
        self.retry_errors = retry_errors
        #: the results the file held for this run's plugins, kept
        self.kept: tuple[PluginResult, ...] = ()
        self._lock = threading.Lock()
        self._fd = -1
        self._secrets = Redactor()

    @property
    def done(self) -> set[str]:
        return {result.requirement for result in self.kept}

    def __enter__(self) -> ResultsLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file() and self.path.stat().st_size:
            self.kept = self._resumed()
        else:
            self._rewrite(())
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def append(self, result: PluginResult) -> None:
        """``result`` as one line, on disk before this returns."""
        line = _line(self._secrets.value(result.to_json()))
        with self._lock:
            if self._fd < 0:
                raise RuntimeError("the results file is closed")
            os.write(self._fd, line)
            os.fsync(self._fd)

    def _resumed(self) -> tuple[PluginResult, ...]:
        earlier = _earlier(self.path, self.header.shard)
        if earlier.header.identity != self.header.identity:
            raise UsageError(
                f"--results {self.path} holds another survey: "
                f"{_said(earlier.header)}, not {_said(self.header)}",
                hint="give each survey its own results file (or remove this one to start over)",
            )
        wanted = set(self.header.plugins)
        kept = tuple(
            result
            for result in earlier.results
            if result.requirement in wanted
            and not (self.retry_errors and result.survey_class == "error")
        )
        if kept != earlier.results or earlier.truncated or earlier.header != self.header:
            self._rewrite(kept)
        return kept

    def _rewrite(self, results: Iterable[PluginResult]) -> None:
        """The file anew (the header, then ``results``), replaced at once."""
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        lines = [_line(self._secrets.value(self.header.to_json()))]
        lines += [_line(self._secrets.value(result.to_json())) for result in results]
        with partial.open("wb") as out:
            out.write(b"".join(lines))
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, self.path)


def check_resumable(
    path: Path,
    shard: tuple[int, int] | None,
    *,
    application: str | None = None,
    python: str | None = None,
) -> None:
    """Refuse, before the releases are resolved (a project is built for that), a results file
    that is no survey's, another shard's, or a survey of another application (when its name is
    known without a build) or Python; whether it is of these releases is told once they are."""
    if not (path.is_file() and path.stat().st_size):
        return
    earlier = _earlier(path, shard)
    header = earlier.header
    other_application = application is not None and canonicalize_name(
        header.application
    ) != canonicalize_name(application)
    if other_application or (python is not None and header.python != python):
        raise UsageError(
            f"--results {path} holds another survey: {_said(header)}, not "
            f"{application or header.application} (Python {python or header.python})",
            hint="give each survey its own results file (or remove this one to start over)",
        )


def _earlier(path: Path, shard: tuple[int, int] | None) -> ResultsFile:
    try:
        earlier = read_results(path)
    except (SurveyFormatError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"--results {path} is not the results file of a survey: {exc}",
            hint="give a new file, or remove this one to start over",
        ) from None
    if earlier.header.shard != shard:
        raise UsageError(
            f"--results {path} holds the results of another shard",
            hint="give each shard its own results file",
        )
    return earlier


def _line(document: object) -> bytes:
    return (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _said(header: SurveyHeader) -> str:
    return f"{header.baseline.label} -> {header.candidate.label} (Python {header.python})"
