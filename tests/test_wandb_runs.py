"""The run makers deliver what they promise, checked on the bytes."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from alert_servers import wait_until
from wandb_runs import BLOCK_SIZE, FILE_HEADER, HOSTILE_TEXTS, MadeRun, run_id_of

# Record field 18 (exit), a short RunExitRecord, its field 1 (exit_code) = 3.
EXIT_CODE_3 = re.compile(rb"\x92\x01[\x02-\x7f]\x08\x03")


def run_dir_pattern(run_id: str) -> re.Pattern:
    return re.compile(rf"offline-run-\d{{8}}_\d{{6}}-{re.escape(run_id)}(-\d+)?")


def assert_run_layout(run: MadeRun) -> bytes:
    assert run.run_dir.parent == run.root / "wandb"
    assert run_dir_pattern(run.run_id).fullmatch(run.run_dir.name)
    assert run.wandb_path == run.run_dir / f"run-{run.run_id}.wandb"
    assert run_id_of(run.wandb_path) == run.run_id
    data = run.wandb_path.read_bytes()
    assert data.startswith(FILE_HEADER)
    return data


def test_basic_run_is_big_finished_and_labelled(basic_run):
    data = assert_run_layout(basic_run)
    assert len(data) > 2 * BLOCK_SIZE, "block 1 must be complete for the corrupted copy"
    assert (basic_run.root / "wandb" / "latest-run").resolve() == basic_run.run_dir.resolve()
    for text in ("basic-run", basic_run.group, basic_run.job_type, *basic_run.tags):
        assert text.encode() in data
    assert b"memory_percent" in data, "system metrics were sampled"
    assert b"NaN" in data and b"Infinity" in data


def test_basic_run_reports_what_it_logged(basic_run):
    assert basic_run.steps == 200
    assert basic_run.keys == (("loss",), ("acc",), ("lr",), ("eval", "loss"))
    (key,), nan_step = basic_run.nan_at
    (_,), inf_step = basic_run.inf_at
    assert math.isnan(basic_run.rows[nan_step][key])
    assert basic_run.rows[inf_step][key] == math.inf
    assert basic_run.config["model"] == {"depth": 12, "width": 768}
    assert basic_run.summary["loss"] == 0.125
    assert basic_run.exit_code == 0


def test_console_run_keeps_every_write_verbatim(console_run):
    data = assert_run_layout(console_run)
    assert "\rEpoch 0: 100%|██████████| 100/100".encode() in data
    assert b"\x1b[32mgreen ok\x1b[0m" in data
    assert b"\x1b[1;31mERROR\x1b[0m something red" in data
    assert b"A\nB\nC\n" in data
    assert "warning: using the CPU" in console_run.stderr_text
    assert console_run.stdout_text.endswith("done\n")
    assert console_run.steps == 5


def test_failed_run_ends_with_its_exit_code(failed_run):
    data = assert_run_layout(failed_run)
    assert failed_run.exit_code == 3
    assert EXIT_CODE_3.search(data)


def test_killed_run_has_no_exit_and_stops_growing(killed_run):
    # The writer flushes mostly whole blocks, but not only: where the file ends
    # is up to the kill, so only "no exit, nothing after the kill" is promised.
    data = assert_run_layout(killed_run)
    assert killed_run.exit_code is None
    assert len(data) == killed_run.size_before_kill, "nothing wrote after the kill"
    assert len(data) >= 2 * BLOCK_SIZE


def test_corrupted_copy_differs_in_one_byte_of_block_1(basic_run, corrupted_run):
    assert corrupted_run.source == basic_run.wandb_path
    assert corrupted_run.run_dir.name == basic_run.run_dir.name
    assert corrupted_run.run_id == basic_run.run_id
    original = basic_run.wandb_path.read_bytes()
    damaged = assert_run_layout(corrupted_run)
    assert len(damaged) == len(original)
    differences = [i for i, (a, b) in enumerate(zip(original, damaged)) if a != b]
    assert differences == [corrupted_run.offset]
    assert BLOCK_SIZE <= corrupted_run.offset < 2 * BLOCK_SIZE
    assert original[corrupted_run.offset] == corrupted_run.original_byte


def test_hostile_run_stores_hostile_text_raw(hostile_run):
    data = assert_run_layout(hostile_run)
    assert hostile_run.name.encode() in data
    for text in HOSTILE_TEXTS:
        assert f"{text}\n".encode() in data, repr(text)
        assert f"m/{text}" in {path[0] for path in hostile_run.keys}
    assert ("[bold]", "\x1b[31mdeep") in hostile_run.keys


def test_shared_run_has_one_directory_per_writer(shared_run):
    labels = [writer.label for writer in shared_run.writers]
    assert labels == ["rank0", "rank1", "rank2", "rank3"]
    assert [writer.primary for writer in shared_run.writers] == [True, False, False, False]
    assert len({writer.run_dir for writer in shared_run.writers}) == 4
    for writer in shared_run.writers:
        assert writer.run_dir.parent == shared_run.root / "wandb"
        assert run_dir_pattern(shared_run.run_id).fullmatch(writer.run_dir.name)
        assert writer.wandb_path == writer.run_dir / f"run-{shared_run.run_id}.wandb"


def test_shared_writers_label_only_their_own_stats(shared_run):
    for writer in shared_run.writers:
        data = writer.wandb_path.read_bytes()
        assert data.startswith(FILE_HEADER)
        found = set(re.findall(rb"/l:(rank\d+)", data))
        assert found == {writer.label.encode()}
        assert f"hello from {writer.label}\n".encode() in data
    assert shared_run.primary.label == "rank0"
    assert shared_run.primary.rows and not any(w.rows for w in shared_run.writers[1:])


def test_live_run_grows_then_stops_cleanly(live_run):
    live = live_run(step_interval=0.1, flush_interval=0.2)
    assert live.running
    assert live.wandb_path.read_bytes()[: len(FILE_HEADER)] == FILE_HEADER
    grown = live.wait_for_size(live.size() + 1000)
    live.stop()
    assert not live.running
    assert live.size() > grown, "finishing appends the rest, exit record included"


def test_live_run_can_be_killed(live_run):
    live = live_run(flush_interval=0.2)
    live.wait_for_size(1000)
    live.kill()
    assert not live.running
    size = live.size()
    # No process holds the file open any more: nothing is left that could write to it.
    assert live.wandb_path is not None
    assert wait_until(lambda: not holders(live.wandb_path), 30), holders(live.wandb_path)
    assert live.size() == size, "no writer is left to flush"


def holders(path: Path) -> list[int]:
    """The processes that have ``path`` open, by their /proc fd links."""
    target = str(Path(path).resolve())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == target for fd in (proc / "fd").iterdir()):
                found.append(int(proc.name))
        except OSError:  # gone, or not ours to look at
            continue
    return found
