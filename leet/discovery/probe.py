"""One run file at a glance: ``probe`` reads only its head and its tail and says what run it is and its state.

A workspace of hundreds of runs lists quickly because no file is read whole
here, and ``leet watch`` learns a run's identity and node label the same way
before it follows the file for alerts.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Mapping

from leet.discovery.layout import head_of
from leet.model.keys import label_of_keys
from leet.model.state import CRASH_AFTER, RunState, judge
from leet.runfile.decode import decode
from leet.runfile.events import RunExit, StatsRow
from leet.runfile.files import open_regular
from leet.runfile.folders import RunDir
from leet.runfile.reader import BLOCK_SIZE, CHUNK_HEADER_SIZE, FIRST, FULL, HEADER_SIZE, LAST, MIDDLE, ORPHAN_CHUNK, Chunked, RunFileError, read_records

HEAD_BYTES = 64 * 1024  # the run record is the second record of the file
TAIL_BYTES = 2 * BLOCK_SIZE  # the exit record, if any, is the last one
STEP_BACK_BYTES = 4 << 20  # how far back from the end the exit record is looked for, over large records after it
_CHUNK_HEADER = struct.Struct("<IHB")  # CRC-32, payload length, type: the reader's framing
RECORDS_LOOKED_AT = 8  # records that fit a block, read back from the end, before the exit record is given up for


@dataclass(frozen=True)
class RunEntry:
    """One run directory as the runs list shows it."""

    key: str  # the directory name: unique in the workspace, stable while it is open
    directory: Path
    file: Path
    run_id: str = ""
    name: str = ""
    project: str = ""
    group: str = ""
    job_type: str = ""
    start_time: float | None = None
    state: RunState = RunState.LOADING
    exit_code: int | None = None
    size: int = 0
    mtime: float = 0.0
    error: str = ""
    # A shared-mode run: every writer's file (the primary's first) and their node labels.
    files: tuple[Path, ...] = ()
    labels: tuple[str, ...] = ()
    primary: bool = False  # this file holds an environment record: only a shared run's primary writes one
    resumed: bool = False
    shared: bool = False  # a shared-mode writer (see discovery.layout): merged with the other writers of its run
    segment: tuple[int, int] | None = None  # (n, of) when its id was written in several goes
    reason: str = ""  # why the state is what it is
    damage: str = ""  # damaged data seen in the parts read to list it (the run still opens)
    # From the run record: what the run filter's tag:, note: and (until the whole file is read) cfg. terms look at.
    tags: tuple[str, ...] = ()
    notes: str = ""
    config: Mapping[str, Any] = field(default_factory=dict, hash=False, repr=False)

    @property
    def title(self) -> str:
        return self.name or self.run_id or self.key

    @property
    def writers(self) -> int:
        return max(1, len(self.files))

    @property
    def live(self) -> bool:
        return self.state is RunState.RUNNING


def problem(error: BaseException, file: Path) -> str:
    """What went wrong with ``file``, naming it as its run directory's row does: by its own name."""
    if isinstance(error, OSError) and error.strerror:
        return f"{file.name}: {error.strerror}"
    return str(error).replace(str(file), file.name) or type(error).__name__


def failed(entry: RunEntry, why: str) -> RunEntry:
    return replace(entry, state=RunState.UNKNOWN, error=why, reason=why)


def unreadable(run_dir: RunDir) -> RunEntry:
    """The row of a directory that could not be looked into."""
    return failed(RunEntry(key=run_dir.name, directory=run_dir.path, file=run_dir.path), run_dir.error)


def damage_seen(head: Chunked, tail: Chunked | None) -> str:
    """Damage in the head or tail read, in words; a tail read that starts inside a record is not damage."""
    regions = [(region, "start") for region in head.lost_regions]
    if tail is not None:
        regions += [(region, "end") for region in tail.lost_regions if region.reason != ORPHAN_CHUNK]
    if not regions:
        return ""
    where = " and ".join(dict.fromkeys(place for _, place in regions))
    reasons = "; ".join(dict.fromkeys(region.reason for region, _ in regions))
    return f"damaged data near the {where}: {sum(region.size for region, _ in regions):,} bytes skipped ({reasons})"


