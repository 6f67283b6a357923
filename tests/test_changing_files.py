"""Files that change under the tailer: it knows its file, says what happened, and never reads wrong.

A live read (the file growing, polled at random moments) and a re-read of the
same bytes must give the same records and the same loss counts, whatever the
bytes: real SDK files, garbage written into them mid-run, bytes mutated.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from framer import RunWriter
from loading import load

from leet.model.store import Store
from leet.runfile.decode import EventReader
from leet.runfile.reader import FileChanged, RecordReader, read_records
from leet.sources.run import RunSource

VINTAGE = Path(__file__).parent / "fixtures" / "vintage"
# Real SDK files of several releases; the killed runs span several blocks.
SDK_FILES = sorted(path for path in VINTAGE.glob("*/*/wandb/offline-run-*/run-*.wandb") if path.stat().st_size > 7)


def sdk_file(index: int) -> Path:
    return SDK_FILES[index % len(SDK_FILES)]


def with_garbage(data: bytes, rng: random.Random) -> bytes:
    """Garbage written into the file mid-run (another process, a bad disk): everything after it shifts."""
    at = rng.randrange(7, len(data))
    return data[:at] + rng.randbytes(rng.randint(1, 3000)) + data[at:]


def mutated(data: bytes, rng: random.Random) -> bytes:
    """A few bytes flipped, a stretch zeroed or a piece cut out."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(7, len(data))
        choice = rng.random()
        if choice < 0.5:
            data[at] ^= 1 << rng.randrange(8)
        elif choice < 0.8:
            data[at : at + rng.randint(1, 200)] = bytes(min(200, len(data) - at))
        else:
            del data[at : at + rng.randint(1, 500)]
    return bytes(data)


def grow(path: Path, data: bytes, cuts: list[int], poll) -> None:
    """Write ``data`` to ``path`` in pieces ending at ``cuts``, calling ``poll()`` after each."""
    path.write_bytes(b"")
    written = 0
    for cut in [*sorted(cuts), len(data)]:
        with open(path, "ab") as handle:
            handle.write(data[written:cut])
        written = max(written, cut)
        poll()
    poll()


def random_cuts(rng: random.Random, size: int) -> list[int]:
    return [rng.randrange(size) for _ in range(rng.randint(1, 30))]


CASES = [(kind, seed) for kind in ("sdk", "garbage", "mutated") for seed in range(40)]


def case_bytes(kind: str, seed: int) -> bytes:
    rng = random.Random(f"{kind}{seed}")
    data = sdk_file(seed).read_bytes()
    return data if kind == "sdk" else with_garbage(data, rng) if kind == "garbage" else mutated(data, rng)


@pytest.mark.parametrize("kind,seed", CASES)
def test_records_read_live_are_those_a_reread_finds(tmp_path, kind, seed):
    data = case_bytes(kind, seed)
    whole = tmp_path / "whole.wandb"
    whole.write_bytes(data)
    expected = read_records(whole)
    live = tmp_path / "live.wandb"
    reader = RecordReader(live)
    got: list[tuple[int, bytes]] = []
    lost = []
    rng = random.Random(seed)

    def poll() -> None:
        batch = reader.poll()
        got.extend(batch.records)
        lost.extend(batch.lost_regions)

    grow(live, data, random_cuts(rng, len(data)), poll)
    reader.close()
    assert got == expected.records
    assert sum(region.size for region in lost) == expected.lost_bytes


def plain_events(items) -> list:
    return [(item.offset, item.kind, item.event) for item in items if item.kind != "loss"]


@pytest.mark.parametrize("kind,seed", CASES)
def test_events_and_loss_counts_read_live_are_those_of_a_reread(tmp_path, kind, seed):
    data = case_bytes(kind, seed)
    whole = tmp_path / "whole.wandb"
    whole.write_bytes(data)
    with EventReader(whole, live=False) as again:
        expected = plain_events(again.poll().items)
        counts = (again.lost_records, again.uncounted_losses, again.lost_bytes, again.records)
    live = tmp_path / "live.wandb"
    reader = EventReader(live)
    got: list = []
    grow(live, data, random_cuts(random.Random(seed), len(data)), lambda: got.extend(plain_events(reader.poll().items)))
    assert got == expected
    assert (reader.lost_records, reader.uncounted_losses, reader.lost_bytes, reader.records) == counts
    reader.close()


