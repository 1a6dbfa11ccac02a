"""Throughput of ``sandboxverify survey`` on real plugins from PyPI: plugins checked per minute,
time per check, how that scales with ``-j``, and what splitting into shards costs.

Three applications, each with two releases (the baseline and a candidate that is known to break
some of its published plugins), 36 plugins in all. Each row is one whole survey of one
application's plugins, with a fresh results file (so every plugin is checked, twice: once per
release). One untimed warm-up survey of each application runs first, so uv's cache holds every
download and build requirement and sandboxverify's artifact cache the plugins' wheels: the
numbers are for warm caches, the case of a maintainer re-running a survey for each candidate.

``checks/min`` counts checks (two per plugin). ``shard overhead`` is the shards' summed wall time
(``--shard K/N`` run one after the other, each a process of its own, at the same ``-j``) over the
unsharded run's, minus one: what each shard pays again (the releases resolved, the process
started) that one run pays once. Each row says the isolation its checks ran in.

Run: ``python benchmarks/bench_survey.py [--jobs 1 2] [--shards 2] [--only pytest]``; the
Markdown table goes to stdout (the README's table is copied from it), details to stderr.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: application -> (baseline, candidate, plugins): the breaks of the candidates are known ones
#: (tox-gh-actions under tox 4.67.14, pytest-cases under pytest 9.1, the datasette plugins
#: that call permission_allowed or table_metadata under 1.0a41)
SURVEYS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "pytest": (
        "pytest==8.4.*",
        "pytest==9.1.*",
        (
            "pytest-mock",
            "pytest_httpserver",
            "pytest-randomly",
            "pytest-repeat",
            "pytest-timeout",
            "pytest_freezer",
            "pytest-socket",
            "pytest-asyncio",
            "pytest-flakes",
            "pytest-cases",
            "pytest-pep8",
            "pytest-black",
            "pytest-pylint",
            "pytest-catchlog",
        ),
    ),
    "tox": (
        "tox==4.67.13",
        "tox==4.67.14",
        (
            "tox-gh",
            "tox-extras",
            "tox-ignore-env-name-mismatch",
            "tox-uv",
            "tox-current-env",
            "tox-gh-actions",
            "tox-run-before",
            "tox-factor",
            "tox-pip-version",
            "tox-venv",
            "tox-pyenv",
        ),
    ),
    "datasette": (
        "datasette==0.65.*",
        "datasette==1.0a41",
        (
            "datasette-cluster-map",
            "datasette-block-robots",
            "datasette-copyable",
            "datasette-pretty-json",
            "datasette-render-markdown",
            "datasette-configure-fts",
            "datasette-upload-csvs",
            "datasette-edit-schema",
            "datasette-graphql",
            "datasette-json-html",
            "datasette-vega",
        ),
    ),
}


def survey(
    app: str, jobs: int, work: Path, shard: str | None = None
) -> tuple[float, dict[str, Any]]:
    """One survey of ``app``'s plugins in a process of its own: its wall time and document."""
    baseline, candidate, plugins = SURVEYS[app]
    name = f"{app}-j{jobs}-{(shard or 'all').replace('/', 'of')}"
    results, document = work / f"{name}.jsonl", work / f"{name}.json"
    args = [sys.executable, "-m", "sandboxverify", "survey", *plugins]
    args += ["--application", candidate, "--baseline", baseline, "-j", str(jobs)]
    args += ["--results", str(results), "--json", str(document), "--no-github"]
    args += ["--shard", shard] if shard else []
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    print(done.stdout, file=sys.stderr)
    return seconds, json.loads(document.read_text(encoding="utf-8"))


def isolation(document: dict[str, Any]) -> str:
    found = {
        side["isolation"]
        for plugin in document["plugins"]
        for side in (plugin["baseline"], plugin["candidate"])
        if side and side["isolation"]
    }
    return "+".join(sorted(found)) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=sorted(SURVEYS), default=sorted(SURVEYS))
    parsed = parser.parse_args()
    print(
        "| application | baseline -> candidate | plugins | -j | isolation | wall s | "
        "checks/min | s/check | counts | shard overhead |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-survey-") as tmp:
        work = Path(tmp)
        for app in parsed.only:
            (work / f"{app}-warm").mkdir()
            survey(app, max(parsed.jobs), work / f"{app}-warm")  # untimed: warms the caches
            for jobs in parsed.jobs:
                (work / f"{app}{jobs}").mkdir()
                seconds, document = survey(app, jobs, work / f"{app}{jobs}")
                overhead = "-"
                if jobs == max(parsed.jobs) and parsed.shards > 1:
                    n = parsed.shards
                    sharded = sum(
                        survey(app, jobs, work / f"{app}{jobs}", f"{k}/{n}")[0]
                        for k in range(1, n + 1)
                    )
                    overhead = f"{100 * (sharded / seconds - 1):+.1f} % ({n} shards)"
                checks = 2 * len(document["plugins"])
                counts = ", ".join(f"{v} {k}" for k, v in document["counts"].items() if v)
                plugins = SURVEYS[app][2]
                print(
                    f"| {app} | {document['baseline']['version']} -> "
                    f"{document['candidate']['version']} | {len(plugins)} | {jobs} | "
                    f"{isolation(document)} | {seconds:.1f} | {60 * checks / seconds:.1f} | "
                    f"{seconds / checks:.2f} | {counts} | {overhead} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
