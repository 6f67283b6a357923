"""Alerts in the TUI, as pure functions: what is news, how it reads, what the session has seen.

A screen keeps what it last saw of a run (``RunSeen``) or of a folder of runs
(``WorkspaceSeen``) and hands each new snapshot to ``run_news`` or
``workspace_news``: they say what is new since (``run.alert()`` records read
after the first load, a run turning finished, failed or crashed) as
``leet.alerts.events.Alert``s, the one alert type ``leet watch`` sends too.
``AlertLog`` holds every alert seen in a session for the alerts pane. No
Textual here: the screens toast and ring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping, Sequence

from leet.alerts.events import ALERT, CRASHED, ERROR, EVENT_KINDS, FAILED, FINISHED, INFO, WARNING, Alert, default_level, level_of
from leet.common.clock import clock_text
from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.model.run import AlertRecord, RunSnapshot, RunState
from widgets.chartframe import MARKER_STYLES

Line = tuple[str, str]

LEVEL_WORDS = {INFO: "INFO", WARNING: "WARN", ERROR: "ERROR"}  # as wandb.AlertLevel names them
LINE_STYLES = {INFO: "value", WARNING: "warn", ERROR: "error"}  # a whole line of text
MARK_STYLES = MARKER_STYLES  # a single mark (the runs list's !N, a chart's ▲): info needs a colour to be seen
SEVERITIES = {INFO: "information", WARNING: "warning", ERROR: "error"}  # Textual's toast severities
_RANK = {INFO: 0, WARNING: 1, ERROR: 2}
ENDED = {RunState.FINISHED: FINISHED, RunState.FAILED: FAILED, RunState.CRASHED: CRASHED}
LOG_LIMIT = 5000  # alerts the session's log keeps (the oldest go first)
TIME_FORMAT = "%H:%M:%S"


def worst(levels: Iterable[str]) -> str:
    """The most severe of ``levels`` (``info`` when there are none)."""
    return max(levels, key=lambda level: _RANK.get(level, 0), default=INFO)


def run_name(snapshot: RunSnapshot) -> str:
    info = snapshot.info
    return (info.display_name if info is not None and info.display_name else "") or snapshot.run_id or "run"


def _time(seconds: float | None) -> str:
    return clock_text(seconds, TIME_FORMAT) if seconds is not None and math.isfinite(seconds) else ""


# -- one run's alerts, as the run view shows them ------------------------------------------


def record_line(record: AlertRecord) -> Line:
    """``step 1,234 · 14:03:12  ERROR  Loss exploded: loss is 1e9`` in the level's style; text cleaned."""
    level = level_of(record.level)
    where = " · ".join(part for part in (f"step {record.step:,}" if record.step is not None else "", _time(record.time)) if part)
    label = f"[{clean(record.label)}] " if record.label else ""
    text = f": {clean(record.text)}" if record.text else ""
    return f"{where + '  ' if where else ''}{LEVEL_WORDS[level]:<5}  {label}{clean(record.title) or '(no title)'}{text}", LINE_STYLES[level]


def alert_section(snapshot: RunSnapshot, pattern: str = "") -> list[Line]:
    """The overview's ``Alerts (N)`` section, newest first; nothing for a run without alerts.
    ``pattern`` keeps the alerts whose line matches it."""
    if not snapshot.alerts and not snapshot.alerts_dropped:
        return []
    matches = compile_filter(pattern)
    lines = [(f"  {text}", style) for text, style in map(record_line, reversed(snapshot.alerts)) if not pattern or matches(text)]
    if pattern and not lines:
        return []
    more = [(f"  … {snapshot.alerts_dropped:,} older alerts not kept", "muted")] if snapshot.alerts_dropped and not pattern else []
    return [(f"Alerts ({snapshot.alert_count:,})", "heading"), *lines, *more]


def alert_markers(snapshot: RunSnapshot) -> tuple[tuple[float, str], ...]:
    """``(step, level)`` of each alert that has a step: the metric charts mark them on their x axis."""
    return tuple((float(record.step), level_of(record.level)) for record in snapshot.alerts if record.step is not None)


