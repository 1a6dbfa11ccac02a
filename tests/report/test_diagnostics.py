from __future__ import annotations

from sandboxverify.report._diagnostics import summarize


def test_pip_error_line_wins() -> None:
    out = (
        "Processing ./x.whl\n"
        "ERROR: Package 'x' requires a different Python: 3.11.7 not in '>=3.14'\n"
    )
    assert summarize(out) == "Package 'x' requires a different Python: 3.11.7 not in '>=3.14'"


def test_last_exception_of_a_traceback() -> None:
    out = (
        "Traceback (most recent call last):\n  File 'setup.py'\nRuntimeError: boom\n\n"
        "ERROR Backend subprocess exited\n"
    )
    assert summarize(out) == "RuntimeError: boom"


def test_uv_error_with_its_first_cause() -> None:
    out = (
        "Using Python 3.12\nerror: No solution found when resolving dependencies\n"
        "  cause: Because the current Python version (3.12.1) does not satisfy Python>=3.14\n"
        "  cause: deeper\n"
    )
    assert summarize(out) == (
        "No solution found when resolving dependencies: Because the current "
        "Python version (3.12.1) does not satisfy Python>=3.14"
    )


def test_fallbacks() -> None:
    assert summarize("") == "no output"
    assert summarize("* Building\nERROR Backend subprocess exited\n") == "Backend subprocess exited"
    assert summarize("something odd\nlast words\n") == "last words"
