"""Alerts in the TUI: the run model keeps run.alert() records, the run view lists and marks them,
news is toasted (and rings the bell when asked), the ``!`` pane lists the session's alerts, and the
workspace marks runs with alerts nobody has looked at yet.

Real runs come from ``tests/wandb_runs.py`` (``alert_run``: three alerts, after steps 2, 2 and 3).
A run that gains alerts while watched is a copy of it cut just before its first alert record,
with the rest written on during the test.
"""

from __future__ import annotations

import shutil
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

from loading import load as loaded

from leet.alerts import alert_tail
from leet.alerts import tail as tail_module
from leet.alerts.detect import RunDetector
from leet.alerts.events import ALERT, ERROR, FINISHED, INFO, WARNING, Alert
from leet.alerts.settings import AlertSettings
from leet.common.clock import clock_text
from leet.config import Config
from leet.discovery.probe import RunEntry
from leet.model.run import ALERTS_KEPT, RunModel, RunSnapshot, RunState
from leet.model.store import Store
from leet.runfile.decode import EventReader
from leet.runfile.events import HistoryRow, RunAlert, RunExit, RunInfo, StatsRow
from leet.sources.shared import merge_alerts
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.alerts import TOASTS_AT_ONCE, AlertsScreen, announce, session_log
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen
from leet.ui.views.alerts import (
    AlertLog,
    WorkspaceSeen,
    alert_markers,
    alert_section,
    log_lines,
    run_news,
    toast,
    unseen_marks,
    workspace_news,
)
from widgets.chartframe import ChartView, compose_rows, row_cells, row_text, same_picture
from widgets.raster import SeriesView
from widgets.runlist import RunList

SIZE = (160, 48)
ALERT_STEPS = [2, 2, 3]  # the history step each of alert_run's alerts follows
ALERT_TITLES = ["Loss exploded", "Checkpoint saved", "Loss exploded"]


# -- helpers ----------------------------------------------------------------------------------


def snapshot_of(events, state: RunState = RunState.RUNNING, *, source: str = "/runs/r1") -> RunSnapshot:
    """What a run view would get from a run whose file held ``events`` (each alert at its own offset)."""
    model = RunModel(alert_source=source)
    for index, event in enumerate(events):
        model.apply(event, None, 100 * index)
    return RunSnapshot.of(model, run_key="r1", state=state, file_size=0, run_id="r1")


def records(path: Path) -> list:
    reader = EventReader(path)
    items = []
    while True:
        batch = reader.poll()
        items += batch.items
        if batch.at_eof:
            reader.close()
            return items


def growing_copy(run, where: Path, alerts: int = 0) -> tuple[Path, Path, bytes]:
    """A copy of ``run``'s directory whose file stops before its alert record number ``alerts``
    (0: before the first); returns the directory, the file and the bytes still to come."""
    target = copy_run(run, where)
    file = target / run.wandb_path.name
    data = file.read_bytes()
    cut = [item.offset for item in records(file) if isinstance(item.event, RunAlert)][alerts]
    file.write_bytes(data[:cut])
    return target, file, data[cut:]


def copy_run(run, where: Path, name: str = "") -> Path:
    """A run directory holding a copy of ``run``'s file (its logs and the rest stay behind)."""
    target = where / (name or run.run_dir.name)
    target.mkdir()
    shutil.copy2(run.wandb_path, target / run.wandb_path.name)
    return target


def append(file: Path, data: bytes) -> None:
    with open(file, "ab") as handle:
        handle.write(data)



def toasts(app) -> list[tuple[str, str, str]]:
    return [(str(note.title), str(note.message), note.severity) for note in app._notifications]