# -- what is news ----------------------------------------------------------------------------


def state_alert(state: RunState, name: str, run_id: str, detail: str, now: float, source: str = "") -> Alert:
    """A run that ended (finished, failed, presumed crashed) as an alert."""
    kind = ENDED[state]
    return Alert(
        kind=kind, title=f"{name} {kind}", text=detail, level=default_level(kind), time=now, source=source,
        run_id=run_id, run_name=name, ident=f"{kind}:{run_id or name}",
    )


def record_alert(record: AlertRecord, snapshot: RunSnapshot, now: float) -> Alert:
    name = run_name(snapshot)
    return Alert(
        kind=ALERT, title=record.title or "(no title)", text=record.text, level=level_of(record.level),
        time=record.time if record.time is not None and math.isfinite(record.time) else now,
        run_id=snapshot.run_id, run_name=name, label=record.label, ident=record.ident,
    )


@dataclass(frozen=True)
class RunSeen:
    """What a screen saw of a run at its last look: its state and the alert records it held."""

    state: RunState
    idents: frozenset[str]


def run_news(seen: RunSeen | None, snapshot: RunSnapshot, now: float) -> tuple[RunSeen | None, list[Alert], list[Alert]]:
    """``(seen now, news, already there)``: alerts that arrived since ``seen``, and the run ending.

    Nothing is news while the file is being loaded; the first look after it
    sees what the file held (returned as "already there", never as news).
    """
    if snapshot.state is RunState.LOADING:
        return seen, [], []
    idents = frozenset(record.ident for record in snapshot.alerts)
    if seen is None:
        return RunSeen(snapshot.state, idents), [], [record_alert(record, snapshot, now) for record in snapshot.alerts]
    news = [record_alert(record, snapshot, now) for record in snapshot.alerts if record.ident not in seen.idents]
    if seen.state not in ENDED and snapshot.state in ENDED:
        news.append(state_alert(snapshot.state, run_name(snapshot), snapshot.run_id, run_detail(snapshot), now))
    return RunSeen(snapshot.state, idents), news, []


def run_detail(snapshot: RunSnapshot) -> str:
    if snapshot.state is RunState.FAILED:
        return f"exit code {snapshot.exit_code}"
    if snapshot.state is RunState.FINISHED:
        return f"at step {snapshot.last_step:,}" if snapshot.last_step is not None else ""
    return snapshot.reason


@dataclass(frozen=True)
class WorkspaceSeen:
    """What the workspace screen saw at its last look: each run's state and its count of alert records."""

    states: Mapping[str, RunState]
    alerts: Mapping[str, int]


def workspace_news(
    seen: WorkspaceSeen | None, entries: Sequence[Any], alerts: Mapping[str, Any], now: float
) -> tuple[WorkspaceSeen, list[Alert]]:
    """``(seen now, news)`` for a folder of runs.

    ``entries`` are the runs list's ``RunEntry``s; ``alerts`` holds, by run key,
    each run's alerts the workspace read (``total`` and the ``recent`` ones,
    oldest first). The first look is news of nothing.
    """
    now_seen = WorkspaceSeen({entry.key: entry.state for entry in entries}, {key: box.total for key, box in alerts.items()})
    if seen is None:
        return now_seen, []
    news: list[Alert] = []
    for entry in entries:
        box = alerts.get(entry.key)
        fresh = box.total - seen.alerts.get(entry.key, 0) if box is not None else 0
        if box is not None and fresh > 0:
            news += box.recent[-fresh:]
        before = seen.states.get(entry.key)
        if before is not None and before not in ENDED and before is not RunState.LOADING and entry.state in ENDED:
            news.append(state_alert(entry.state, entry.title, entry.run_id, entry_detail(entry), now, str(entry.directory)))
    news.sort(key=lambda alert: alert.time)
    return now_seen, news


