"""The distributions an import name may come from."""

from __future__ import annotations

import pytest

from sandboxverify.stages._extras import parse_extras
from sandboxverify.stages._import_names import distributions_of, extra_names_in


@pytest.mark.parametrize(
    ("module", "distribution"),
    [
        ("gi.repository", "pygobject"),
        ("PIL.Image", "pillow"),
        ("yaml", "pyyaml"),
        ("dateutil.parser", "python-dateutil"),
        ("psycopg2", "psycopg2-binary"),
        ("cv2", "opencv-python-headless"),
        ("qtpy", "qtpy"),
        ("Foo_Bar", "foo-bar"),
    ],
)
def test_an_import_name_maps_to_the_distributions_that_install_it(
    module: str, distribution: str
) -> None:
    assert distribution in distributions_of(module)


def test_a_name_is_not_matched_by_a_mere_part_of_another() -> None:
    assert "python-gitlab" not in distributions_of("git")
    assert "pyyaml-include" not in distributions_of("yaml")


def test_an_extra_declaring_the_distribution_under_its_own_name_is_found() -> None:
    """pywebview's ``gtk`` extra declares PyGObject; its GTK module fails for ``gi``."""
    metadata = (
        "Metadata-Version: 2.1\nName: webview\nVersion: 1\n"
        'Provides-Extra: gtk\nRequires-Dist: PyGObject==3.50.0; extra == "gtk"\n'
        'Provides-Extra: cef\nRequires-Dist: cefpython3; extra == "cef"\n'
    )
    extras = parse_extras(metadata, "webview", (3, 11, 7))
    assert extras.providing("gi") == ["gtk"]
    assert extras.providing("PIL") == []


def test_a_modules_parts_below_its_root_are_named_as_extras_are_deepest_first() -> None:
    assert extra_names_in("keystoneauth1.extras._saml2._loading") == ["loading", "saml2", "extras"]
    assert extra_names_in("tooz.drivers.Etcd3_GW") == ["etcd3-gw", "drivers"]
    assert extra_names_in("single") == []
