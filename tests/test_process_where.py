"""Where a process runs (Slurm job, container) and which W&B run it writes: the table's rows and columns."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from test_collectors_procfs import fake_process, write

from collectors.processes import ProcessTableCollector
from widgets.process_rows import cell_text, choose_columns, header_text, measured_widths, process_row

CID = "ab" * 32


def rows_by_pid(root: Path) -> dict:
    collector = ProcessTableCollector(root=str(root))
    assert collector.probe().available
    collector.sample()
    return {row.pid: row for row in collector.extras()["processes"]}


def test_rows_say_their_job_else_their_container(tmp_path: Path) -> None:
    fake_process(tmp_path, 10, "python", cmdline=b"python\0train.py\0")
    write(tmp_path, "/proc/10/cgroup", "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n")
    fake_process(tmp_path, 11, "python", cmdline=b"python\0serve.py\0")
    write(tmp_path, "/proc/11/cgroup", f"0::/system.slice/docker-{CID}.scope\n")
    write(tmp_path, f"/var/lib/docker/containers/{CID}/config.v2.json", json.dumps({"Name": "/trainer"}))
    fake_process(tmp_path, 12, "sleep", cmdline=b"sleep\0")
    write(tmp_path, "/proc/12/environ", b"HOME=/root\0SLURM_JOB_ID=77\0")
    fake_process(tmp_path, 13, "bash", cmdline=b"bash\0")
    write(tmp_path, "/proc/13/cgroup", "0::/user.slice\n")
    rows = rows_by_pid(tmp_path)
    assert rows[10].where == "job 1234"
    assert rows[11].where == "docker trainer"
    assert rows[12].where == "job 77"
    assert rows[13].where == ""


def test_cgroup_is_read_once_per_process(tmp_path: Path) -> None:
    fake_process(tmp_path, 10, "python", cmdline=b"python\0")
    write(tmp_path, "/proc/10/cgroup", "0::/slurm/uid_1/job_5/step_0\n")
    collector = ProcessTableCollector(root=str(tmp_path))
    collector.probe()
    collector.sample()
    write(tmp_path, "/proc/10/cgroup", "0::/slurm/uid_1/job_6/step_0\n")
    collector.sample()
    (row,) = collector.extras()["processes"]
    assert row.where == "job 5"
    fake_process(tmp_path, 10, "python", cmdline=b"python\0", start=99)  # the pid reused
    collector.sample()
    (row,) = collector.extras()["processes"]
    assert row.where == "job 6"


def test_run_writers_show_their_run_id(tmp_path: Path) -> None:
    run_dir = tmp_path / "wandb" / "run-20260101_000000-abc123"
    run_dir.mkdir(parents=True)
    run_file = run_dir / "run-abc123.wandb"
    run_file.write_bytes(b":W&B")
    fake_process(tmp_path, 100, "python", cmdline=b"python\0train.py\0")
    fake_process(tmp_path, 101, "wandb-core", ppid=100, cmdline=b"wandb-core\0--port-filename\0x\0")
    write(tmp_path, "/proc/101/comm", "wandb-core\n")
    (tmp_path / "proc" / "101" / "fd").mkdir()
    os.symlink(str(run_file), tmp_path / "proc" / "101" / "fd" / "7")
    fake_process(tmp_path, 200, "bash", cmdline=b"bash\0")
    rows = rows_by_pid(tmp_path)
    assert rows[100].run == "abc123"
    assert rows[101].run == "abc123"
    assert rows[200].run == ""


def row(pid: int, where: str = "", run: str = "") -> SimpleNamespace:
    return SimpleNamespace(
        pid=pid, user="me", cpu_percent=1.0, rss_bytes=2**20, memory_percent=1.0, name="python",
        command="python train.py", where=where, run=run,
    )


def keys(layout) -> list[str]:
    return [column.key for column, _ in layout]


def test_columns_show_only_when_some_row_has_a_value() -> None:
    plain = [row(1), row(2)]
    assert "where" not in keys(choose_columns(120, measured_widths(plain)))
    assert "run" not in keys(choose_columns(120, measured_widths(plain)))
    placed = [row(1, where="pod ml/trainer-0", run="abc123"), row(2)]
    layout = choose_columns(120, measured_widths(placed))
    assert keys(layout)[-3:] == ["where", "run", "command"]
    assert "WHERE" in header_text(layout, "cpu", True)
    line = "".join(text for text, _ in process_row(placed[0], layout, "value"))
    assert "pod ml/trainer-0" in line and "abc123" in line
    assert cell_text(layout[-3][0], placed[1]) == ""


def test_a_plain_table_is_unchanged_by_the_new_columns() -> None:
    plain = [row(1), row(2)]
    bare = [SimpleNamespace(**{k: v for k, v in vars(r).items() if k not in ("where", "run")}) for r in plain]
    for width in (12, 30, 44, 120):
        assert choose_columns(width, measured_widths(plain)) == choose_columns(width, measured_widths(bare))


def test_a_long_place_is_cut_to_its_column() -> None:
    layout = choose_columns(200, measured_widths([row(1, where="pod namespace/" + "x" * 60)]))
    assert dict((column.key, cells) for column, cells in layout)["where"] == 24
