"""Where each record of a run file lies, and of what kind: a browsable index built as the file is read.

Building it reads only the framing and each record's first bytes (its kind):
offsets, payload sizes and kinds go into flat arrays, a few bytes a record, so
a run of a million records costs megabytes, not a million parsed messages. A
record is parsed when someone looks at it (``record(n)``), from its bytes read
again at its offset. Damaged stretches of the file are entries of their own,
of kind ``LOST``, in file order between the records around them.

    index = RecordIndex("run-abc.wandb")
    index.read_more()                  # on a worker thread: the next part of the file
    index.entry(0), index.record(0)    # any thread: where it lies, the parsed record
    index.positions("history")         # the entries of one kind, in file order

One thread reads (``read_more`` or ``follow``); any thread may look meanwhile.
"""

from __future__ import annotations

import os
import threading
from array import array
from pathlib import Path
from typing import BinaryIO, Callable, NamedTuple, Sequence

from google.protobuf.message import DecodeError

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.files import open_regular
from leet.runfile.reader import BLOCK_SIZE, CHUNK_HEADER_SIZE, FileChanged, RecordReader, RunFileError

LOST = "lost"  # the kind of an entry that stands for damaged bytes
UNKNOWN = "unknown"  # a record whose kind is none the schema names

# Records read per step: bounds the memory of one read and how long the reader holds no news.
READ_STEP = 5_000

_KIND_BY_FIELD = {field.number: field.name for field in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields}


class Entry(NamedTuple):
    """One line of the index: a record (``size`` payload bytes at ``offset``) or a lost stretch (``size`` bytes, ``reason``)."""

    offset: int
    size: int
    kind: str
    reason: str = ""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def record_kind(payload: bytes) -> str:
    """The name of the record's kind (its ``record_type`` field), read from the top-level fields without parsing."""
    at, end = 0, len(payload)
    try:
        while at < end:
            tag, at = _varint(payload, at)
            field, wire = tag >> 3, tag & 7
            if field in _KIND_BY_FIELD:
                return _KIND_BY_FIELD[field]
            if wire == 0:
                _, at = _varint(payload, at)
            elif wire == 2:
                size, at = _varint(payload, at)
                at += size
            elif wire == 1:
                at += 8
            elif wire == 5:
                at += 4
            else:
                return UNKNOWN
    except IndexError:
        pass
    return UNKNOWN


def file_span(offset: int, size: int) -> int:
    """Bytes of the file a record of ``size`` payload bytes takes from ``offset``: chunk headers and block tails included."""
    at, left = offset, size
    while True:
        room = BLOCK_SIZE - at % BLOCK_SIZE
        if room < CHUNK_HEADER_SIZE:
            at += room
            continue
        piece = min(left, room - CHUNK_HEADER_SIZE)
        at += CHUNK_HEADER_SIZE + piece
        left -= piece
        if not left:
            return at - offset


def unchunk(data: bytes, offset: int, size: int) -> bytes:
    """The payload of the record whose chunks ``data`` holds, read from file offset ``offset``."""
    parts, at, left = [], 0, size
    while True:
        room = BLOCK_SIZE - (offset + at) % BLOCK_SIZE
        if room < CHUNK_HEADER_SIZE:
            at += room
            continue
        piece = min(left, room - CHUNK_HEADER_SIZE)
        parts.append(data[at + CHUNK_HEADER_SIZE : at + CHUNK_HEADER_SIZE + piece])
        at += CHUNK_HEADER_SIZE + piece
        left -= piece
        if not left:
            return b"".join(parts)


