"""What one process running untrusted code may see and change, and the process-isolation way to
start it (no OS sandbox). The OS sandbox itself is ``_bwrap``; which one a check uses is
``_isolation``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from sandboxverify._frozen import frozen
from sandboxverify.sandbox._seccomp import SyscallFilter
from sandboxverify.sandbox._subprocess import Launch

IsolationName = Literal["namespaces", "process"]
#: what package code reaches of the network: nothing (a namespace of its own, only loopback),
#: or the host's (its services and interfaces)
NetworkName = Literal["none", "host"]

#: The reaper (a stdlib-only script) that runs each confined command in process isolation.
REAPER = Path(__file__).resolve().with_name("_reaper.py")


@frozen
class Confinement:
    """What one step may see and change. Paths are the host's, bound at the same place."""

    cwd: Path
    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    #: empty directories of the step's own (HOME, TMPDIR, the working directory), gone after it
    private: tuple[Path, ...] = ()


class Isolation(Protocol):
    """A way to start a confined command: wraps its argv."""

    @property
    def name(self) -> IsolationName: ...

    @property
    def signals_as_exit_codes(self) -> bool:
        """Whether a process killed by signal N shows as exit code 128 + N."""

    @property
    def network(self) -> NetworkName: ...

    @property
    def syscall_filter(self) -> SyscallFilter | None:
        """The filter every confined process runs under, or ``None`` (no table here)."""

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch: ...


@frozen
class Confined:
    """A command's launcher (see ``_subprocess.Command.launcher``): an isolation, a confinement."""

    isolation: Isolation
    confinement: Confinement

    @property
    def signals_as_exit_codes(self) -> bool:
        return self.isolation.signals_as_exit_codes

    def launch(self, argv: Sequence[str]) -> Launch:
        return self.isolation.launch(argv, self.confinement)


@frozen
class ProcessIsolation:
    """``process``: no OS sandbox. The environment allowlists, private HOME and TMPDIR, ``-I``
    and an empty working directory still apply (the stages set them); on Linux the reaper runs
    each step, so whatever it leaves running (a double-forked ``setsid`` daemon included) is
    killed when the step ends, and applies the system call filter to it. The network is the
    host's: there is no network namespace without the OS sandbox."""

    syscall_filter: SyscallFilter | None = None
    name: IsolationName = "process"
    signals_as_exit_codes: bool = False
    network: NetworkName = "host"

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch:
        if not sys.platform.startswith("linux") or not sys.executable:
            return Launch(list(argv))
        reaper = [sys.executable, "-I", "-S", str(REAPER)]
        if self.syscall_filter is None:
            return Launch([*reaper, *argv])
        fd = self.syscall_filter.pipe()
        return Launch([*reaper, "--seccomp", str(fd), "--", *argv], (fd,))


#: the default where nothing chose: process isolation
PROCESS = ProcessIsolation()
