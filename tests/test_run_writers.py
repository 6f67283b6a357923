"""Finding the processes that write W&B runs, in fake procfs trees."""

from __future__ import annotations

import os
from pathlib import Path

from collectors.run_writers import RunWriterScanner, find_run_writers


def make_process(proc: Path, pid: int, ppid: int, comm: str, cmdline: str = "", **links: str) -> Path:
    directory = proc / str(pid)
    (directory / "fd").mkdir(parents=True)
    (directory / "stat").write_text(f"{pid} ({comm}) S {ppid} 1 1 0\n")
    (directory / "comm").write_text(comm + "\n")
    (directory / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode())
    for name, target in links.items():
        os.symlink(target, directory / name)
    return directory


def make_run(base: Path, name: str = "offline-run-20260101_000000-abc123") -> Path:
    run_dir = base / "wandb" / name
    run_dir.mkdir(parents=True)
    run_file = run_dir / "run-abc123.wandb"
    run_file.write_bytes(b":W&B")
    return run_file


def test_service_fd_names_the_run_and_its_family(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    run_file = make_run(tmp_path / "work")
    make_process(proc, 100, 1, "python", "python train.py")
    service = make_process(proc, 101, 100, "wandb-core", "wandb-core --port-filename x")
    os.symlink(str(run_file), service / "fd" / "7")
    make_process(proc, 102, 100, "python", "python train.py")
    make_process(proc, 200, 1, "bash", "bash")
    (writer,) = find_run_writers(str(proc))
    assert writer.run_file == str(run_file)
    assert (writer.trainer_pid, writer.service_pid) == (100, 101)
    assert writer.pids == {100, 101, 102}


def test_only_candidates_have_their_fds_read(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    run_file = make_run(tmp_path / "work")
    bystander = make_process(proc, 300, 1, "python", "python other.py")
    os.symlink(str(run_file), bystander / "fd" / "3")
    assert find_run_writers(str(proc)) == []


def test_trainer_cwd_then_wandb_dir_when_fds_are_unreadable(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    in_cwd = make_run(tmp_path / "cwd")
    make_process(proc, 100, 1, "python", "python train.py", cwd=str(tmp_path / "cwd"))
    make_process(proc, 101, 100, "python", "python -m wandb service")
    (writer,) = find_run_writers(str(proc))
    assert writer.run_file == str(in_cwd)
    in_env = make_run(tmp_path / "elsewhere")
    (proc / "100" / "environ").write_bytes(f"HOME=/root\0WANDB_DIR={tmp_path / 'elsewhere'}\0".encode())
    (writer,) = find_run_writers(str(proc))
    assert writer.run_file == str(in_env)


def test_paths_inside_a_writers_mount_namespace_resolve_through_its_root(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    container_root = tmp_path / "container"
    run_file = make_run(container_root / "job")
    make_process(proc, 100, 1, "python", "python train.py", root=str(container_root))
    service = make_process(proc, 101, 100, "wandb-core", "wandb-core", root=str(container_root))
    inside = "/" + str(run_file.relative_to(container_root))
    os.symlink(inside, service / "fd" / "9")
    (writer,) = find_run_writers(str(proc))
    assert os.path.samefile(writer.run_file, run_file)


def test_scanner_rescans_when_a_candidate_appears(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    scanner = RunWriterScanner(str(proc), interval=1000)
    assert scanner.run_of(0.0) == {}
    run_file = make_run(tmp_path / "work")
    make_process(proc, 100, 1, "python", "python train.py")
    service = make_process(proc, 101, 100, "wandb-core", "wandb-core")
    os.symlink(str(run_file), service / "fd" / "7")
    assert set(scanner.run_of(1.0)) == {100, 101}


TRAINER = """
import os, sys, time, wandb
run = wandb.init(mode="offline", project="writers", name="writer-test")
open(sys.argv[1] + ".tmp", "w").write(run.id)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
step = 0
while not os.path.exists(sys.argv[2]):
    run.log({"step": step})
    step += 1
    time.sleep(0.05)
run.finish()
"""


def test_a_live_sdk_run_is_found_in_the_real_procfs(tmp_path: Path) -> None:
    import subprocess
    import sys

    ready, stop = tmp_path / "ready", tmp_path / "stop"
    env = {**os.environ, "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path)}
    trainer = subprocess.Popen([sys.executable, "-c", TRAINER, str(ready), str(stop)], cwd=tmp_path, env=env)
    try:
        while not ready.exists():
            assert trainer.poll() is None, "the trainer exited before its run began"
            os.sched_yield()
        run_id = ready.read_text()
        writers = [w for w in find_run_writers("/proc") if w.trainer_pid == trainer.pid]
        while not writers:  # the service opens the run file after init returns on some SDKs
            assert trainer.poll() is None
            writers = [w for w in find_run_writers("/proc") if w.trainer_pid == trainer.pid]
        (writer,) = writers
        assert writer.run_file.endswith(f"run-{run_id}.wandb")
        assert trainer.pid in writer.pids and writer.service_pid in writer.pids
    finally:
        stop.touch()
        trainer.wait(timeout=120)
