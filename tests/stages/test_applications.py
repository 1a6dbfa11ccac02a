"""What is tried as the application of a group: the plugin's extras named after it, then its
name; what the plugin's metadata says is checked before an installer is asked for it."""

from __future__ import annotations

from sandboxverify.stages._applications import Candidate, candidates


def extra(requirement: str, name: str = "test") -> dict[str, str]:
    return {"extra": name, "requirement": requirement}


def test_an_extra_named_after_the_group_comes_first_with_the_versions_it_asks_for() -> None:
    extras = [
        extra('pytest>=7; extra == "test"'),
        extra('keyring[completion]>=20,<30; extra == "test"'),
    ]
    assert candidates("keyring.backends", None, extras, "keyrings.alt") == [
        Candidate("keyring[completion]<30,>=20", "keyring", "extra"),
    ]


def test_the_name_rule_gives_the_rest_and_never_the_distribution_itself() -> None:
    assert candidates("pandas_plotting_backends", None, [], "hvplot") == [
        Candidate("pandas_plotting_backends", "pandas_plotting_backends", "name"),
        Candidate("pandas", "pandas", "name"),
    ]
    assert candidates("twine.registered_commands", None, [], "twine") == []


def test_a_group_of_ours_tries_the_application_its_host_names() -> None:
    extras = [extra("pytest>=8 ; extra == 'testing'", "testing"), extra("pytest11 ; extra == 'x'")]
    # the extra's requirement of the application the registry names is that application
    # (Sphinx never names 'sphinx:extensions': the group is ours)
    assert candidates("pytest11", "pytest", extras, "pytest-thing") == [
        Candidate("pytest>=8", "pytest", "extra", registered=True),
    ]
    assert candidates("pytest11", "pytest", [], "pytest-thing") == [
        Candidate("pytest", "pytest", "registry", registered=True),
    ]


def test_a_requirement_that_points_anywhere_does_not_parse_or_apply_is_never_tried() -> None:
    extras = [
        extra('keyring @ https://example.invalid/keyring.whl ; extra == "x"'),
        extra("keyring >= ; extra == 'x'"),
        extra("--index-url https://example.invalid keyring"),
        extra('keyring>=30; sys_platform == "nowhere" and extra == "x"', "x"),
    ]
    assert candidates("keyring.backends", None, extras, "plugin") == [
        Candidate("keyring", "keyring", "name"),
    ]
