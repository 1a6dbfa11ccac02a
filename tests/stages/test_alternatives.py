"""A module that failed with its first extra, tried with the others that offer the same."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sandboxverify.report import Failure, ImportFailure
from sandboxverify.stages._alternatives import alternatives_of, first_extra, with_alternatives
from sandboxverify.stages._extras import ExtraRun, Extras
from sandboxverify.stages._imports import Settled

QT = Extras(
    "webview",
    {
        "pyside2": ("qtpy", "pyside2"),
        "pyside6": ("qtpy", "pyside6"),
        "qt": ("qtpy", "pyqt6"),
        "qt5": ("qtpy", "pyqt5"),
        "dev": ("qtpy", "pytest"),
    },
)


def test_the_other_extras_for_users_offering_the_same_come_in_their_order() -> None:
    assert alternatives_of(["qtpy"], "pyside2", QT) == ("pyside6", "qt")
    assert alternatives_of(["gi"], "pyside2", QT) == ()


def said(message: str) -> dict[str, object]:
    return {"module": "webview.platforms.qt", "error": {"type": "ImportError", "message": message}}


def test_the_extra_a_module_names_in_its_words_comes_first() -> None:
    """pydantic-ai-slim's realtime.openai: 'you can use the `openai-realtime` optional group -
    `pip install "pydantic-ai-slim[openai-realtime]"`'; the smallest that brings websockets
    lacks openai. Only the distribution's own extras, for its users, and that exist."""
    bindings = Extras("webview", {k: v for k, v in QT.requirements.items() if k != "dev"})
    asked = 'Please install qtpy and PyQt6: pip install "WebView[qt, pyside6]"'
    assert first_extra(said(asked), ["qtpy"], bindings) == ("qt", ("pyside2", "pyside6"))
    # another distribution's extras, one of the project's own, or none such: as before
    for words in ('pip install "other[qt]"', 'pip install "webview[dev]"', "pip install webview"):
        assert first_extra(said(words), ["qtpy"], QT) == first_extra(said(""), ["qtpy"], QT)
    # what it lacks, no extra brings: its words name the one its users install
    assert first_extra(said('pip install "webview[qt5]"'), ["gi"], QT) == ("qt5", ())
    # it lacks nothing: no extra at all
    assert first_extra(said('pip install "webview[qt]"'), [], QT) == (None, ())


def _settled(module: str) -> Settled:
    failure = Failure(
        "import_failed",
        f"module {module!r} failed to import with the extra 'pyside2' installed: crashed",
        module=module,
    )
    return Settled(
        (), {module: ImportFailure(module, "ImportRunStopped", "crashed")}, (failure,), ()
    )


Run = Callable[[str, Sequence[str]], ExtraRun]


def _runs(imports_with: set[str]) -> tuple[list[tuple[str, tuple[str, ...]]], Run]:
    asked: list[tuple[str, tuple[str, ...]]] = []

    def run(extra: str, modules: Sequence[str]) -> ExtraRun:
        asked.append((extra, tuple(modules)))
        results = {m: {"ok": extra in imports_with} for m in modules}
        return ExtraRun(extra, f"webview[{extra}]", tuple(modules), (), True, results=results)

    return asked, run


def test_the_module_is_excused_with_the_first_alternative_it_imports_with() -> None:
    asked, run = _runs({"qt"})
    settled = with_alternatives(
        _settled("webview.platforms.qt"),
        {"webview.platforms.qt": "pyside2"},
        {"webview.platforms.qt": ("pyside6", "qt")},
        run,
        QT,
    )
    assert sorted(asked) == [
        ("pyside6", ("webview.platforms.qt",)),
        ("qt", ("webview.platforms.qt",)),
    ]
    assert settled.failed == {} and settled.failures == ()
    [excused] = settled.excused
    assert (excused.reason, excused.extra) == ("extra", "qt")
    assert "it failed with the extra 'pyside2'" in excused.detail
    assert [(r.name, r.imported) for r in settled.records] == [
        ("pyside6", ()),
        ("qt", ("webview.platforms.qt",)),
    ]


def test_a_module_failing_with_every_alternative_keeps_its_failure_and_says_so() -> None:
    _, run = _runs(set())
    before = _settled("webview.platforms.qt")
    settled = with_alternatives(
        before,
        {"webview.platforms.qt": "pyside2"},
        {"webview.platforms.qt": ("pyside6", "qt")},
        run,
        QT,
    )
    assert settled.failures == before.failures and settled.excused == ()
    assert settled.hints["webview.platforms.qt"] == "it fails with the extras pyside6, qt too"


def test_a_module_whose_extra_did_not_install_is_not_tried_with_others() -> None:
    """An extra that does not install is a failure of its own."""
    asked, run = _runs({"qt"})
    module = "webview.platforms.qt"
    settled = Settled((), {module: ImportFailure(module, "ExtraNotInstalled", "no")}, (), ())
    assert with_alternatives(settled, {module: "pyside2"}, {module: ("qt",)}, run, QT) is settled
    assert asked == []