def probe(key: str, file: Path, now: float, crash_after: float = CRASH_AFTER) -> RunEntry:
    """What the head and tail of a run file say: identity, start, and whether it ended.

    A file that cannot be read (not a regular file, no permission, not a run
    file) gives an entry whose ``error`` says why; nothing here raises for it.
    """
    entry = RunEntry(key=key, directory=file.parent, file=file)
    try:
        stat = file.stat()
        entry = replace(entry, size=stat.st_size, mtime=stat.st_mtime)
        head = read_records(file, 0, HEAD_BYTES)  # opens only a regular file, never blocking
        tail_start = max(0, stat.st_size - TAIL_BYTES) // BLOCK_SIZE * BLOCK_SIZE
        tail = read_records(file, tail_start) if stat.st_size > HEAD_BYTES else head
    except (OSError, RunFileError) as error:
        return failed(entry, problem(error, file))
    facts = head_of(file, head.records)
    damage = damage_seen(head, tail if tail is not head else None)
    info = facts.info
    ended = _last(tail.records, RunExit)
    if ended is None and tail is not head:
        ended = _exit_before_large_records(file, stat.st_size)
    label = facts.label or _label(tail.records[-64:])
    verdict = judge(
        exit_code=ended.exit_code if ended is not None else None,
        last_write_age=now - stat.st_mtime,
        crash_after=crash_after,
        size=stat.st_size,
        has_run_record=info is not None or bool(head.records),
    )
    return replace(
        entry,
        run_id=info.run_id if info else "",
        name=info.display_name if info else "",
        project=info.project if info else "",
        group=info.group if info else "",
        job_type=info.job_type if info else "",
        tags=info.tags if info else (),
        notes=info.notes if info else "",
        config=info.config if info else {},
        start_time=info.start_time if info else None,
        state=verdict.state,
        reason=verdict.reason,
        damage=damage,
        exit_code=verdict.exit_code,
        size=stat.st_size,
        mtime=stat.st_mtime,
        files=(file,),
        labels=(label,) if label else (),
        primary=facts.primary,
        resumed=bool(info and info.resumed),
        shared=facts.shared or label is not None,
    )


def _label(records: Iterable[tuple[int, bytes]]) -> str | None:
    """The node label of the first labelled system-metrics record."""
    for _offset, payload in records:
        event = decode(payload)
        if isinstance(event, StatsRow):
            found = label_of_keys(event.values)
            if found:
                return found
    return None


def _exit_before_large_records(file: Path, size: int) -> RunExit | None:
    """The exit record that large records after it (a final summary, file lists, telemetry) hide from the tail read; bounded.

    The file is walked back from its end by its framing: a block taken up by
    one chunk of a large record costs a read of that chunk's 7-byte header; a
    block with several chunks is read whole. Only records that fit a block are
    decoded, and the walk gives up after ``RECORDS_LOOKED_AT`` of them (the
    exit record is among a run's last few) or ``STEP_BACK_BYTES``.
    """
    looked = 0
    try:
        with open_regular(file) as handle:
            for payload in _records_backwards(handle, size):
                if payload is None:
                    continue
                event = decode(payload)
                if isinstance(event, RunExit):
                    return event
                looked += 1
                if looked >= RECORDS_LOOKED_AT:
                    return None
    except OSError:
        return None
    return None


def _records_backwards(handle: BinaryIO, size: int) -> Iterator[bytes | None]:
    """The file's records from its last one back: the payload of one that fits a block, None for a larger one."""
    parts: list[bytes] | None = None  # the chunks of the record being stepped over, from its last; None once it is large
    within = False  # between a LAST chunk and its FIRST
    last_block = (size - 1) // BLOCK_SIZE * BLOCK_SIZE
    for block in range(last_block, max(-1, last_block - STEP_BACK_BYTES - 1), -BLOCK_SIZE):
        for kind, payload in reversed(_chunks(handle, block, size)):
            if kind == FULL:
                within = False
                yield payload
            elif kind == LAST:
                within, parts = True, [payload] if payload is not None else None
            elif within and kind in (MIDDLE, FIRST):
                if parts is not None and payload is not None and sum(map(len, parts)) + len(payload) <= BLOCK_SIZE:
                    parts.insert(0, payload)
                else:
                    parts = None
                if kind == FIRST:
                    within = False
                    yield b"".join(parts) if parts is not None else None


def _chunks(handle: BinaryIO, block: int, size: int) -> list[tuple[int, bytes | None]]:
    """The whole, intact chunks of the block at ``block`` as (type, payload); a payload not read (a large record's) is None."""
    start = max(block, HEADER_SIZE)
    handle.seek(start)
    data = handle.read(CHUNK_HEADER_SIZE)
    if len(data) < CHUNK_HEADER_SIZE:
        return []
    _crc, length, kind = _CHUNK_HEADER.unpack_from(data)
    if kind != FULL and start + 2 * CHUNK_HEADER_SIZE + length > block + BLOCK_SIZE:
        return [(kind, None)]  # the block's only chunk, a piece of a large record: its header says enough
    data += handle.read(min(block + BLOCK_SIZE, size) - start - CHUNK_HEADER_SIZE)
    chunks: list[tuple[int, bytes | None]] = []
    at = 0
    while at + CHUNK_HEADER_SIZE <= len(data):
        crc, length, kind = _CHUNK_HEADER.unpack_from(data, at)
        end = at + CHUNK_HEADER_SIZE + length
        if end > len(data) or (length == 0 and kind == 0):
            break  # the end of what is written, or the block's zeroed tail
        payload = data[at + CHUNK_HEADER_SIZE : end]
        if zlib.crc32(payload, zlib.crc32(bytes([kind]))) != crc:
            break  # damage: LevelDB gives up the rest of the block
        chunks.append((kind, payload))
        at = end
    return chunks


def _last(records: list[tuple[int, bytes]], kind: type):
    for _offset, payload in reversed(records[-8:]):
        event = decode(payload)
        if isinstance(event, kind):
            return event
    return None
