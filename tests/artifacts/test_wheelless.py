"""The one loop behind every install that builds what it stops at."""

from __future__ import annotations

from pathlib import Path

from sandboxverify.artifacts import install_building_wheelless
from sandboxverify.sandbox import IndexOptions

INDEX = IndexOptions("https://index.invalid/simple", ("/given",))


class Installer:
    """Stops at each of ``missing`` in turn until the directory its wheel is in is offered."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        self.seen: list[tuple[str, ...]] = []

    def install(self, index: IndexOptions) -> str | None:
        self.seen.append(index.find_links)
        for name in self.missing:
            if f"/wheels/{name}" not in index.find_links:
                return name
        return None


def test_each_requirement_it_stops_at_is_built_and_offered_in_turn() -> None:
    installer = Installer(["a", "b"])

    result, built = install_building_wheelless(
        installer.install,
        lambda stopped: stopped,
        lambda name: Path(f"/wheels/{name}"),
        INDEX,
        at_most=4,
    )

    assert (result, built) == (None, ["a", "b"])
    assert installer.seen == [
        ("/given",),
        ("/given", "/wheels/a"),
        ("/given", "/wheels/a", "/wheels/b"),
    ]


def test_it_stops_at_the_bound_at_a_failed_build_and_at_a_wheel_not_taken() -> None:
    bounded = Installer(["a", "b", "c"])
    assert install_building_wheelless(
        bounded.install, lambda s: s, lambda name: Path(f"/wheels/{name}"), INDEX, at_most=2
    ) == ("c", ["a", "b"])

    failing = Installer(["a"])
    assert install_building_wheelless(
        failing.install, lambda s: s, lambda name: None, INDEX, at_most=2
    ) == ("a", [])
    assert len(failing.seen) == 1

    # the wheel built lands where the installer never looks: built once, not again
    refused = Installer(["a"])
    assert install_building_wheelless(
        refused.install, lambda s: s, lambda name: Path("/elsewhere"), INDEX, at_most=3
    ) == ("a", ["a"])
    assert len(refused.seen) == 2
