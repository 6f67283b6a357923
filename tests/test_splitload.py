"""A run loaded in two processes ends up exactly as the loader alone would leave it.

The size threshold is lowered so the small SDK runs of the fixtures take the
two-process path; child failures are provoked by swapping the child's command.
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import time

import pytest
from loading import load
from wandb_runs import make_corrupted_copy

from leet.model.run import RunState
from leet.model.store import Store
from leet.runfile.decode import Decoded, RawJSON
from leet.runfile.events import DataLoss, StatsRow, SummaryUpdate
from leet.runfile.reader import BLOCK_SIZE
from leet.sources import parallel as splitload
from leet.sources import run as runsource
from leet.sources.parallel import (
    Frame,
    decode_frame,
    encode_frame,
    read_part,
)
from leet.sources.run import RunSource

TIMEOUT = 30.0
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def split(path, **attributes) -> RunSource:
    return load(path, split_load_bytes=0, **attributes)


def series(source: RunSource) -> dict:
    out = {}
    for run in (source.run_key, source.system_key):
        keys = source.store.series(run)
        for key, data in source.store.snapshot(keys).items():
            out[str(key)] = (list(data.t), [repr(v) for v in data.mean], [repr(v) for v in data.lo], [repr(v) for v in data.hi])
    return out


def comparable(source: RunSource) -> tuple:
    snapshot = source.snapshot()
    model = source.model
    return (
        [(key, type(value).__name__, str(value)) for key, value in snapshot.summary.items()],
        snapshot.config,
        snapshot.console,
        snapshot.environments,
        snapshot.records,
        snapshot.lost_records,
        snapshot.lost_bytes,
        model.lost_regions,
        snapshot.last_step,
        snapshot.history_keys,
        model.history_rows,
        model.stats_rows,
        snapshot.state,
        snapshot.exit_code,
        snapshot.bytes_read,
        series(source),
    )


@pytest.fixture(autouse=True)
def early_split(monkeypatch):
    """A first batch small enough to leave these small runs a part to split, and no wait for it."""
    monkeypatch.setattr(runsource, "FIRST_BATCH", 20)
    monkeypatch.setattr(runsource, "SPLIT_DELAY", 0.0)


@pytest.fixture
def alone(basic_run):
    source = load(basic_run.run_dir)
    yield source
    source.close()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_reads_its_part_as_the_loader_would_have(basic_run, alone, children):
    helped = split(basic_run.run_dir)
    (child,) = children
    assert child.finished and child.error == ""
    assert comparable(helped) == comparable(alone)
    assert helped.snapshot().state is RunState.FINISHED
    assert {"best_acc", "loss"} <= set(helped.snapshot().summary)
    helped.close()


@pytest.mark.parametrize("where", [0, 3, 7, 20, 500, BLOCK_SIZE // 2, BLOCK_SIZE - 30])
def test_damage_is_counted_once_wherever_the_split_falls(basic_run, children, monkeypatch, tmp_path, where):
    """A byte flipped at ``where`` in block 1; the child's part starts at block 1, then at block 2."""
    damaged = make_corrupted_copy(basic_run.wandb_path, tmp_path, offset=BLOCK_SIZE + where)
    alone = load(damaged.run_dir)
    assert alone.snapshot().lost_bytes > 0
    for block in (1, 2):
        monkeypatch.setattr(runsource, "split_point", lambda size, start, block=block: block * BLOCK_SIZE)
        helped = split(damaged.run_dir)
        assert comparable(helped) == comparable(alone), block
        helped.close()
    assert len(children) == 2
    alone.close()


def test_small_runs_are_read_without_a_child(basic_run, children):
    load(basic_run.run_dir).close()
    assert children == []


def test_no_child_is_started_before_the_first_charts_are_out(basic_run, children, monkeypatch):
    monkeypatch.setattr(runsource, "SPLIT_DELAY", 60.0)
    split(basic_run.run_dir).close()
    assert children == []


def test_the_part_is_sent_in_batches_that_add_up(basic_run, alone):
    path = basic_run.wandb_path
    frames: list[Frame] = []
    read_part(path, BLOCK_SIZE, path.stat().st_size, frames.append)
    assert len(frames) >= 1 and frames[0].first is not None and frames[0].first >= BLOCK_SIZE
    assert frames[-1].resume_at == path.stat().st_size
    assert 0 < sum(frame.rows for frame in frames) < basic_run.steps
    assert any(isinstance(item.event, SummaryUpdate) for frame in frames for item in frame.events)


def test_no_interpreter_to_start_means_reading_alone(basic_run, alone, children, monkeypatch):
    monkeypatch.setattr(splitload, "child_command", lambda *args: ["/nonexistent/python3"])
    helped = split(basic_run.run_dir)
    assert children == []
    assert comparable(helped) == comparable(alone)
    helped.close()


def test_a_failing_child_is_replaced_by_the_loader(basic_run, alone, children, monkeypatch):
    monkeypatch.setattr(splitload, "child_command", lambda *args: [sys.executable, "-c", "import sys; sys.exit(1)"])
    helped = split(basic_run.run_dir)
    assert children and not children[0].finished and children[0].error
    assert comparable(helped) == comparable(alone)
    helped.close()


def child_through(monkeypatch, script: str) -> None:
    """Run the real child under ``script``, which gets its output as ``out`` and writes what the parent sees."""
    real = splitload.child_command  # as the ``children`` fixture left it
    wrapper = "import subprocess, sys; out = subprocess.run(sys.argv[1:], capture_output=True).stdout\n" + script
    monkeypatch.setattr(splitload, "child_command", lambda *args: [sys.executable, "-c", wrapper, *real(*args)])


