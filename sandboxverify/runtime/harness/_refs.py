"""``$ref`` in tool schemas: local JSON pointers into the root schema, and the types they declare.

Only local references resolve (``#``, ``#/$defs/Name``, ``#/definitions/Name``, any pointer into
the root schema): tool schemas are self-contained, so a remote reference is out of scope and,
like a pointer to nothing, resolves to :data:`MISSING`.
"""

from __future__ import annotations

from urllib.parse import unquote

#: What a ``$ref`` that points at nothing resolves to.
MISSING = object()


def resolve(root: object, ref: str) -> object:
    """The part of the root schema a local ``$ref`` points at, or ``MISSING``."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return MISSING  # remote references are out of scope: tool schemas are self-contained
    node = root
    for token in ref[2:].split("/"):
        name = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and name in node:
            node = node[name]
        elif isinstance(node, list) and name.isdigit() and int(name) < len(node):
            node = node[int(name)]
        else:
            return MISSING
    return node


def declared_types(schema: object, root: object) -> list[str] | None:
    """The ``type`` names a schema declares (following ``$ref``), or None when it declares none."""
    for _ in range(16):  # a bounded walk: circular references are reported elsewhere
        if not isinstance(schema, dict):
            return None
        declared = schema.get("type")
        if isinstance(declared, str):
            return [declared]
        if isinstance(declared, list):
            return [str(name) for name in declared]
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return None
        schema = resolve(root, ref)
    return None
