"""``from sandboxverify.harness import create_test_session, when, call, say``.

The harness API, importable with the standard library alone: in a pytest process and inside
every sandbox (where ``.py`` smoke playbooks import it).
"""

from __future__ import annotations

from sandboxverify.runtime import harness as _harness
from sandboxverify.runtime.harness import *  # noqa: F403

__all__ = list(_harness.__all__)
