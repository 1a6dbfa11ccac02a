"""The OS sandbox on Linux: every confined step in a bubblewrap sandbox of its own.

New user, PID, IPC, UTS, cgroup, mount and network namespaces; its own ``/proc`` (no process
outside is visible, so no ``/proc/<pid>/environ`` of ours or of our parents, and ``/proc/net``
is its own network's); a root file system made only of what the step needs, read-only (the
system's ``/usr`` and libraries, a few files of ``/etc``, the interpreter, the step's
environment, the runtime copy); empty private HOME, TMPDIR and working directory, and ``/tmp``,
each a tmpfs of at most :data:`TMPFS_BYTES`; only the step's own output directories writable;
no capabilities and no new privileges (bubblewrap sets ``PR_SET_NO_NEW_PRIVS``); the system call
filter (``_seccomp``) and a session keyring of its own (``_keyring``), with ``/proc/keys``
empty; a new session (no terminal to inject into); it dies with its parent, and when its first
process ends the PID namespace ends with it, taking every daemon along. The user's home, the
caller's working directory and source tree, and sandboxverify's own installation are never bound
in (or are covered where a bound directory holds them).

No network: only a loopback of its own, so neither the host's services on ``127.0.0.1`` nor its
abstract unix sockets (which no mount namespace covers) answer; ``--network`` gives a check the
host's. Path sockets (``/run``, ``$XDG_RUNTIME_DIR``: docker.sock, the D-Bus user bus, an ssh
agent) are a matter of the mount namespace, and none of those directories is bound in.

bubblewrap is the system's ``bwrap`` (Debian/Ubuntu/Fedora package ``bubblewrap``, what Flatpak
sandboxes with): without a setuid bit it needs unprivileged user namespaces, and the
distribution keeps it up to date. Ubuntu 23.10 and later restrict those namespaces with
AppArmor, whose profile for bwrap (``bwrap-userns-restrict``) is shipped but not loaded by
24.04, and is matched by path (``/usr/bin/bwrap``): a bwrap from anywhere else gets none.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from sandboxverify._frozen import frozen
from sandboxverify.sandbox._confinement import Confinement, IsolationName, NetworkName
from sandboxverify.sandbox._seccomp import SyscallFilter, syscall_filter
from sandboxverify.sandbox._subprocess import Launch

#: sandboxverify's own package directory (never visible inside the OS sandbox)
_PACKAGE = Path(__file__).resolve().parents[1]

#: What sandboxed code sees of the host's /etc: name resolution, certificates, time zones,
#: users and groups, the dynamic linker's cache. Nothing secret (no shadow, no ssl/private).
_ETC = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "crypto-policies",
    "debian_version",
    "fonts",
    "gai.conf",
    "group",
    "host.conf",
    "hostname",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "locale.conf",
    "localtime",
    "lsb-release",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "pki/ca-trust",
    "pki/tls/certs",
    "pki/tls/openssl.cnf",
    "protocols",
    "resolv.conf",
    "services",
    "ssl/certs",
    "ssl/openssl.cnf",
    "timezone",
)
#: Top-level system directories: bound read-only, or recreated as the symlinks they are
#: (``/bin -> usr/bin`` on merged-/usr systems).
_SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")

PROBE_TIMEOUT = 20.0
#: the most each tmpfs of the sandbox (``/tmp``, ``/var/tmp``, the private HOME, TMPDIR and
#: working directory) holds: it is memory, and a build's temporary files go there
TMPFS_BYTES = 1 << 30
#: where the kernel lists the descriptions of the user's keys: empty files in the sandbox
_KEY_FILES: tuple[str, ...] = ("/proc/keys", "/proc/key-users")


@frozen
class Bubblewrap:
    """``namespaces``: every step in a bubblewrap sandbox of its own.

    ``hide``: more to keep out of sight wherever a bound directory holds it (the check's
    targets: the source tree). ``network``: ``host`` shares the host's network (``--network``).
    ``syscall_filter``: the filter bwrap applies to every process inside (see
    :func:`sandbox_filter`)."""

    bwrap: Path
    hide: tuple[Path, ...] = ()
    network: NetworkName = "none"
    syscall_filter: SyscallFilter | None = None
    name: IsolationName = "namespaces"
    signals_as_exit_codes: bool = True

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch:
        fds: list[int] = []
        try:
            args = [str(self.bwrap), *_namespace_flags(network=self.network == "host")]
            args += _system_mounts()
            args += self._mounts(confinement)
            args += _covered_key_files(fds)
            if self.syscall_filter is not None:
                fds.append(self.syscall_filter.pipe())
                args += ["--seccomp", str(fds[-1])]
        except BaseException:
            Launch([], tuple(fds)).close()
            raise
        return Launch([*args, "--chdir", str(confinement.cwd), "--", *argv], tuple(fds))

    def _mounts(self, confinement: Confinement) -> list[str]:
        mounts: list[tuple[Path, list[str]]] = []
        for path in confinement.read_only:
            mounts.append((path, ["--ro-bind", str(path), str(path)]))
        for path in confinement.writable:
            mounts.append((path, ["--bind", str(path), str(path)]))
        perms = ["--perms", "0700"] if _bwrap_knows("--perms") else []
        for path in confinement.private:
            mounts.append((path, [*perms, *_sized(), "--tmpfs", str(path)]))
        bound = [*confinement.read_only, *confinement.writable, *confinement.private]
        for path in _hidden(bound, self.hide):
            mounts.append((path, ["--tmpfs", str(path), "--remount-ro", str(path)]))
        # parents before children: a bind inside /tmp comes after the private /tmp
        args: list[str] = []
        for _, mount in sorted(mounts, key=lambda item: len(item[0].parts)):
            args += mount
        return args


def sandbox_filter() -> SyscallFilter | None:
    """The system call filter the OS sandbox applies: this machine's, where bwrap can load one
    (``--seccomp``)."""
    return syscall_filter() if _bwrap_knows("--seccomp") else None


def available() -> tuple[Path | None, str]:
    """``bwrap`` if it can make the sandbox here (tried once per process), else why not."""
    with _probing:  # a probe started ahead is waited for, not repeated
        return _available()


def probe_ahead() -> None:
    """Start finding out whether the OS sandbox works here, in the background: a check's
    command line does, while it imports the rest of what a check needs."""
    threading.Thread(target=available, name="bwrap-probe", daemon=True).start()


_probing = threading.Lock()


@functools.cache
def _available() -> tuple[Path | None, str]:
    if not sys.platform.startswith("linux"):
        return None, f"the OS sandbox needs Linux (this is {sys.platform})"
    located = shutil.which("bwrap")
    if located is None:
        return None, "bubblewrap (bwrap) is not installed"
    bwrap = Path(located)
    true = shutil.which("true") or "/bin/true"
    # the sandbox as steps get it: no network, the system call filter
    probe = Bubblewrap(bwrap, syscall_filter=sandbox_filter()).launch(
        [true], Confinement(cwd=Path("/"))
    )
    try:
        completed = subprocess.run(
            probe.argv,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            pass_fds=probe.pass_fds,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{bwrap} cannot be run: {exc}"
    finally:
        probe.close()
    if completed.returncode != 0:
        said = completed.stderr.decode("utf-8", errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit code {completed.returncode}"
        return None, f"{bwrap} cannot create its namespaces here: {why}"
    return bwrap, ""


def _namespace_flags(*, network: bool) -> list[str]:
    flags = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
    ]
    if not network:
        flags.append("--unshare-net")
    if os.geteuid() == 0:
        # root in a user namespace keeps every capability over it unless told otherwise
        flags += ["--cap-drop", "ALL"]
    if _bwrap_knows("--disable-userns"):
        flags.append("--disable-userns")  # no nested user namespace to escape through
    return flags


def _bwrap_knows(option: str) -> bool:
    return option in _bwrap_help()


@functools.cache
def _bwrap_help() -> str:
    """What ``bwrap --help`` says (asked once: each option it is asked about is in it)."""
    located = shutil.which("bwrap")
    if located is None:
        return ""
    try:
        completed = subprocess.run(
            [located, "--help"],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return completed.stdout.decode("utf-8", errors="replace")


@functools.cache
def _system_mounts() -> tuple[str, ...]:
    args: list[str] = []
    for name in _SYSTEM:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind-try", str(path), str(path)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += [*_sized(), "--tmpfs", "/tmp", *_sized(), "--tmpfs", "/var/tmp"]
    return tuple(args)


def _sized() -> list[str]:
    """The bound on the next tmpfs, where bwrap can set one (``--size``, bubblewrap 0.6)."""
    return ["--size", str(TMPFS_BYTES)] if _bwrap_knows("--size") else []


def _covered_key_files(fds: list[int]) -> list[str]:
    """Empty files over ``/proc/keys`` and ``/proc/key-users``: they list the descriptions of
    every key of the user's, whichever keyring holds it. Each reads its (empty) content from a
    descriptor of its own, added to ``fds``."""
    if not _bwrap_knows("--ro-bind-data"):
        return []
    args: list[str] = []
    for name in _KEY_FILES:
        if os.path.exists(name):
            read, write = os.pipe()
            os.close(write)
            fds.append(read)
            args += ["--ro-bind-data", str(read), name]
    return args


def _hidden(bound: Iterable[Path], hide: Iterable[Path] = ()) -> list[Path]:
    """What of ours lies inside a directory bound into the sandbox, to cover with an empty
    one: sandboxverify's own package and the environments it runs from, the user's home,
    the caller's working directory and the check's targets (the source tree)."""
    bound = list(bound)
    roots = [Path("/usr"), *bound]
    hidden: list[Path] = []
    for path in _resolved(frozenset({*_own_places(), Path.cwd(), *hide})):
        inside = any(_strictly_within(path, root) for root in roots)
        # never hide what the step was given, nor a directory holding something it was given
        holds = any(_within(root, path) for root in bound)
        if inside and not holds and path.is_dir():
            hidden.append(path)
    # the outermost only: a tmpfs inside one already hidden (and read-only) cannot be mounted
    return [path for path in hidden if not any(_strictly_within(path, o) for o in hidden)]


@functools.cache
def _own_places() -> tuple[Path, ...]:
    """Our package, the environment we run from and its site directories, the user's home:
    fixed for the life of the process."""
    places = {_PACKAGE, Path(sys.prefix), Path.home()}
    places.update(Path(p) for p in site.getsitepackages())
    places.add(Path(sysconfig.get_paths()["purelib"]))
    if site.ENABLE_USER_SITE and site.USER_SITE:
        places.add(Path(site.USER_SITE))
    return tuple(places)


@functools.lru_cache(maxsize=16)
def _resolved(candidates: frozenset[Path]) -> tuple[Path, ...]:
    """``candidates`` with their links resolved, in order; those that cannot be are left out.
    Every sandbox process of a check asks the same, and resolving walks each path's links."""
    resolved: list[Path] = []
    for candidate in sorted(candidates):
        try:
            resolved.append(candidate.resolve())
        except OSError:
            continue
    return tuple(resolved)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _strictly_within(path: Path, root: Path) -> bool:
    return root in path.parents
