"""Events of a run file that may still be growing, a poll at a time.

    reader = EventReader("run-abc.wandb")                    # tailing a live file
    batch = reader.poll()                                    # events new since last time
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable

from leet.runfile.decode.bulk import kind_tags
from leet.runfile.decode.convert import Decoded
from leet.runfile.decode.event_stream import NO_STOP, EventStream
from leet.runfile.events import Event
from leet.runfile.reader import RecordReader


@dataclass
class EventBatch:
    """What one ``EventReader.poll()`` found; ``torn``/``at_eof``/``resume_at`` as in ``reader.Chunked``."""

    items: list[Decoded] = field(default_factory=list)
    torn: bool = False
    at_eof: bool = True
    resume_at: int = 0
    # Summary records merged into another's event (``fold_summary``): each still counts as a record.
    folded: int = 0

    @property
    def events(self) -> list[Event]:
        return [item.event for item in self.items]


class EventReader:
    """Events of a run file that may still be growing; each ``poll()`` returns what is new.

    Counters (``lost_bytes``, ``lost_records``, ``undecodable``, ``uncounted_losses``, ``records``)
    add up over all polls. ``skip``: record kinds to pass over unconverted (unparsed too,
    when their first bytes tell their kind: such a record is counted, not checked).
    ``history_values=False``: history rows carry only their step (much cheaper).
    ``live``: see ``RecordReader`` (damage in the block being written is re-checked once).
    ``lazy_summary``: summary values stay ``RawJSON`` text until shown (much cheaper).
    ``fold_summary`` (implies ``lazy_summary``): the summary updates of one poll come
    merged into one event after the poll's other events (a removal is kept apart,
    with what came before it merged ahead of it); for a reader that only keeps
    the latest summary, it saves an event per summary record.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        start: int = 0,
        skip: Iterable[str] = (),
        live: bool = True,
        history_values: bool = True,
        lazy_summary: bool = False,
        fold_summary: bool = False,
    ) -> None:
        self.path = path
        self._skip_tags = kind_tags(skip)
        self._records = RecordReader(path, start, live, self._skip_tags)
        self._stream = EventStream(skip, history_values, lazy_summary, fold_summary)

    def poll(self, max_records: int | None = None) -> EventBatch:
        batch = self._records.poll(max_records)
        folded = self._stream.folded
        items = self._stream.feed(batch)
        return EventBatch(items, batch.torn, batch.at_eof, batch.resume_at, self._stream.folded - folded)

    def stop_before(self, offset: int | None) -> None:
        """Read no record that starts at or past ``offset`` (None: no limit), e.g. where a
        part someone else reads begins; ``stopped_at`` then says where that record starts.
        Damage found past it is not reported either."""
        self._stream.stop_at = NO_STOP if offset is None else offset

    @property
    def stopped_at(self) -> int | None:
        """Where the first record at or past the ``stop_before`` offset starts, once a poll has seen it."""
        return self._stream.stopped_at

    def resume(self, offset: int, last_num: int | None = None) -> None:
        """Go on reading at ``offset``, a record's start (past a part someone else read),
        with no limit. ``last_num``: the ``Record.num`` last read before it, so that a loss
        just after it can still be counted. The counters go on adding up."""
        live = self._records.live
        self._records.close()
        self._records = RecordReader(self.path, offset, live, self._skip_tags)
        self._stream.stop_at = NO_STOP
        self._stream.stopped_at = None
        if last_num is not None:
            self._stream.last_num = last_num

    @property
    def last_num(self) -> int:
        """The ``Record.num`` of the last record read (0 before any)."""
        return self._stream.last_num

    @property
    def offset(self) -> int:
        return self._records.offset

    @property
    def lost_bytes(self) -> int:
        return self._stream.lost_bytes

    @property
    def lost_records(self) -> int:
        return self._stream.lost_records

    @property
    def undecodable(self) -> int:
        return self._stream.undecodable

    @property
    def uncounted_losses(self) -> int:
        """Losses whose record count is unknown (nothing readable followed them); ``lost_records`` is then a minimum."""
        return self._stream.uncounted_losses

    @property
    def records(self) -> int:
        """Records read, those stepped over unread (``skip``) included."""
        return self._stream.records + self._records.skipped

    def size(self) -> int:
        return self._records.size()

    def close(self) -> None:
        self._records.close()

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