def view_of(source: RunSource) -> dict:
    """What a person sees of a run, as numbers: the same for a live read and a re-read."""
    snapshot = source.snapshot()
    series = {(key.key, key.label): source.store.entry_count(key) for key in source.store.series()}
    return {
        "rows": source.model.history_rows,
        "step": snapshot.last_step,
        "records": snapshot.records,
        "lost": snapshot.lost_text,
        "summary": sorted(snapshot.summary),
        "config": sorted(snapshot.config),
        "console": [line.text for line in snapshot.console],
        "series": series,
        "exit": snapshot.exit_code,
    }


@pytest.mark.parametrize("kind,seed", [(kind, seed) for kind in ("garbage", "mutated") for seed in range(10)])
def test_the_run_view_of_a_live_read_is_that_of_a_reread(tmp_path, kind, seed):
    data = case_bytes(kind, seed + 100)
    whole = tmp_path / "whole" / "run-x.wandb"
    whole.parent.mkdir()
    whole.write_bytes(data)
    reread = load(whole)
    read_all(reread)  # damage in the last block counts at the poll after it is first seen (it may be a write in flight)
    expected = view_of(reread)
    live = tmp_path / "live" / "run-x.wandb"
    live.parent.mkdir()
    live.write_bytes(b"")
    source = RunSource(live, Store())

    def poll() -> None:
        while source.step():
            pass

    grow(live, data, random_cuts(random.Random(seed), len(data)), poll)
    assert view_of(source) == expected


# ---------------------------------------------------------------- files replaced, rewritten, deleted


def run_bytes(run_id: str, steps: int, *, finished: bool = True) -> bytes:
    writer = RunWriter(run_id)
    for step in range(steps):
        writer.history(step, {"loss": 1.0 / (step + 1)})
    if finished:
        writer.exit()
    return bytes(writer.data)


def read_all(source: RunSource) -> None:
    for _ in range(50):
        if not source.step():
            break


@pytest.fixture
def tailed(tmp_path):
    """A run being tailed: the first run's bytes, written unfinished."""
    path = tmp_path / "run-x.wandb"
    path.write_bytes(run_bytes("first", 8, finished=False))
    source = RunSource(path, Store())
    read_all(source)
    assert source.snapshot().last_step == 7 and not source.snapshot().error
    return path, source


def test_truncated_and_rewritten_in_place_is_said_and_read_again(tailed):
    path, source = tailed
    with open(path, "r+b") as handle:  # the same inode, new content
        handle.truncate(0)
        handle.write(run_bytes("second", 3))
    read_all(source)
    snapshot = source.snapshot()
    assert "run-x.wandb was truncated" in snapshot.error or "rewritten" in snapshot.error
    assert "read again from the start" in snapshot.error
    assert snapshot.run_id == "second" and snapshot.last_step == 2 and snapshot.exit_code == 0
    assert source.model.history_rows == 3, "no row of the old content is left"


def test_rewritten_in_place_to_a_bigger_size_is_noticed(tailed):
    path, source = tailed
    with open(path, "r+b") as handle:
        handle.write(run_bytes("second", 40))  # longer than before: no shrink to see, only other bytes
    read_all(source)
    snapshot = source.snapshot()
    assert "rewritten in place" in snapshot.error
    assert snapshot.run_id == "second" and snapshot.last_step == 39 and source.model.history_rows == 40


def test_truncated_only_is_said_and_what_is_left_is_shown(tailed):
    path, source = tailed
    data = run_bytes("first", 8, finished=False)
    cut = RunWriter("first")
    for step in range(3):
        cut.history(step, {"loss": 1.0 / (step + 1)})
    os.truncate(path, len(cut.data))
    assert path.read_bytes() == data[: len(cut.data)]
    read_all(source)
    snapshot = source.snapshot()
    assert "was truncated" in snapshot.error
    assert snapshot.last_step == 2 and source.model.history_rows == 3


