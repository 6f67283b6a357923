"""Record layer of a W&B run file: protobuf payloads into the plain events of ``events.py``.

    for event in iter_events("run-abc.wandb"): ...          # a whole file
    reader = EventReader("run-abc.wandb")                    # tailing a live file
    batch = reader.poll()                                    # events new since last time

Values arrive as JSON text (with the non-standard ``NaN``/``Infinity``
literals). History and stats rows keep numbers only: ``float()`` is tried
first because it is several times cheaper than ``json.loads`` and accepts
those literals; strings, booleans, lists and media objects are left out, and
nested objects are flattened into dotted keys. Summary and config values are
decoded whole with ``json.loads``.

History and summary records, the bulk of a long run, take the fast paths of
``bulk`` where they can, with the same results.

Damage never raises: a payload that does not parse becomes a ``DataLoss``
event, and bytes the framing layer skipped become one too, with the number
of records lost taken from the gap in ``Record.num`` when a record follows.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple

from leet.runfile import bulk
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.events import (
    ConfigUpdate,
    ConsoleOutput,
    DataLoss,
    Environment,
    Event,
    HistoryRow,
    MetricDefinition,
    OtherRecord,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)
from leet.runfile.reader import Chunked, LostRegion, RecordReader, iter_batches

_parse_record = pb.Record.FromString
_loads = json.loads
# The C scanner behind json.loads, called directly: half the cost per value, same results.
_scan_json = json.JSONDecoder().scan_once
_ROW_FIELDS = frozenset(("_step", "_timestamp", "_runtime"))
_OPAQUE = frozenset(("artifact", "tbrecord", "noop_link_artifact", "use_artifact", "request"))
_GOALS = {1: "minimize", 2: "maximize"}
INTERNAL_CONFIG_KEY = "_wandb"


class Decoded(NamedTuple):
    """One decoded record: where it starts, its kind (``"history"``, ``"exit"`` …; ``"loss"`` for DataLoss), its ``Record.num``."""

    offset: int
    kind: str
    num: int
    event: Event


# ---------------------------------------------------------------- values


def item_name(item: Any) -> str:
    """A history/summary/config item's name: its ``nested_key`` path joined with '.', else ``key``.

    The writer fills one or the other; looking at the path first saves a field read per item.
    """
    nested = item.nested_key
    if nested:
        return nested[0] if len(nested) == 1 else ".".join(nested)
    return item.key


def json_value(text: str) -> Any:
    """A ``value_json`` decoded; NaN/Infinity become floats; text that is not JSON is kept as it is."""
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, ValueError):
        return text if text else None
    if end != len(text):
        try:
            return _loads(text)  # trailing whitespace is fine, anything else is not JSON
        except ValueError:
            return text
    return value


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as one level of dotted keys: ``{"a": {"b": 1}}`` → ``{"a.b": 1}``."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _numbers_in(value: Any, name: str, out: dict[str, float]) -> None:
    """Numeric leaves of a decoded JSON value; media, tables and histograms (objects with ``_type``) are skipped."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        out[name] = float(value)
    elif isinstance(value, dict) and "_type" not in value:
        for key, inner in value.items():
            _numbers_in(inner, f"{name}.{key}", out)


def _typed_value(item: Any) -> Any:
    """The typed value of a history item that has no ``value_json`` (a schema option the SDK does not use yet)."""
    which = item.WhichOneof("value")
    if which in ("number", "integer"):
        return getattr(item, which)
    if which == "json":
        return json_value(item.json)
    return None


def _seconds(stamp: Any) -> float:
    return stamp.seconds + stamp.nanos * 1e-9


# ---------------------------------------------------------------- records → events


def _history(history: Any) -> HistoryRow:
    values: dict[str, float] = {}
    reserved: dict[str, float] = {}
    media: list[str] = []
    for item in history.item:
        nested = item.nested_key
        if not nested:
            name = item.key
        elif len(nested) == 1:
            name = nested[0]
        else:
            name = ".".join(nested)
            if nested[-1] == "_type":
                # The SDK splits media objects into paths: ["img", "_type"], ["img", "width"], ...
                media.append(name[:-5])
        text = item.value_json
        try:
            value = float(text)
        except ValueError:
            if text[:1] == "{":
                _numbers_in(json_value(text), name, values)
            elif not text:
                _numbers_in(_typed_value(item), name, reserved if name in _ROW_FIELDS else values)
            continue
        if name in _ROW_FIELDS:
            reserved[name] = value
        else:
            values[name] = value
    if media:
        prefixes = tuple(media)
        values = {name: value for name, value in values.items() if not name.startswith(prefixes)}
    step = reserved.get("_step")
    return HistoryRow(
        step=int(step) if step is not None and math.isfinite(step) else history.step.num,
        values=values,
        timestamp=reserved.get("_timestamp"),
        runtime=reserved.get("_runtime"),
    )


