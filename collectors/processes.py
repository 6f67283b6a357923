"""The process table: every process with its parent, state, CPU, memory, threads and command.

A classic monitor spends most of its own CPU here, so each sweep reads one
file per process (``/proc/<pid>/stat``). The owner and command line are
read once per process and kept until the process execs or its pid is reused.

Kernel threads have no command line. Their name comes whole from ``stat``:
kernels since 5.17 give a kernel thread's full name there (and in ``comm``
and ``status``, which say the same), past the 15 characters of a process
name, and workqueue workers carry their queue (``kworker/0:1-events``).
They read as ``ps`` writes them: ``[ksoftirqd/0]``.

Each row also says where the process runs (its Slurm job, else its
container; read once per process) and which W&B run it writes (the run
writers are found on their own slower cadence).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

from collectors.base import Collector, Probe
from collectors.cgroup import CgroupReader
from collectors.containers import ContainerNames, container_of_cgroup
from collectors.memory import usable_memory
from collectors.process import CLOCK_TICKS, PreviousReading, ProcStat, parse_stat
from collectors.procfs import UserNames, read_bytes, read_text, under_root
from collectors.run_writers import RunWriter, RunWriterScanner
from collectors.slurm import SlurmJob, job_of_cgroup, job_of_environ

# The kernel cuts process names (comm) to 15 characters.
COMM_LENGTH = 15
# kthreadd: the parent of every kernel thread.
KTHREADD_PID = 2


@dataclass(frozen=True)
class ProcessRow:
    pid: int
    name: str
    user: str
    cpu_percent: float  # 100 = one core busy over the interval
    rss_bytes: int
    memory_percent: float
    threads: int
    command: str  # the command line; a kernel thread's name in brackets
    ppid: int = 0  # 0: no parent in view
    state: str = ""  # R running, S sleeping, D disk wait, Z zombie, T stopped, I idle …
    cpu_seconds: float = 0.0  # CPU time used since the process started (user + system)
    kernel: bool = False  # a kernel thread
    where: str = ""  # its Slurm job (``job 1234``), else its container (``pod ns/name``, ``docker name``)
    run: str = ""  # the id of the W&B run it writes


@dataclass(frozen=True)
class _Identity:
    """What stays fixed for one program in one process."""

    start_ticks: int
    comm: str
    name: str
    user: str
    command: str
    kernel: bool
    where: str


def command_line(raw: bytes) -> list[str]:
    """``/proc/<pid>/cmdline`` (NUL-separated) as a list of arguments."""
    return [arg.decode("utf-8", "replace") for arg in raw.rstrip(b"\0").split(b"\0") if arg]


def display_name(comm: str, argv: list[str]) -> str:
    """The program name, un-truncated from argv[0] when comm was cut short."""
    if len(comm) >= COMM_LENGTH and argv:
        program = os.path.basename(argv[0])
        if program.startswith(comm):
            return program
    return comm


def is_kernel_thread(pid: int, ppid: int, argv: list[str]) -> bool:
    """kthreadd and its children, which have no command line (as ``ps`` and htop tell them)."""
    return not argv and (pid == KTHREADD_PID or ppid == KTHREADD_PID)


def kernel_command(name: str) -> str:
    """How a kernel thread reads in a command column: its whole name in brackets."""
    return f"[{name}]"


def run_label(writer: RunWriter) -> str:
    """A run's id, from its directory ``run-YYYYMMDD_HHMMSS-<id>`` or its file ``run-<id>.wandb``."""
    directory = os.path.basename(os.path.dirname(writer.run_file))
    if directory.count("-") >= 2:
        return directory.rsplit("-", 1)[-1]
    stem = os.path.basename(writer.run_file).removesuffix(".wandb")
    return stem.removeprefix("run-")


