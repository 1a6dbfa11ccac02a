"""GitHub Actions: error annotations at the file and line a failure comes from, and a Markdown
step summary. (Stub: being built.)"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandboxverify._report import Report


@dataclass(frozen=True)
class GitHubSources:
    """Files failures can point at; paths in annotations are relative to ``root``."""

    pyproject: Path | None
    playbook: Path | None
    root: Path


def error_annotations(report: Report, sources: GitHubSources) -> list[str]:
    """One ``::error ...::message`` workflow command per failure."""
    return [f"::error title={f.code}::{f.message}" for f in report.failures]


def step_summary(report: Report) -> str:
    """The Markdown summary of the check."""
    return "## sandboxverify: " + ("passed" if report.ok else "failed")
