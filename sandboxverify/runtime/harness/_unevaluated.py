"""``unevaluatedProperties`` and ``unevaluatedItems``: what no other keyword looked at.

Draft 2020-12 defines them through annotations: a property (or an item) is evaluated when a
keyword applied to it at the same position, directly or through a subschema that matched
(``allOf``; the matching ``anyOf``/``oneOf`` alternatives; ``$ref``; ``if`` with ``then`` or
``else``; a triggered ``dependentSchemas`` entry). :class:`UnevaluatedChecks` collects that set
the same way, with the walk's own ``violations`` deciding which subschemas matched, and checks
what is left against the keyword's schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sandboxverify.runtime.harness._keywords import Here, KeywordChecks
from sandboxverify.runtime.harness._refs import MISSING, resolve

#: "every property / item": what additionalProperties, items or a nested unevaluated* evaluate
EVERYTHING = None


class UnevaluatedChecks(KeywordChecks):
    """The two keywords, on top of the keyword families, for the validator's walk (which
    provides ``check``, ``violations`` and the root schema)."""

    __slots__ = ()

    root: object

    def check_unevaluated(self, instance: object, schema: dict[str, Any], here: Here) -> None:
        if "unevaluatedProperties" in schema and isinstance(instance, Mapping):
            rest = schema["unevaluatedProperties"]
            seen = self._properties(instance, schema, here, (), top=True)
            for index, key in enumerate(instance):
                name = str(key)
                if seen is EVERYTHING or name in seen:
                    continue
                if rest is False:
                    self.report(here, f"unexpected property {name!r} (unevaluatedProperties)")
                else:
                    self.check(instance[key], rest, here.child(name, index))
        if "unevaluatedItems" in schema and isinstance(instance, (list, tuple)):
            rest = schema["unevaluatedItems"]
            items = self._items(instance, schema, here, (), top=True)
            for index, item in enumerate(instance):
                if items is EVERYTHING or index in items:
                    continue
                if rest is False:
                    self.report(here, f"unexpected item {index} (unevaluatedItems)")
                else:
                    self.check(item, rest, here.child(str(index), index))

    # -- evaluated properties ------------------------------------------------------------------
    def _properties(
        self,
        instance: Mapping[Any, Any],
        schema: object,
        here: Here,
        refs: tuple[str, ...],
        *,
        top: bool = False,
    ) -> set[str] | None:
        """The names ``schema`` evaluates in ``instance``; EVERYTHING when it evaluates all."""
        if not isinstance(schema, dict):
            return set()
        if "additionalProperties" in schema or (not top and "unevaluatedProperties" in schema):
            return EVERYTHING
        names = {str(key) for key in instance}
        seen = names & set(schema.get("properties") or {})
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            seen |= {name for name in names if any(_search(p, name) for p in patterns)}
        for sub in self._applied(instance, schema, here, refs):
            more = self._properties(instance, sub[0], here, sub[1])
            if more is EVERYTHING:
                return EVERYTHING
            seen |= more
        return seen

    # -- evaluated items -----------------------------------------------------------------------
    def _items(
        self,
        instance: list[Any] | tuple[Any, ...],
        schema: object,
        here: Here,
        refs: tuple[str, ...],
        *,
        top: bool = False,
    ) -> set[int] | None:
        """The indices ``schema`` evaluates in ``instance``; EVERYTHING when it evaluates all."""
        if not isinstance(schema, dict):
            return set()
        items = schema.get("items")
        if (items is not None and not isinstance(items, list)) or "additionalItems" in schema:
            return EVERYTHING
        if not top and "unevaluatedItems" in schema:
            return EVERYTHING
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
        seen = set(range(min(len(prefix), len(instance))))
        if "contains" in schema:
            seen |= {
                index
                for index, item in enumerate(instance)
                if not self.violations(item, schema["contains"], here.child(str(index), index))
            }
        for sub in self._applied(instance, schema, here, refs):
            more = self._items(instance, sub[0], here, sub[1])
            if more is EVERYTHING:
                return EVERYTHING
            seen |= more
        return seen

    def _applied(
        self, instance: object, schema: dict[str, Any], here: Here, refs: tuple[str, ...]
    ) -> list[tuple[object, tuple[str, ...]]]:
        """The subschemas applied at this position whose annotations count: each with the
        $refs followed to reach it (a cycle ends the search)."""
        applied: list[tuple[object, tuple[str, ...]]] = []
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            target = resolve(self.root, ref)
            if target is not MISSING:
                applied.append((target, (*refs, ref)))
        every = schema.get("allOf")
        if isinstance(every, list):
            applied.extend((sub, refs) for sub in every)
        for keyword in ("anyOf", "oneOf"):
            alternatives = schema.get(keyword)
            if isinstance(alternatives, list):
                applied.extend(
                    (sub, refs) for sub in alternatives if not self.violations(instance, sub, here)
                )
        if "if" in schema:
            if not self.violations(instance, schema["if"], here):
                applied.append((schema["if"], refs))
                if "then" in schema:
                    applied.append((schema["then"], refs))
            elif "else" in schema:
                applied.append((schema["else"], refs))
        if isinstance(instance, Mapping):
            for keyword in ("dependentSchemas", "dependencies"):
                table = schema.get(keyword)
                if isinstance(table, dict):
                    applied.extend(
                        (sub, refs)
                        for trigger, sub in table.items()
                        if trigger in instance and isinstance(sub, dict)
                    )
        return applied


def _search(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:  # reported by patternProperties itself
        return False
