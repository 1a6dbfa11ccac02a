"""Hosts: how a loaded entry point becomes registrations, one module per plugin dialect."""