@asynccontextmanager
async def run_view(source, config: Config | None = None):
    app = LeetApp(source, config or Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


async def read_on(pilot, source) -> None:
    """The source reads what the file gained and says so, as its thread would."""
    while source.step():
        pass
    source._notify()
    await pilot.pause()
    await pilot.pause()


# -- the model ---------------------------------------------------------------------------------


def test_the_run_model_keeps_each_alert_with_the_step_and_time_before_it(alert_run):
    source = loaded(alert_run.wandb_path)
    snapshot = source.snapshot()
    rows = {item.event.step: item.event.timestamp for item in records(alert_run.wandb_path) if isinstance(item.event, HistoryRow)}
    assert [alert.title for alert in snapshot.alerts] == ALERT_TITLES
    assert [alert.step for alert in snapshot.alerts] == ALERT_STEPS
    assert [alert.level for alert in snapshot.alerts] == ["ERROR", "INFO", "ERROR"]
    assert [alert.text for alert in snapshot.alerts] == ["loss is 1e9 at step 3", "step 3", "loss is 2e9 at step 4"]
    assert [alert.time for alert in snapshot.alerts] == [rows[step] for step in ALERT_STEPS]
    assert snapshot.alert_count == 3 and snapshot.alerts_dropped == 0


def test_an_alert_is_named_as_leet_watch_names_it(alert_run):
    """The run view and ``leet watch`` give one record one ident: the session log and the ledger agree."""
    detector = RunDetector(str(alert_run.run_dir.absolute()))
    watched = [alert.ident for alert in detector.feed(records(alert_run.wandb_path), 0.0) if alert.kind == ALERT]
    assert [alert.ident for alert in loaded(alert_run.wandb_path).snapshot().alerts] == watched


def test_the_newest_thousand_alerts_are_kept_and_the_rest_counted():
    events = [HistoryRow(0, {"loss": 1.0}, 10.0)] + [RunAlert(f"alert {n}", "", "WARN") for n in range(ALERTS_KEPT + 3)]
    snapshot = snapshot_of(events)
    assert len(snapshot.alerts) == ALERTS_KEPT and snapshot.alerts_dropped == 3 and snapshot.alert_count == ALERTS_KEPT + 3
    assert snapshot.alerts[0].title == "alert 3" and snapshot.alerts[-1].title == f"alert {ALERTS_KEPT + 2}"
    assert alert_section(snapshot)[-1] == ("  … 3 older alerts not kept", "muted")


def test_an_alert_before_any_history_has_no_step_and_a_huge_one_is_cut():
    snapshot = snapshot_of([RunAlert("x" * 100_000, "y" * 100_000, "INFO")])
    alert = snapshot.alerts[0]
    assert alert.step is None and alert.time is None
    assert len(alert.title) == len(alert.text) == 2000
    assert alert_section(snapshot)[1][0].startswith("  INFO   xxx")


def test_the_time_of_an_alert_follows_system_metrics_too():
    snapshot = snapshot_of([HistoryRow(4, {"loss": 1.0}, 10.0), StatsRow(25.0, {"cpu": 3.0}), RunAlert("hot", "", "WARN")])
    assert (snapshot.alerts[0].step, snapshot.alerts[0].time) == (4, 25.0)


def test_a_shared_run_has_every_writers_alerts_with_its_label_in_time_order():
    primary = snapshot_of([HistoryRow(0, {}, 10.0), RunAlert("a", "", "INFO"), HistoryRow(1, {}, 30.0), RunAlert("c", "", "INFO")])
    other = snapshot_of([HistoryRow(0, {}, 20.0), RunAlert("b", "", "ERROR")], source="/runs/r1-1")
    alerts, dropped = merge_alerts([primary, other], [None, "rank1"])
    assert [(alert.title, alert.label) for alert in alerts] == [("a", ""), ("b", "rank1"), ("c", "")]
    assert dropped == 0 and len({alert.ident for alert in alerts}) == 3


# -- what is news ------------------------------------------------------------------------------

HEAD = [RunInfo("r1", display_name="resnet"), HistoryRow(0, {"loss": 1.0}, 100.0), RunAlert("Loss exploded", "loss is 1e9", "ERROR")]


def test_alerts_already_in_the_file_are_no_news_and_later_ones_are():
    assert run_news(None, snapshot_of(HEAD, RunState.LOADING), 5.0) == (None, [], []), "nothing is judged while loading"
    seen, news, there = run_news(None, snapshot_of(HEAD), 5.0)
    assert news == [] and [(a.kind, a.title, a.level, a.run_name) for a in there] == [(ALERT, "Loss exploded", ERROR, "resnet")]
    grown = [*HEAD, HistoryRow(1, {"loss": 2.0}, 101.0), RunAlert("Checkpoint saved", "", "INFO"), RunAlert("Slow", "", "WARN")]
    seen, news, there = run_news(seen, snapshot_of(grown), 6.0)
    assert [(a.title, a.level, a.time) for a in news] == [("Checkpoint saved", INFO, 101.0), ("Slow", WARNING, 101.0)] and there == []
    assert run_news(seen, snapshot_of(grown), 7.0)[1] == [], "told once"


def test_a_run_that_ends_while_watched_is_news_and_one_ended_before_is_not():
    seen, _, _ = run_news(None, snapshot_of(HEAD), 5.0)
    _, news, _ = run_news(seen, snapshot_of([*HEAD, RunExit(0)], RunState.FINISHED), 9.0)
    assert [(a.kind, a.level, a.title, a.time) for a in news] == [(FINISHED, INFO, "resnet finished", 9.0)]
    _, news, _ = run_news(seen, replace(snapshot_of([*HEAD, RunExit(3)], RunState.FAILED), exit_code=3), 9.0)
    assert [(a.kind, a.level, a.text) for a in news] == [("failed", ERROR, "exit code 3")]
    _, news, _ = run_news(seen, replace(snapshot_of(HEAD, RunState.CRASHED), reason="no write for 10m"), 9.0)
    assert [(a.kind, a.level, a.text) for a in news] == [("crashed", ERROR, "no write for 10m")]
    finished, _, _ = run_news(None, snapshot_of([*HEAD, RunExit(0)], RunState.FINISHED), 5.0)
    assert run_news(finished, snapshot_of([*HEAD, RunExit(0)], RunState.FINISHED), 6.0)[1] == []


def test_a_file_read_again_from_its_start_tells_nothing_twice():
    seen, _, _ = run_news(None, snapshot_of(HEAD), 5.0)
    seen, news, _ = run_news(seen, snapshot_of([HEAD[0]], RunState.LOADING), 6.0)  # rewritten: loading again
    assert news == []
    assert run_news(seen, snapshot_of(HEAD), 7.0)[1] == []


def entry(key: str, state: RunState, run_id: str = "") -> RunEntry:
    folder = Path("/runs") / key
    return RunEntry(key=key, directory=folder, file=folder / "run.wandb", run_id=run_id or key, name=key, state=state)


def alert(title: str, level: str = WARNING, time: float = 0.0) -> Alert:
    return Alert(ALERT, title, "", level, time)


def test_the_workspace_tells_new_alerts_and_runs_that_end_and_marks_what_nobody_looked_at():
    boxes = {"a": alert_tail.RunAlerts(1, (alert("old", INFO, 1.0),))}
    seen, news = workspace_news(None, [entry("a", RunState.RUNNING), entry("b", RunState.RUNNING)], boxes, 10.0)
    assert news == [] and seen == WorkspaceSeen({"a": RunState.RUNNING, "b": RunState.RUNNING}, {"a": 1})
    boxes = {
        "a": alert_tail.RunAlerts(3, (alert("old", INFO, 1.0), alert("hot", WARNING, 2.0), alert("nan", ERROR, 3.0))),
        "c": alert_tail.RunAlerts(1, (alert("new run", INFO, 4.0),)),
    }
    entries = [entry("a", RunState.RUNNING), entry("b", RunState.FINISHED), entry("c", RunState.RUNNING)]
    seen, news = workspace_news(seen, entries, boxes, 20.0)
    assert [(a.kind, a.title) for a in news] == [(ALERT, "hot"), (ALERT, "nan"), (ALERT, "new run"), (FINISHED, "b finished")]
    assert workspace_news(seen, entries, boxes, 30.0)[1] == []
    assert unseen_marks(boxes, {}) == {"a": (3, ERROR), "c": (1, INFO)}
    assert unseen_marks(boxes, {"a": 2, "c": 1}) == {"a": (1, ERROR)}
    assert unseen_marks(boxes, {"a": 1}) == {"a": (2, ERROR), "c": (1, INFO)}


def test_the_session_log_keeps_a_run_alert_once_and_lists_the_newest_first():
    log = AlertLog(limit=3)
    first = Alert(ALERT, "Loss exploded", "1e9", ERROR, 5.0, run_name="resnet", ident="alert:/r:10")
    assert log.add(first) and not log.add(replace(first, time=6.0)), "the same record seen by two screens"
    log.add(Alert(FINISHED, "resnet finished", "", INFO, 9.0, run_name="resnet"))
    log.add(Alert(ALERT, "\x1b[2Jevil", "", WARNING, 7.0, run_name="x", label="rank1", ident="alert:/x:1"))
    lines = log_lines(log.newest_first())
    assert [text for text, _ in lines] == [
        "00:00:09  INFO   resnet finished",
        "00:00:07  WARN   x [rank1] · evil",
        "00:00:05  ERROR  resnet · Loss exploded: 1e9",
    ]
    assert [style for _, style in lines] == ["value", "warn", "error"]
    log.add(Alert(FINISHED, "b finished", "", INFO, 10.0))
    assert len(log) == 3 and "Loss exploded" not in str(log_lines(log.newest_first())), "the oldest goes past the limit"


def test_text_from_the_file_reaches_the_overview_and_toasts_without_control_characters():
    snapshot = snapshot_of([RunInfo("r1", display_name="\x1b]0;pwned\x07resnet"), RunAlert("\x1b[2Jboom\u202e", "a\nb\x9b", "ERROR")])
    lines = [text for text, _ in alert_section(snapshot)]
    assert lines[1] == "  ERROR  boom: a b"
    _, _, there = run_news(None, snapshot, 5.0)
    assert toast(there[0]) == ("resnet", "boom\na b", "error")
    assert all(ch.isprintable() for text, _ in log_lines(there) for ch in text)


# -- chart markers -----------------------------------------------------------------------------

WIDTH, HEIGHT = 44, 10


def marker_view(**changes) -> ChartView:
    view = ChartView(
        title="loss", series_names=("",), data=(SeriesView.points([50.0], [1.0]),), x_range=(0.0, 100.0), x_kind="step",
        markers=((50.0, INFO), (50.0, ERROR), (90.0, WARNING)),
    )
    return replace(view, **changes)


def test_markers_sit_on_the_x_axis_row_under_their_step_in_the_most_severe_level_colour():
    rows = compose_rows(marker_view(), WIDTH, HEIGHT)
    text, styles = row_cells(rows[-2])
    columns = [index for index, char in enumerate(text) if char == "▲"]
    assert len(columns) == 2, text
    assert [styles[column] for column in columns] == ["error", "warn"]
    plotted = {index for row in rows[1:-2] for index, char in enumerate(row_text(row)) if "\u2801" <= char <= "\u28ff"}
    assert plotted == {columns[0]}, "the marker is in the column its step is plotted in"
    for column in columns:
        assert text[column - 1] == " " and text[column + 1] in " │", "tick labels keep clear of a marker"


def test_markers_are_ascii_in_ascii_mode_and_absent_outside_the_range():
    text = row_text(compose_rows(marker_view(), WIDTH, HEIGHT, ascii=True)[-2])
    assert text.count("^") == 2 and text.isascii()
    outside = marker_view(markers=((150.0, ERROR), (float("nan"), ERROR), (-1.0, INFO)))
    assert "▲" not in row_text(compose_rows(outside, WIDTH, HEIGHT)[-2])


def test_a_new_marker_is_a_new_picture():
    old = marker_view(markers=())
    assert same_picture(old, old, WIDTH, HEIGHT)
    assert not same_picture(old, marker_view(), WIDTH, HEIGHT)
    assert not same_picture(marker_view(), marker_view(markers=((10.0, INFO),)), WIDTH, HEIGHT)


def test_markers_are_the_steps_of_the_runs_alerts(alert_run):
    assert alert_markers(loaded(alert_run.wandb_path).snapshot()) == ((2.0, ERROR), (2.0, INFO), (3.0, ERROR))


# -- the run view ------------------------------------------------------------------------------


def chart_rows(app, title: str) -> list[str]:
    for chart_id, chart in app.screen.query_one("#metrics").visible_charts():
        if chart_id == title:
            return chart.plain_rows()
    raise AssertionError(f"no {title!r} chart")


async def test_the_overview_lists_the_alerts_newest_first_and_the_loss_chart_marks_their_steps(alert_run):
    source = loaded(alert_run.wandb_path)
    async with run_view(source) as (app, pilot):
        overview = app.screen.query_one("#overview").lines
        start = overview.index("Alerts (3)")
        at = [clock_text(alert.time, "%H:%M:%S") for alert in source.snapshot().alerts]
        assert overview[start + 1 : start + 4] == [
            f"  step 3 · {at[2]}  ERROR  Loss exploded: loss is 2e9 at step 4",
            f"  step 2 · {at[1]}  INFO   Checkpoint saved: step 3",
            f"  step 2 · {at[0]}  ERROR  Loss exploded: loss is 1e9 at step 3",
        ]
        axis = chart_rows(app, "loss")[-2]
        assert axis.count("▲") == 2, axis  # steps 2 and 3; step 2's two alerts share one mark
        assert toasts(app) == [], "alerts the file held when it was opened are not toasted"


async def test_alerts_written_while_the_run_is_open_are_toasted_and_the_end_too(alert_run, tmp_path):
    _, file, rest = growing_copy(alert_run, tmp_path)
    source = loaded(file)
    assert source.snapshot().state is RunState.RUNNING
    async with run_view(source) as (app, pilot):
        rang = []
        app.bell = lambda: rang.append(True)
        assert toasts(app) == [] and "Alerts" not in " ".join(app.screen.query_one("#overview").lines)
        append(file, rest)
        await read_on(pilot, source)
        name = source.snapshot().info.display_name or alert_run.run_id
        assert toasts(app) == [
            (name, "Loss exploded\nloss is 1e9 at step 3", "error"),
            (name, "Checkpoint saved\nstep 3", "information"),
            (name, "Loss exploded\nloss is 2e9 at step 4", "error"),
            (name, "finished: at step 3", "information"),
        ]
        assert rang == [], "no bell unless the config asks for one"
        assert "Alerts (3)" in app.screen.query_one("#overview").lines
        assert chart_rows(app, "loss")[-2].count("▲") == 2


async def test_the_config_picks_what_toasts_and_what_rings_the_bell(alert_run, tmp_path):
    _, file, rest = growing_copy(alert_run, tmp_path)
    source = loaded(file)
    settings = AlertSettings(toast=frozenset({"failed", "finished"}), bell=frozenset({"alert"}))
    async with run_view(source, Config(theme="textual-dark", alerts=settings)) as (app, pilot):
        rang = []
        app.bell = lambda: rang.append(True)
        append(file, rest)
        await read_on(pilot, source)
        assert [message for _, message, _ in toasts(app)] == ["finished: at step 3"]
        assert rang == [True], "one ring for one batch of news"


async def test_the_alerts_pane_lists_the_session_and_esc_or_bang_closes_it(alert_run):
    source = loaded(alert_run.wandb_path)
    async with run_view(source) as (app, pilot):
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, AlertsScreen)
        lines = app.screen.query_one("#alerts-list").lines
        assert len(lines) == 3 and all(" · Loss exploded" in line or " · Checkpoint saved" in line for line in lines)
        assert app.screen.query_one("#alerts-list").plain_rows()[0].startswith("Alerts (3)")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        await pilot.press("exclamation_mark", "exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert len(session_log(app)) == 3, "opening the pane twice adds nothing"


async def test_a_burst_of_news_is_a_few_toasts_and_one_that_counts_the_rest(alert_run):
    async with run_view(loaded(alert_run.wandb_path)) as (app, pilot):
        burst = [Alert(ALERT, f"alert {n}", "", WARNING, float(n), run_name="r", ident=f"alert:/r:{n}") for n in range(TOASTS_AT_ONCE + 7)]
        announce(app, burst)
        await pilot.pause()
        told = [message for _, message, _ in toasts(app)]
        assert told == [f"alert {n}" for n in range(TOASTS_AT_ONCE)] + ["7 more alerts: press ! to list them"]
        assert len(session_log(app)) == 3 + TOASTS_AT_ONCE + 7


async def test_the_pane_follows_news_while_it_is_open(alert_run, tmp_path):
    _, file, rest = growing_copy(alert_run, tmp_path)
    source = loaded(file)
    async with run_view(source) as (app, pilot):
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert app.screen.query_one("#alerts-list").lines[0].startswith("No alerts yet")
        append(file, rest)
        await read_on(pilot, source)
        lines = app.screen.query_one("#alerts-list").lines
        assert len(lines) == 4 and "finished" in lines[0]
        assert len(toasts(app)) == 4


# -- the workspace -----------------------------------------------------------------------------


@asynccontextmanager
async def workspace_view(root: Path):
    source = WorkspaceSource(root, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            yield app, pilot, source
    finally:
        source.stop()


async def rescan(pilot, source) -> None:
    source.refresh()
    source._notify()
    await pilot.pause()
    await pilot.pause()


def listed(app):
    rows = app.screen.query_one(RunList).runs
    assert len(rows) == 1
    return rows[0]


async def test_a_run_with_unseen_alerts_is_marked_and_selecting_or_opening_it_clears_the_mark(alert_run, tmp_path):
    _, file, _ = growing_copy(alert_run, tmp_path)
    data = alert_run.wandb_path.read_bytes()  # what the copy will hold
    second = [item.offset for item in records(alert_run.wandb_path) if isinstance(item.event, RunAlert)][2]
    async with workspace_view(tmp_path) as (app, pilot, source):
        assert listed(app).alerts == 0
        append(file, data[file.stat().st_size : second])  # two alerts
        await rescan(pilot, source)
        row = listed(app)
        assert (row.alerts, row.alert_style) == (2, "error")
        assert " !2" in app.screen.query_one(RunList).plain_rows()[1]
        assert [message for _, message, _ in toasts(app)] == ["Loss exploded\nloss is 1e9 at step 3", "Checkpoint saved\nstep 3"]
        await pilot.press("space")
        await pilot.pause()
        assert listed(app).alerts == 0 and " !" not in app.screen.query_one(RunList).plain_rows()[1]

        append(file, data[second:])  # the third alert, and the exit
        await rescan(pilot, source)
        assert listed(app).alerts == 1
        assert [message for _, message, _ in toasts(app)][-2:] == ["Loss exploded\nloss is 2e9 at step 4", "finished"]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, WorkspaceScreen) and listed(app).alerts == 0
        assert len(toasts(app)) == 4, "the run view told nothing the workspace had told"


def test_the_workspace_reads_no_alerts_while_nothing_changes_and_counts_new_runs_whole(alert_run, tmp_path, monkeypatch):
    copy_run(alert_run, tmp_path)
    source = WorkspaceSource(tmp_path, Store())
    source.refresh()
    assert source.alerts() == {}, "alerts a run held when the workspace opened are no news"
    opened = []
    real = tail_module.EventReader

    def counting(*args, **kwargs):
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(tail_module, "EventReader", counting)
    source.refresh()
    assert opened == [], "an idle workspace reads no run file for alerts"
    later = copy_run(alert_run, tmp_path, alert_run.run_dir.name + "-later")
    source.refresh()
    found = source.alerts()
    assert set(found) == {later.name} and found[later.name].total == 3
    assert [a.title for a in found[later.name].recent] == ALERT_TITLES
    assert len(opened) == 1
