"""What a check is asked to do: the options of every command, ``[tool.sandboxverify]``, and
``CheckOptions``."""
