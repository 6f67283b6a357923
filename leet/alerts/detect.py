"""What one run file's records say that someone should be told: ``RunDetector``.

Pure: events in, ``Alert``s out, no files and no clock of its own. A run
that exits says finished (exit code 0) or failed; one whose file has not
grown for ``crash_after`` without an exit record is presumed crashed (a file
found already ending with one, ``ended_with``, never is, even where the
reading here starts after that record); each
``run.alert()`` record is an alert of its own; history rows and system
metrics go through the threshold rules. A shared run's secondary writer
exits with ``not_complete``: that ends the writer, not the run.

Each alert's ``ident`` names the happening, not the reading: the offset of
an alert record, the run's file for its end. Reading the file again gives
the same idents, which is how ``leet watch`` knows what it sent before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from leet.alerts.events import ALERT, CRASHED, FAILED, FINISHED, Alert, default_level, level_of
from leet.alerts.thresholds import Scope, ThresholdWatch
from leet.model.keys import label_of_keys
from leet.runfile.decode import Decoded
from leet.runfile.events import HistoryRow, RunAlert, RunExit, RunInfo, StatsRow


@dataclass
class WriterFacts:
    """What the records read so far say about the run and this writer."""

    run_id: str = ""
    name: str = ""
    label: str = ""  # this writer's node label (``/l:`` on its system metrics)
    exit: RunExit | None = None  # the exit record, once read here
    ended_with: int | None = None  # the exit code the file was found ending with before reading began (None: no exit record)
    data_time: float = 0.0  # the newest time the data itself gave (a row's _timestamp, a stats time)

    @property
    def ended(self) -> bool:
        """The writer is done: its exit record was read here, or the file already ended with one (read before, by someone else)."""
        return self.exit is not None or self.ended_with is not None


class RunDetector:
    """One run file's records → alerts: ``feed(items, seen_at)``, then ``check(now, mtime)`` for silence."""

    def __init__(
        self, source: str, thresholds: ThresholdWatch | None = None, *,
        crash_after: float = 600.0, run_id: str = "", name: str = "", ended_with: int | None = None,
    ) -> None:
        self.source = source  # the run directory: what every alert from here is about
        self.facts = WriterFacts(run_id=run_id, name=name, ended_with=ended_with)
        self.thresholds = thresholds
        self.crash_after = crash_after
        self._crashed_at: float | None = None  # the file's mtime when it was presumed crashed

    @property
    def scope(self) -> Scope:
        return Scope(self.source, self.facts.run_id, self.facts.name)

    @property
    def title(self) -> str:
        return self.facts.name or self.facts.run_id or self.source.rsplit("/", 1)[-1]

    # -- records ----------------------------------------------------------------------
    def feed(self, items: Iterable[Decoded], seen_at: float) -> list[Alert]:
        """The alerts the records in ``items`` raise; ``seen_at`` stands in for times the file does not give."""
        alerts: list[Alert] = []
        for item in items:
            event = item.event
            if isinstance(event, HistoryRow):
                self._values(event.values, self._row_time(event.timestamp), alerts)
            elif isinstance(event, StatsRow):
                if not self.facts.label:
                    self.facts.label = label_of_keys(event.values) or ""
                self._values(event.values, event.timestamp, alerts)
            elif isinstance(event, RunAlert):
                alerts.append(self._run_alert(event, item.offset, seen_at))
            elif isinstance(event, RunExit):
                alerts.extend(self._exit(event, seen_at))
            elif isinstance(event, RunInfo):
                self.facts.run_id = event.run_id or self.facts.run_id
                self.facts.name = event.display_name or self.facts.name
        return alerts

    def _row_time(self, stamp: float | None) -> float:
        return float(stamp) if stamp is not None and math.isfinite(stamp) else self.facts.data_time

    def _values(self, values: Mapping[str, float], t: float, alerts: list[Alert]) -> None:
        if t and math.isfinite(t):
            self.facts.data_time = max(self.facts.data_time, t)
        if self.thresholds is None or not self.thresholds.rules:
            return
        if values:  # a row is judged as it was when written: before the exit record, the run was running
            alerts.extend(self.thresholds.observe(self.scope, t or self.facts.data_time, values, running=self.facts.exit is None))

    def _run_alert(self, event: RunAlert, offset: int, seen_at: float) -> Alert:
        return Alert(
            kind=ALERT, title=event.title or "(no title)", text=event.text, level=level_of(event.level),
            time=self.facts.data_time or seen_at, source=self.source, run_id=self.facts.run_id, run_name=self.facts.name,
            label=self.facts.label, wait_s=event.wait_s, ident=f"alert:{self.source}:{offset}",
        )

    def _exit(self, event: RunExit, seen_at: float) -> list[Alert]:
        self.facts.exit = event
        if self.thresholds is not None:
            self.thresholds.forget(self.scope)
        if event.not_complete:  # a secondary writer of a shared run: the run goes on
            return []
        kind = FINISHED if event.exit_code == 0 else FAILED
        runtime = f" after {_duration(event.runtime)}" if event.runtime else ""
        text = f"{self.title} finished{runtime}" if kind == FINISHED else f"{self.title} failed with exit code {event.exit_code}{runtime}"
        return [self._run_event(kind, f"{self.title} {kind}", text, self.facts.data_time or seen_at)]

    # -- silence ----------------------------------------------------------------------
    def check(self, now: float, mtime: float) -> list[Alert]:
        """A run with no exit record whose file has not changed for ``crash_after`` is presumed crashed (once a silence)."""
        if self.facts.ended or self.crash_after <= 0:
            return []
        if self._crashed_at is not None:
            if mtime > self._crashed_at:  # it wrote again: not crashed after all; a later silence counts anew
                self._crashed_at = None
            return []
        if now - mtime < self.crash_after:
            return []
        self._crashed_at = mtime
        text = f"{self.title} has written nothing for {_duration(now - mtime)} and has no exit record: presumed crashed"
        return [self._run_event(CRASHED, f"{self.title} crashed", text, now, ident=f"{CRASHED}:{self.source}:{mtime:.3f}")]

    def _run_event(self, kind: str, title: str, text: str, time: float, ident: str = "") -> Alert:
        return Alert(
            kind=kind, title=title, text=text, level=default_level(kind), time=time, source=self.source,
            run_id=self.facts.run_id, run_name=self.facts.name, label=self.facts.label, ident=ident or f"{kind}:{self.source}",
        )


def _duration(seconds: float | None) -> str:
    seconds = max(0.0, float(seconds or 0.0))
    if seconds < 90:
        return f"{seconds:.0f}s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{minutes:.0f}m"
    hours, rest = divmod(int(minutes), 60)
    return f"{hours}h{rest:02d}m"
