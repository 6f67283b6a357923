"""PID namespaces: whether a procfs shows host PIDs, and what a host PID is called inside.

The NVIDIA driver is not PID-namespace aware: it reports every process by its
PID in the initial ("host") namespace. Those PIDs mean something in a procfs
only when that procfs belongs to the host namespace. Inside a container with
its own PID namespace they name nobody, or worse, a different process that
happens to have the same number. Everything here reads files under an
injectable proc root, so tests can build any layout.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from collectors.procfs import read_bytes

# The kernel gives the initial PID namespace a fixed inode (PROC_PID_INIT_INO).
ROOT_PID_NAMESPACE = "pid:[4026531836]"


@dataclass(frozen=True)
class ProcStatus:
    """The lines of ``/proc/<pid>/status`` that identify a process across namespaces."""

    name: str = ""
    uid: int | None = None  # the real user id
    nspids: tuple[int, ...] = ()  # the procfs's own namespace first, the innermost last

    @property
    def local_pid(self) -> int | None:
        """The PID the process has in its own (innermost) namespace."""
        return self.nspids[-1] if self.nspids else None

    def pid_at(self, depth: int) -> int | None:
        """The PID in the namespace ``depth`` levels below the procfs's; None outside it."""
        return self.nspids[depth] if 0 <= depth < len(self.nspids) else None


def parse_status(text: str) -> ProcStatus:
    """``Name``, ``Uid`` and ``NSpid`` from a status file; missing lines stay empty."""
    name = ""
    uid = None
    nspids: tuple[int, ...] = ()
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key == "Name":
            name = rest.strip()
        elif key == "Uid":
            fields = rest.split()
            uid = int(fields[0]) if fields and fields[0].isdigit() else None
        elif key == "NSpid":
            fields = rest.split()
            if all(field.isdigit() for field in fields):
                nspids = tuple(int(field) for field in fields)
    return ProcStatus(name, uid, nspids)


def read_status(proc_root: str, pid: int | str) -> ProcStatus | None:
    """The status of ``pid`` as the procfs at ``proc_root`` sees it; None when gone."""
    data = read_bytes(f"{proc_root}/{pid}/status")
    return parse_status(data.decode("utf-8", "replace")) if data else None


def pid_namespace(proc_root: str, pid: int | str = "self") -> str | None:
    """``"pid:[inode]"`` of the PID namespace ``pid`` lives in; None when unreadable."""
    try:
        return os.readlink(f"{proc_root}/{pid}/ns/pid")
    except OSError:
        return None


def shows_host_pids(proc_root: str) -> bool | None:
    """Whether PIDs in this procfs are host PIDs (the ones the GPU driver reports).

    True when we run in the host namespace, or see a procfs mounted from an
    outer namespace whose init is the host's; False inside a container that
    has its own namespace and its own procfs; None when it cannot be told.
    """
    own = pid_namespace(proc_root, "self")
    if own is None:
        return None
    if own == ROOT_PID_NAMESPACE:
        return True
    status = read_status(proc_root, "self")
    if status is None or len(status.nspids) <= 1:
        return False  # our own procfs, in a namespace that is not the host's
    # The procfs belongs to a namespace outside ours; its pid 1 tells which.
    outer = pid_namespace(proc_root, 1)
    return None if outer is None else outer == ROOT_PID_NAMESPACE


def own_depth(proc_root: str) -> int:
    """How many PID namespaces lie between the procfs's and ours (0: the same one)."""
    status = read_status(proc_root, "self")
    return max(len(status.nspids) - 1, 0) if status is not None else 0


def is_visible(proc_root: str, pid: int) -> bool:
    return os.path.exists(f"{proc_root}/{pid}")
