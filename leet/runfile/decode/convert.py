"""Single records of a W&B run file: a protobuf ``Record`` into one plain event of ``events.py``.

History and stats rows keep numbers only: ``float()`` is tried first because
it is several times cheaper than ``json.loads`` and accepts the ``NaN`` and
``Infinity`` literals; strings, booleans, lists and media objects are left
out, and nested objects are flattened into dotted keys. Summary and config
values are decoded whole (``json_values``).
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode.json_values import DEEP_LENGTH, DEPTH_CAP, DeepJSON, RawJSON, json_value, scan_json, too_deep
from leet.runfile.events import (
    ConfigUpdate,
    ConsoleOutput,
    Environment,
    Event,
    HistoryRow,
    MetricDefinition,
    OtherRecord,
    RunAlert,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)

_parse_record = pb.Record.FromString
# The names a history row keeps for its own step, time and runtime: never metrics.
ROW_FIELDS = frozenset(("_step", "_timestamp", "_runtime"))
_OPAQUE = frozenset(("artifact", "tbrecord", "noop_link_artifact", "use_artifact", "request"))
_GOALS = {1: "minimize", 2: "maximize"}
_SUMMARIES = ("min", "max", "mean", "best", "last", "none", "first")
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


def _numbers_in(value: Any, name: str, out: dict[str, float], depth: int = 0) -> None:
    """Numeric leaves of a decoded JSON value; media, tables and histograms (objects with ``_type``) are skipped."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        out[name] = _as_float(value)
    elif isinstance(value, dict) and "_type" not in value and depth < DEPTH_CAP:
        for key, inner in value.items():
            _numbers_in(inner, f"{name}.{key}", out, depth + 1)


def _as_float(number: int | float) -> float:
    """``number`` as a float; an int beyond the float range as the infinity it overflows to."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


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


def history_event(history: Any, items: Any = None) -> HistoryRow:
    """A history record's row, read item by item (``items``: only these of its items)."""
    if items is None:
        items = history.item
        if len(items) > ROW_ITEMS:
            return _wide_history(history, items)
    values: dict[str, float] = {}
    reserved: dict[str, float] = {}
    media: list[str] = []
    kinds: list[tuple[str, str]] = []  # (media key, its _type)
    for item in items:
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
                kinds.append((name[:-6], str(json_value(item.value_json))))
        text = item.value_json
        try:
            value = float(text)
        except ValueError:
            if text[:1] == "{":
                decoded = json_value(text)
                if isinstance(decoded, dict) and isinstance(decoded.get("_type"), str):
                    kinds.append((name, decoded["_type"]))  # media logged as one object
                _numbers_in(decoded, name, values)
            elif not text:
                _numbers_in(_typed_value(item), name, reserved if name in ROW_FIELDS else values)
            continue
        if name in ROW_FIELDS:
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
        media=tuple(kinds),
    )


# Items of one history row that are read: a wider row is a width bomb (a file of a
# million keys in a row), whose other names are only counted. As many as a run's
# charts (``catalog.MAX_METRICS``), so a row's keys past it could not be shown anyway.
ROW_ITEMS = 10_000


class WideRow(dict):
    """The values of a row with more than ``ROW_ITEMS`` items; ``unread``: how many items were not read."""

    __slots__ = ("unread",)

    def __init__(self, values: Mapping[str, float], unread: int) -> None:
        super().__init__(values)
        self.unread = unread


def first_names(names: Iterable[str], count: int = ROW_ITEMS) -> set[str]:
    """The ``count`` names that sort first (by code point), reserved ones (``_step``) left for the caller.

    wandb-core writes a row's items in no fixed order, so the first items would
    be different keys in each row; the first names are the same keys in every row.
    """
    return set(heapq.nsmallest(count, (name for name in names if name not in ROW_FIELDS)))


def _wide_history(history: Any, items: Any) -> HistoryRow:
    """A row read only as far as its first ``ROW_ITEMS`` names, without a list of every item."""
    chosen = first_names(map(item_name, items))
    picked = [item for item in items if (name := item_name(item)) in chosen or name in ROW_FIELDS]
    row = history_event(history, picked)
    values = WideRow(row.values, len(items) - len(picked))
    return HistoryRow(step=row.step, values=values, timestamp=row.timestamp, runtime=row.runtime, media=row.media)


def history_step_event(history: Any) -> HistoryRow:
    """A history row with its step only, for readers that need progress, not curves."""
    if history.HasField("step"):
        return HistoryRow(step=history.step.num, values={})
    # Old writers (0.10, some 0.19) left the step field out: the row's ``_step`` says it.
    for item in history.item:
        if item_name(item) == "_step":
            try:
                step = float(item.value_json)
            except ValueError:
                break
            return HistoryRow(step=int(step) if math.isfinite(step) else 0, values={})
    return HistoryRow(step=0, values={})


