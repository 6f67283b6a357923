"""A host session written as a W&B run file: framing, records and a file cut short."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from terminal import LEET_ENV, Terminal

from collectors.base import Sample
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.reader import BLOCK_SIZE, read_records
from leet.runfile.writer import RunFileWriter
from leet.sources.recorder import SessionRecorder, parse_size

SLOW = 60.0  # seconds; only bounds a hang on a loaded machine


def _records(path: Path) -> list[pb.Record]:
    found = read_records(path)
    assert not found.lost_regions
    out = []
    for _, payload in found.records:
        record = pb.Record()
        record.ParseFromString(payload)
        out.append(record)
    return out


def _session(path: Path, sweeps: int, keys: int = 4) -> RunFileWriter:
    writer = RunFileWriter(path)
    writer.run("abc123", "leet-symon", "node-1", 1_700_000_000.5)
    for sweep in range(sweeps):
        writer.stats(1_700_000_001.0 + sweep, {f"cpu.{core}.cpu_percent": sweep + core / 10 for core in range(keys)})
    return writer


def test_run_stats_and_exit_records_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run-abc123.wandb"
    writer = _session(path, sweeps=3)
    writer.exit(0, runtime=3)
    writer.close()
    records = _records(path)
    assert [r.WhichOneof("record_type") for r in records] == ["run", "stats", "stats", "stats", "exit"]
    assert [r.num for r in records] == [1, 2, 3, 4, 5]
    run = records[0].run
    assert (run.run_id, run.project, run.host) == ("abc123", "leet-symon", "node-1")
    assert run.start_time.seconds == 1_700_000_000 and run.start_time.nanos == 500_000_000
    last = records[3].stats
    assert last.timestamp.seconds == 1_700_000_003
    assert {item.key: float(item.value_json) for item in last.item}["cpu.3.cpu_percent"] == pytest.approx(2.3)
    assert records[4].exit.exit_code == 0


def test_records_cross_block_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "run-wide.wandb"
    writer = _session(path, sweeps=200, keys=64)
    writer.close()
    assert path.stat().st_size > 3 * BLOCK_SIZE
    records = _records(path)
    assert len(records) == 201 and records[-1].num == 201


def test_file_cut_short_reads_up_to_its_last_whole_record(tmp_path: Path) -> None:
    path = tmp_path / "run-cut.wandb"
    writer = _session(path, sweeps=100, keys=64)
    writer.flush()
    flushed = path.stat().st_size
    writer.stats(1_700_009_999.0, {"memory_percent": 1.0})
    writer.close()
    cut = tmp_path / "run-cut2.wandb"
    cut.write_bytes(path.read_bytes()[: flushed + 5])
    records = _records(cut)
    assert len(records) == 101 and records[-1].num == 101


def test_an_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "run-taken.wandb"
    path.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        RunFileWriter(path)
    assert path.read_bytes() == b"keep"


def _sample(when: float, keys: int = 8) -> Sample:
    return Sample(timestamp=when, values={"memory_percent": 40.0, **{f"cpu.{core}.cpu_percent": 1.0 for core in range(keys)}})


def test_a_recorder_writes_a_run_directory_and_its_samples(tmp_path: Path) -> None:
    recorder = SessionRecorder(tmp_path / "session")
    for sweep in range(3):
        recorder.ingest(_sample(1_700_000_001.0 + sweep))
    recorder.finish(0)
    assert (tmp_path / "session" / "files").is_dir()
    assert recorder.path.parent == tmp_path / "session" and recorder.path.name == f"run-{recorder.run_id}.wandb"
    records = _records(recorder.path)
    assert [r.WhichOneof("record_type") for r in records] == ["run", "stats", "stats", "stats", "exit"]
    assert records[0].run.project == "leet-symon"
    assert {item.key for item in records[1].stats.item} >= {"memory_percent", "cpu.0.cpu_percent"}
    assert records[-1].exit.exit_code == 0


def test_recording_stops_at_its_size_limit_and_says_so_once(tmp_path: Path) -> None:
    told: list[str] = []
    recorder = SessionRecorder(tmp_path / "small.wandb", max_bytes=4096)
    recorder.on_stop = told.append
    sweeps = 0
    while recorder.recording:
        recorder.ingest(_sample(1_700_000_001.0 + sweeps, keys=32))
        sweeps += 1
    recorder.ingest(_sample(1_800_000_000.0))
    recorder.finish(0)
    assert len(told) == 1 and "size limit" in told[0] and recorder.headline() == told[0]
    records = _records(recorder.path)
    assert len(records) == sweeps + 1
    assert records[-1].WhichOneof("record_type") == "stats"


def test_a_write_error_stops_recording_and_says_so_once(tmp_path: Path) -> None:
    told: list[str] = []
    recorder = SessionRecorder(tmp_path / "full.wandb", flush_seconds=0.0)
    recorder.on_stop = told.append
    handle = recorder._writer._handle  # type: ignore[union-attr]
    handle.close()
    recorder._writer._handle = open("/dev/full", "wb")  # type: ignore[union-attr]  # every flush: no space left
    for sweep in range(3):
        recorder.ingest(_sample(1_700_000_001.0 + sweep))
    recorder.finish(0)
    assert len(told) == 1 and told[0] == "recording stopped: No space left on device"


@pytest.mark.parametrize(("text", "size"), [("500M", 500 << 20), ("1G", 1 << 30), ("64k", 64 << 10), ("1000", 1000), ("1.5MiB", 3 << 19)])
def test_sizes_parse(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_an_unwritable_record_path_is_a_clear_error_at_start(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = subprocess.run(
        [sys.executable, "-m", "leet", "symon", "--record", str(blocker / "run")],
        capture_output=True, text=True, timeout=120, env={**os.environ, **LEET_ENV},
    )
    assert done.returncode == 2
    assert "--record: " in done.stderr and "Not a directory" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def _kinds(path: Path) -> list[str]:
    return [r.WhichOneof("record_type") or "" for r in _records(path)]


def test_killed_symon_leaves_a_file_readable_up_to_its_last_flush(tmp_path: Path) -> None:
    path = tmp_path / "killed.wandb"
    terminal = Terminal([sys.executable, "-m", "leet", "symon", "--interval", "1", "--record", str(path)], env=LEET_ENV)
    try:
        terminal.start()
        terminal.wait_for(lambda screen: path.exists() and "stats" in _kinds(path), SLOW, what="a flushed stats record")
        os.kill(terminal.pid, signal.SIGKILL)
        assert terminal.wait_exit(SLOW) is not None
    finally:
        terminal.close()
    kinds = _kinds(path)
    assert kinds[0] == "run" and "stats" in kinds and "exit" not in kinds


def test_quitting_symon_ends_the_recording_with_exit_code_0(tmp_path: Path) -> None:
    path = tmp_path / "quit.wandb"
    terminal = Terminal([sys.executable, "-m", "leet", "symon", "--interval", "1", "--record", str(path)], env=LEET_ENV)
    try:
        terminal.start()
        terminal.wait_for(lambda screen: "CPU" in screen and path.exists(), SLOW, what="symon up")
        terminal.press("q")
        assert terminal.wait_exit(SLOW) == 0, terminal.screen()
    finally:
        terminal.close()
    records = _records(path)
    assert records[-1].exit.exit_code == 0
    summary = subprocess.run([sys.executable, "-m", "leet", "inspect", str(path), "--summary"], capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0 and "leet-symon" in summary.stdout and "finished" in summary.stdout


def test_the_wandb_reader_shows_a_recorded_session(tmp_path: Path) -> None:
    recorder = SessionRecorder(tmp_path / "session")
    for sweep in range(5):
        recorder.ingest(_sample(1_700_000_001.0 + sweep))
    recorder.finish(0)
    wandb = Path(sys.executable).parent / "wandb"
    terminal = Terminal([str(wandb), "beta", "leet", str(recorder.path)], width=150, height=40, env={**LEET_ENV, "HOME": str(tmp_path)})
    try:
        terminal.start()
        screen = terminal.wait_for(lambda screen: "State: Finished" in screen and "System Memory" in screen, SLOW, what="the run shown")
    finally:
        terminal.close()
    assert f"ID: {recorder.run_id}" in screen and "Project: leet-symon" in screen
