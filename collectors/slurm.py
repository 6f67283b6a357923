"""Which Slurm job a process belongs to, and the job's user, name and time left.

The job id comes from the process's cgroup path (``job_NNN``) or its
``SLURM_JOB_ID`` environment variable; details from ``squeue`` when it is on
PATH, asked off the caller's thread with a timeout and cached, so a hung
``squeue`` costs only its own thread.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from collectors.procfs import read_bytes, read_text

_JOB_IN_PATH = re.compile(r"/job_(\d+)(?:/|$)")

SQUEUE_TIMEOUT_S = 2.0
CACHE_TTL_S = 30.0
SQUEUE_FORMAT = "%i|%u|%j|%L"


@dataclass(frozen=True)
class SlurmJob:
    """A job as a row shows it; user, name and time left are None until ``squeue`` answers."""

    job_id: str
    user: str | None = None
    name: str | None = None
    time_left: str | None = None

    @property
    def label(self) -> str:
        return f"job {self.job_id}"


def job_of_cgroup(text: str) -> str | None:
    """The job id a ``/proc/PID/cgroup`` file names (v1 and v2 layouts), or None."""
    for line in text.splitlines():
        found = _JOB_IN_PATH.search(line.split(":", 2)[-1])
        if found is not None:
            return found.group(1)
    return None


def job_of_environ(data: bytes) -> str | None:
    """``SLURM_JOB_ID`` from a ``/proc/PID/environ`` file, or None."""
    for entry in data.split(b"\0"):
        if entry.startswith(b"SLURM_JOB_ID="):
            value = entry.split(b"=", 1)[1].decode("ascii", "replace").strip()
            return value if value.isdigit() else None
    return None


def job_of_process(proc_root: str, pid: int) -> str | None:
    """The job ``pid`` runs in, by its cgroup, else its environment (readable for own processes only)."""
    text = read_text(f"{proc_root}/{pid}/cgroup")
    job = job_of_cgroup(text) if text is not None else None
    if job is None:
        data = read_bytes(f"{proc_root}/{pid}/environ")
        job = job_of_environ(data) if data is not None else None
    return job


def parse_squeue(text: str) -> dict[str, SlurmJob]:
    """Jobs from ``squeue --noheader --format '%i|%u|%j|%L'`` output."""
    jobs = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and parts[0]:
            job_id, user, name, left = parts
            jobs[job_id] = SlurmJob(job_id, user or None, name or None, left or None)
    return jobs


def run_squeue(job_ids: list[str], timeout_s: float = SQUEUE_TIMEOUT_S) -> dict[str, SlurmJob]:
    """Asks ``squeue`` about ``job_ids``; empty when it is missing, fails or outlives ``timeout_s``."""
    squeue = shutil.which("squeue")
    if squeue is None or not job_ids:
        return {}
    command = [squeue, "--noheader", "--format", SQUEUE_FORMAT, "--jobs", ",".join(job_ids)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return parse_squeue(done.stdout) if done.returncode == 0 else {}


class SlurmJobs:
    """Job details by id, refreshed in the background at most once per ``ttl_s``.

    ``get`` never waits: until ``squeue`` answers it gives the id alone.
    """

    def __init__(
        self,
        ask: Callable[[list[str]], dict[str, SlurmJob]] = run_squeue,
        ttl_s: float = CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ask = ask
        self._ttl_s = ttl_s
        self._clock = clock
        self._known: dict[str, SlurmJob] = {}
        self._asked_at: dict[str, float] = {}
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def get(self, job_id: str) -> SlurmJob:
        with self._lock:
            known = self._known.get(job_id)
            stale = self._clock() - self._asked_at.get(job_id, float("-inf")) >= self._ttl_s
        if stale:
            self._refresh([job_id])
        return known or SlurmJob(job_id)

    def _refresh(self, job_ids: list[str]) -> None:
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            now = self._clock()
            for job_id in job_ids:
                self._asked_at[job_id] = now
            self._worker = threading.Thread(target=self._ask_and_store, args=(job_ids,), daemon=True)
            self._worker.start()

    def _ask_and_store(self, job_ids: list[str]) -> None:
        answers = self._ask(job_ids)
        with self._lock:
            self._known.update(answers)

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Waits for an outstanding ``squeue``; True when none is left running."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout_s)
        return worker is None or not worker.is_alive()
