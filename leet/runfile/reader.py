"""Framing layer of a W&B run file: header, 32 KiB blocks, chunks, CRC-32.

The file is LevelDB's log format behind a 7-byte W&B header: 32 KiB blocks
of chunks (7-byte header: CRC-32 LE, length LE, type), records split into
FULL or FIRST/MIDDLE.../LAST chunks that never cross a block, block tails of
fewer than 7 bytes zero-filled. The checksum is plain IEEE CRC-32 over the
type byte and the payload.

Reading returns whole records with the offset of their first chunk; such an
offset is a valid place to start reading again. The reader never fails on
damage: a bad chunk costs the rest of its block (LevelDB's rule), the bytes
skipped are reported, and reading goes on. When the bytes run out inside a
record (file still being written, or its writer killed) the reader stops and
says where the unfinished record starts, so a later read picks it up whole.

    batch = read_records("run-abc.wandb")        # the whole file
    for offset, payload in batch.records: ...
    reader = RecordReader("run-abc.wandb")       # tailing a live file
    batch = reader.poll()                        # what is new since last time
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator, NamedTuple

from leet.runfile.files import NotRegularFile, open_regular

FILE_HEADER = b":W&B\xe1\xbe\x00"
HEADER_SIZE = len(FILE_HEADER)
BLOCK_SIZE = 32768
CHUNK_HEADER_SIZE = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4

# Reading window: whole blocks, big enough that per-read overhead vanishes.
WINDOW_BYTES = 64 * BLOCK_SIZE

_CHUNK_HEADER = struct.Struct("<IHB")
# CRC-32 of each possible type byte: the checksum continues from it over the payload.
_TYPE_CRC = [zlib.crc32(bytes([kind])) for kind in range(256)]
_NO_LIMIT = 1 << 62
# Bytes kept from the start of the file and from just before the read position:
# enough to tell another run's file, or the same file rewritten, from the one read.
FINGERPRINT_BYTES = 256

class RunFileError(Exception):
    """The file is not a W&B run file, or has a format version this reader does not know."""


# Why bytes were skipped when a read starts inside a record: expected where a read starts mid-file.
ORPHAN_CHUNK = "chunk of a record whose start is missing"


class FileChanged(RunFileError):
    """The file is no longer the one being read: deleted, replaced, truncated or rewritten.

    ``how`` says which. What was read from it may no longer be in it, so a reader
    that raised this reads nothing more; a new one must start from the beginning.
    """

    def __init__(self, path: object, how: str) -> None:
        self.path = path
        self.how = how
        super().__init__(f"{path} was {how}")


class LostRegion(NamedTuple):
    """Bytes ``[start, end)`` that held no readable record, and why."""

    start: int
    end: int
    reason: str

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class Chunked:
    """What one read found.

    ``records``: (offset of the record's first chunk, payload), in file order.
    ``resume_at``: where the next read must start (the first record not returned).
    ``torn``: the data ended inside a record (still being written, or its writer died).
    ``at_eof``: the read went to the end of the data, not just to a limit.
    ``lost_regions``: damaged or orphaned bytes that were skipped.
    ``lost_damaged``: records known to be cut short by damage. Records whose
    chunks were skipped whole are only visible as gaps in ``Record.num``.
    """

    records: list[tuple[int, bytes]] = field(default_factory=list)
    resume_at: int = HEADER_SIZE
    lost_regions: list[LostRegion] = field(default_factory=list)
    torn: bool = False
    at_eof: bool = True
    lost_damaged: int = 0

    @property
    def lost_bytes(self) -> int:
        return sum(region.size for region in self.lost_regions)


def check_header(head: bytes, path: object = "") -> bool:
    """True if ``head`` starts with a whole valid file header; False if it is only a prefix of one.

    Raises RunFileError for anything else (not a W&B file, unknown version).
    """
    where = f"{path}: " if path else ""
    known = min(len(head), HEADER_SIZE - 1)
    if head[:known] != FILE_HEADER[:known]:
        raise RunFileError(f"{where}not a W&B run file (it does not start with ':W&B')")
    if len(head) < HEADER_SIZE:
        return False
    if head[HEADER_SIZE - 1] != 0:
        raise RunFileError(f"{where}W&B run file format version {head[HEADER_SIZE - 1]} is not supported (only version 0 exists)")
    return True


class _Framer:
    """Reassembles records from block-aligned windows of the file; keeps its state between windows."""

    def __init__(self, position: int, confirmed_damage: int | None = None, skip_tags: frozenset[int] = frozenset()) -> None:
        self.position = position  # absolute offset of the next chunk
        # Record kinds (their one-byte field tags) a reader has no use for: a whole-chunk
        # record of such a kind is stepped over unchecked and uncopied, and counted here.
        self.skip_tags = skip_tags
        self.skipped = 0
        self.pending: list[bytes] | None = None  # payload parts of a record begun by a FIRST chunk
        self.pending_start = position
        self.loss_start: int | None = None  # open lost region, while orphans after damage are skipped
        self.loss_reason = ""
        self.lost: list[LostRegion] = []
        self.lost_damaged = 0
        self.partial_chunk = False
        self.stopped_early = False
        self.held_damage: int | None = None
        self.confirmed_damage = confirmed_damage
        self.data_end = position
        # The rest of a damaged block beyond the end of the data: lost once it is written.
        self.unwritten_loss: LostRegion | None = None

    def scan(
        self,
        data: bytes,
        base: int,
        out: list[tuple[int, bytes]],
        max_records: int = _NO_LIMIT,
        stop_at: int = _NO_LIMIT,
        hold_back_from: int = _NO_LIMIT,
    ) -> None:
        """Read chunks from ``data`` (file bytes from block-aligned offset ``base``) into ``out``.

        Stops at the end of ``data``; after ``max_records`` records in ``out``;
        once a record ends at or past ``stop_at``; or before damage found at or
        past ``hold_back_from`` (it may be a write still in flight).
        """
        crc32 = zlib.crc32
        unpack = _CHUNK_HEADER.unpack_from
        type_crc = _TYPE_CRC
        append = out.append
        size = len(data)
        p = self.position - base
        pending = self.pending
        losing = self.loss_start is not None
        # Limits as plain local numbers: the loop below runs once per chunk.
        records_left = max_records - len(out)
        stop_rel = stop_at - base
        hold_rel = hold_back_from - base
        skip_tags = self.skip_tags
        skipped = 0
        self.partial_chunk = False
        # Literals instead of the module constants keep global look-ups out of the loop:
        # 32768 = BLOCK_SIZE, 7 = CHUNK_HEADER_SIZE, 1..4 = FULL, FIRST, MIDDLE, LAST.
        while True:
            left = 32768 - p % 32768
            if left < 7:
                p += left  # zero trailer: the next chunk starts in the next block
                if p >= size:
                    break
                continue
            if p + 7 > size:
                self.partial_chunk = p < size
                break
            crc, length, kind = unpack(data, p)
            end = p + 7 + length
            if length + 7 > left:
                reason = "zeroed chunk header" if crc == 0 and length == 0 and kind == 0 else "chunk length runs past its block"
            elif end > size:
                self.partial_chunk = True
                break
            else:
                # A record as the writer lays it out: num (tag 0x08, a varint), then its kind's tag.
                if kind == 1 and skip_tags and length > 2 and pending is None and not losing and data[p + 7] == 8:
                    q = p + 8
                    while q < end and data[q] & 0x80:
                        q += 1
                    if q + 1 < end and data[q + 1] in skip_tags:
                        skipped += 1
                        p = end
                        if p >= stop_rel:
                            self.stopped_early = True
                            break
                        continue
                payload = data[p + 7 : end]
                if crc32(payload, type_crc[kind]) != crc:
                    reason = "zeroed chunk header" if crc == 0 and length == 0 and kind == 0 else "checksum mismatch"
                elif kind == 1:
                    if pending is not None or losing:
                        self._close_loss(base + p, pending)
                        pending = None
                        losing = False
                    append((base + p, payload))
                    p = end
                    records_left -= 1
                    if records_left <= 0 or p >= stop_rel:
                        self.stopped_early = True
                        break
                    continue
                elif kind == 2:
                    if pending is not None or losing:
                        self._close_loss(base + p, pending)
                        losing = False
                    pending = [payload]
                    self.pending_start = base + p
                    p = end
                    continue
                elif kind == 3 or kind == 4:
                    if pending is None:
                        self._open_loss(base + p, ORPHAN_CHUNK)
                        losing = True
                        p = end
                        continue
                    pending.append(payload)
                    p = end
                    if kind == 4:
                        append((self.pending_start, b"".join(pending)))
                        pending = None
                        records_left -= 1
                        if records_left <= 0 or p >= stop_rel:
                            self.stopped_early = True
                            break
                    continue
                else:
                    reason = f"unknown chunk type {kind}"
            # Damage: chunk positions after it in this block are unknowable.
            if p >= hold_rel and base + p != self.confirmed_damage:
                self.held_damage = base + p
                break
            if pending is not None:
                self.lost_damaged += 1
                self._open_loss(self.pending_start, reason)
                pending = None
            else:
                self._open_loss(base + p, reason)
            losing = True
            p += left
        self.skipped += skipped
        self.pending = pending
        # Past the data only after damage or a block trailer: the next chunk can only start
        # at that block boundary, even once more bytes are written before it.
        self.position = base + p if p > size else base + min(p, size)
        self.data_end = base + size
        if pending is None:
            self.pending_start = self.position

    def _open_loss(self, start: int, reason: str) -> None:
        if self.loss_start is None:
            self.loss_start = start
            self.loss_reason = reason

    def _close_loss(self, end: int, pending: list[bytes] | None) -> None:
        if pending is not None:
            # A new record began while one was still open: the open one lost its end.
            self.lost_damaged += 1
            self._open_loss(self.pending_start, "record cut short (its last chunk is missing)")
        if self.loss_start is not None and end > self.loss_start:
            self.lost.append(LostRegion(self.loss_start, end, self.loss_reason))
        self.loss_start = None

    def finish(self, records: list[tuple[int, bytes]]) -> Chunked:
        """The result of the read: records, losses, and where to resume."""
        end = min(self.position, self.data_end)  # bytes not written yet are not lost yet
        if self.loss_start is not None and end > self.loss_start:
            self.lost.append(LostRegion(self.loss_start, end, self.loss_reason))
        if self.loss_start is not None and self.position > end:
            self.unwritten_loss = LostRegion(end, self.position, self.loss_reason)
        self.loss_start = None
        at_eof = not self.stopped_early
        held = self.held_damage is not None
        resume_at = self.pending_start if self.pending is not None else self.position
        torn = at_eof and (self.pending is not None or self.partial_chunk or held)
        lost, self.lost = self.lost, []
        damaged, self.lost_damaged = self.lost_damaged, 0
        return Chunked(records, resume_at, lost, torn, at_eof, damaged)


def _aligned(offset: int) -> int:
    return offset - offset % BLOCK_SIZE


def _first_offset(start: int) -> int:
    if start == 0:
        return HEADER_SIZE
    if start < HEADER_SIZE:
        raise ValueError(f"start offset {start} is inside the file header")
    return start


def _open(path: str | os.PathLike[str]) -> BinaryIO:
    try:
        return open_regular(path)
    except NotRegularFile as error:
        raise RunFileError(str(error)) from None


def _header_ready(handle: BinaryIO, path: object) -> bool:
    handle.seek(0)
    return check_header(handle.read(HEADER_SIZE), path)


def _scan(handle: BinaryIO, framer: _Framer, size: int, out: list[tuple[int, bytes]], **limits: int) -> Iterator[None]:
    """Feed ``framer`` window by window up to ``size`` bytes; yields after each window."""
    base = _aligned(framer.position)
    while base < size:
        handle.seek(base)
        data = handle.read(min(WINDOW_BYTES, size - base))
        if not data:
            return
        framer.scan(data, base, out, **limits)
        yield
        if framer.stopped_early or framer.held_damage is not None or len(data) % BLOCK_SIZE:
            return
        base += len(data)


def read_records(path: str | os.PathLike[str], start: int = 0, max_bytes: int | None = None) -> Chunked:
    """Whole records from ``start`` (0: just after the header) to the end of the file.

    ``max_bytes`` stops at the first record end at or past ``start + max_bytes``.
    Damage is skipped and reported. A file shorter than its header (just created)
    gives no records, ``torn`` set and ``resume_at`` 0.
    """
    position = _first_offset(start)
    with _open(path) as handle:
        if not _header_ready(handle, path):
            return Chunked(resume_at=0, torn=True)
        size = os.fstat(handle.fileno()).st_size
        framer = _Framer(position)
        out: list[tuple[int, bytes]] = []
        limits = {"stop_at": position + max_bytes} if max_bytes is not None else {}
        for _ in _scan(handle, framer, size, out, **limits):
            pass
    return framer.finish(out)


def iter_batches(path: str | os.PathLike[str], start: int = 0) -> Iterator[Chunked]:
    """A whole file in bounded pieces (one reading window each), for big files.

    Each batch holds the records completed in its window and the losses found there.
    """
    with _open(path) as handle:
        if not _header_ready(handle, path):
            yield Chunked(resume_at=0, torn=True)
            return
        size = os.fstat(handle.fileno()).st_size
        framer = _Framer(_first_offset(start))
        out: list[tuple[int, bytes]] = []
        for _ in _scan(handle, framer, size, out):
            if out or framer.lost:
                resume_at = framer.pending_start if framer.pending is not None else framer.position
                batch = Chunked(out[:], resume_at, framer.lost, False, False, framer.lost_damaged)
                framer.lost, framer.lost_damaged = [], 0
                out.clear()  # the scan keeps appending to this same list
                yield batch
        yield framer.finish(out)


class RecordReader:
    """Incremental reader for a file that may still be growing; remembers where it stopped.

    Each ``poll()`` returns the records completed since the previous one. An
    unfinished record at the end is left for a later poll. With ``live`` (the
    file may still be written), damage found in the file's last block is held
    back once, in case it is a write still in flight, and reported as lost if
    it is still there at the next poll; without it, damage counts at once.
    """

    def __init__(self, path: str | os.PathLike[str], start: int = 0, live: bool = True, skip_tags: frozenset[int] = frozenset()) -> None:
        self.path = path
        self.live = live
        self.skip_tags = skip_tags  # see ``_Framer``
        self.skipped = 0
        self.offset = _first_offset(start)
        self.lost_bytes = 0
        self.lost_regions: list[LostRegion] = []
        self._handle: BinaryIO | None = None
        self._header_ok = False
        self._seen_size = -1
        self._drained = False
        self._torn = False
        self._suspect: int | None = None
        self._unwritten: LostRegion | None = None
        self._changed: FileChanged | None = None
        # Bytes already read, kept to notice a rewrite: the first ones, and the last before ``offset``.
        self._head = b""
        self._mark = (0, b"")
        self._stamp = (-1, 0)  # size and mtime when the kept bytes were last checked

    def poll(self, max_records: int | None = None) -> Chunked:
        """Records completed since the last poll (at most ``max_records``).

        Raises ``FileChanged`` when the path no longer holds the bytes already read.
        """
        handle = self._open()
        size = os.fstat(handle.fileno()).st_size
        if self.live:
            self._check_identity(handle, size)
        if not self._header_ok:
            if not _header_ready(handle, self.path):
                return Chunked(resume_at=0, torn=size > 0)
            self._header_ok = True
        unchanged = size == self._seen_size and self._drained and self._suspect is None
        if size <= self.offset or unchanged:
            return Chunked(resume_at=self.offset, torn=self._torn, lost_regions=self._written_loss(size))
        self._seen_size = size
        framer = _Framer(self.offset, confirmed_damage=self._suspect, skip_tags=self.skip_tags)
        out: list[tuple[int, bytes]] = []
        limits = {"hold_back_from": _aligned(size - 1)} if self.live else {}
        if max_records:
            limits["max_records"] = max_records
        for _ in _scan(handle, framer, size, out, **limits):
            pass
        earlier = self._written_loss(size)
        result = framer.finish(out)
        result.lost_regions[:0] = earlier
        self._unwritten = self._unwritten or framer.unwritten_loss
        self.skipped += framer.skipped
        self._suspect = framer.held_damage
        self._drained = result.at_eof and self._suspect is None
        self._torn = result.torn
        self.offset = result.resume_at
        self.lost_regions.extend(result.lost_regions)
        self.lost_bytes += result.lost_bytes
        if self.live:
            self._remember_read(handle)
        return result

    def _written_loss(self, size: int) -> list[LostRegion]:
        """The part of a damaged block's rest written since the last poll: lost, as a whole read would say."""
        gap = self._unwritten
        if gap is None or size <= gap.start:
            return []
        end = min(size, gap.end)
        self._unwritten = LostRegion(end, gap.end, gap.reason) if end < gap.end else None
        region = LostRegion(gap.start, end, gap.reason)
        self.lost_regions.append(region)
        self.lost_bytes += region.size
        return [region]

    # -- is it still the same file? ------------------------------------------------
    def _check_identity(self, handle: BinaryIO, size: int) -> None:
        if self._changed is not None:
            raise self._changed
        how = self._how_changed(handle, size)
        if how:
            self._changed = FileChanged(self.path, how)
            raise self._changed

    def _how_changed(self, handle: BinaryIO, size: int) -> str:
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError:
            return ""  # unreadable for now (a permission change): the open handle still reads
        opened = os.fstat(handle.fileno())
        if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
            return "replaced by another file"
        if size < self._seen_size:
            return "truncated"
        stamp = (opened.st_size, opened.st_mtime_ns)
        if stamp != self._stamp and self._mark[0] and not self._still_holds(handle):
            return "rewritten in place"
        self._stamp = stamp
        return ""

    def _still_holds(self, handle: BinaryIO) -> bool:
        """The bytes remembered from the last read are still where they were."""
        fd = handle.fileno()
        end, tail = self._mark
        return os.pread(fd, len(self._head), 0) == self._head and os.pread(fd, len(tail), end - len(tail)) == tail

    def _remember_read(self, handle: BinaryIO) -> None:
        end = min(self.offset, self._seen_size)
        if end <= self._mark[0]:
            return
        fd = handle.fileno()
        if len(self._head) < FINGERPRINT_BYTES:
            self._head = os.pread(fd, min(FINGERPRINT_BYTES, end), 0)
        start = max(0, end - FINGERPRINT_BYTES)
        self._mark = (end, os.pread(fd, end - start, start))

    def size(self) -> int:
        """Current size of the file in bytes."""
        return os.fstat(self._open().fileno()).st_size

    def _open(self) -> BinaryIO:
        if self._handle is None:
            self._handle = _open(self.path)
        return self._handle

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
