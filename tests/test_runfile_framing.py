"""Framing layer of run files: blocks, chunks, CRC, torn tails, damage — on bytes built here."""

from __future__ import annotations

import os
import random
import struct
import zlib
from pathlib import Path

import pytest
from framer import FIRST, FULL, LAST, MIDDLE
from framer import Framer as TinyWriter

from leet.runfile.reader import (
    BLOCK_SIZE,
    FILE_HEADER,
    RecordReader,
    RunFileError,
    iter_batches,
    read_records,
)


def payload(index: int, size: int) -> bytes:
    return (f"record {index}:".encode() + bytes(range(256)) * (size // 256 + 1))[:size]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(bytes(data))
    return path


def varied_writer() -> TinyWriter:
    """Every framing case: all chunk types, empty FIRST chunks, trailers of 1..6 bytes, multi-block records."""
    writer = TinyWriter()
    for index in range(40):
        writer.add(payload(index, 50 + index * 7))
    for leave in (0, 1, 2, 3, 4, 5, 6, 7):
        writer.add(payload(leave, 300))
        writer.fill_to(leave)  # leave 0: block ends exactly; 1..6: trailer; 7: empty FIRST chunk next
    writer.add(payload(99, 3 * BLOCK_SIZE + 500))  # FIRST, MIDDLE, MIDDLE, LAST
    writer.add(b"")  # an empty record is a FULL chunk of length 0
    for index in range(30):
        writer.add(payload(index, 1000 + index))
    return writer


@pytest.fixture
def varied(tmp_path):
    writer = varied_writer()
    return writer, write(tmp_path / "run-varied.wandb", writer.data)


def test_every_chunk_kind_and_padding_reads_back_exactly(varied):
    writer, path = varied
    assert {FULL, FIRST, MIDDLE, LAST} <= set(writer.kinds)
    assert sorted(set(writer.trailers)) == [1, 2, 3, 4, 5, 6]
    batch = read_records(path)
    assert batch.records == writer.records()
    assert batch.lost_regions == [] and batch.lost_bytes == 0
    assert not batch.torn and batch.at_eof
    assert batch.resume_at == len(writer.data)


def test_empty_first_chunk_at_block_end_is_accepted(tmp_path):
    writer = TinyWriter()
    writer.fill_to(7)
    writer.add(b"spans the boundary")
    empty_first = len(writer.data) - len(b"spans the boundary") - 7 - 7
    assert writer.data[empty_first + 4 : empty_first + 7] == b"\x00\x00\x02"  # length 0, FIRST
    assert read_records(write(tmp_path / "r.wandb", writer.data)).records == writer.records()


def test_reading_from_any_record_offset_returns_the_rest(varied):
    writer, path = varied
    records = writer.records()
    for index in (1, 40, 47, len(records) - 31, len(records) - 1):
        assert read_records(path, start=records[index][0]).records == records[index:]


def test_whole_file_in_bounded_batches_matches_one_read(varied):
    writer, path = varied
    pieces = []
    for batch in iter_batches(path):
        pieces += batch.records
    assert pieces == writer.records()
    position, stepped = 0, []
    while True:
        batch = read_records(path, position, max_bytes=5000)
        stepped += batch.records
        if batch.at_eof:
            break
        position = batch.resume_at
    assert stepped == writer.records()


def test_poll_with_a_record_limit_returns_everything_once(varied):
    writer, path = varied
    reader = RecordReader(path)
    seen = []
    for _ in range(1000):
        batch = reader.poll(max_records=7)
        seen += batch.records
        if batch.at_eof:
            break
    assert seen == writer.records()


def torn_cases() -> list[TinyWriter]:
    inside_block = TinyWriter()
    for index in range(5):
        inside_block.add(payload(index, 120))
    spanning = TinyWriter()
    spanning.fill_to(150)
    spanning.add(payload(1, 400))  # FIRST at the end of block 0, LAST in block 1
    return [inside_block, spanning]


@pytest.mark.parametrize("case", [0, 1], ids=["full-chunk", "across-blocks"])
def test_torn_tail_at_every_byte_resumes_with_each_record_once(tmp_path, case):
    writer = torn_cases()[case]
    records = writer.records()
    last_start = records[-1][0]
    path = tmp_path / "run-torn.wandb"
    for cut in range(last_start, len(writer.data) + 1):
        path.write_bytes(writer.data[:cut])
        first = read_records(path)
        assert first.records == records[:-1] or cut == len(writer.data)
        assert first.torn == (cut < len(writer.data) and cut > last_start)
        with RecordReader(path) as reader:
            got = reader.poll().records
            with open(path, "ab") as grow:
                grow.write(writer.data[cut:])
            got += reader.poll().records
            assert reader.poll().records == []
        assert got == records, f"cut at {cut}"
        assert reader.lost_bytes == 0


def test_unfinished_record_at_block_boundary_is_torn_not_damage(tmp_path):
    writer = TinyWriter()
    writer.add(payload(0, 100))
    writer.add(payload(1, BLOCK_SIZE * 2))
    cut = BLOCK_SIZE  # what a live file looks like between flushes
    batch = read_records(write(tmp_path / "r.wandb", writer.data[:cut]))
    assert batch.records == writer.records()[:1]
    assert batch.torn and batch.lost_bytes == 0
    assert batch.resume_at == writer.offsets[1]


def small_records_writer(blocks: int = 4) -> TinyWriter:
    writer = TinyWriter()
    index = 0
    while len(writer.data) < blocks * BLOCK_SIZE - 200:
        writer.add(payload(index, 90 + index % 50))
        index += 1
    return writer


def test_checksum_error_in_block_one_costs_only_that_block(tmp_path):
    writer = small_records_writer()
    records = writer.records()
    victim = next(index for index, (offset, _) in enumerate(records) if offset > BLOCK_SIZE + 9000)
    data = bytearray(writer.data)
    data[records[victim][0] + 20] ^= 0x40  # one flipped payload byte
    batch = read_records(write(tmp_path / "r.wandb", data))

    survivors = {offset for offset, _ in batch.records}
    lost = [index for index, (offset, _) in enumerate(records) if offset not in survivors]
    # The damaged record, everything after it in block 1, and a record whose tail opened block 2.
    assert lost[0] == victim
    assert lost == list(range(victim, lost[-1] + 1))
    assert all(records[index][0] < 2 * BLOCK_SIZE for index in lost)
    assert records[lost[-1] + 1][0] >= 2 * BLOCK_SIZE
    assert batch.records == [record for index, record in enumerate(records) if index not in lost]
    (region,) = batch.lost_regions
    assert region.start == records[victim][0] and region.end == records[lost[-1] + 1][0]
    assert region.reason == "checksum mismatch"
    assert batch.lost_bytes == region.end - region.start
    assert not batch.torn and batch.resume_at == len(data)


def test_damage_inside_a_multi_block_record_drops_that_record_and_counts_it(tmp_path):
    writer = TinyWriter()
    writer.add(payload(0, 100))
    writer.add(payload(1, 3 * BLOCK_SIZE))  # FIRST in block 0, MIDDLEs, LAST in block 3
    for index in range(2, 40):
        writer.add(payload(index, 200))
    data = bytearray(writer.data)
    data[BLOCK_SIZE + 100] ^= 1  # inside the first MIDDLE chunk
    batch = read_records(write(tmp_path / "r.wandb", data))
    assert batch.records == [writer.records()[0]] + writer.records()[2:]
    assert batch.lost_damaged == 1
    (region,) = batch.lost_regions
    assert region.start == writer.offsets[1] and region.end == writer.offsets[2]


@pytest.mark.parametrize(
    "damage",
    ["garbage", "zeroed", "bad-length", "unknown-type"],
)
def test_other_damage_skips_to_the_next_block(tmp_path, damage):
    writer = small_records_writer(5)
    records = writer.records()
    target = next(offset for offset, _ in records if offset > 2 * BLOCK_SIZE + 5000)
    data = bytearray(writer.data)
    if damage == "garbage":
        data[target : target + 300] = random.Random(7).randbytes(300)
    elif damage == "zeroed":
        data[target : 3 * BLOCK_SIZE] = bytes(3 * BLOCK_SIZE - target)
    elif damage == "bad-length":
        data[target + 4 : target + 6] = struct.pack("<H", 40000)
    else:
        body = bytes(data[target + 7 : target + 7 + struct.unpack_from("<H", data, target + 4)[0]])
        data[target : target + 7] = struct.pack("<IHB", zlib.crc32(b"\x09" + body), len(body), 9)
    batch = read_records(write(tmp_path / "r.wandb", data))
    kept = [record for record in records if record[0] < target or record[0] >= 3 * BLOCK_SIZE]
    assert batch.records == kept
    (region,) = batch.lost_regions
    assert region.start == target
    assert region.end == min(offset for offset, _ in records if offset >= 3 * BLOCK_SIZE)


def test_damage_in_the_block_being_written_is_held_back_once(tmp_path):
    writer = small_records_writer(2)
    records = writer.records()
    data = bytearray(writer.data)
    tail = records[-3][0]
    data[tail + 10] ^= 0xFF
    path = write(tmp_path / "r.wandb", data)
    with RecordReader(path) as reader:
        first = reader.poll()
        assert first.records == records[:-3] and first.lost_regions == [] and first.torn
        path.write_bytes(writer.data)  # the in-flight write landed: the damage was a race
        second = reader.poll()
        assert second.records == records[-3:] and reader.lost_bytes == 0
    path = write(tmp_path / "r2.wandb", data)
    with RecordReader(path) as reader:
        reader.poll()
        again = reader.poll()  # still there next time: real damage, reported and skipped
        assert again.lost_regions and again.lost_regions[0].start == tail
        assert reader.lost_bytes == again.lost_bytes > 0


def test_poll_sees_only_new_records_as_the_file_grows(tmp_path):
    writer = small_records_writer(3)
    path = tmp_path / "r.wandb"
    path.write_bytes(b"")
    reader = RecordReader(path)
    assert reader.poll().records == []
    seen = []
    for cut in (3, 7, 500, BLOCK_SIZE, BLOCK_SIZE + 1, 70000, len(writer.data)):
        with open(path, "ab") as grow:
            grow.write(writer.data[os.path.getsize(path) : cut])
        seen += reader.poll().records
    assert seen == writer.records()
    assert reader.poll().records == []
    reader.close()


def test_header_only_file_has_no_records(tmp_path):
    batch = read_records(write(tmp_path / "r.wandb", FILE_HEADER))
    assert batch.records == [] and not batch.torn and batch.resume_at == 7


@pytest.mark.parametrize("size", [0, 1, 3, 6])
def test_file_shorter_than_its_header_is_just_created(tmp_path, size):
    batch = read_records(write(tmp_path / "r.wandb", FILE_HEADER[:size]))
    assert batch.records == [] and batch.resume_at == 0


def test_not_a_run_file_is_refused_clearly(tmp_path):
    with pytest.raises(RunFileError, match="not a W&B run file"):
        read_records(write(tmp_path / "notes.txt", b"hello, world\n"))
    with pytest.raises(RunFileError, match="not a W&B run file"):
        RecordReader(write(tmp_path / "x.wandb", b"\x00" * 100)).poll()
    with pytest.raises(RunFileError, match="is a directory"):
        read_records(tmp_path)


def test_unknown_format_version_is_refused(tmp_path):
    with pytest.raises(RunFileError, match="version 1 is not supported"):
        read_records(write(tmp_path / "r.wandb", FILE_HEADER[:6] + b"\x01" + b"\x00" * 20))


def test_start_inside_the_header_is_a_mistake(tmp_path):
    with pytest.raises(ValueError):
        read_records(write(tmp_path / "r.wandb", FILE_HEADER), start=3)