def entry_detail(entry: Any) -> str:
    if entry.state is RunState.FAILED:
        return f"exit code {entry.exit_code}"
    return "" if entry.state is RunState.FINISHED else entry.reason


def rebaseline(seen: WorkspaceSeen | None, key: str, state: RunState, alerts: int) -> WorkspaceSeen | None:
    """``seen`` with run ``key`` taken as it is now (a run view showed it meanwhile, and told its news)."""
    if seen is None:
        return None
    return WorkspaceSeen({**seen.states, key: state}, {**seen.alerts, key: alerts})


def unseen_marks(alerts: Mapping[str, Any], looked: Mapping[str, int]) -> dict[str, tuple[int, str]]:
    """By run key, ``(alerts not looked at, the most severe level among them)`` for runs that have some.

    ``looked`` holds each run's alert count when the person last selected or opened it.
    """
    marks = {}
    for key, box in alerts.items():
        unseen = box.total - looked.get(key, 0)
        if unseen > 0:
            marks[key] = (unseen, worst(alert.level for alert in box.recent[-unseen:]))
    return marks


# -- telling ---------------------------------------------------------------------------------


def wanted(settings: Any) -> tuple[Collection[str], Collection[str]]:
    """The event kinds that toast and those that ring the bell: ``Config.alerts`` (an ``AlertSettings``), or
    toasts for every kind and no bell when there is none."""
    if settings is None:
        return EVENT_KINDS, ()
    return settings.toast, settings.bell


def describe(alert: Alert) -> str:
    """One line of an alert, without its time and level; untrusted text cleaned."""
    if alert.kind == ALERT:
        label = f" [{clean(alert.label)}]" if alert.label else ""
        text = f": {clean(alert.text)}" if alert.text else ""
        return f"{clean(alert.run_name or alert.run_id)}{label} · {clean(alert.title)}{text}"
    return clean(alert.title) + (f": {clean(alert.text)}" if alert.text else "")


def toast(alert: Alert) -> tuple[str, str, str]:
    """``(title, message, severity)`` of the toast that tells ``alert``: titled with the run's name."""
    name = clean(alert.run_name or alert.run_id or "run") + (f" [{clean(alert.label)}]" if alert.label else "")
    if alert.kind == ALERT:
        message = clean(alert.title) + (f"\n{clean(alert.text)}" if alert.text else "")
    else:
        message = alert.kind + (f": {clean(alert.text)}" if alert.text else "")
    return name, message, SEVERITIES.get(alert.level, "information")


class AlertLog:
    """Every alert a session has seen, at most ``limit``; a run alert read again (same ident) is kept once."""

    def __init__(self, limit: int = LOG_LIMIT) -> None:
        self.limit = limit
        self._alerts: dict[str, Alert] = {}
        self._serial = 0
        self.version = 0  # moves with each alert added: a pane redraws only then

    def add(self, alert: Alert) -> bool:
        """Keep ``alert``; False when this run alert is already kept."""
        self._serial += 1
        key = alert.ident if alert.kind == ALERT and alert.ident else f"#{self._serial}"
        if key in self._alerts:
            return False
        self._alerts[key] = alert
        if len(self._alerts) > self.limit:
            del self._alerts[next(iter(self._alerts))]
        self.version += 1
        return True

    def __len__(self) -> int:
        return len(self._alerts)

    def newest_first(self) -> list[Alert]:
        # Oldest first, then turned: of two alerts at one time, the one told later comes first.
        return sorted(self._alerts.values(), key=lambda alert: alert.time)[::-1]


def log_lines(alerts: Sequence[Alert]) -> list[Line]:
    """The alerts pane: ``14:03:12  ERROR  resnet50 · Loss exploded: loss is 1e9`` a line, in the level's style."""
    return [
        (f"{_time(alert.time) or '--:--:--'}  {LEVEL_WORDS.get(alert.level, 'INFO'):<5}  {describe(alert)}", LINE_STYLES.get(alert.level, "value"))
        for alert in alerts
    ]