def test_a_child_that_dies_half_way_is_followed_by_the_loader(basic_run, alone, children, monkeypatch):
    child_through(monkeypatch, "sys.stdout.buffer.write(out[: len(out) // 2])")
    helped = split(basic_run.run_dir)
    (child,) = children
    assert not child.finished and child.taken > 1  # some batches were used, the rest read again
    assert comparable(helped) == comparable(alone)
    helped.close()


def test_a_garbled_batch_is_not_used(basic_run, alone, children, monkeypatch):
    third = "at = out.index(b'{\"first\"', out.index(b'{\"first\"', out.index(b'{\"first\"') + 1) + 1)"
    child_through(monkeypatch, f"{third}; sys.stdout.buffer.write(out[:at] + b'{{\"firsX\"' + out[at + 8 :])")
    helped = split(basic_run.run_dir)
    (child,) = children
    assert "unreadable" in child.error and child.taken == 3
    assert comparable(helped) == comparable(alone)
    helped.close()


def test_a_child_that_does_not_answer_is_given_up_and_killed(basic_run, alone, children, monkeypatch):
    monkeypatch.setattr(splitload, "child_command", lambda *args: SLEEPER)
    monkeypatch.setattr(runsource, "SPLIT_GRACE", 0.2)
    helped = split(basic_run.run_dir, poll_interval=0.05)
    assert comparable(helped) == comparable(alone)
    assert gone(children[0].pid)
    helped.close()


def test_stop_leaves_no_child_behind(basic_run, children, monkeypatch):
    monkeypatch.setattr(splitload, "child_command", lambda *args: SLEEPER)
    source = RunSource(basic_run.run_dir, Store())
    source.split_load_bytes = 0
    source.step()
    source.step()  # the child starts with the second batch
    (child,) = children
    assert not gone(child.pid)
    source.close()
    assert gone(child.pid)


def test_the_child_leaves_when_its_parent_does():
    watcher = "from leet.sources.parallel import _exit_with_parent; import time; _exit_with_parent(); print('watching', flush=True); time.sleep(60)"
    process = subprocess.Popen([sys.executable, "-c", watcher], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=splitload._child_env())
    try:
        assert process.stdout.readline() == b"watching\n"  # its watch on the pipe is set, and it sleeps
        process.stdin.close()  # what the parent's death does to the pipe
        assert process.wait(timeout=10) == 3
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_records_written_after_the_first_read_are_read_after_the_childs_part(basic_run, alone, children, tmp_path):
    data = basic_run.wandb_path.read_bytes()
    path = tmp_path / basic_run.wandb_path.name
    cut = 2 * BLOCK_SIZE + 1000
    path.write_bytes(data[:cut])  # the file as it was during the run
    source = RunSource(path, Store())
    source.split_load_bytes = 0
    source.step()
    with open(path, "ab") as handle:  # it grows while the child reads the first part
        handle.write(data[cut:])
    deadline = time.monotonic() + TIMEOUT
    while source.step() or not source.model.loaded:
        assert time.monotonic() < deadline
    assert children and children[0].until == cut
    assert comparable(source) == comparable(alone)
    source.close()


def test_the_child_can_be_run_by_hand(basic_run):
    path = basic_run.wandb_path
    size = path.stat().st_size
    done = subprocess.run(splitload.child_command(path, BLOCK_SIZE, size), capture_output=True, env=splitload._child_env(), timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"E" + bytes(8))
    usage = subprocess.run([sys.executable, "-m", "leet.sources.parallel"], capture_output=True, env=splitload._child_env(), timeout=30)
    assert usage.returncode == 2 and b"usage" in usage.stderr


# ---------------------------------------------------------------- frames


def test_a_frame_comes_back_as_it_went(basic_run):
    events = [
        Decoded(10, "summary", 4, SummaryUpdate(update={"a": RawJSON("1.5"), "b.c": RawJSON('"x"')}, remove=("d",))),
        Decoded(90, "stats", 5, StatsRow(timestamp=1.5, values={"cpu": math.inf})),
        Decoded(200, "loss", 0, DataLoss(200, 30, None, "checksum mismatch")),
    ]
    frame = Frame(first=10, resume_at=300, last_num=7, rows=2, last_step=9, keys=["x"], folded=3, lost_bytes=30, lost_records=0)
    frame.columns = {"x": ([8.0, 9.0], [0.5, math.nan])}
    frame.events = events
    body = encode_frame(frame)[9:]
    back = decode_frame(body)
    assert back.events == events and type(back.events[0].event.update["a"]) is RawJSON
    assert [list(back.columns["x"][0]), repr(list(back.columns["x"][1]))] == [[8.0, 9.0], "[0.5, nan]"]
    assert (back.first, back.resume_at, back.last_num, back.rows, back.last_step, back.keys, back.folded) == (10, 300, 7, 2, 9, ["x"], 3)


def test_a_frame_may_hold_events_and_nothing_else():
    frame = Frame(first=10, resume_at=300, last_num=7)
    body = bytearray(encode_frame(frame)[9:])
    line, _, _ = bytes(body).partition(b"\n")
    evil = pickle.dumps([os.system])
    head = line.replace(b'"events": ' + str(len(pickle.dumps([], protocol=pickle.HIGHEST_PROTOCOL))).encode(), f'"events": {len(evil)}'.encode())
    with pytest.raises(ValueError):
        decode_frame(head + b"\n" + evil)
    with pytest.raises(ValueError):
        decode_frame(b"not a frame")
