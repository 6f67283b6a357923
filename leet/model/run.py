"""What is known about one run, folded from its events.

Pure and single-threaded: the run source applies events under its own lock,
and screens read copies. Metric points do not live here (the series store has
them); this holds identity, config, the latest summary, console lines,
counters and the run's state.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping

from leet.model.axes import MetricAxes
from leet.model.catalog import KeyCap
from leet.model.energy import NodeEnergy, RunEnergy
from leet.model.keys import KeyLabel
from leet.model.progress import ProgressTrail, TrailCopy
from leet.model.state import CRASH_AFTER, RunState, Verdict, judge
from leet.runfile.events import (
    ConfigUpdate,
    ConsoleOutput,
    DataLoss,
    Environment,
    HistoryRow,
    MetricDefinition,
    OtherRecord,
    RunAlert,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)

CONSOLE_LINES = 5000
ALERTS_KEPT = 1000  # the newest run.alert() records kept; older ones are counted
ALERT_TEXT_CHARS = 2000  # of a title or text: a writer may log megabytes into one alert


@dataclass(frozen=True)
class AlertRecord:
    """One ``run.alert()`` record, placed in the run: the step and time the data had reached."""

    title: str  # untrusted text, as written (cut to ALERT_TEXT_CHARS)
    text: str
    level: str  # as the file says: INFO, WARN or ERROR
    step: int | None = None  # the last history step before it; None before the first
    time: float | None = None  # the last history or system-metrics timestamp before it
    label: str = ""  # a shared run's writer (its node label); "" for the primary
    ident: str = ""  # "alert:<run directory>:<offset>": the same record read again, or by leet watch, has the same


@dataclass(frozen=True)
class ConsoleLine:
    stream: str  # "stdout" or "stderr"
    text: str
    label: str | None = None  # the writer's node label in shared runs
    time: float | None = None  # when the write that ended the line happened (shared runs sort by it)


class Console:
    """Console text as a terminal would leave it: ``\\r`` rewrites the line, ``\\n`` ends it.

    Progress bars that redraw themselves with carriage returns end up as one
    line showing their last state. Keeps the newest ``limit`` lines.
    """

    def __init__(self, limit: int = CONSOLE_LINES) -> None:
        self.lines: deque[ConsoleLine] = deque(maxlen=limit)
        # The unfinished line of each stream, and where its cursor stands.
        self._open: dict[tuple[str, str | None], tuple[str, int, float | None]] = {}

    def feed(self, stream: str, text: str, label: str | None = None, time: float | None = None) -> None:
        key = (stream, label)
        line, column, _ = self._open.pop(key, ("", 0, None))
        parts = text.split("\n")
        for index, part in enumerate(parts):
            line, column = overwrite(line, column, part)
            if index < len(parts) - 1:
                self.lines.append(ConsoleLine(stream, line, label, time))
                line, column = "", 0
        if line or column:
            self._open[key] = (line, column, time)

    def tail(self, count: int) -> list[str]:
        return [line.text for line in self.snapshot(count)]

    def snapshot(self, count: int | None = None) -> list[ConsoleLine]:
        """Finished lines plus any line still being written, oldest first."""
        lines = list(self.lines)
        lines += [ConsoleLine(stream, text, label, time) for (stream, label), (text, _, time) in self._open.items() if text]
        if count is None:
            return lines
        return lines[-count:] if count > 0 else []


def overwrite(line: str, column: int, part: str) -> tuple[str, int]:
    """Write ``part`` into ``line`` at ``column``; a carriage return goes back to column 0."""
    for index, piece in enumerate(part.split("\r")):
        if index:
            column = 0
        if piece:
            line = line[:column] + piece + line[column + len(piece):]
            column += len(piece)
    return line, column


@dataclass
class RunModel:
    """Everything but the metric points, for one run (all writers of it)."""

    info: RunInfo | None = None
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    environments: list[Environment] = field(default_factory=list)
    console: Console = field(default_factory=Console)
    exit: RunExit | None = None
    last_step: int | None = None
    history_rows: int = 0
    stats_rows: int = 0
    records: int = 0
    bytes_read: int = 0
    lost_bytes: int = 0
    lost_records: int = 0
    lost_uncounted: int = 0  # losses no later record could count: lost_records is then a minimum
    lost_regions: int = 0
    loaded: bool = False  # the first full read reached the end of the file
    last_growth: float = 0.0  # monotonic seconds when the file last grew
    history_keys: set[str] = field(default_factory=set)
    media_keys: dict[str, str] = field(default_factory=dict)  # media logged in the history: key → W&B type
    writer: str = ""  # the program that wrote the file, from its header record
    axes: MetricAxes = field(default_factory=MetricAxes)  # define_metric rules
    alerts: deque[AlertRecord] = field(default_factory=lambda: deque(maxlen=ALERTS_KEPT))
    alerts_seen: int = 0  # every alert record read, kept or not
    last_time: float | None = None  # the newest history or system-metrics timestamp read (file order)
    alert_source: str = ""  # the run directory, for alert idents
    energy: RunEnergy = field(default_factory=RunEnergy, repr=False)  # GPU energy, integrated from the stats rows' power
    trail: ProgressTrail = field(default_factory=ProgressTrail, repr=False)  # the newest (step, time) pairs, for rates and the ETA
    # What is kept of a run that logs millions of keys (catalog.KeyCap): history_keys is the metrics cap's own set.
    metric_cap: KeyCap = field(init=False, repr=False)
    system_cap: KeyCap = field(default_factory=KeyCap, repr=False)
    summary_cap: KeyCap = field(default_factory=KeyCap, repr=False)
    config_cap: KeyCap = field(default_factory=KeyCap, repr=False)

    def __post_init__(self) -> None:
        self.metric_cap = KeyCap(shown=self.history_keys)

    def add_history_keys(self, values: Collection[str]) -> None:
        """Keys of history rows; past the cap only counted. A row read in part (``WideRow``) says how much it left."""
        self.metric_cap.add(values)
        unread = getattr(values, "unread", 0)
        if unread:
            self.metric_cap.saw_row(len(values) + unread, unread)

    def capped(self) -> dict[str, tuple[int, int, bool]]:
        """Each cap that left keys out: {"metrics" | "system" | "summary" | "config": (kept, left out, exact count)}."""
        caps = {"metrics": self.metric_cap, "system": self.system_cap, "summary": self.summary_cap, "config": self.config_cap}
        return {name: (len(cap.shown), cap.hidden, cap.exact) for name, cap in caps.items() if cap.hidden}

    def apply(self, event: Any, label: str | None = None, offset: int = -1) -> None:
        """Fold one event in; ``offset`` (where its record starts) names an alert record for good."""
        if isinstance(event, DataLoss):
            self.lost_regions += 1
            return
        self.records += 1
        if isinstance(event, HistoryRow):
            self.history_rows += 1
            self.last_step = event.step if self.last_step is None else max(self.last_step, event.step)
            self.add_history_keys(event.values)
            if event.media:
                self.media_keys.update(event.media)
            if event.timestamp is not None:
                self.last_time = event.timestamp  # checked when an alert takes it: rows far outnumber alerts
            self.trail.add(event.step, event.timestamp, event.values)
        elif isinstance(event, StatsRow):
            self.stats_rows += 1
            self.last_time = event.timestamp
            self.energy.add(event.timestamp, event.values, label)
        elif isinstance(event, SummaryUpdate):
            _merge(self.summary, _kept(self.summary_cap, event.update), event.remove)
        elif isinstance(event, ConfigUpdate):
            _merge(self.config, _kept(self.config_cap, event.update), event.remove)
        elif isinstance(event, ConsoleOutput):
            self.console.feed(event.stream, event.text, label, event.timestamp)
        elif isinstance(event, RunInfo):
            if self.info is None:
                self.info = event
                for key, value in _kept(self.config_cap, event.config).items():
                    self.config.setdefault(key, value)
        elif isinstance(event, Environment):
            self.environments.append(event)
        elif isinstance(event, RunExit):
            self.exit = event
        elif isinstance(event, RunAlert):
            self._alert(event, label, offset)
        elif isinstance(event, MetricDefinition):
            self.axes.define(event)
        elif isinstance(event, OtherRecord) and event.kind == "header":
            self.writer = str(event.fields.get("version_info", {}).get("producer", ""))

    def _alert(self, event: RunAlert, label: str | None, offset: int) -> None:
        where = f"{offset}" if offset >= 0 else f"#{self.alerts_seen}"
        time = self.last_time if self.last_time is not None and math.isfinite(self.last_time) else None
        self.alerts.append(AlertRecord(
            title=str(event.title)[:ALERT_TEXT_CHARS], text=str(event.text)[:ALERT_TEXT_CHARS], level=str(event.level),
            step=self.last_step, time=time, label=label or "", ident=f"alert:{self.alert_source}:{where}",
        ))
        self.alerts_seen += 1

    def verdict(self, now: float, crash_after: float, size: int | None = None) -> Verdict:
        """The run's state (see ``state.judge``); ``now`` on the clock of ``last_growth``."""
        return judge(
            exit_code=self.exit.exit_code if self.exit is not None else None,
            last_write_age=now - self.last_growth,
            crash_after=crash_after,
            size=size,
            loaded=self.loaded,
            has_run_record=self.info is not None or self.records > 0,
        )

    def state(self, now: float, crash_after: float, size: int | None = None) -> RunState:
        return self.verdict(now, crash_after, size).state


