"""Stages ``venv`` and ``install``, and process control: the workspace, interpreters,
environments from allowlists, the installers, and the one subprocess helper.

Imports report only (and the stdlib-only runtime protocol).
"""
