"""Writes a W&B run file: the header, then records framed in 32 KiB blocks of CRC32-checked chunks.

Records are appended as they come and reach the disk at ``flush``; a file cut
short anywhere reads back up to its last whole chunk.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.reader import BLOCK_SIZE, FILE_HEADER

CHUNK_HEADER_SIZE = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_CHUNK_HEADER = struct.Struct("<IHB")


def frame(payload: bytes, offset: int) -> bytes:
    """The chunks that hold ``payload`` when written at file offset ``offset``, with any block padding."""
    out = bytearray()
    rest, first = payload, True
    while True:
        room = BLOCK_SIZE - (offset + len(out)) % BLOCK_SIZE
        if room < CHUNK_HEADER_SIZE:
            out += b"\0" * room
            room = BLOCK_SIZE
        piece, rest = rest[: room - CHUNK_HEADER_SIZE], rest[room - CHUNK_HEADER_SIZE :]
        last = not rest
        kind = FULL if first and last else FIRST if first else LAST if last else MIDDLE
        out += _CHUNK_HEADER.pack(zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind) + piece
        first = False
        if last:
            return bytes(out)


def _stamp(message: Timestamp, when: float) -> None:
    seconds = int(when // 1)
    message.seconds = seconds
    message.nanos = int((when - seconds) * 1e9)


class RunFileWriter:
    """Appends records to a new run file; ``flush`` makes what was written durable."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._handle = open(self.path, "xb")  # noqa: SIM115 - held open for the writer's life
        self._handle.write(FILE_HEADER)
        self.size = len(FILE_HEADER)
        self._num = 0

    def add(self, record: pb.Record) -> None:
        self._num += 1
        record.num = self._num
        data = frame(record.SerializeToString(), self.size)
        self._handle.write(data)
        self.size += len(data)

    def run(self, run_id: str, project: str, host: str, start_time: float) -> None:
        record = pb.RunRecord(run_id=run_id, project=project, display_name=host, host=host)
        _stamp(record.start_time, start_time)
        self.add(pb.Record(run=record))

    def stats(self, when: float, values: dict[str, float]) -> None:
        stats = pb.StatsRecord(
            stats_type=pb.StatsRecord.StatsType.SYSTEM,
            item=[pb.StatsItem(key=key, value_json=repr(float(value))) for key, value in values.items()],
        )
        _stamp(stats.timestamp, when)
        self.add(pb.Record(stats=stats))

    def exit(self, code: int, runtime: float) -> None:
        self.add(pb.Record(exit=pb.RunExitRecord(exit_code=code, runtime=int(runtime))))

    def flush(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if not self._handle.closed:
            self.flush()
            self._handle.close()


def new_run_id() -> str:
    return format(int(time.time() * 1000) % 36**8, "x")[-8:]
