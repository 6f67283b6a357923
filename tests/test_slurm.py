"""Slurm jobs from cgroup paths and environments, and their details from a stub ``squeue``."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from collectors.slurm import (
    SlurmJob,
    SlurmJobs,
    job_of_cgroup,
    job_of_environ,
    job_of_process,
    parse_squeue,
    run_squeue,
)


@pytest.mark.parametrize(
    "text",
    [
        "4:devices:/slurm/uid_1000/job_1234/step_0/task_0\n0::/\n",
        "0::/system.slice/slurmstepd.scope/job_1234/step_batch/user/task_0\n",
    ],
)
def test_job_from_cgroup_layouts(text: str) -> None:
    assert job_of_cgroup(text) == "1234"


def test_no_job_outside_slurm() -> None:
    assert job_of_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n") is None


def test_job_from_environment() -> None:
    assert job_of_environ(b"HOME=/root\0SLURM_JOB_ID=77\0PATH=/bin\0") == "77"
    assert job_of_environ(b"HOME=/root\0") is None


def test_process_job_by_cgroup_then_environment(tmp_path: Path) -> None:
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "cgroup").write_text("0::/system.slice/slurmstepd.scope/job_9/step_0\n")
    (tmp_path / "11").mkdir()
    (tmp_path / "11" / "cgroup").write_text("0::/user.slice\n")
    (tmp_path / "11" / "environ").write_bytes(b"SLURM_JOB_ID=12\0")
    assert job_of_process(str(tmp_path), 10) == "9"
    assert job_of_process(str(tmp_path), 11) == "12"
    assert job_of_process(str(tmp_path), 99) is None


def test_parse_squeue_lines() -> None:
    assert parse_squeue("1234|alice|train|1:02:03\nbad\n") == {
        "1234": SlurmJob("1234", "alice", "train", "1:02:03")
    }


def _stub(bin_dir: Path, body: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / "squeue"
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_stub_squeue_names_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stub(tmp_path / "bin", "import sys\nprint('1234|alice|train|0:30:00')")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert run_squeue(["1234"]) == {"1234": SlurmJob("1234", "alice", "train", "0:30:00")}


def test_hung_squeue_is_cut_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stub(tmp_path / "bin", "import time\ntime.sleep(3600)")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert run_squeue(["1234"], timeout_s=0.5) == {}


def test_without_squeue_the_id_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run_squeue(["5"]) == {}
    jobs = SlurmJobs()
    assert jobs.get("5") == SlurmJob("5")
    assert jobs.wait_idle()
    assert jobs.get("5").label == "job 5"


def test_cache_asks_once_per_ttl_and_never_blocks() -> None:
    asked: list[list[str]] = []
    now = [0.0]

    def ask(job_ids: list[str]) -> dict[str, SlurmJob]:
        asked.append(job_ids)
        return {"7": SlurmJob("7", "bob", "eval", "5:00")}

    jobs = SlurmJobs(ask=ask, ttl_s=30.0, clock=lambda: now[0])
    assert jobs.get("7") == SlurmJob("7")
    assert jobs.wait_idle()
    assert jobs.get("7").user == "bob"
    assert len(asked) == 1
    now[0] = 31.0
    jobs.get("7")
    assert jobs.wait_idle()
    assert len(asked) == 2
