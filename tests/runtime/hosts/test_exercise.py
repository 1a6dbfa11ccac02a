"""What the hosts that run an application share: a step's time limit, and telling what a plugin
needs and this sandbox lacks from a break."""

from __future__ import annotations

import contextlib
import errno
import socket
import sqlite3
import time

import pytest

from sandboxverify.runtime import EntryPointRef
from sandboxverify.runtime.hosts._base import PluginLoadError, ServerFailure
from sandboxverify.runtime.hosts._exercise import (
    Deadline,
    StepTimeout,
    need_of,
    reaching,
    step_timed_out,
)
from sandboxverify.runtime.hosts._pluggy_watch import AppRun


def raised(code: str) -> BaseException:
    try:
        exec(code, {"socket": socket, "errno": errno, "sqlite3": sqlite3})
    except Exception as exc:
        return exc
    raise AssertionError("did not raise")


@pytest.mark.parametrize(
    ("code", "need"),
    [
        ("raise ConnectionRefusedError(errno.ECONNREFUSED, 'refused')", "service"),
        ("raise TimeoutError('Failed after 61 attempts')", "service"),
        ("raise OSError(errno.EHOSTUNREACH, 'No route to host')", "service"),
        (  # a library's own exception, raised from the refusal
            "try:\n    raise ConnectionRefusedError('refused')\n"
            "except OSError as exc:\n    raise RuntimeError('the server is down') from exc",
            "service",
        ),
        (  # a C library's message: the system's words for the errno
            'raise RuntimeError(\'connection to server at "127.0.0.1", port 5432 failed: '
            "' + __import__('os').strerror(errno.ECONNREFUSED))",
            "service",
        ),
        ("raise ImportError(\"pytest-asyncio is required: pip install 'x-y[async]'\")", "extra"),
        (  # Playwright's browsers, downloaded after the install by its own command
            "raise Exception(\"BrowserType.launch: Executable doesn't exist at /h/.cache/"
            "ms-playwright/chromium-1/chrome\\nLooks like Playwright was just installed.\\n"
            'Please run the following command to download new browsers:\\n  playwright install")',
            "resource",
        ),
        (  # NLTK's data
            'raise LookupError("Resource punkt not found.\\nPlease use the NLTK Downloader to '
            "obtain the resource:\\n>>> nltk.download('punkt')\")",
            "resource",
        ),
        (  # a program the system provides, raised by a wrapper library
            'raise RuntimeError("tesseract is not installed or it\'s not in your PATH")',
            "resource",
        ),
        (  # a program started that is not there
            "import subprocess\nsubprocess.run(['svtest-no-such-program-7'])",
            "resource",
        ),
        (  # a server program that is not installed, started after a refused connection
            "import subprocess\ntry:\n    raise ConnectionRefusedError('refused')\n"
            "except OSError:\n    import pathlib\n"
            "    subprocess.run([pathlib.Path('svtest-no-such-server-7')])",
            "resource",
        ),
        (  # a Python package it lacks is a dependency to declare, however it is said
            "raise RuntimeError('redis is not installed: run pip install redis')",
            None,
        ),
        ("raise FileNotFoundError(2, 'No such file or directory', 'conf/settings.toml')", None),
        ("open('/nonexistent/svtest/data.json')", None),
        ("raise RuntimeError('broken')", None),
        ("raise ImportError('cannot import name x')", None),
        (  # a programming error while handling a refusal is still a programming error
            "try:\n    raise ConnectionRefusedError('refused')\n"
            "except OSError as exc:\n    exc.erno",
            None,
        ),
    ],
    ids=[
        "refused",
        "timeout",
        "unreachable",
        "caused-by",
        "c-library",
        "extra",
        "browser-download",
        "data-download",
        "program-on-path",
        "program-started",
        "server-program-after-refusal",
        "python-package",
        "file-raised",
        "file-opened",
        "break",
        "import-error",
        "programming-error",
    ],
)
def test_what_an_exception_says_the_plugin_needs(code: str, need: str | None) -> None:
    found = need_of(raised(code))
    assert (found.need if found is not None else None) == need


