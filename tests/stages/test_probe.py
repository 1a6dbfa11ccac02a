"""What the host checks in the probe's answers: isolation of the sandbox."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.stages._probe import Discovery, isolation_leaks


def test_isolation_leaks_find_host_site_packages_and_strangers() -> None:
    clean = Discovery(
        dist="d",
        version="1",
        plugins=(),
        declared_groups=(),
        others=(),
        sys_path=(
            "/py/lib/python312.zip",
            "/py/lib/python3.12",
            "/py/lib/python3.12/lib-dynload",
            "/w/venv/lib/python3.12/site-packages",
            "/w/runtime",
        ),
        prefix="/w/venv",
        base_prefix="/py",
        isolated=True,
    )
    assert isolation_leaks(clean, Path("/w/runtime")) == []
    dirty = Discovery(
        dist="d",
        version="1",
        plugins=(),
        declared_groups=(),
        others=(),
        sys_path=("", "/py/lib/python3.12/site-packages", "/home/me/src", "/w/venv/lib/x"),
        prefix="/w/venv",
        base_prefix="/py",
        isolated=False,
    )
    assert isolation_leaks(dirty, Path("/w/runtime")) == [
        "the caller's environment (not running with -I)",
        "the working directory ('')",
        "/py/lib/python3.12/site-packages",
        "/home/me/src",
    ]
