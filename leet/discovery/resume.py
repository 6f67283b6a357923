"""Where a resumed segment's steps really lie: after the steps of the segments before it.

A run resumed with ``resume="allow"`` while offline starts its ``_step`` at 0
again: the second part of a run that stopped at step 29 logs steps 0, 1, …
that stand for 30, 31, …. A segment whose run record says it resumed, and
whose first step would fall at or before the last step of the segments
before it, is shifted to start right after them. A segment that already
carries its real steps (resumed online, or logged with ``step=``) starts
past them and is left as it is; a segment that did not resume (the id used
again for a new run) starts from its own 0.

Each earlier segment is looked at, not read: its first records for its first
step and whether it resumed, its last ones for its last step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from leet.runfile.decode import decode
from leet.runfile.decode.bulk import peek
from leet.runfile.events import HistoryRow, RunInfo, SummaryUpdate
from leet.runfile.reader import BLOCK_SIZE, RunFileError, read_records

HEAD_BYTES = 64 * 1024  # the run record and, in all but odd files, the first history row
TAIL_READS = (2 * BLOCK_SIZE, 4 << 20)  # the last step is looked for this far back, then further once
_WANTED = frozenset({"run", "history", "summary"})


@dataclass(frozen=True)
class StepSpan:
    """What one segment's file says of its steps."""

    resumed: bool = False
    first: int | None = None  # its first history row's step
    last: int | None = None  # its last history row's step (or the summary's ``_step``)


def shift(end: int | None, first: int | None, resumed: bool) -> int:
    """How far a segment's steps move: past ``end`` (the real last step before it) when it resumed from 0 or below it."""
    if not resumed or end is None:
        return 0
    return max(0, end + 1 - (first or 0))


def segments_end(files: Sequence[Path]) -> int | None:
    """The real last step of the last of ``files`` (a run id's segments, oldest first), each shifted after the one before."""
    end: int | None = None
    for file in files:
        span = step_span(file)
        if span.last is None:
            continue  # nothing logged: the next segment follows the one before
        end = span.last + shift(end, span.first, span.resumed)
    return end


def step_span(file: Path) -> StepSpan:
    """The first and last steps of ``file`` and whether it resumed; what cannot be read is left None."""
    try:
        size = file.stat().st_size
        head = read_records(file, 0, HEAD_BYTES).records
    except (OSError, RunFileError):
        return StepSpan()
    resumed = False
    first = None
    for event in _events(head):
        if isinstance(event, RunInfo):
            resumed = event.resumed
        elif isinstance(event, HistoryRow):
            first = event.step
            break
    return StepSpan(resumed, first, _last_step(file, size))


def _last_step(file: Path, size: int) -> int | None:
    for back in TAIL_READS:
        start = max(0, size - back) // BLOCK_SIZE * BLOCK_SIZE
        try:
            records = read_records(file, start).records
        except (OSError, RunFileError):
            return None
        found = _last_of(records)
        if found is not None or start == 0:
            return found
    return None


def _last_of(records: list[tuple[int, bytes]]) -> int | None:
    summary_step = None
    for event in _events(reversed(records)):
        if isinstance(event, HistoryRow):
            return event.step
        if summary_step is None and isinstance(event, SummaryUpdate):
            step = event.update.get("_step")
            if isinstance(step, (int, float)) and not isinstance(step, bool):
                summary_step = int(step)
    return summary_step


def _events(records: Iterable[tuple[int, bytes]]) -> Iterable[object]:
    """The run, history and summary events among ``records``; other kinds are passed over unparsed."""
    for _offset, payload in records:
        peeked = peek(payload)
        if peeked is not None and peeked[1] not in _WANTED:
            continue
        yield decode(payload)


def offset_among(segments: Sequence[Path], file: Path) -> int:
    """How far ``file``'s steps move, given its id's ``segments`` (oldest first, ``file`` among them)."""
    if file not in segments or segments.index(file) == 0:
        return 0
    span = step_span(file)
    return shift(segments_end(segments[: segments.index(file)]), span.first, span.resumed)
