"""Every sandbox process starts the runtime: it reports what it did, cheaply."""

from __future__ import annotations

import platform
import sys

import pytest

from sandboxverify.runtime._probe import python_version

VERSIONS = [
    "3.12.1 (main, Dec 19 2023, 20:14:15) [GCC 12.2.0]",
    "3.9.18 (main, Nov 22 2024, 03:04:05) \n[GCC 12.2.0]",
    "3.13.0rc1 (main, Aug  1 2024, 10:11:12) [Clang 15.0.0 (clang-1500.3.9.4)]",
    "3.14.0a1+ (heads/main:0123abc, Oct 16 2024, 10:00:00) [GCC 13.2.0]",
    "3.10.14 (75b3de9d9da1, Aug 27 2024, 14:33:33)\n[PyPy 7.3.17 with GCC 10.2.1 20210130]",
]


def test_the_python_version_is_the_one_platform_reports() -> None:
    assert python_version() == platform.python_version()


@pytest.mark.parametrize("version", VERSIONS)
def test_the_python_version_of_a_prerelease_or_a_dev_build(
    monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    monkeypatch.setattr(sys, "version", version)
    assert python_version() == platform.python_version()
