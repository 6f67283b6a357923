"""Fast paths for the records that make up the bulk of a long run: history and summary.

A run of N steps holds N history records and about 2N summary records, each
with one item per logged key. Reading every item through the protobuf
message API costs about a microsecond per item in Python, which is most of
the time to load a long run. Two tricks avoid it:

* ``peek(payload)`` reads a record's number and kind straight from its first
  bytes (the writer puts ``Record.num`` first, then the one field of the
  record's kind), so records nobody wants are passed over unparsed.
* ``RecordView`` parses the same bytes with a private schema in which the
  repeated item field is declared as a single message. Protobuf merges
  repeated occurrences of a singular message field, concatenating their
  repeated fields, so one parse yields every item's name in one list and every
  value in another: two C-level calls per record instead of several per item.

The merged lists are only used when the items all use ``key`` or all use
``nested_key`` and there are as many names as values. Anything else (nested
names like ``eval.loss``, media split into paths, removals, typed values)
returns None and the caller takes the per-item path, whose results these
fast paths reproduce. A row wider than ``convert.ROW_ITEMS`` is read as far as
its first names, as the per-item path reads it, without listing every item. The one thing
the lists cannot show is where one item ends: a record in which an item with
no name (or with two values) makes up for another item's two-part name would
pair names and values differently than the per-item path. No writer makes
such items.
"""

from __future__ import annotations

import math
import re
from typing import Any

from google.protobuf import descriptor_pool, message_factory

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode.convert import ROW_FIELDS, ROW_ITEMS, WideRow, first_names
from leet.runfile.events import HistoryRow

# ---------------------------------------------------------------- peeking at the raw bytes


def _record_kind_tags() -> dict[int, str]:
    """One-byte tags of the length-delimited record kinds (fields 1–15) → kind name."""
    tags: dict[int, str] = {}
    for descriptor in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields:
        delimited = descriptor.message_type is not None or descriptor.type == descriptor.TYPE_BYTES
        if delimited and descriptor.number < 16:
            tags[descriptor.number << 3 | 2] = descriptor.name
    return tags


_KIND_BY_TAG = _record_kind_tags()


def kind_tags(kinds) -> frozenset[int]:
    """The one-byte field tags of these record kinds (those numbered 1–15)."""
    wanted = set(kinds)
    return frozenset(tag for tag, name in _KIND_BY_TAG.items() if name in wanted)
# num (field 1, varint of at most 9 bytes, so never negative), then one tag, then the field's length.
_HEAD = re.compile(
    rb"\x08([\x80-\xff]{0,8}[\x00-\x7f])([" + re.escape(bytes(sorted(_KIND_BY_TAG))) + rb"])([\x80-\xff]{0,4}[\x00-\x7f])",
    re.DOTALL,
)


def _varint(raw: bytes) -> int:
    value = 0
    for shift, byte in enumerate(raw):
        value |= (byte & 0x7F) << (7 * shift)
    return value


def peek(payload: bytes) -> tuple[int, str, int] | None:
    """``(Record.num, kind, where the kind's field starts)`` of a record payload, without parsing it.

    Only for payloads laid out as the writer lays them out: ``num``, then the
    kind's field running exactly to the end. Anything else (no ``num``, other
    fields, a kind numbered above 15, a length that does not fit) gives None:
    parse the record instead.
    """
    head = _HEAD.match(payload)
    if head is None:
        return None
    num, tag, size = head.groups()
    # Varints inline for the usual sizes: this runs once per record.
    if len(size) == 2:
        length = size[0] & 0x7F | size[1] << 7
    elif len(size) == 1:
        length = size[0]
    else:
        length = _varint(size)
    if head.end() + length != len(payload):
        return None
    if len(num) == 3:
        number = num[0] & 0x7F | (num[1] & 0x7F) << 7 | num[2] << 14
    elif len(num) == 1:
        number = num[0]
    else:
        number = _varint(num)
    return number, _KIND_BY_TAG[tag[0]], len(num) + 1


# ---------------------------------------------------------------- the merged view


# Field numbers and types as in wandb_records.proto, so that whatever the real
# schema rejects (a string that is not UTF-8, say) this one rejects too. The
# typed values of HistoryItem (3–8) are declared only for that: an item that
# has one has no value_json, so its name/value counts no longer match.
_STRING, _INT64, _INT32, _BOOL, _DOUBLE, _SINT64, _MESSAGE = 9, 3, 5, 8, 1, 18, 11  # FieldDescriptorProto.Type
_ONE, _MANY = 1, 3  # FieldDescriptorProto.Label
_VIEW_MESSAGES: dict[str, list[tuple[str, int, int | str, int]]] = {
    "Items": [
        ("key", 1, _STRING, _MANY),
        ("nested_key", 2, _STRING, _MANY),
        ("none", 3, _INT32, _MANY),
        ("boolean", 4, _BOOL, _MANY),
        ("integer", 5, _SINT64, _MANY),
        ("number", 6, _DOUBLE, _MANY),
        ("text", 7, _STRING, _MANY),
        ("json", 8, _STRING, _MANY),
        ("value_json", 16, _STRING, _MANY),
    ],
    "Info": [("stream_id", 1, _STRING, _ONE), ("tracelog_id", 100, _STRING, _ONE)],
    "Step": [("num", 1, _INT64, _ONE)],
    "History": [("item", 1, "Items", _ONE), ("step", 2, "Step", _ONE), ("info", 200, "Info", _ONE)],
    "Summary": [("update", 1, "Items", _ONE), ("remove", 2, "Items", _ONE), ("info", 200, "Info", _ONE)],
    "Record": [("num", 1, _INT64, _ONE), ("history", 2, "History", _ONE), ("summary", 3, "Summary", _ONE)],
}