def _history_step(history: Any) -> HistoryRow:
    """A history row with its step only, for readers that need progress, not curves."""
    return HistoryRow(step=history.step.num, values={})


def _stats(stats: Any) -> StatsRow:
    values: dict[str, float] = {}
    for item in stats.item:
        try:
            values[item.key] = float(item.value_json)
        except ValueError:
            pass
    return StatsRow(timestamp=_seconds(stats.timestamp), values=values)


def _updates(items: Iterable[Any]) -> dict[str, Any]:
    update: dict[str, Any] = {}
    scan = _scan_json
    for item in items:
        # item_name() and json_value() inlined: this loop is most of the cost of a long run's summaries.
        nested = item.nested_key
        if nested:
            name = nested[0] if len(nested) == 1 else ".".join(nested)
        else:
            name = item.key
        text = item.value_json
        try:
            value, end = scan(text, 0)
            if end != len(text):
                value = json_value(text)
        except (StopIteration, ValueError):
            value = json_value(text)
        update[name] = value
    return update


class RawJSON(str):
    """A value still in its JSON text; ``json_value(raw)`` decodes it when someone looks."""

    __slots__ = ()


def _summary_raw(summary: Any) -> SummaryUpdate:
    """A summary update whose values stay JSON text: a long run writes two of these per step,
    and only the last value of each key is ever shown."""
    update = {}
    for item in summary.update:
        nested = item.nested_key
        name = (nested[0] if len(nested) == 1 else ".".join(nested)) if nested else item.key
        update[name] = RawJSON(item.value_json)
    return SummaryUpdate(update=update, remove=tuple(item_name(item) for item in summary.remove))


def _summary(summary: Any) -> SummaryUpdate:
    return SummaryUpdate(update=_updates(summary.update), remove=tuple(item_name(item) for item in summary.remove))


def _config(config: Any) -> ConfigUpdate:
    update = _updates(config.update)
    update.pop(INTERNAL_CONFIG_KEY, None)
    removed = tuple(name for name in (item_name(item) for item in config.remove) if name != INTERNAL_CONFIG_KEY)
    return ConfigUpdate(update=update, remove=removed)


def _run(run: Any) -> RunInfo:
    config = _updates(run.config.update)
    config.pop(INTERNAL_CONFIG_KEY, None)
    return RunInfo(
        run_id=run.run_id,
        entity=run.entity,
        project=run.project,
        display_name=run.display_name,
        group=run.run_group,
        job_type=run.job_type,
        host=run.host,
        notes=run.notes,
        tags=tuple(run.tags),
        start_time=_seconds(run.start_time) if run.HasField("start_time") else None,
        config=config,
        resumed=bool(run.resumed or run.resume),
    )


def _environment(environment: Any) -> Environment:
    fields = message_fields(environment)
    writer_id = fields.pop("writer_id", "")
    return Environment(fields=fields, writer_id=writer_id)


def _console(output: Any) -> ConsoleOutput:
    return ConsoleOutput(
        stream="stdout" if output.output_type == 1 else "stderr",
        text=output.line,
        timestamp=_seconds(output.timestamp) if output.HasField("timestamp") else None,
    )


def _exit(exit_record: Any) -> RunExit:
    return RunExit(exit_code=exit_record.exit_code, runtime=float(exit_record.runtime), not_complete=exit_record.not_complete)


def _metric(metric: Any) -> MetricDefinition:
    return MetricDefinition(
        name=metric.name,
        glob_name=metric.glob_name,
        step_metric=metric.step_metric,
        hidden=metric.options.hidden,
        goal=_GOALS.get(metric.goal, ""),
    )


_CONVERTERS: dict[str, Callable[[Any], Event]] = {
    "history": _history,
    "stats": _stats,
    "summary": _summary,
    "config": _config,
    "run": _run,
    "environment": _environment,
    "output_raw": _console,
    "output": _console,
    "exit": _exit,
    "metric": _metric,
}


def _other(kind: str, body: Any) -> OtherRecord:
    if kind in _OPAQUE or isinstance(body, bytes):
        return OtherRecord(kind, {"size": len(body)} if isinstance(body, bytes) else {})
    return OtherRecord(kind, message_fields(body))


# ---------------------------------------------------------------- generic message → plain values


def _is_repeated(descriptor: Any) -> bool:
    flag = getattr(descriptor, "is_repeated", None)  # protobuf >= 5.x; `label` is gone in 7.x
    return flag if flag is not None else descriptor.label == 3


