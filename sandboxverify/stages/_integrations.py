"""A module named for the libraries it lacks, which no extra declares: its integration with
them (``hvplot.ibis``, syrupy's ``pydantic_plugin``), for users who have them. Judged last, once
no extra tried brought what it lacks (``_excuses.settle``)."""

from __future__ import annotations

from collections.abc import Sequence

from sandboxverify.report import ExcusedModule
from sandboxverify.runtime import name_words


def integration_excuse(module: str, lacking: Sequence[str]) -> ExcusedModule | None:
    """A module named for the libraries it lacks (``hvplot.ibis``, ``syrupy``'s
    ``pydantic_plugin``), which no extra declares: its integration with them, for users who
    have them (each library a word of the module's dotted name, or that word without a plural
    ``s``: ``attrs_plugin`` for ``attr``)."""
    words = set(name_words(module))
    words |= {word[:-1] for word in words if word.endswith("s")}
    tops = [name.lower() for name in lacking]
    if not tops or any(len(top) < 3 or top not in words for top in tops):
        return None
    named = ", ".join(lacking)
    return ExcusedModule(
        module,
        "integration",
        f"its integration with {named}, as its name says, for users who have "
        f"{'them' if len(lacking) > 1 else 'it'}: no extra declares {named}, and it is not "
        "installed here",
    )
