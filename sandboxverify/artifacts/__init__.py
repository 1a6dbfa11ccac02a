"""Stage ``build`` and what it produces: the targets, a copy of the source tree, the sdist and
the wheel built from it (or the artifacts given), and the static rules every artifact must
satisfy before anything installs it (metadata, RECORD, contents).

Backends run through the sandbox room's process control; imports sandbox and report only.
"""