def test_renamed_over_is_said_and_the_new_file_is_read(tailed, tmp_path):
    path, source = tailed
    other = tmp_path / "incoming.wandb"
    other.write_bytes(run_bytes("second", 5))
    os.replace(other, path)
    read_all(source)
    snapshot = source.snapshot()
    assert "was replaced by another file" in snapshot.error
    assert snapshot.run_id == "second" and snapshot.last_step == 4 and source.model.history_rows == 5


def test_deleted_is_said_what_was_read_stays_and_a_new_file_is_read_when_it_comes(tailed):
    path, source = tailed
    path.unlink()
    read_all(source)
    snapshot = source.snapshot()
    assert "run-x.wandb was deleted: showing what was read before" in snapshot.error
    assert snapshot.last_step == 7 and source.model.history_rows == 8
    assert source.finished(), "nothing more comes: the tailer polls slowly"
    path.write_bytes(run_bytes("again", 2))
    read_all(source)
    snapshot = source.snapshot()
    assert "deleted and written again" in snapshot.error
    assert snapshot.run_id == "again" and source.model.history_rows == 2


def test_the_same_bytes_copied_over_in_place_change_nothing(tailed):
    path, source = tailed
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.write(run_bytes("first", 10, finished=False)[len(data) :])
    read_all(source)
    snapshot = source.snapshot()
    assert not snapshot.error
    assert snapshot.last_step == 9 and source.model.history_rows == 10


def test_a_reader_raises_once_changed_and_names_how(tmp_path):
    path = tmp_path / "run-x.wandb"
    path.write_bytes(run_bytes("first", 3, finished=False))
    reader = RecordReader(path)
    assert len(reader.poll().records) == 4
    path.unlink()
    for _ in range(2):
        with pytest.raises(FileChanged) as raised:
            reader.poll()
        assert raised.value.how == "deleted"
    reader.close()


def test_a_whole_file_reader_does_not_check(tmp_path):
    path = tmp_path / "run-x.wandb"
    shutil.copyfile(sdk_file(0), path)
    reader = RecordReader(path, live=False)
    first = reader.poll()
    path.unlink()
    assert reader.poll().records == [] and first.records
    reader.close()


def test_inspect_follow_says_when_its_file_is_rewritten_or_deleted_and_reads_on_or_stops(tmp_path):
    import subprocess
    import sys
    import threading
    import time

    path = tmp_path / "run-x.wandb"
    path.write_bytes(run_bytes("first", 3, finished=False))
    follower = subprocess.Popen(
        [sys.executable, "-m", "leet", "inspect", str(path), "--follow", "--idle-timeout", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    printed: list[str] = []
    reading = threading.Thread(target=lambda: printed.extend(iter(follower.stdout.readline, "")), daemon=True)
    reading.start()

    def wait_for_printed(text: str) -> None:
        deadline = time.monotonic() + 60  # bounds a hang only
        while not any(text in line for line in printed):
            assert follower.poll() is None, f"inspect --follow ended before printing {text!r}"
            assert time.monotonic() < deadline, f"inspect --follow printed no {text!r}: {printed}"
            time.sleep(0.02)

    try:
        wait_for_printed("first")  # the first content is read before it is replaced
        with open(path, "r+b") as handle:
            handle.truncate(0)
            handle.write(run_bytes("second", 2, finished=False))
        wait_for_printed("second")
        path.unlink()
        follower.wait(timeout=60)
        reading.join(timeout=10)
        err = follower.stderr.read()
        out = "".join(printed)
    finally:
        follower.kill()
    assert follower.returncode == 1
    assert "run-x.wandb was truncated; reading it again from the start" in err or "rewritten in place; reading it again" in err
    assert "run-x.wandb was deleted; stopped following" in err
    assert "first" in out and "second" in out, "the records of both contents were printed"
