"""Which of a wheel's packages are Django apps, set up before their modules are imported
again: the layout published apps have (django-taggit 6.1 ships a sample project too)."""

from __future__ import annotations

from sandboxverify.stages._configured import django_apps


def test_packages_with_apps_or_models_are_apps_but_tests_and_a_project_s_own() -> None:
    modules = [
        "taggit",
        "taggit.apps",
        "taggit.models",
        "taggit.admin",
        "taggit.contrib.extra",
        "taggit.contrib.extra.models",  # an app inside the package
        "taggit.tests",
        "taggit.tests.models",  # test code
        # a sample project shipped in the wheel: its apps import from its checkout only
        "sample_taggit",
        "sample_taggit.settings",
        "sample_taggit.library_management",
        "sample_taggit.library_management.apps",
        "sample_taggit.library_management.models",
        "plain",
        "plain.utils",
    ]
    assert django_apps(modules) == ["taggit", "taggit.contrib.extra"]


def test_a_wheel_without_apps_has_none() -> None:
    assert django_apps(["pkg", "pkg.apps_helpers", "pkg.models_util"]) == []