class RecordIndex:
    """The entries of one run file, in file order; grows as ``read_more`` reads on."""

    def __init__(self, path: str | os.PathLike[str], *, step: int | None = None) -> None:
        self.path = Path(path)
        self.step = step or READ_STEP
        self._lock = threading.Lock()
        self._offsets = array("q")
        self._sizes = array("q")
        self._kinds = array("B")
        self._reasons: dict[int, str] = {}  # entry number → why its bytes were lost
        self._codes: dict[str, int] = {}
        self._names: list[str] = []
        self._by_kind: dict[str, array] = {}
        self._reader = RecordReader(self.path, live=True)
        self._handle: BinaryIO | None = None  # for reading records back, from any thread (pread)
        self.read_bytes = 0  # how far the reader has got
        self.size = 0  # the file's size at the last read
        self.reached_end = False  # the reader got to the end of the file at least once
        self.error = ""  # why reading stopped for good

    def __len__(self) -> int:
        return len(self._kinds)

    # -- reading (one thread) ---------------------------------------------------------
    def read_more(self) -> bool:
        """Index the next part of the file; True when the reader is at the end of what is written."""
        if self.error:
            return True
        try:
            batch = self._reader.poll(max_records=self.step)
            self.size = self._reader.size()
        except FileChanged as error:
            self.error = f"the file was {error.how}"
            return True
        except (RunFileError, OSError) as error:
            self.error = str(error).removeprefix(f"{self.path}: ")  # the screen names the file already
            return True
        found = [(offset, len(payload), record_kind(payload), "") for offset, payload in batch.records]
        found += [(region.start, region.size, LOST, region.reason) for region in batch.lost_regions]
        found.sort(key=lambda item: item[0])
        with self._lock:
            for offset, size, kind, reason in found:
                self._add(offset, size, kind, reason)
        self.read_bytes = self._reader.offset
        if batch.at_eof:
            self.reached_end = True
        return batch.at_eof

    def _add(self, offset: int, size: int, kind: str, reason: str) -> None:
        code = self._codes.get(kind)
        if code is None:
            code = self._codes[kind] = len(self._names)
            self._names.append(kind)
            self._by_kind[kind] = array("q")
        number = len(self._kinds)
        if reason:
            self._reasons[number] = reason
        self._offsets.append(offset)
        self._sizes.append(size)
        self._kinds.append(code)
        self._by_kind[kind].append(number)

    def follow(self, stop: threading.Event, told: Callable[[], object], interval: float = 1.0) -> None:
        """Read to the end, then on as the file grows, until ``stop`` is set or reading fails; ``told()`` after each read that found something."""
        while not stop.is_set():
            before, was_at_end = len(self), self.reached_end
            at_end = self.read_more()
            if len(self) != before or self.error or self.reached_end != was_at_end:
                told()
            if self.error:
                return
            # Between two reads the thread lets go for a moment, so that a screen on another thread gets its turn.
            stop.wait(interval if at_end else 0.002)

    # -- looking (any thread) -----------------------------------------------------------
    def entry(self, number: int) -> Entry:
        with self._lock:
            return Entry(self._offsets[number], self._sizes[number], self._names[self._kinds[number]], self._reasons.get(number, ""))

    def kinds(self) -> dict[str, int]:
        """How many entries of each kind, in the order the kinds first appeared."""
        with self._lock:
            return {kind: len(numbers) for kind, numbers in self._by_kind.items()}

    def positions(self, kind: str | None = None) -> Sequence[int]:
        """The entry numbers of one kind (every entry for None), in file order; the sequence grows as the index does."""
        if kind is None:
            return _Everything(self)
        with self._lock:
            return self._by_kind.get(kind) or array("q")

    def payload(self, number: int) -> bytes | None:
        """The bytes of record ``number`` as written (None for a lost stretch)."""
        entry = self.entry(number)
        if entry.kind == LOST:
            return None
        with self._lock:
            if self._handle is None:
                self._handle = open_regular(self.path)
            handle = self._handle
        data = os.pread(handle.fileno(), file_span(entry.offset, entry.size), entry.offset)
        return unchunk(data, entry.offset, entry.size)

    def record(self, number: int) -> pb.Record | None:
        """Record ``number`` parsed; None for a lost stretch, or bytes the schema cannot parse."""
        payload = self.payload(number)
        if payload is None:
            return None
        try:
            return pb.Record.FromString(payload)
        except DecodeError:
            return None

    def close(self) -> None:
        self._reader.close()
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()


class _Everything(Sequence[int]):
    """Every entry number of an index, as a sequence that grows with it."""

    def __init__(self, index: RecordIndex) -> None:
        self._index = index

    def __len__(self) -> int:
        return len(self._index)

    def __getitem__(self, at):
        if isinstance(at, slice):
            return range(len(self))[at]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(at)
        return at
