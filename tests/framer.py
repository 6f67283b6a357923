"""Frames W&B records into run-file bytes, for crafted files the SDK would never write.

Real runs in tests come from the real SDK; this framer exists for what a buggy
or hostile writer can put in a perfectly valid file (and for the framing tests).
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.reader import BLOCK_SIZE, FILE_HEADER

FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


class Framer:
    """Writes payloads the way the W&B writer frames them; remembers offsets and chunk types."""

    def __init__(self) -> None:
        self.data = bytearray(FILE_HEADER)
        self.offsets: list[int] = []
        self.payloads: list[bytes] = []
        self.kinds: list[int] = []
        self.trailers: list[int] = []

    def room(self) -> int:
        """Bytes left in the current block."""
        return BLOCK_SIZE - len(self.data) % BLOCK_SIZE

    def add(self, payload: bytes) -> int:
        rest, first = payload, True
        while True:
            if self.room() < 7:
                self.trailers.append(self.room())
                self.data += b"\0" * self.room()
            if first:
                self.offsets.append(len(self.data))
            piece, rest = rest[: self.room() - 7], rest[self.room() - 7 :]
            last = not rest
            kind = FULL if first and last else FIRST if first else LAST if last else MIDDLE
            self.kinds.append(kind)
            self.data += struct.pack("<IHB", zlib.crc32(bytes([kind]) + piece), len(piece), kind) + piece
            first = False
            if last:
                self.payloads.append(payload)
                return self.offsets[-1]

    def fill_to(self, leave: int, tag: bytes = b"f") -> None:
        """Add one record that leaves exactly ``leave`` bytes in the current block (room must allow it)."""
        size = self.room() - 7 - leave
        assert size >= 0
        self.add(tag * size)

    def records(self) -> list[tuple[int, bytes]]:
        return list(zip(self.offsets, self.payloads))


def _json(value: Any) -> str:
    """A value as the writer's JSON text; a str passes through as already-encoded JSON."""
    return value if isinstance(value, str) else json.dumps(value)


class RunWriter(Framer):
    """Builds a run file record by record. Values are Python objects or raw JSON text."""

    def __init__(self, run_id: str = "crafted", *, start_time: float | None = 1_700_000_000.0, **run: Any) -> None:
        super().__init__()
        self.num = 0
        record = pb.RunRecord(run_id=run_id, project="hostile", display_name=run.pop("name", run_id))
        if start_time is not None:
            seconds = int(start_time // 1)
            record.start_time.seconds = seconds
            record.start_time.nanos = int((start_time - seconds) * 1e9)
        for field, value in run.items():
            setattr(record, field, value)
        self.record(run=record)

    def record(self, **field: Any) -> int:
        self.num += 1
        return self.add(pb.Record(num=self.num, **field).SerializeToString())

    def config(self, **items: Any) -> RunWriter:
        self.record(config=pb.ConfigRecord(update=[pb.ConfigItem(key=k, value_json=_json(v)) for k, v in items.items()]))
        return self

    def summary(self, **items: Any) -> RunWriter:
        self.record(
            summary=pb.SummaryRecord(update=[pb.SummaryItem(key=k, value_json=_json(v)) for k, v in items.items()])
        )
        return self

    def history(self, step: int, values: dict[str, Any]) -> RunWriter:
        items = [pb.HistoryItem(key="_step", value_json=str(step))]
        items += [pb.HistoryItem(key=k, value_json=_json(v)) for k, v in values.items()]
        self.record(history=pb.HistoryRecord(item=items, step=pb.HistoryStep(num=step)))
        return self

    def stats(self, timestamp: float, values: dict[str, Any]) -> RunWriter:
        stats = pb.StatsRecord(item=[pb.StatsItem(key=k, value_json=_json(v)) for k, v in values.items()])
        seconds = int(timestamp // 1)
        stats.timestamp.seconds = seconds
        stats.timestamp.nanos = int((timestamp - seconds) * 1e9)
        self.record(stats=stats)
        return self

    def console(self, line: str, *, stderr: bool = False) -> RunWriter:
        self.record(output_raw=pb.OutputRawRecord(output_type=0 if stderr else 1, line=line))
        return self

    def exit(self, code: int = 0, runtime: int = 10) -> RunWriter:
        self.record(exit=pb.RunExitRecord(exit_code=code, runtime=runtime))
        return self

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(self.data))
        return path