def _kept(cap: KeyCap, update: Mapping[str, Any]) -> Mapping[str, Any]:
    """The update's keys that fit under ``cap``; the others are counted."""
    cap.add(update)
    return cap.filter(update)


def _merge(target: dict[str, Any], update: Mapping[str, Any], remove: Iterable[str]) -> None:
    target.update(update)
    for key in remove:
        target.pop(key, None)
        prefix = key + "."
        for nested in [k for k in target if k.startswith(prefix)]:
            del target[nested]


@dataclass(frozen=True)
class WriterStatus:
    """One writer of a shared run, as the label picker lists it."""

    label: str
    state: RunState
    primary: bool
    file: Path
    exit_code: int | None = None
    records: int = 0
    last_step: int | None = None
    opened: bool = False  # the writer whose file the user named


@dataclass(frozen=True)
class Segment:
    """One file of a run id written in several goes (resumed, or the id used again)."""

    file: Path
    start_time: float | None = None
    current: bool = False  # the segment on screen


@dataclass(frozen=True)
class RunSnapshot:
    """A copy of what the run model knows, for one redraw."""

    run_key: str  # where the run's series are in the store
    state: RunState
    info: Any
    config: dict[str, Any]
    summary: dict[str, Any]
    environments: tuple[Any, ...]
    console: tuple[ConsoleLine, ...]
    last_step: int | None
    history_keys: tuple[KeyLabel, ...]  # the history series as the store holds them: (key, writer label), label None for the primary's
    records: int
    bytes_read: int
    file_size: int
    lost_bytes: int
    lost_records: int
    exit_code: int | None
    error: str = ""  # what went wrong reading, or what stopped the reader
    stopped: bool = False  # the reader stopped on an error: nothing more will load
    run_id: str = ""  # the run's own id, for people
    labels: tuple[str, ...] = ()  # node labels of a shared run's writers
    writers: tuple[WriterStatus, ...] = ()  # a shared run's writers, the primary first
    media_keys: tuple[tuple[str, str], ...] = ()  # (key, W&B media type) of media in the history, by key
    segments: tuple[Segment, ...] = ()  # every segment of the run's id, oldest first (when there are several)
    axes: Mapping[str, str] = field(default_factory=dict)  # history key -> the metric it is charted against (define_metric)
    hidden: frozenset[str] = frozenset()  # history keys define_metric hid
    goals: Mapping[str, str] = field(default_factory=dict)  # metric (or glob) -> "minimize" / "maximize"
    reason: str = ""  # why the state is what it is, in words
    capped: Mapping[str, tuple[int, int, bool]] = field(default_factory=dict)  # RunModel.capped(): keys kept, keys past a cap, exact or at least
    lost_uncounted: int = 0  # losses whose record count nobody can tell (lost_records is a minimum)
    alerts: tuple[AlertRecord, ...] = ()  # run.alert() records, oldest first (a shared run's: every writer's, by time)
    alerts_dropped: int = 0  # older alert records past RunModel's ALERTS_KEPT
    step_offset: int = 0  # a resumed segment's steps lie this far on: the store holds them there, last_step is the file's own
    energy: tuple[NodeEnergy, ...] = ()  # GPU energy per node, integrated from its power samples
    trail: TrailCopy = field(default_factory=TrailCopy)  # the newest history marks, for rates and the ETA

    @property
    def charted_last_step(self) -> int | None:
        """The last step where the charts draw it: the file's own, moved by ``step_offset``."""
        return None if self.last_step is None else self.last_step + self.step_offset

    @property
    def alert_count(self) -> int:
        """Every alert record read, kept or not."""
        return len(self.alerts) + self.alerts_dropped

    @property
    def lost_text(self) -> str:
        """How many records damage cost, as honestly as the file tells: "" when none."""
        return lost_records_text(self.lost_records, self.lost_uncounted, self.lost_bytes)

    @classmethod
    def of(cls, model: RunModel, *, run_key: str, state: RunState, file_size: int, run_id: str, console_lines: int = 2000, error: str = "", stopped: bool = False, reason: str = "", segments: tuple[Segment, ...] = (), step_offset: int = 0) -> "RunSnapshot":
        """A copy of ``model`` for one redraw (the caller holds whatever lock guards it)."""
        return cls(
            run_key=run_key,
            state=state,
            info=model.info,
            config=dict(model.config),
            summary=dict(model.summary),
            environments=tuple(model.environments),
            console=tuple(model.console.snapshot(console_lines)),
            last_step=model.last_step,
            history_keys=tuple((key, None) for key in sorted(model.history_keys)),
            media_keys=tuple(sorted(model.media_keys.items())),
            records=model.records,
            bytes_read=model.bytes_read or file_size,
            file_size=file_size,
            lost_bytes=model.lost_bytes,
            lost_records=model.lost_records,
            lost_uncounted=model.lost_uncounted,
            exit_code=model.exit.exit_code if model.exit is not None else None,
            error=error,
            stopped=stopped,
            run_id=run_id,
            reason=reason,
            segments=segments,
            step_offset=step_offset,
            energy=model.energy.nodes(),
            trail=model.trail.copy(),
            capped=model.capped(),
            alerts=tuple(model.alerts),
            alerts_dropped=model.alerts_seen - len(model.alerts),
            **axes_of(model),
        )


def lost_records_text(records: int, uncounted: int, lost_bytes: int) -> str:
    """"3 records", "at least 3 records", "an unknown number of records", or "" when nothing was lost."""
    if not (records or uncounted or lost_bytes):
        return ""
    if uncounted:
        return f"at least {records:,} records" if records else "an unknown number of records"
    return f"{records:,} record" + ("" if records == 1 else "s")


def axes_of(model: RunModel) -> dict[str, Any]:
    """The snapshot fields that ``define_metric`` decides."""
    axes = model.axes
    if not axes.exact and not axes.globs:
        return {}
    keys = model.history_keys
    goals = {name: rule.goal for name, rule in {**axes.globs, **axes.exact}.items() if rule.goal}
    return {
        "axes": {key: axis for key in keys if (axis := axes.axis(key))},
        "hidden": frozenset(key for key in keys if axes.hidden(key)),
        "goals": goals,
    }


__all__ = ["CRASH_AFTER", "AlertRecord", "Console", "ConsoleLine", "RunModel", "RunSnapshot", "RunState", "Segment", "Verdict", "WriterStatus"]
