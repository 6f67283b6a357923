"""Which processes write W&B runs: the SDK's service, its training process and that process's workers.

The service process (``wandb-core``, or a python ``wandb service`` in older
SDKs) holds the run's ``run-*.wandb`` open; its parent trains, and the
trainer's children load data. Only candidate processes (named ``wandb-core``
or with ``wandb`` in the command line) have their fds read. Paths a writer
sees in its own mount namespace are resolved through ``/proc/PID/root``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from collectors.procfs import read_bytes, read_text

RESCAN_SECONDS = 10.0
SERVICE_NAME = "wandb-core"


@dataclass(frozen=True)
class RunWriter:
    """One run file and the processes (procfs PIDs) that write it."""

    run_file: str
    trainer_pid: int
    service_pid: int | None = None
    pids: frozenset[int] = field(default_factory=frozenset)


def list_pids(proc_root: str) -> list[int]:
    try:
        return [int(name) for name in os.listdir(proc_root) if name.isdigit()]
    except OSError:
        return []


def parent_pid(proc_root: str, pid: int) -> int | None:
    text = read_text(f"{proc_root}/{pid}/stat")
    if not text or ")" not in text:
        return None
    fields = text.rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def command_line(proc_root: str, pid: int) -> str:
    data = read_bytes(f"{proc_root}/{pid}/cmdline") or b""
    return data.replace(b"\0", b" ").decode("utf-8", "replace").strip()


def is_candidate(proc_root: str, pid: int) -> bool:
    """Whether ``pid`` may be an SDK service process (the only ones whose fds are read)."""
    name = (read_text(f"{proc_root}/{pid}/comm") or "").strip()
    return name == SERVICE_NAME or "wandb" in command_line(proc_root, pid)


def resolve(proc_root: str, pid: int, path: str) -> str:
    """``path`` as the writer sees it, made reachable from here."""
    if os.path.exists(path):
        return path
    rooted = f"{proc_root}/{pid}/root{path}"
    return rooted if os.path.exists(rooted) else path


def run_file_from_fds(proc_root: str, pid: int) -> str | None:
    try:
        fds = os.listdir(f"{proc_root}/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(f"{proc_root}/{pid}/fd/{fd}")
        except OSError:
            continue
        name = os.path.basename(target)
        if name.startswith("run-") and name.endswith(".wandb"):
            return resolve(proc_root, pid, target)
    return None


def environment(proc_root: str, pid: int) -> dict[str, str]:
    data = read_bytes(f"{proc_root}/{pid}/environ") or b""
    pairs = (entry.partition(b"=") for entry in data.split(b"\0") if b"=" in entry)
    return {key.decode("utf-8", "replace"): value.decode("utf-8", "replace") for key, _, value in pairs}


def run_file_from_directory(proc_root: str, pid: int) -> str | None:
    """The newest run file under the trainer's ``WANDB_DIR``, else its cwd."""
    base = environment(proc_root, pid).get("WANDB_DIR")
    if base is None:
        try:
            base = os.readlink(f"{proc_root}/{pid}/cwd")
        except OSError:
            return None
    base = resolve(proc_root, pid, base)
    files = glob.glob(os.path.join(base, "wandb", "latest-run", "run-*.wandb"))
    files = files or glob.glob(os.path.join(base, "wandb", "*run-*", "run-*.wandb"))
    return max(files, key=os.path.getmtime) if files else None


def children_of(proc_root: str, pids: Iterable[int]) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for pid in pids:
        parent = parent_pid(proc_root, pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    return children


def find_run_writers(proc_root: str = "/proc") -> list[RunWriter]:
    """Every run being written by a process this procfs shows."""
    pids = list_pids(proc_root)
    children = children_of(proc_root, pids)
    writers: dict[str, RunWriter] = {}
    for service in (pid for pid in pids if is_candidate(proc_root, pid)):
        trainer = parent_pid(proc_root, service)
        run_file = run_file_from_fds(proc_root, service)
        if run_file is None and trainer:
            run_file = run_file_from_directory(proc_root, trainer)
        if run_file is None or not trainer or run_file in writers:
            continue
        family = {trainer, service, *children.get(trainer, [])}
        writers[run_file] = RunWriter(run_file, trainer, service, frozenset(family))
    return list(writers.values())


class RunWriterScanner:
    """``find_run_writers`` on a slow cadence, and at once when a new candidate appears."""

    def __init__(self, proc_root: str = "/proc", interval: float = RESCAN_SECONDS) -> None:
        self._proc_root = proc_root
        self._interval = interval
        self._scanned_at: float | None = None
        self._seen: set[int] = set()
        self._writers: list[RunWriter] = []

    def writers(self, now: float) -> list[RunWriter]:
        pids = set(list_pids(self._proc_root))
        fresh = pids - self._seen
        self._seen = pids
        due = self._scanned_at is None or now - self._scanned_at >= self._interval
        if due or any(is_candidate(self._proc_root, pid) for pid in fresh):
            self._writers = find_run_writers(self._proc_root)
            self._scanned_at = now
        return self._writers

    def run_of(self, now: float) -> dict[int, RunWriter]:
        """Each writing process's run, by procfs PID."""
        return {pid: writer for writer in self.writers(now) for pid in writer.pids}
