"""The driver: ``check()`` builds once, then runs each interpreter's sandbox through the stages
(in parallel) and turns what they found into the verdict; options, stage timing and events.

Imports the stages, build, sandbox and report rooms; never the CLI.
"""
