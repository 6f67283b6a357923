"""Summary records, the bulk of a long run, decoded and merged as cheaply as the result allows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from leet.runfile import bulk
from leet.runfile.convert import Decoded, RawJSON, _summary_raw
from leet.runfile.events import SummaryUpdate

if TYPE_CHECKING:
    from leet.runfile.event_stream import EventStream

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
        return bulk.summary_texts(payload)

    def slow(self, record: Any, body: bytes | None = None) -> SummaryUpdate:
        """``record``'s summary with values as ``RawJSON``; ``body``: its payload from the summary field on, if peeked."""
        if body is None or len(body) > _REPEAT_MAX_BYTES:
            return _summary_raw(record.summary)
        known = self._repeats.get(body)
        if known is None:
            if len(self._repeats) >= _REPEAT_MAX_ENTRIES:
                self._repeats.clear()
            known = self._repeats[body] = _summary_raw(record.summary)
        return known


class _SummaryFold:
    """Summary updates of one batch merged into one event, for a reader that only keeps the latest summary.

    Values stay JSON text. A removal cannot be merged (it also drops what was set
    before it), so it ends the merged run: the run goes out first, then the removal.
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

    def flush(self, out: list[Decoded], stream: EventStream) -> None:
        if not self.count:
            return
        update = {name: RawJSON(text) for name, text in self.update.items()}
        out.append(Decoded(self.offset, "summary", self.num, SummaryUpdate(update=update)))
        stream.folded += self.count - 1
        self.update, self.count = {}, 0