# System keys as SDKs before 0.19 named them, and the keys that mean the same today.
LEGACY_STATS = {"memory": "memory_percent", "disk": "disk./.usagePercent"}
_SYSTEM_PREFIX = "system."


def _stats(stats: Any) -> StatsRow:
    values: dict[str, float] = {}
    for item in stats.item:
        key = item.key
        try:
            values[key] = float(item.value_json)
        except ValueError:
            # SDKs up to 0.12 nested some stats: network = {"sent": …, "recv": …}.
            if item.value_json[:1] == "{":
                _numbers_in(json_value(item.value_json), key, values)
    if any(key in LEGACY_STATS or key.startswith(_SYSTEM_PREFIX) for key in values):
        values = {_todays_key(key): value for key, value in values.items()}
    return StatsRow(timestamp=_seconds(stats.timestamp), values=values)


def _todays_key(key: str) -> str:
    """An old writer's system key as today's writer names the same metric."""
    key = key.removeprefix(_SYSTEM_PREFIX)
    base, cut, label = key.partition("/l:")
    return LEGACY_STATS.get(base, base) + cut + label


def item_values(items: Iterable[Any]) -> dict[str, Any]:
    """Summary or config items as ``{name: decoded JSON value}``; later items win."""
    update: dict[str, Any] = {}
    scan = scan_json
    for item in items:
        # item_name() and json_value() inlined: this loop is most of the cost of a long run's summaries.
        nested = item.nested_key
        if nested:
            name = nested[0] if len(nested) == 1 else ".".join(nested)
        else:
            name = item.key
        text = item.value_json
        if len(text) >= DEEP_LENGTH and too_deep(text):
            update[name] = DeepJSON(text)
            continue
        try:
            value, end = scan(text, 0)
            if end != len(text):
                value = json_value(text)
        except (StopIteration, ValueError, RecursionError):
            value = json_value(text)
        update[name] = value
    return update


def raw_summary_event(summary: Any) -> SummaryUpdate:
    """A summary update whose values stay JSON text: a long run writes two of these per step,
    and only the last value of each key is ever shown."""
    update = {}
    for item in summary.update:
        nested = item.nested_key
        name = (nested[0] if len(nested) == 1 else ".".join(nested)) if nested else item.key
        update[name] = RawJSON(item.value_json)
    return SummaryUpdate(update=update, remove=tuple(item_name(item) for item in summary.remove))


def _summary(summary: Any) -> SummaryUpdate:
    return SummaryUpdate(update=item_values(summary.update), remove=tuple(item_name(item) for item in summary.remove))


def _config(config: Any) -> ConfigUpdate:
    update = item_values(config.update)
    update.pop(INTERNAL_CONFIG_KEY, None)
    removed = tuple(name for name in (item_name(item) for item in config.remove) if name != INTERNAL_CONFIG_KEY)
    return ConfigUpdate(update=update, remove=removed)


def _run(run: Any) -> RunInfo:
    config = item_values(run.config.update)
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
        summary=tuple(name for name in _SUMMARIES if getattr(metric.summary, name)),
        step_sync=metric.options.step_sync,
    )


def _alert(alert: Any) -> RunAlert:
    # wait_duration is in milliseconds (the SDK sends seconds × 1000); a writer's garbage is no wait.
    wait = alert.wait_duration / 1000.0 if alert.wait_duration > 0 else 0.0
    return RunAlert(title=alert.title, text=alert.text, level=alert.level or "INFO", wait_s=wait)


# Record kind → its converter: the record's body message in, its event out.
CONVERTERS: dict[str, Callable[[Any], Event]] = {
    "history": history_event,
    "stats": _stats,
    "summary": _summary,
    "config": _config,
    "run": _run,
    "environment": _environment,
    "output_raw": _console,
    "output": _console,
    "exit": _exit,
    "metric": _metric,
    "alert": _alert,
}


def other_event(kind: str, body: Any) -> OtherRecord:
    """A record of a kind without a converter, its fields kept for inspection (opaque kinds only sized)."""
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
    converter = CONVERTERS.get(kind)
    return kind, converter(body) if converter is not None else other_event(kind, body)


def decode(payload: bytes) -> Event | None:
    """One record payload as an event; None if it is not a decodable record."""
    record = parse(payload)
    if record is None:
        return None
    try:
        return to_event(record)[1]
    except Exception:
        return None