def _wire(number: int, value: int | str | bytes) -> bytes:
    """One protobuf field: a varint for a number, length-delimited for text and bytes."""
    if isinstance(value, int):
        return _varint_bytes(number << 3) + _varint_bytes(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint_bytes(number << 3 | 2) + _varint_bytes(len(data)) + data


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _view_schema() -> bytes:
    """``_VIEW_MESSAGES`` as a serialized FileDescriptorProto (written by hand: the
    descriptor_pb2 module would cost every process that reads run files a megabyte or two)."""
    messages = b""
    for name, fields in _VIEW_MESSAGES.items():
        body = _wire(1, name)  # DescriptorProto.name
        for field_name, number, kind, label in fields:
            typed = _wire(5, _MESSAGE) + _wire(6, f".leetbulk.{kind}") if isinstance(kind, str) else _wire(5, kind)
            body += _wire(2, _wire(1, field_name) + _wire(3, number) + _wire(4, label) + typed)  # FieldDescriptorProto
        messages += _wire(4, body)  # FileDescriptorProto.message_type
    return _wire(1, "leet/runfile/decode/bulk_view.proto") + _wire(2, "leetbulk") + messages + _wire(12, "proto3")


def _build_view() -> Any:
    """``Record`` with history items and summary updates each merged into one message."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_view_schema())
    descriptor = pool.FindMessageTypeByName("leetbulk.Record")
    get_class = getattr(message_factory, "GetMessageClass", None)
    if get_class is not None:
        return get_class(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


RecordView = _build_view()
_parse_view = RecordView.FromString


def _view(payload: bytes) -> Any | None:
    try:
        return _parse_view(payload)
    except Exception:  # DecodeError, or anything else a damaged payload provokes
        return None


# ---------------------------------------------------------------- history


def history_row(payload: bytes) -> HistoryRow | None:
    """The ``HistoryRow`` the per-item path would make of a history record, or None if it needs that path."""
    record = _view(payload)
    if record is None:
        return None
    history = record.history
    items = history.item
    if items.key and items.nested_key:  # each item has one or the other: the lists do not pair
        return None
    all_names, all_texts = items.key or items.nested_key, items.value_json
    if len(all_names) != len(all_texts):  # a name in parts, a typed value, …: per item
        return None
    if len(all_names) > ROW_ITEMS:
        return _wide_row(history, all_names, all_texts)
    return history_row_of(history, list(all_names), list(all_texts))


def history_row_of(history: Any, names: list[str], texts: list[str]) -> HistoryRow | None:
    """A row from its items' names and JSON texts, paired; None when a value is not a number."""
    try:
        values = dict(zip(names, map(float, texts)))
    except ValueError:  # strings, objects, lists: per item
        return None
    # Later items win, as in the per-item path; reserved names never reach the values.
    step = values.pop("_step", None)
    timestamp = values.pop("_timestamp", None)
    runtime = values.pop("_runtime", None)
    return HistoryRow(
        step=int(step) if step is not None and math.isfinite(step) else history.step.num,
        values=values,
        timestamp=timestamp,
        runtime=runtime,
    )


def _wide_row(history: Any, names: Any, texts: Any) -> HistoryRow | None:
    """A row of more than ``ROW_ITEMS`` items, as the per-item path reads it: its first names only.

    ``names`` and ``texts`` are the parsed message's own lists: each is walked
    without copying it whole, so a million-item row makes no million-item list.
    """
    chosen = first_names(names)
    picked = [index for index, name in enumerate(names) if name in chosen or name in ROW_FIELDS]
    row = history_row_of(history, [names[i] for i in picked], [texts[i] for i in picked])
    if row is None:
        return None
    values = WideRow(row.values, len(names) - len(picked))
    return HistoryRow(step=row.step, values=values, timestamp=row.timestamp, runtime=row.runtime)


def history_step(payload: bytes) -> HistoryRow | None:
    """A history record's row with its step only."""
    record = _view(payload)
    if record is None:
        return None
    history = record.history
    if history.HasField("step"):
        return HistoryRow(step=history.step.num, values={})
    # Old writers (0.10, some 0.19) left the step field out: the row's ``_step`` says it.
    items = history.item
    names, texts = (list(items.key), list(items.value_json)) if not items.nested_key else (list(items.nested_key), list(items.value_json))
    if items.key and items.nested_key or len(names) != len(texts):
        return None  # names in parts, or typed values: the per-item path
    return HistoryRow(step=_step_of(dict(zip(names, texts)).get("_step")), values={})


def _step_of(text: str | None) -> int:
    try:
        step = float(text) if text is not None else math.nan
    except ValueError:
        return 0
    return int(step) if math.isfinite(step) else 0


# ---------------------------------------------------------------- summary


def summary_texts(payload: bytes) -> tuple[list[str], list[str]] | None:
    """(names, JSON texts) of a summary record that only sets plain names; None for anything else."""
    record = _view(payload)
    if record is None:
        return None
    summary = record.summary
    if summary.HasField("remove"):
        return None
    items = summary.update
    if items.key:
        return None
    names = list(items.nested_key)
    texts = list(items.value_json)
    return (names, texts) if len(names) == len(texts) else None


__all__ = ["RecordView", "history_row", "history_row_of", "history_step", "kind_tags", "peek", "summary_texts"]
