"""The record viewer's lines, JSON and search, from a ``RecordIndex``: pure, no widgets.

A record's line: its offset in the file, its kind (the ``record_type`` field's
name), its step when it has one, and a one-line preview of what it holds. A
lost stretch of the file is a line saying how many bytes were lost and why. The
JSON is the parsed record with the schema's field names; search matches a
pattern (``leet.common.matching``) against that JSON, one record at a time.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Mapping, Sequence

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from leet.common.text import clean
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import item_name
from leet.runfile.record_index import LOST, Entry, RecordIndex
from widgets.chartframe import Row, fit

OFFSET_WIDTH = 12
KIND_WIDTH = 12
STEP_WIDTH = 9
JSON_LINES = 5_000  # a record's JSON is cut after this many lines
JSON_ITEMS = 1_000  # entries of one list (a row's items) the JSON shows
ITEM_VALUE = 24  # characters of a value a preview shows
SEARCH_NOTE_EVERY = 5_000  # records searched between two progress notes


def kind_of(record: pb.Record) -> str:
    return record.WhichOneof("record_type") or "unknown"


def step_of(record: pb.Record) -> int | None:
    """The step a history record logged (its ``step``, else its ``_step`` item); None for other kinds."""
    if kind_of(record) != "history":
        return None
    history = record.history
    if history.HasField("step"):
        return history.step.num
    for item in history.item:
        if item_name(item) == "_step":
            try:
                return int(json.loads(item.value_json))
            except (ValueError, TypeError):
                return None
    return None


def _items(items: Iterable, limit: int = 12) -> str:
    shown: list[str] = []
    for item in items:
        name = item_name(item) if "nested_key" in item.DESCRIPTOR.fields_by_name else item.key
        if name.startswith("_"):
            continue
        if len(shown) == limit:
            shown.append("…")
            break
        shown.append(f"{name}={fit(item.value_json, ITEM_VALUE)}")
    return " ".join(shown)


def preview(record: pb.Record) -> str:
    """What the record holds, on one line: key=value items, a console line, file names, else its fields as JSON."""
    kind = kind_of(record)
    if kind in ("history", "stats"):
        return _items(getattr(record, kind).item)
    if kind in ("summary", "config"):
        part = getattr(record, kind)
        removed = " ".join(f"-{item_name(item)}" for item in part.remove)
        return " ".join(text for text in (_items(part.update), removed) if text)
    if kind in ("output", "output_raw"):
        part = getattr(record, kind)
        return ("stderr: " if part.output_type == 0 else "") + part.line.rstrip("\n")
    if kind == "exit":
        return f"exit code {record.exit.exit_code}, runtime {record.exit.runtime:,} s"
    if kind == "files":
        return " ".join(item.path for item in record.files.files)
    if kind == "unknown":
        return ""
    fields = MessageToDict(getattr(record, kind), preserving_proto_field_name=True)
    fields.pop("info", None)
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def lost_text(entry: Entry) -> str:
    return f"── {entry.size:,} bytes lost at offset {entry.offset:,}: {entry.reason} ──"


def record_row(entry: Entry, record: pb.Record | None, width: int) -> Row:
    """One line of the list, exactly ``width`` cells."""
    if entry.kind == LOST:
        return [(fit(clean(lost_text(entry)), width).ljust(width), "error")]
    head = f"{entry.offset:>{OFFSET_WIDTH},} "
    if record is None:
        return [(head, "muted"), (fit(f"{entry.kind}: {entry.size:,} bytes the schema cannot parse", width - len(head)).ljust(width - len(head)), "warn")]
    step = step_of(record)
    kind = fit(entry.kind, KIND_WIDTH).ljust(KIND_WIDTH)
    steps = f" {step:>{STEP_WIDTH},} " if step is not None else " " * (STEP_WIDTH + 2)
    room = max(0, width - len(head) - len(kind) - len(steps))
    return [(head, "muted"), (kind, "key"), (steps, "value"), (fit(clean(preview(record)), room).ljust(room), "label")]


def record_dict(record: pb.Record) -> dict:
    return MessageToDict(record, preserving_proto_field_name=True)


def _first_items(record: pb.Record) -> tuple[pb.Record, list[str]]:
    """The record with each list of its kind cut to ``JSON_ITEMS`` entries, and a note for each list cut.

    A row of a hundred thousand keys would take a second to write out as JSON,
    on the screen's thread, for lines no one scrolls to.
    """
    kind = kind_of(record)
    part = getattr(record, kind, None)
    if not isinstance(part, Message):
        return record, []
    long = [field.name for field in part.DESCRIPTOR.fields if field.is_repeated and len(getattr(part, field.name)) > JSON_ITEMS]
    if not long:
        return record, []
    cut = pb.Record()
    cut.CopyFrom(record)
    notes = []
    for name in long:
        values = getattr(getattr(cut, kind), name)
        notes.append(f"… {len(values) - JSON_ITEMS:,} more in {kind}.{name}, not shown")
        del values[JSON_ITEMS:]
    return cut, notes


def record_json(entry: Entry, record: pb.Record | None) -> list[str]:
    """The pane's lines: the record as pretty JSON (long lists cut at ``JSON_ITEMS``, the text at ``JSON_LINES``), or what the entry is when it has none."""
    if entry.kind == LOST:
        return [lost_text(entry)]
    if record is None:
        return [f"{entry.size:,} bytes at offset {entry.offset:,} that the schema cannot parse"]
    shown, notes = _first_items(record)
    lines = json.dumps(record_dict(shown), indent=2, ensure_ascii=False).splitlines()
    if len(lines) > JSON_LINES:
        lines = lines[:JSON_LINES] + [f"… {len(lines) - JSON_LINES:,} more lines"]
    return lines + notes


def record_text(record: pb.Record) -> str:
    """The record's JSON on one line, as search sees it."""
    return json.dumps(record_dict(record), ensure_ascii=False)


def kinds_row(counts: Mapping[str, int], current: str | None) -> Row:
    """`` · all 600,001 · history 200,000 · summary 400,000 · …``, the kind listed in the key style."""
    row: Row = [(f" · all {sum(counts.values()):,}", "key" if current is None else "muted")]
    for kind, count in counts.items():
        row.append((f" · {kind} {count:,}", "key" if kind == current else "error" if kind == LOST else "muted"))
    return row


def next_kind(kinds: Sequence[str], current: str | None, step: int) -> str | None:
    """The kind after (``step`` 1) or before (-1) ``current`` in ``kinds``, all kinds (None) between the last and the first."""
    ring: list[str | None] = [None, *kinds]
    at = ring.index(current) if current in ring else 0
    return ring[(at + step) % len(ring)]


def find_match(
    index: RecordIndex,
    positions: Sequence[int],
    start: int,
    step: int,
    matches: Callable[[str], bool],
    cancelled: Callable[[], bool] = lambda: False,
    searched: Callable[[int], object] = lambda count: None,
) -> int | None:
    """The first place in ``positions`` after ``start`` (before it, ``step`` -1) whose record's JSON ``matches``; None when none does.

    Wraps around once, past the end to the beginning. ``searched(n)`` is told
    every ``SEARCH_NOTE_EVERY`` records; ``cancelled()`` ends the search early.
    """
    total = len(positions)
    for count in range(1, total + 1):
        if cancelled():
            return None
        if count % SEARCH_NOTE_EVERY == 0:
            searched(count)
        at = (start + step * count) % total
        record = index.record(positions[at])
        if record is not None and matches(record_text(record)):
            return at
    return None
