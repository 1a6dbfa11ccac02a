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
        "taggit.migrations",
        "taggit.contrib.extra",
        "taggit.contrib.extra.models",  # an app inside the package, with its migrations
        "taggit.contrib.extra.migrations",
        "taggit.tests",
        "taggit.tests.apps",  # test code
        "taggit.testapp",
        "taggit.testapp.apps",
        # models of a part that is no app (django-guardian's models package,
        # django-polymorphic's formsets/models.py)
        "taggit.models.models",
        "taggit.formsets",
        "taggit.formsets.models",
        # a sample project shipped in the wheel: its apps import from its checkout only
        "sample_taggit",
        "sample_taggit.settings",
        "sample_taggit.wsgi",
        "sample_taggit.library_management",
        "sample_taggit.library_management.apps",
        "sample_taggit.library_management.models",
        "plain",
        "plain.utils",
        # djangorestframework's settings are its defaults: an app all the same
        "rest_framework",
        "rest_framework.settings",
        "rest_framework.urls",
        "rest_framework.apps",
        # an app with models and no apps module, as before Django 1.7
        "legacy",
        "legacy.models",
        "legacy.migrations",
    ]
    assert django_apps(modules) == ["legacy", "rest_framework", "taggit", "taggit.contrib.extra"]


def test_a_wheel_without_apps_has_none() -> None:
    assert django_apps(["pkg", "pkg.apps_helpers", "pkg.models_util", "pkg.models"]) == []
