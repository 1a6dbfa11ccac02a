"""Plugin distributions installed on the fly, and the probe that loads them in a fresh process.

An application finds its plugins through installed entry points, so a test plugin is a
distribution: its modules and a minimal ``.dist-info`` in a site directory of the test's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]

#: the probe, run the way the sandbox runs it: isolated, the runtime appended to sys.path
PROBE = (
    "import sys; sys.path[:0] = sys.argv[1:-1]; sys.path.append(sys.argv[-1]); "
    "from sandboxverify.runtime._probe import main; main()"
)


def install(
    site: Path,
    dist: str,
    entry_points: dict[str, dict[str, str]],
    files: dict[str, str],
) -> Path:
    """Write ``files`` (paths relative to ``site``) and a dist-info declaring ``entry_points``
    (group -> name -> value) into ``site``; returns ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    return site


def probe_load(
    tmp_path: Path,
    host: str,
    plugin: dict[str, str],
    *,
    sites: list[Path],
    no_site: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    load_timeout: float | None = None,
) -> dict[str, Any]:
    """One ``load`` request to the runtime probe in a fresh interpreter; the result document.

    ``no_site``: ``python -S``, so nothing installed in the test environment is importable (an
    application that is not installed). ``load_timeout``: the time the load itself has (the
    request's ``timeout``)."""
    result = tmp_path / f"result-{plugin['name'].replace('/', '_')}.json"
    request: dict[str, Any] = {
        "action": "load",
        "host": host,
        "plugin": plugin,
        "nonce": "x",
        "protocol": 1,
        "result": str(result),
    }
    if load_timeout is not None:
        request["timeout"] = load_timeout
    flags = ["-I", "-S"] if no_site else ["-I"]
    done = subprocess.run(
        [sys.executable, *flags, "-c", PROBE, *map(str, sites), str(REPO)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(result.read_text())
    loaded["stdout"], loaded["stderr"] = done.stdout, done.stderr
    return loaded


def load_named(
    tmp_path: Path,
    host: str,
    module: str,
    files: dict[str, str],
    *,
    no_site: bool = False,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """:func:`probe_load` of a module users name in ``host``'s configuration (group
    ``<host's>:...``, no entry point), from a distribution of ``files``."""
    from sandboxverify.runtime.hosts import HOSTS  # noqa: PLC0415

    named = HOSTS[host].named
    assert named is not None, host
    site = install(tmp_path / "site", f"{host}-demo", {}, files)
    plugin = {"name": module, "group": named.group, "value": module}
    return probe_load(tmp_path, host, plugin, sites=[site], no_site=no_site, env=env)


def assert_failed_at(loaded: dict[str, Any], stage: str, words: str) -> None:
    """The load failed at ``stage``, saying ``words`` (in its message or traceback)."""
    assert loaded["ok"] is False, loaded
    error = loaded["error"]
    assert error["stage"] == stage, error
    assert words in error["message"] + error["traceback"], error
