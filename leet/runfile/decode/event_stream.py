"""Batches of framed records into ``Decoded`` items, with the bookkeeping of what was lost.

History and summary records take the fast paths of ``bulk`` where they can,
with the same results.

Damage never raises: a payload that does not parse becomes a ``DataLoss``
event, and bytes the framing layer skipped become one too, with the number
of records lost taken from the gap in ``Record.num`` when a record follows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Iterator

from leet.runfile.decode.bulk import history_row, history_step, peek
from leet.runfile.decode.convert import CONVERTERS, Decoded, history_step_event, other_event, parse, raw_summary_event
from leet.runfile.decode.json_values import RawJSON
from leet.runfile.decode.summaries import SummaryDecoder, SummaryFold
from leet.runfile.events import DataLoss, Event, OtherRecord, SummaryUpdate
from leet.runfile.reader import Chunked, LostRegion, iter_batches


@dataclass
class _HeldLoss:
    offset: int
    lost_bytes: int
    reasons: list[str]
    damaged: int


# ``EventStream.stop_at`` when there is no stop: past any offset a file can have.
NO_STOP = 1 << 62


class EventStream:
    """Decodes batches of records into ``Decoded`` items, turning skipped bytes into DataLoss events.

    A loss is held until the next record, whose ``Record.num`` tells how many records it cost.
    History and summary records take the fast paths of ``bulk`` when they can;
    records of skipped kinds are counted from their first bytes, unparsed.
    """

    def __init__(
        self, skip: Iterable[str] = (), history_values: bool = True, lazy_summary: bool = False, fold_summary: bool = False
    ) -> None:
        self.skip = frozenset(skip)
        self.converters = CONVERTERS if history_values else {**CONVERTERS, "history": history_step_event}
        self.fast_history = history_row if history_values else history_step
        self.fold_summary = fold_summary
        self.lazy_summary = lazy_summary or fold_summary
        if self.lazy_summary:
            self.converters = {**self.converters, "summary": raw_summary_event}
        self.last_num = 0
        self.lost_bytes = 0
        self.lost_records = 0
        self.undecodable = 0
        self.records = 0
        self.folded = 0  # summary records merged into another's event (fold_summary)
        self.uncounted_losses = 0  # losses with no record after them to tell how many records they took
        # The last uncounted loss, while a later record may still tell its count:
        # (Record.num before it, records already counted for it). A file read as it
        # grows then ends with the counts a whole read of the same bytes gives.
        self._unresolved: tuple[int, int] | None = None
        self.stop_at = NO_STOP  # records from here on are not read (see EventReader.stop_before)
        self.stopped_at: int | None = None  # where the first record at or past ``stop_at`` starts, once seen
        self.summaries = SummaryDecoder()

    def feed(self, batch: Chunked) -> list[Decoded]:
        out: list[Decoded] = []
        stop = self.stop_at
        # Damage up to the first record past the stop is this reader's to report; after it, not.
        losses = sorted(region for region in batch.lost_regions if self.stopped_at is None or region.start < self.stopped_at)
        held: _HeldLoss | None = None
        next_loss = 0
        damaged = batch.lost_damaged  # records cut short: the count to report when Record.num cannot tell
        skip = self.skip
        fold = SummaryFold() if self.fold_summary else None
        for offset, payload in batch.records:
            while next_loss < len(losses) and losses[next_loss].start < offset:
                held = self._hold(held, losses[next_loss], damaged)
                damaged = 0
                next_loss += 1
            if offset >= stop:
                held = self._stop(out, offset, payload, held)
                break
            record = event = texts = None
            body_at = 0
            peeked = peek(payload)
            if peeked is not None:
                num, kind, body_at = peeked
                if kind not in skip:
                    event, texts = self._fast(payload, kind, body_at)
                    if event is None and texts is None:
                        peeked = None
            if peeked is None:
                record = parse(payload)
                if record is None:
                    self._lose_undecodable(out, offset, len(payload), "record does not parse")
                    continue
                num = record.num
                kind = record.WhichOneof("record_type")
            if self._unresolved is not None:
                self._resolve(out, num, held)
                held = None
            if held is not None:
                gap = num - self.last_num - 1 if num and self.last_num else None
                self._emit_loss(out, held, gap)
                held = None
            if num:
                self.last_num = num
            self.records += 1
            if kind in skip:
                continue
            if texts is not None:
                fold.take_texts(offset, num, texts)  # type: ignore[union-attr]  # texts only come with a fold
                continue
            if event is None:
                try:
                    if kind is None:
                        event = OtherRecord("unknown")
                        kind = "unknown"
                    elif kind == "summary" and self.lazy_summary:
                        event = self.summaries.slow(record, payload[body_at:] if body_at else None)
                    else:
                        body_message = getattr(record, kind)
                        converter = self.converters.get(kind)
                        event = converter(body_message) if converter is not None else other_event(kind, body_message)
                except Exception as error:  # a value the converters did not foresee: lose the record, not the run
                    self._lose_undecodable(out, offset, len(payload), f"{kind} record not understood: {error}")
                    continue
            if fold is not None and kind == "summary":
                if fold.take(offset, num, event):  # type: ignore[arg-type]  # a summary record's event
                    continue
                self.folded += fold.flush(out)  # a removal: what came before it goes first
            out.append(Decoded(offset, kind, num, event))
        for region in losses[next_loss:]:
            if self.stopped_at is not None and region.start >= self.stopped_at:
                break
            held = self._hold(held, region, damaged)
            damaged = 0
        if fold is not None:
            self.folded += fold.flush(out)
        if held is not None:
            self._emit_loss(out, held, None)
        return out

    def _stop(self, out: list[Decoded], offset: int, payload: bytes, held: _HeldLoss | None) -> _HeldLoss | None:
        """The first record at or past ``stop_at``: remember where it starts; its number still counts a held loss."""
        if self.stopped_at is None:
            self.stopped_at = offset
        if held is None:
            return None
        peeked = peek(payload)
        record = parse(payload) if peeked is None else None
        num = peeked[0] if peeked is not None else record.num if record is not None else 0
        if not num:
            return held  # it does not say: the loss goes out uncounted
        self._emit_loss(out, held, num - self.last_num - 1 if self.last_num else None)
        return None

    def _fast(self, payload: bytes, kind: str, body_at: int) -> tuple[Event | None, tuple[list[str], list[str]] | None]:
        """(event, None), or (None, summary names and texts) for a fold, or (None, None): take the slow path."""
        if kind == "history":
            return self.fast_history(payload), None
        if kind == "summary" and self.lazy_summary:
            found = self.summaries.fast(payload, body_at)
            if found is None or isinstance(found, SummaryUpdate):
                return found, None
            if self.fold_summary:
                return None, found
            names, texts = found
            return SummaryUpdate(update=dict(zip(names, map(RawJSON, texts)))), None
        return None, None

    def _hold(self, held: _HeldLoss | None, region: LostRegion, damaged: int) -> _HeldLoss:
        self.lost_bytes += region.size
        if held is None:
            return _HeldLoss(region.start, region.size, [region.reason], damaged)
        held.lost_bytes += region.size
        held.damaged += damaged
        if region.reason not in held.reasons:
            held.reasons.append(region.reason)
        return held

    def _resolve(self, out: list[Decoded], num: int, held: _HeldLoss | None) -> None:
        """A record after an uncounted loss (and perhaps more damage found since, ``held``):
        count the whole run of lost records as a read of the whole file would have."""
        assert self._unresolved is not None
        before, counted = self._unresolved
        self._unresolved = None
        damaged = counted + (held.damaged if held is not None else 0)
        gap = num - before - 1 if num and before else None
        lost = gap if gap is not None and gap >= 0 else (damaged or None)
        self.lost_records += (lost or 0) - counted
        if gap is not None:
            self.uncounted_losses -= 1
        if held is not None:
            out.append(Decoded(held.offset, "loss", 0, DataLoss(held.offset, held.lost_bytes, lost, "; ".join(held.reasons))))

    def _emit_loss(self, out: list[Decoded], held: _HeldLoss, gap: int | None) -> None:
        lost = gap if gap is not None and gap >= 0 else (held.damaged or None)
        if gap is None and self._unresolved is not None:
            # More of the same run of lost records (the file grew, still no record after it).
            before, counted = self._unresolved
            self._unresolved = (before, counted + held.damaged)
            self.lost_records += held.damaged
        else:
            self.lost_records += lost or 0
            if gap is None:
                self.uncounted_losses += 1
                self._unresolved = (self.last_num, lost or 0)
        out.append(Decoded(held.offset, "loss", 0, DataLoss(held.offset, held.lost_bytes, lost, "; ".join(held.reasons))))

    def _lose_undecodable(self, out: list[Decoded], offset: int, size: int, reason: str) -> None:
        self.undecodable += 1
        self.lost_records += 1
        self.lost_bytes += size
        out.append(Decoded(offset, "loss", 0, DataLoss(offset, size, 1, reason)))


def iter_decoded(path: str | os.PathLike[str], start: int = 0, skip: Iterable[str] = ()) -> Iterator[Decoded]:
    """Every record of a file from ``start`` as ``Decoded`` items, in bounded memory.

    Kinds in ``skip`` (e.g. ``{"summary"}``, the bulk of a long run) are passed over
    without converting their values.
    """
    stream = EventStream(skip)
    for batch in iter_batches(path, start):
        yield from stream.feed(batch)


def iter_events(path: str | os.PathLike[str], start: int = 0, skip: Iterable[str] = ()) -> Iterator[Event]:
    """Every event of a file from ``start``: the fast path for loading a finished or growing run."""
    stream = EventStream(skip)
    for batch in iter_batches(path, start):
        for item in stream.feed(batch):
            yield item.event
