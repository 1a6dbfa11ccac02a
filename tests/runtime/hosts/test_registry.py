"""The host registry is the one place a host is declared: every loader it names exists, and the
README's table of hosts says what the registry holds."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from sandboxverify.runtime import hosts
from sandboxverify.runtime.hosts._registry import HOSTS, KNOWN_GROUPS, SESSION_HOSTS
from tests.helpers import ROOT


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_each_host_names_a_loader_that_takes_a_plugin_its_registry_and_context(name: str) -> None:
    module, _, function = HOSTS[name].loader.partition(":")
    loader = getattr(importlib.import_module(f"{hosts.__name__}.{module}"), function)
    assert list(inspect.signature(loader).parameters) == ["ref", "registry", "context"]


def test_a_group_belongs_to_one_host_only() -> None:
    declared = [group.name for host in HOSTS.values() for group in host.groups]
    assert len(declared) == len(set(declared)) == len(KNOWN_GROUPS)


def test_the_session_hosts_are_those_that_drive_a_model() -> None:
    assert SESSION_HOSTS == ("native", "llm", "mcp")


def _readme_hosts() -> dict[str, tuple[set[str], set[str]]]:
    """The README's hosts table: per host, the groups and the registration kinds it lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Hosts: each plugin in its own application", 1)[1]
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].startswith("`"):
            continue
        groups, host, _, kinds = cells
        rows[host.strip("`")] = (
            set(re.findall(r"`([\w.:]+)`", groups)),
            set(re.findall(r"`(\w+)`", kinds)),
        )
    return rows


def test_the_readme_table_lists_every_host_with_its_groups_and_kinds() -> None:
    rows = _readme_hosts()
    assert set(rows) == set(HOSTS)
    for name, host in HOSTS.items():
        groups, kinds = rows[name]
        assert {group.name for group in host.groups} <= groups, name
        assert host.named is None or host.named.group in groups, name
        assert set(host.kinds) == kinds, name