def _plain_message(message: Any) -> Any:
    if message.DESCRIPTOR.full_name == "google.protobuf.Timestamp":
        return _seconds(message)
    return message_fields(message)


def _plain(descriptor: Any, value: Any) -> Any:
    message_type = descriptor.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        value_field = message_type.fields_by_name["value"]
        return {key: _plain_single(value_field, inner) for key, inner in value.items()}
    if _is_repeated(descriptor):
        return [_plain_single(descriptor, inner) for inner in value]
    return _plain_single(descriptor, value)


def _plain_single(descriptor: Any, value: Any) -> Any:
    if descriptor.message_type is not None:
        return _plain_message(value)
    if descriptor.enum_type is not None:
        known = descriptor.enum_type.values_by_number.get(value)
        return known.name if known is not None else value
    return value


def message_fields(message: Any) -> dict[str, Any]:
    """A message's set fields as plain Python values (timestamps as unix seconds, enums by name)."""
    return {descriptor.name: _plain(descriptor, value) for descriptor, value in message.ListFields() if descriptor.name != "info"}


# ---------------------------------------------------------------- single payloads


def parse(payload: bytes) -> Any | None:
    """The ``Record`` message in ``payload``, or None if it does not parse."""
    try:
        return _parse_record(payload)
    except Exception:  # DecodeError, or anything else a damaged payload provokes
        return None


def to_event(record: Any) -> tuple[str, Event]:
    """A parsed ``Record`` as (kind, event). Records of unknown kind become ``OtherRecord("unknown")``."""
    kind = record.WhichOneof("record_type")
    if kind is None:
        return "unknown", OtherRecord("unknown")
    body = getattr(record, kind)
    converter = _CONVERTERS.get(kind)
    return kind, converter(body) if converter is not None else _other(kind, body)


def decode(payload: bytes) -> Event | None:
    """One record payload as an event; None if it is not a decodable record."""
    record = parse(payload)
    if record is None:
        return None
    try:
        return to_event(record)[1]
    except Exception:
        return None


# ---------------------------------------------------------------- streams of records


@dataclass
class _HeldLoss:
    offset: int
    lost_bytes: int
    reasons: list[str]
    damaged: int


_NO_STOP = 1 << 62
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
        self.converters = _CONVERTERS if history_values else {**_CONVERTERS, "history": _history_step}
        self.fast_history = bulk.history_row if history_values else bulk.history_step
        self.fold_summary = fold_summary
        self.lazy_summary = lazy_summary or fold_summary
        if self.lazy_summary:
            self.converters = {**self.converters, "summary": _summary_raw}
        self.last_num = 0
        self.lost_bytes = 0
        self.lost_records = 0
        self.undecodable = 0
        self.records = 0
        self.folded = 0  # summary records merged into another's event (fold_summary)
        self.uncounted_losses = 0  # losses with no record after them to tell how many records they took
        self.stop_at = _NO_STOP  # records from here on are not read (see EventReader.stop_before)
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
        peek = bulk.peek
        fold = _SummaryFold() if self.fold_summary else None
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
                fold.take_texts(offset, num, texts)  # type: ignore[union-attr]  (texts only come with a fold)
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
                        event = converter(body_message) if converter is not None else _other(kind, body_message)
                except Exception as error:  # a value the converters did not foresee: lose the record, not the run
                    self._lose_undecodable(out, offset, len(payload), f"{kind} record not understood: {error}")
                    continue
            if fold is not None and kind == "summary":
                if fold.take(offset, num, event):
                    continue
                fold.flush(out, self)  # a removal: what came before it goes first
            out.append(Decoded(offset, kind, num, event))
        for region in losses[next_loss:]:
            if self.stopped_at is not None and region.start >= self.stopped_at:
                break
            held = self._hold(held, region, damaged)
            damaged = 0
        if fold is not None:
            fold.flush(out, self)
        if held is not None:
            self._emit_loss(out, held, None)
        return out

    def _stop(self, out: list[Decoded], offset: int, payload: bytes, held: _HeldLoss | None) -> _HeldLoss | None:
        """The first record at or past ``stop_at``: remember where it starts; its number still counts a held loss."""
        if self.stopped_at is None:
            self.stopped_at = offset
        if held is None:
            return None
        peeked = bulk.peek(payload)
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

    def _emit_loss(self, out: list[Decoded], held: _HeldLoss, gap: int | None) -> None:
        lost = gap if gap is not None and gap >= 0 else (held.damaged or None)
        self.lost_records += lost or 0
        if gap is None:
            self.uncounted_losses += 1
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
        self._skip_tags = bulk.kind_tags(skip)
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
        self._stream.stop_at = _NO_STOP if offset is None else offset

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
        self._stream.stop_at = _NO_STOP
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
