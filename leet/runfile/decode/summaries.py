"""Summary records, the bulk of a long run, decoded and merged as cheaply as the result allows."""

from __future__ import annotations

from typing import Any

from leet.runfile.decode.bulk import summary_texts
from leet.runfile.decode.convert import Decoded, raw_summary_event
from leet.runfile.decode.json_values import RawJSON
from leet.runfile.events import SummaryUpdate

_REPEAT_MAX_BYTES = 128
_REPEAT_MAX_ENTRIES = 4096


class SummaryDecoder:
    """Summary records by the cheapest way that gives the per-item result.

    ``fast()`` answers from the payload alone when it can: the names and JSON
    texts of a record that only sets plain names (``bulk``), or a small record
    seen before (a long run repeats the same few runtime ticks thousands of
    times). ``slow()`` converts a parsed record, remembering the small ones.
    """

    def __init__(self) -> None:
        self._repeats: dict[bytes, SummaryUpdate] = {}

    def fast(self, payload: bytes, body_at: int) -> tuple[list[str], list[str]] | SummaryUpdate | None:
        """For a payload that ``bulk.peek`` found to be a summary whose field starts at ``body_at``."""
        if len(payload) - body_at <= _REPEAT_MAX_BYTES:
            known = self._repeats.get(payload[body_at:])
            if known is not None:
                return known
        return summary_texts(payload)

    def slow(self, record: Any, body: bytes | None = None) -> SummaryUpdate:
        """``record``'s summary with values as ``RawJSON``; ``body``: its payload from the summary field on, if peeked."""
        if body is None or len(body) > _REPEAT_MAX_BYTES:
            return raw_summary_event(record.summary)
        known = self._repeats.get(body)
        if known is None:
            if len(self._repeats) >= _REPEAT_MAX_ENTRIES:
                self._repeats.clear()
            known = self._repeats[body] = raw_summary_event(record.summary)
        return known


class SummaryFold:
    """Summary updates of one batch merged into one event, for a reader that only keeps the latest summary.

    Values stay JSON text. A removal cannot be merged (it also drops what was set
    before it), so it ends the merged run: the run goes out first, then the removal.
    ``take_texts``/``take`` add a record to the run (``take`` refuses a removal);
    ``flush`` sends the run out as one event.
    """

    def __init__(self) -> None:
        self.update: dict[str, str] = {}
        self.count = 0
        self.offset = 0
        self.num = 0

    def take_texts(self, offset: int, num: int, texts: tuple[list[str], list[str]]) -> None:
        self.update.update(zip(*texts))
        self._took(offset, num)

    def take(self, offset: int, num: int, event: SummaryUpdate) -> bool:
        if event.remove:
            return False
        self.update.update(event.update)
        self._took(offset, num)
        return True

    def _took(self, offset: int, num: int) -> None:
        self.count += 1
        self.offset, self.num = offset, num

    def flush(self, out: list[Decoded]) -> int:
        """Append the merged run to ``out`` as one event; returns how many records it merged away (count - 1)."""
        if not self.count:
            return 0
        update = {name: RawJSON(text) for name, text in self.update.items()}
        out.append(Decoded(self.offset, "summary", self.num, SummaryUpdate(update=update)))
        folded = self.count - 1
        self.update, self.count = {}, 0
        return folded
