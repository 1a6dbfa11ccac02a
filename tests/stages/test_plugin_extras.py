"""Which failed plugins lack their own application, and which extra brings it."""

from __future__ import annotations

from typing import Any, cast

import pytest

from sandboxverify.report import PluginError, PluginRecord
from sandboxverify.stages._extras import parse_extras
from sandboxverify.stages._plugin_extras import (
    extra_bringing,
    extra_named_for,
    lacked_application,
    loaded_with_extras,
)
from sandboxverify.stages._probe import PluginLoad

#: sentry-sdk 2.75.0's METADATA, in part
SENTRY = """\
Metadata-Version: 2.1
Name: sentry-sdk
Version: 2.75.0
Requires-Dist: urllib3>=1.26.11
Requires-Dist: certifi
Provides-Extra: celery
Requires-Dist: celery>=3; extra == "celery"
Provides-Extra: opentelemetry
Requires-Dist: opentelemetry-distro>=0.35b0; extra == "opentelemetry"
Provides-Extra: opentelemetry-experimental
Requires-Dist: opentelemetry-distro; extra == "opentelemetry-experimental"
Provides-Extra: opentelemetry-otlp
Requires-Dist: opentelemetry-distro[otlp]>=0.35b0; extra == "opentelemetry-otlp"
Provides-Extra: tests
Requires-Dist: opentelemetry-sdk; extra == "tests"
"""
EXTRAS = parse_extras(SENTRY, "sentry-sdk", (3, 11, 7))

_CHAINED = """Traceback (most recent call last):
  File ".../sentry_sdk/integrations/opentelemetry/consts.py", line 4, in <module>
    from opentelemetry.context import create_key
ModuleNotFoundError: No module named '{missing}'

During handling of the above exception, another exception occurred:
"""


def failed(group: str, missing: str, stage: str = "import") -> PluginRecord:
    error = PluginError(
        "DidNotEnable", "opentelemetry not installed", _CHAINED.format(missing=missing), stage
    )
    return PluginRecord("sentry", group, "pkg.mod:Thing", ok=False, error=error)


@pytest.mark.parametrize(
    ("record", "lacked"),
    [
        # the group's first word, before its underscore: opentelemetry_propagator's
        (failed("opentelemetry_propagator", "opentelemetry"), "opentelemetry"),
        (failed("keyring.backends", "keyring.backend"), "keyring"),
        # anything else it lacks fails its users' application, extras or not
        (failed("opentelemetry_propagator", "grpc"), None),
        # a failure of its own, after its imports
        (failed("opentelemetry_propagator", "opentelemetry", stage="setup"), None),
        (PluginRecord("ok", "opentelemetry_propagator", "pkg:Thing", ok=True), None),
    ],
)
def test_a_plugin_lacks_its_application_only_when_it_stops_at_its_groups_name(
    record: PluginRecord, lacked: str | None
) -> None:
    assert lacked_application(record) == lacked


def test_the_extra_named_after_the_application_brings_it_among_those_of_its_family() -> None:
    """opentelemetry-distro, of the opentelemetry family, is in three users' extras (and a test
    extra); the one named after what the plugin lacks is the one its users install."""
    assert extra_bringing("opentelemetry", EXTRAS) == "opentelemetry"


def test_an_extra_declaring_the_application_by_its_own_name_comes_first() -> None:
    assert extra_bringing("celery", EXTRAS) == "celery"


def test_of_a_family_the_smallest_extra_when_none_is_named_after_it() -> None:
    metadata = (
        SENTRY.replace("Provides-Extra: opentelemetry\n", "").replace(
            'extra == "opentelemetry"', 'extra == "otel"'
        )
        + "Provides-Extra: otel\n"
    )
    extras = parse_extras(metadata, "sentry-sdk", (3, 11, 7))
    assert extra_bringing("opentelemetry", extras) == "opentelemetry-experimental"


def test_no_extra_brings_what_only_a_development_extra_or_nothing_declares() -> None:
    assert extra_bringing("grpc", EXTRAS) is None
    tests_only = parse_extras(
        'Name: p\nProvides-Extra: tests\nRequires-Dist: keyring-alt; extra == "tests"\n',
        "p",
        (3, 11, 7),
    )
    assert extra_bringing("keyring", tests_only) is None


def test_a_server_command_given_on_the_command_line_is_never_loaded_again() -> None:
    """--server-command replaces the entry points: its load has no plan to load again with."""
    done = PluginLoad(failed("opentelemetry_propagator", "opentelemetry"), (), None)
    unused = cast(Any, None)  # nothing of a sandbox is touched
    again = loaded_with_extras([done], [], sandbox=unused, wheel=unused, also=(), ctx=unused)
    assert again == (done,)


#: APScheduler 3.11.3's METADATA, in part
APSCHEDULER = parse_extras(
    "Name: APScheduler\n"
    + "".join(
        f'Provides-Extra: {extra}\nRequires-Dist: {needs}; extra == "{extra}"\n'
        for extra, needs in (("mongodb", "pymongo>=3.0"), ("gevent", "gevent"), ("test", "pytest"))
    ),
    "apscheduler",
    (3, 11, 7),
)


def store(
    name: str, *, host: str = "entrypoints", stage: str = "import", value: str = "m:C"
) -> PluginRecord:
    error = PluginError("ImportError", "MongoDBJobStore requires PyMongo installed", "", stage)
    return PluginRecord(name, "apscheduler.jobstores", value, ok=False, error=error, host=host)


@pytest.mark.parametrize(
    ("record", "extra"),
    [
        # APScheduler loads the job store a user names; its users install the extra named so
        (store("mongodb"), ("mongodb", "it is")),
        (store("MongoDB"), ("mongodb", "it is")),  # names compared as normalised
        # else its module, below the root, the deepest part first: tooz's driver "etcd3+http"
        # in tooz.drivers.etcd3gw is what its extra etcd3gw brings
        (store("mongo", value="apscheduler.stores.mongodb:S"), ("mongodb", "its module is")),
        (store("m", value="apscheduler.gevent.mongodb:S"), ("mongodb", "its module is")),
        (store("mongodb", value="apscheduler.gevent:S"), ("mongodb", "it is")),
        # a private module serving the extra (keystoneauth1.extras._saml2._loading)
        (store("v3", value="apscheduler.extras._MongoDB._loading:P"), ("mongodb", "its module is")),
        # the root is the distribution's own name, no extra's
        (store("x", value="mongodb.stores:S"), None),
        # named for no extra, or for one of the project's own development
        (store("sqlite"), None),
        (store("test"), None),
        (store("sqlite", value="apscheduler.test:S"), None),
        # a known application's contract says when it loads its plugins (pytest: all, at start)
        (store("mongodb", host="pytest"), None),
        # a failure of its own, after its imports
        (store("mongodb", stage="setup"), None),
        (PluginRecord("mongodb", "apscheduler.jobstores", "m:C", ok=True), None),
    ],
)
def test_a_plugin_of_a_group_no_host_knows_named_as_an_extra_is_that_extras(
    record: PluginRecord, extra: tuple[str, str] | None
) -> None:
    assert extra_named_for(record, APSCHEDULER) == extra
