"""What a run file says, as plain immutable events.

The reader and decoder turn records into these; sources, views and
``leet inspect`` consume them. Nothing here knows about protobuf or screens.
Text fields hold untrusted text exactly as written: whoever shows them must
treat them as plain text (no markup, control characters neutralised).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Union


@dataclass(frozen=True)
class RunInfo:
    """From the run record: who and what this run is."""

    run_id: str
    entity: str = ""
    project: str = ""
    display_name: str = ""
    group: str = ""
    job_type: str = ""
    host: str = ""
    notes: str = ""
    tags: tuple[str, ...] = ()
    start_time: float | None = None  # unix seconds
    config: Mapping[str, Any] = field(default_factory=dict)  # initial config, values decoded from JSON
    resumed: bool = False  # a later segment of an earlier run, not another writer of it


@dataclass(frozen=True)
class HistoryRow:
    """One ``run.log()`` step. ``values`` holds numbers only (NaN/inf kept); nested keys joined with '.'.

    Strings, booleans, lists and media (objects with a ``_type``) are left out of
    ``values``; media are named in ``media``.
    """

    step: int
    values: Mapping[str, float]
    timestamp: float | None = None  # the row's _timestamp
    runtime: float | None = None  # the row's _runtime
    media: tuple[tuple[str, str], ...] = ()  # (key, W&B media type) of the row's media: ("samples", "image-file")


@dataclass(frozen=True)
class StatsRow:
    """One system-metrics sample: W&B keys (with any ``/l:LABEL`` suffix) to numbers."""

    timestamp: float
    values: Mapping[str, float]


@dataclass(frozen=True)
class SummaryUpdate:
    update: Mapping[str, Any]  # dotted key -> decoded JSON value
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConfigUpdate:
    update: Mapping[str, Any]
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConsoleOutput:
    """A chunk of console output as the writer captured it (may hold \\r, ANSI, partial lines)."""

    stream: str  # "stdout" or "stderr"
    text: str
    timestamp: float | None = None


@dataclass(frozen=True)
class Environment:
    """The writer's machine and software (one per writer; shared runs have several)."""

    fields: Mapping[str, Any]
    writer_id: str = ""


@dataclass(frozen=True)
class RunExit:
    exit_code: int
    runtime: float | None = None
    not_complete: bool = False  # a secondary shared-mode writer: its exit does not finish the run


@dataclass(frozen=True)
class RunAlert:
    """From ``run.alert()``: the run asked for someone to be told something."""

    title: str
    text: str
    level: str = "INFO"  # wandb.AlertLevel's name: INFO, WARN or ERROR
    wait_s: float = 0.0  # wait_duration: the same title is not sent again sooner than this


@dataclass(frozen=True)
class MetricDefinition:
    """From ``run.define_metric``: which x-axis a metric (or a glob of metrics) is plotted against."""

    name: str = ""  # exact metric name, or "" when ``glob_name`` is set
    glob_name: str = ""  # e.g. "val/*"
    step_metric: str = ""  # the x-axis key, "" for the default step
    hidden: bool = False
    goal: str = ""  # "minimize", "maximize" or ""
    summary: tuple[str, ...] = ()  # what the summary keeps of it: "min", "max", "mean", "last", "best", "first", "none"
    step_sync: bool = False  # rows without the step metric take its latest value


@dataclass(frozen=True)
class DataLoss:
    """Part of the file could not be read: corrupt bytes skipped, or a record that would not decode."""

    offset: int
    lost_bytes: int
    lost_records: int | None = None  # None when the file does not say how many
    reason: str = ""


@dataclass(frozen=True)
class OtherRecord:
    """A record leet does not interpret (header, files, telemetry, alert, artifact …).

    ``fields`` holds its contents as plain values where the schema declares them
    (empty for opaque kinds such as artifacts), for inspection.
    """

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)


Event = Union[
    RunInfo, HistoryRow, StatsRow, SummaryUpdate, ConfigUpdate, ConsoleOutput, Environment, RunExit, RunAlert, MetricDefinition, DataLoss,
    OtherRecord,
]
