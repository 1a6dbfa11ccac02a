"""An application set up before modules are imported, as it sets up its plugins.

A Django app's models, admin and views import only once Django has settings and has loaded
its apps (``AppRegistryNotReady: Apps aren't loaded yet`` otherwise): Django imports them
after ``django.setup()`` with the app in ``INSTALLED_APPS``. The host asks for this when the
plain import of such modules failed that way; the settings are those ``startproject`` writes,
with an in-memory database.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

#: the apps ``django-admin startproject`` installs
DJANGO_DEFAULT_APPS = (
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
)
_MIDDLEWARE = (
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
)
_CONTEXT_PROCESSORS = (
    "django.template.context_processors.request",
    "django.contrib.auth.context_processors.auth",
    "django.contrib.messages.context_processors.messages",
)


def configure(request: dict[str, Any]) -> None:
    """Set the application up as ``request`` says (``{"django": [apps]}``); what it raises
    is the failure of every module imported after it."""
    apps = request.get("django")
    if isinstance(apps, list):
        set_up_django([str(app) for app in apps])


def set_up_django(apps: list[str]) -> None:
    import importlib  # noqa: PLC0415 - only a configured import pays

    # the sandbox's Django, present where its apps need it (never the runtime's dependency)
    django = importlib.import_module("django")
    settings = importlib.import_module("django.conf").settings

    installed = [*DJANGO_DEFAULT_APPS, *(app for app in apps if app not in DJANGO_DEFAULT_APPS)]
    settings.configure(
        INSTALLED_APPS=installed,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        MIDDLEWARE=list(_MIDDLEWARE),
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {"context_processors": list(_CONTEXT_PROCESSORS)},
            }
        ],
        SECRET_KEY="sandboxverify-not-secret",
        USE_TZ=True,
        STATIC_URL="static/",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()