class ProcessTableCollector(Collector):
    """No metric keys; ``extras()`` gives ``{"processes": (ProcessRow, ...)}``.

    ``memory_percent`` is against the same total the host facts show (RAM,
    or a smaller cgroup limit), so the column adds up to the header.
    """

    name = "processes"
    cadence = 2.0

    def __init__(
        self,
        root: str = "/",
        cgroup: CgroupReader | None = None,
        memory_total: int | None = None,
        sys_root: str | None = None,
    ) -> None:
        self.root = root
        self.proc_dir = under_root(root, "/proc").rstrip("/")
        # Runtimes' container configs live under ``sys_root`` (``$LEET_SYS_ROOT`` as the host collectors pass it).
        self._containers = ContainerNames(sys_root=root if sys_root is None else sys_root, proc_root=self.proc_dir)
        self._run_writers = RunWriterScanner(proc_root=self.proc_dir)
        self.cgroup = cgroup if cgroup is not None else CgroupReader(root=root)
        self._memory_total = memory_total or 0
        self._identities: dict[int, _Identity] = {}
        self._users = UserNames()
        self._previous = PreviousReading()
        self._rows: tuple[ProcessRow, ...] = ()

    def probe(self) -> Probe:
        if not os.path.isdir(self.proc_dir):
            return Probe.absent(f"{self.proc_dir} is not mounted")
        if not self._memory_total:
            self._memory_total = usable_memory(self.cgroup, self.root)[0]
        self._previous.remember(self._read_all())
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        stats = self._read_all()
        elapsed = self._previous.elapsed()
        runs = {pid: run_label(writer) for pid, writer in self._run_writers.run_of(time.monotonic()).items()}
        self._rows = tuple(self._row(stat, elapsed, runs.get(stat.pid, "")) for stat in stats.values())
        self._forget_gone(stats)
        self._previous.remember(stats)
        return {}

    def extras(self) -> Mapping[str, Any]:
        return {"processes": self._rows}

    def _read_all(self) -> dict[int, ProcStat]:
        stats = {}
        for entry in os.scandir(self.proc_dir):
            if not entry.name.isdigit():
                continue
            data = read_bytes(f"{self.proc_dir}/{entry.name}/stat")
            stat = parse_stat(data.decode("utf-8", "replace")) if data else None
            if stat is not None:
                stats[stat.pid] = stat
        return stats

    def _row(self, stat: ProcStat, elapsed: float, run: str) -> ProcessRow:
        identity = self._identity(stat)
        return ProcessRow(
            pid=stat.pid,
            name=identity.name,
            user=identity.user,
            cpu_percent=self._cpu_percent(stat, elapsed),
            rss_bytes=stat.rss_bytes,
            memory_percent=(
                stat.rss_bytes / self._memory_total * 100 if self._memory_total else 0.0
            ),
            threads=stat.threads,
            command=identity.command,
            ppid=stat.ppid,
            state=stat.state,
            cpu_seconds=stat.cpu_ticks / CLOCK_TICKS,
            kernel=identity.kernel,
            where=identity.where,
            run=run,
        )

    def _cpu_percent(self, stat: ProcStat, elapsed: float) -> float:
        if elapsed <= 0:
            return 0.0
        return self._previous.ticks(stat) / CLOCK_TICKS / elapsed * 100

    def _identity(self, stat: ProcStat) -> _Identity:
        known = self._identities.get(stat.pid)
        if known is not None and known.start_ticks == stat.start_ticks and known.comm == stat.name:
            return known
        raw = read_bytes(f"{self.proc_dir}/{stat.pid}/cmdline") or b""
        argv = command_line(raw)
        kernel = is_kernel_thread(stat.pid, stat.ppid, argv)
        identity = _Identity(
            start_ticks=stat.start_ticks,
            comm=stat.name,
            name=display_name(stat.name, argv),
            user=self._user(stat.pid),
            command=kernel_command(stat.name) if kernel else " ".join(argv) or stat.name,
            kernel=kernel,
            where="" if kernel else self._where(stat.pid),
        )
        self._identities[stat.pid] = identity
        return identity

    def _where(self, pid: int) -> str:
        """The process's Slurm job, else its container, from one read of its cgroup file."""
        text = read_text(f"{self.proc_dir}/{pid}/cgroup") or ""
        job = job_of_cgroup(text)
        if job is None:
            environ = read_bytes(f"{self.proc_dir}/{pid}/environ")
            job = job_of_environ(environ) if environ else None
        if job is not None:
            return SlurmJob(job).label
        container = container_of_cgroup(text)
        return self._containers.of_ref(container).label if container is not None else ""

    def _user(self, pid: int) -> str:
        try:
            uid = os.stat(f"{self.proc_dir}/{pid}").st_uid
        except OSError:
            return "?"
        return self._users.name(uid)

    def _forget_gone(self, stats: Mapping[int, ProcStat]) -> None:
        for pid in [pid for pid in self._identities if pid not in stats]:
            del self._identities[pid]
