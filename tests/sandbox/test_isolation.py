"""Which isolation a check gets, and what the OS sandbox (bubblewrap) lets a step see and do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxverify._errors import UsageError
from sandboxverify.sandbox import _bwrap, _isolation
from sandboxverify.sandbox._bwrap import Bubblewrap, available
from sandboxverify.sandbox._isolation import (
    Confinement,
    NetworkName,
    ProcessIsolation,
    choose_isolation,
    interpreter_roots,
)
from sandboxverify.sandbox._seccomp import X86_64, SyscallFilter, program

FILTER = SyscallFilter("x86_64", program(X86_64))


def unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_isolation, "available", lambda: (None, "bwrap is not installed"))


def test_process_is_chosen_when_asked_without_looking_for_the_os_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_isolation, "available", lambda: pytest.fail("probed"))
    isolation, fallback = choose_isolation("process")
    assert isinstance(isolation, ProcessIsolation) and fallback is None


def test_auto_falls_back_to_process_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    unavailable(monkeypatch)
    isolation, fallback = choose_isolation("auto")
    assert isolation.name == "process"
    assert fallback == "bwrap is not installed"


def test_strict_refuses_to_run_without_the_os_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    unavailable(monkeypatch)
    with pytest.raises(UsageError, match=r"--isolation strict: .*bwrap is not installed") as info:
        choose_isolation("strict")
    assert (
        info.value.hint is not None and "apparmor_restrict_unprivileged_userns" in info.value.hint
    )


def test_the_bubblewrap_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_bwrap, "_bwrap_knows", lambda option: True)
    _bwrap._system_mounts.cache_clear()
    work = tmp_path / "sandbox"
    confinement = Confinement(
        cwd=work / "work",
        read_only=(work / "venv",),
        writable=(work / "results",),
        private=(work / "home", work / "tmp", work / "work"),
    )
    bubblewrap = Bubblewrap(Path("/usr/bin/bwrap"), hide=(work / "src",), syscall_filter=FILTER)
    launch = bubblewrap.launch(["python"], confinement)
    argv = launch.argv
    try:
        filter_fd = int(argv[argv.index("--seccomp") + 1])
        assert filter_fd in launch.pass_fds
        assert os.read(filter_fd, 4096) == FILTER.program  # the program, for bwrap to read
    finally:
        launch.close()
    _bwrap._system_mounts.cache_clear()

    text = " ".join(argv)
    size = f"--size {_bwrap.TMPFS_BYTES}"
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",  # no network unless the check asks for the host's
        "--die-with-parent",
        "--new-session",
        "--disable-userns",
        "--proc /proc",
        f"--ro-bind {work / 'venv'} {work / 'venv'}",
        f"--bind {work / 'results'} {work / 'results'}",
        f"--perms 0700 {size} --tmpfs {work / 'home'}",
        f"{size} --tmpfs /tmp",
        f"{size} --tmpfs /var/tmp",
    ):
        assert flag in text, flag
    if os.path.exists("/proc/keys"):  # the user's key descriptions: an empty file instead
        assert argv[argv.index("/proc/keys") - 2] == "--ro-bind-data"
    assert argv[-4:] == ["--chdir", str(work / "work"), "--", "python"]
    # the private /tmp first, then what is bound inside it
    assert argv.index("/tmp") < argv.index(str(work / "venv"))
    assert all(_open(fd) is False for fd in launch.pass_fds)  # closed once handed over


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_the_network_is_the_hosts_only_when_the_check_asks(tmp_path: Path) -> None:
    confinement = Confinement(cwd=tmp_path)
    cases: tuple[tuple[NetworkName, bool], ...] = (("none", True), ("host", False))
    for network, unshared in cases:
        launch = Bubblewrap(Path("/usr/bin/bwrap"), network=network).launch(["x"], confinement)
        launch.close()
        assert ("--unshare-net" in launch.argv) is unshared


def test_the_isolation_chosen_carries_the_network_and_the_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_isolation, "available", lambda: (Path("/usr/bin/bwrap"), ""))
    monkeypatch.setattr(_isolation, "sandbox_filter", lambda: FILTER)
    monkeypatch.setattr(_isolation, "syscall_filter", lambda: FILTER)
    isolation, _ = choose_isolation("auto")
    assert (isolation.network, isolation.syscall_filter) == ("none", FILTER)
    isolation, _ = choose_isolation("strict", network=True)
    assert (isolation.network, isolation.syscall_filter) == ("host", FILTER)
    # no network namespace without the OS sandbox: whatever was asked, it is the host's
    isolation, _ = choose_isolation("process")
    assert (isolation.network, isolation.syscall_filter) == ("host", FILTER)


def test_process_isolation_hands_the_reaper_the_filter(tmp_path: Path) -> None:
    launch = ProcessIsolation(FILTER).launch(["python", "-c", "pass"], Confinement(cwd=tmp_path))
    try:
        assert launch.argv[4:6] == ["--seccomp", str(launch.pass_fds[0])]
        assert launch.argv[6:] == ["--", "python", "-c", "pass"]
    finally:
        launch.close()
    assert ProcessIsolation().launch(["x"], Confinement(cwd=tmp_path)).pass_fds == ()


def test_what_lies_inside_a_bound_directory_is_covered(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    hidden = _bwrap._hidden([tmp_path], hide=[tmp_path / "src", Path("/nonexistent")])
    assert hidden == [tmp_path / "src"]
    # never what the step was given, nor a directory holding it
    assert _bwrap._hidden([tmp_path / "src"], hide=[tmp_path, tmp_path / "src"]) == []


def test_a_hidden_directory_inside_another_is_covered_with_it(tmp_path: Path) -> None:
    """sandboxverify installed in a Python under /usr (Docker's python images): its package
    lies inside site-packages, both to hide; a second tmpfs inside the first, read-only, cannot
    be mounted, so only the outer one is."""
    inner = tmp_path / "site-packages" / "sandboxverify"
    inner.mkdir(parents=True)
    hidden = _bwrap._hidden([tmp_path], hide=[inner, inner.parent])
    assert hidden == [inner.parent]


@pytest.mark.usefixtures("os_sandbox")
def test_nested_hidden_directories_make_a_sandbox_that_starts(tmp_path: Path) -> None:
    bwrap, _ = available()
    assert bwrap is not None
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (inner / "secret").write_text("")
    launch = Bubblewrap(bwrap, hide=(inner, inner.parent)).launch(
        ["/bin/sh", "-c", f"ls -A {inner.parent}"],
        Confinement(cwd=Path("/"), read_only=(tmp_path,)),
    )
    try:
        completed = subprocess.run(
            launch.argv, capture_output=True, text=True, check=False, pass_fds=launch.pass_fds
        )
    finally:
        launch.close()
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""  # covered: empty


def test_interpreter_roots_are_the_prefixes_outside_usr() -> None:
    roots = interpreter_roots(Path(sys.executable))
    assert Path(sys.base_prefix).resolve() in [root.resolve() for root in roots] or str(
        sys.base_prefix
    ).startswith("/usr")
    assert Path("/usr") not in roots


def test_known_prefixes_are_used_without_asking_the_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("asked an interpreter whose prefixes were known")

    monkeypatch.setattr(subprocess, "run", no_process)
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    roots = interpreter_roots(python, prefixes=("/opt/py/3.12", "/opt/py/3.12"))
    assert Path("/opt/py/3.12") in roots
    where = Path(os.path.realpath(sys.executable)).parent.parent
    assert where in roots or where == Path("/usr")  # /usr is bound anyway


# --- the OS sandbox for real ---------------------------------------------------------------

_LOOK_AROUND = r"""
import json, os, sys
seen = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
seen["home"] = os.listdir(os.environ["HOME"])
for name, path in json.loads(sys.argv[1]).items():
    try:
        with open(path) as handle:
            handle.read()
        with open(path, "a") as handle:
            handle.write("x")
        seen[name] = "written"
    except OSError as exc:
        seen[name] = exc.strerror
print(json.dumps(seen))
"""


@pytest.mark.usefixtures("os_sandbox")
def test_inside_the_os_sandbox(tmp_path: Path) -> None:
    """Its own /proc, an empty private home, read-only inputs, one writable directory, and
    nothing else of the host: neither the caller's files nor their working directory."""
    bwrap, _ = available()
    assert bwrap is not None
    given, out, home = tmp_path / "given", tmp_path / "out", tmp_path / "home"
    for path in (given, out, home):
        path.mkdir()
    (given / "input").write_text("")
    (home / "mine").write_text("")
    (out / "result").write_text("")
    secret = tmp_path / "secret"
    secret.write_text("")
    python = Path(sys.executable).resolve()
    confinement = Confinement(
        cwd=out,
        read_only=(given, *interpreter_roots(python)),
        writable=(out,),
        private=(home,),
    )
    targets = {
        "input": str(given / "input"),
        "output": str(out / "result"),
        "secret": str(secret),
        "cwd": str(Path.cwd() / "pyproject.toml"),
    }
    launch = Bubblewrap(bwrap).launch(
        [str(python), "-I", "-S", "-c", _LOOK_AROUND, json.dumps(targets)], confinement
    )

    try:
        completed = subprocess.run(
            launch.argv,
            capture_output=True,
            text=True,
            check=False,
            env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.close()

    assert completed.returncode == 0, completed.stderr
    seen = json.loads(completed.stdout)
    assert seen["pids"][0] == 1 and os.getpid() not in seen["pids"] and len(seen["pids"]) <= 3
    assert seen["home"] == []  # not the host directory bound at HOME's path
    assert seen["input"] == "Read-only file system"
    assert seen["output"] == "written" and (out / "result").read_text() == "x"
    assert seen["secret"] == "No such file or directory"
    assert seen["cwd"] == "No such file or directory"
    assert (given / "input").read_text() == "" and secret.read_text() == ""