def test_reaching_out_before_a_failure_is_a_service_need_unless_the_code_is_wrong() -> None:
    reached = ["socket.connect ('127.0.0.1', 5432)"]
    found = need_of(raised("raise Exception('docker compose returned 125')"), reached)
    assert found is not None and found.need == "service"
    assert str(found) == (
        "needs a service it cannot reach (it tried socket.connect ('127.0.0.1', 5432)): "
        "Exception: docker compose returned 125"
    )
    assert need_of(raised("raise TypeError('bad')"), reached) is None


def test_an_interpreter_without_sqlite_extension_loading_is_a_platform_need() -> None:
    error = AttributeError("'sqlite3.Connection' object has no attribute 'enable_load_extension'")
    error.name = "enable_load_extension"
    error.obj = sqlite3.connect(":memory:")
    found = need_of(error)
    assert found is not None and found.need == "platform"
    assert "--enable-loadable-sqlite-extensions" in str(found)
    error.name = "no_such_method"
    assert need_of(error) is None


def connect_to_discard_port() -> None:
    with socket.socket() as sock:
        sock.settimeout(1)
        with contextlib.suppress(OSError):  # refused, or no answer: the attempt is recorded
            sock.connect(("127.0.0.1", 9))


def test_reaching_records_connections_and_processes_while_it_runs() -> None:
    with reaching() as seen:
        connect_to_discard_port()
    connect_to_discard_port()
    assert seen == ["socket.connect ('127.0.0.1', 9)"]  # the first attempt only


def retry_loop_sleeping(caught: list[StepTimeout]) -> None:
    """A retry loop that swallows the first timeout: the next one escapes."""
    while True:
        try:
            time.sleep(5)
        except StepTimeout as exc:
            caught.append(exc)
            time.sleep(5)


def test_a_step_that_outlasts_its_time_is_interrupted_again_until_it_ends() -> None:
    caught: list[StepTimeout] = []
    bound = Deadline(30).bound("slow step", 0.2)
    with pytest.raises(StepTimeout, match=r"^slow step did not finish within 0\.2s$"), bound:
        retry_loop_sleeping(caught)
    assert len(caught) == 1


def inner_then_sleep(deadline: Deadline) -> None:
    with deadline.bound("inner", 0.1):
        pass
    time.sleep(5)  # the outer step's alarm, armed again after the inner one


def test_a_step_never_gets_more_than_what_is_left_and_the_outer_bound_resumes() -> None:
    deadline = Deadline(1.0)
    with pytest.raises(StepTimeout, match=r"^outer did not finish"), deadline.bound("outer"):
        inner_then_sleep(deadline)
    with (
        pytest.raises(StepTimeout, match=r"^late did not finish within 0s$"),
        Deadline(0).bound("late"),
    ):
        pass


def test_running_out_of_time_while_the_application_imports_is_a_timeout() -> None:
    """The deadline can strike inside the application's own import, which reports it as
    the application's error: it is still a ``timeout``, never an uncoded error."""
    run = AppRun(EntryPointRef("p", "datasette", "p"), object(), "datasette", Deadline(5), [])
    with pytest.raises(PluginLoadError) as caught, run.step("importing its command line"):
        raise PluginLoadError("application", StepTimeout("datasette: importing", 1.5))
    assert caught.value.stage == "exercise"
    assert isinstance(caught.value.cause, ServerFailure)
    assert caught.value.cause.code == "timeout"
    assert str(caught.value.cause).startswith("datasette: importing did not finish within 1.5s")


def test_a_time_out_raised_where_it_could_not_propagate_is_still_the_time_out() -> None:
    """The alarm may fire while Python runs a weak reference's callback: the StepTimeout is
    then unraisable, and pytest reports it as a PytestUnraisableExceptionWarning whose message
    holds its traceback (the alarm fires again). That is the step's time-out, not a break."""
    unraisable = Warning(
        "Exception ignored in: <function WeakSet.__init__.<locals>._remove at 0x7f>\n\n"
        "Traceback (most recent call last):\n  File ...\n"
        "sandboxverify.runtime.hosts._exercise.StepTimeout: pytest --x did not finish within 10s"
    )
    try:
        try:
            raise StepTimeout("pytest --x", 10.0)
        except StepTimeout as timeout:
            raise RuntimeError("during the hook") from timeout
    except RuntimeError as wrapped:
        chained = wrapped

    assert step_timed_out(unraisable)
    assert step_timed_out(chained)
    assert not step_timed_out(RuntimeError("StepTimeout: a word in a message, nothing ignored"))
    assert not step_timed_out(None)
