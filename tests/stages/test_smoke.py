"""The smoke stage's own words: the command that replays a failed smoke run in place."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.stages._smoke import Playbook, _run_command


def test_the_replay_hint_names_the_playbook_as_given() -> None:
    nested = Playbook(Path("ci/checks/smoke.toml"), spec={"turns": []})
    script = Playbook(Path("../other/smoke.py"), spec=None)
    server = EntryPointRef(name="srv", group="console_scripts", value="srv --stdio")

    assert _run_command(nested, "my-dist", "native", None) == (
        "sandboxverify run ci/checks/smoke.toml --dist my-dist"
    )
    assert _run_command(script, "my-dist", "mcp", server) == (
        "sandboxverify run ../other/smoke.py --host mcp --dist my-dist"
    )
    assert _run_command(nested, "my-dist", "mcp", server) == (
        "sandboxverify run ci/checks/smoke.toml --host mcp --plugin 'srv --stdio'"
    )