def test_a_module_that_stops_at_what_another_extra_declares_is_tried_with_that_one() -> None:
    """strawberry-graphql's ``fastapi`` module: the ``asgi`` extra brings starlette, then it
    stops at ``No module named 'fastapi'``, which the extra ``fastapi`` declares."""
    extras = Extras("strawberry", {"asgi": ("starlette",), "fastapi": ("fastapi",)})
    module = "strawberry.fastapi"
    stopped = ImportFailure(module, "ModuleNotFoundError", "No module named 'fastapi'")
    asked, run = _runs({"fastapi"})

    settled = with_alternatives(
        Settled((), {module: stopped}, (), ()), {module: "asgi"}, {}, run, extras
    )

    assert asked == [("fastapi", (module,))]
    [excused] = settled.excused
    assert (excused.module, excused.extra) == (module, "fastapi")
    assert settled.failed == {}


def test_what_the_runtime_saw_it_lack_names_the_next_extra_where_its_words_do_not() -> None:
    """sentry-sdk's fastapi integration, with the starlette extra: "FastAPI is not
    installed", its own words; the runtime saw ``fastapi`` missing."""
    extras = Extras("sentry", {"starlette": ("starlette",), "fastapi": ("fastapi",)})
    module = "sentry_sdk.integrations.fastapi"
    refused = ImportFailure(module, "DidNotEnable", "FastAPI is not installed")
    asked, run = _runs({"fastapi"})

    settled = with_alternatives(
        Settled((), {module: refused}, (), ()),
        {module: "starlette"},
        {},
        run,
        extras,
        lacked={module: ["fastapi"]},
    )

    assert asked == [("fastapi", (module,))]
    assert [e.extra for e in settled.excused] == ["fastapi"]


def test_of_those_that_bring_what_it_stopped_at_the_ones_with_its_extras_come_first() -> None:
    """pydantic-ai-slim 2.68.0's realtime._openai_lifecycle: cerebras (openai alone) brings
    the openai it lacked, then it stops at websockets, which five extras bring; the smallest
    lack openai, and openai-realtime brings both."""
    extras = Extras(
        "pydantic-ai-slim",
        {
            "cerebras": ("openai",),
            "realtime": ("websockets",),
            "elevenlabs-agents-realtime": ("websockets",),
            "google-realtime": ("google-genai", "websockets"),
            "openai-realtime": ("openai", "tiktoken", "websockets"),
        },
    )
    module = "pydantic_ai.realtime._openai_lifecycle"
    stopped = ImportFailure(module, "ModuleNotFoundError", "No module named 'websockets'")
    asked, run = _runs({"openai-realtime"})

    settled = with_alternatives(
        Settled((), {module: stopped}, (), ()), {module: "cerebras"}, {}, run, extras
    )

    # the two tried past cerebras: openai-realtime first, then the smallest
    assert sorted(extra for extra, _ in asked) == ["elevenlabs-agents-realtime", "openai-realtime"]
    assert [e.extra for e in settled.excused] == ["openai-realtime"]


def test_failing_with_every_extra_the_failure_reported_is_where_it_got_furthest() -> None:
    """pgqueuer 1.6.0's adapters.mcp.server: the extra asyncpg brings what it lacks first,
    then it stops at ``No module named 'mcp'``; with the extra mcp it gets past that, to mcp 2's
    own refusal, which is what the extra's users meet."""
    extras = Extras("pgqueuer", {"asyncpg": ("asyncpg",), "mcp": ("mcp", "asyncpg")})
    module = "pgqueuer.adapters.mcp.server"
    stopped = ImportFailure(module, "ModuleNotFoundError", "No module named 'mcp'")
    first = Failure(
        "import_failed", f"module {module!r} failed ... 'asyncpg'", python="3.11", module=module
    )
    refusal = "No module named 'mcp.server.fastmcp'. This is mcp 2.x, where FastMCP was renamed"

    def run(extra: str, modules: Sequence[str]) -> ExtraRun:
        error = {"type": "ModuleNotFoundError", "message": refusal, "traceback": "Traceback..."}
        results = {m: {"ok": False, "error": error} for m in modules}
        return ExtraRun(extra, f"pgqueuer[{extra}]", tuple(modules), (), True, results=results)

    settled = with_alternatives(
        Settled((), {module: stopped}, (first,), ()), {module: "asyncpg"}, {}, run, extras
    )

    [failure] = settled.failures
    assert failure.message == (
        f"module {module!r} failed to import with the extra 'mcp' installed (pgqueuer[mcp]): "
        f"ModuleNotFoundError: {refusal}"
    )
    assert (failure.python, failure.details) == ("3.11", "Traceback...")
    assert settled.failed[module].message == refusal
    assert settled.hints[module] == "it fails with the extras mcp too"
