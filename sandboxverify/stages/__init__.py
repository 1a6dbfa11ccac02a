"""What runs against an installed sandbox: the probe (discovery and plugin loads), the
expectations it is judged by, every module imported, console scripts, the smoke playbook.

Imports build, sandbox and report; talks to the runtime only through its JSON protocol.
"""
