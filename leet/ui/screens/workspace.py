"""A folder of W&B runs: the runs list, and the selected runs overlaid in one metrics grid."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen

from leet.alerts.alert_tail import RunAlerts
from leet.common.clock import clock_text
from leet.common.text import clean
from leet.config.layout_state import remembered_grid, remembered_modes, remembered_switch
from leet.discovery.probe import RunEntry
from leet.model.keys import system_key
from leet.model.node_filter import LabelFilter
from leet.model.progress import ended, summary_progress
from leet.model.run import RunSnapshot, RunState
from leet.model.run_query import parse
from leet.runfile.reader import RunFileError
from leet.sources.base import Snapshots, WorkspaceView
from leet.sources.run_facts import RunFacts
from leet.sources.shared import open_run
from leet.ui.app import leet_app
from leet.ui.bindings import WORKSPACE_KEYS, footer_hints, screen_keys
from leet.ui.layout_keeper import remembered_view
from leet.ui.screens.alerts import AlertsScreen, announce
from leet.ui.screens.chart_look import ChartLook
from leet.ui.screens.compare import CompareScreen
from leet.ui.screens.grid_actions import GridActions
from leet.ui.screens.media_host import MediaHost
from leet.ui.screens.pause import PauseActions
from leet.ui.screens.records import RecordsScreen
from leet.ui.screens.run import RunScreen
from leet.ui.screens.run_filter import FILTER_PROMPT, RunFilter, matching
from leet.ui.screens.run_peek import RunPeek
from leet.ui.views.alerts import MARK_STYLES, WorkspaceSeen, rebaseline, unseen_marks, workspace_news
from leet.ui.views.footer import status_line
from leet.ui.views.overlay import overlay_charts, overlay_range, overlay_view
from leet.ui.views.run import STATE_STYLE
from widgets.chartframe import MODES, fit_middle
from widgets.filterbar import FilterBar
from widgets.grid import ChartGrid
from widgets.runlist import GroupHeader, ListRow, RunList, RunNote, RunRow, compact_labels
from widgets.textline import TextLine

if TYPE_CHECKING:
    from leet.ui.screens.media import MediaPanel

HINTS = footer_hints(WORKSPACE_KEYS)
GROUPINGS = ("flat", "group")
NO_GROUP = "(no group)"
UNREADABLE = "unreadable"  # the state column's 10 cells, for a run whose file or directory cannot be read


def run_row(entry: RunEntry, grouping: str = "flat", job_type: str = "", alerts: tuple[int, str] | None = None, facts: RunFacts | None = None) -> RunRow:
    """One run's line; its details leave out what the grouping or the job-type filter already say.
    ``alerts``: (alerts not looked at, their most severe level), marked after the name; ``facts``, where read, add its rates and ETA."""
    # The column is 10 cells: "presumed crashed" would lose the word that matters.
    state = ("crashed?" if entry.state is RunState.CRASHED else entry.state.value) if entry.exit_code in (None, 0) else f"failed ({entry.exit_code})"
    state = UNREADABLE if entry.error else state
    started = clock_text(entry.start_time, "%m-%d %H:%M") if entry.start_time else ""
    detail = (
        f"segment {entry.segment[0]}/{entry.segment[1]}" if entry.segment else "",
        entry.group if grouping == "flat" else "",
        "" if job_type else entry.job_type,
        " · ".join(summary_progress(facts.config, facts.summary, finished=ended(entry.state)).parts()) if facts else "",
    )
    return RunRow(
        entry.key, entry.title, entry.run_id, state, "error" if entry.error else STATE_STYLE[entry.state], started, entry.live,
        writers=entry.writers, labels=compact_labels(entry.labels), detail=tuple(part for part in detail if part),
        alerts=alerts[0] if alerts else 0, alert_style=MARK_STYLES.get(alerts[1], "warn") if alerts else "warn",
    )


def run_lines(entry: RunEntry, grouping: str = "flat", job_type: str = "", problem: str = "", alerts: tuple[int, str] | None = None, facts: RunFacts | None = None) -> list[ListRow]:
    """A run's line, and under it what went wrong: its own error (it cannot be read), else ``problem``
    (what reading it, once selected, hit); and damage seen while listing it."""
    row = run_row(entry, grouping, job_type, alerts, facts)
    why = "; ".join(part for part in (entry.error or problem, entry.damage) if part)
    return [row, RunNote(entry.key, why)] if why else [row]


def job_types(entries: Sequence[RunEntry]) -> list[str]:
    """The job types among ``entries``, sorted."""
    return sorted({entry.job_type for entry in entries if entry.job_type})


def next_job_type(entries: Sequence[RunEntry], current: str) -> str:
    """The job type after ``current`` in the cycle all ("") → each job type present → all."""
    cycle = ["", *job_types(entries)]
    at = cycle.index(current) if current in cycle else 0
    return cycle[(at + 1) % len(cycle)]


def list_rows(
    entries: Sequence[RunEntry], grouping: str = "flat", job_type: str = "", pattern: str = "", problems: Mapping[str, str] | None = None,
    marks: Mapping[str, tuple[int, str]] | None = None, facts: Mapping[str, RunFacts] | None = None,
) -> list[ListRow]:
    """The runs list for ``entries`` (newest first): filtered by job type and the query ``pattern``, flat or under group headers.

    Groups come in the order of their newest run; runs without a group come last, under ``(no group)``.
    ``problems`` holds what reading each selected run hit, by key; ``marks`` the alerts not looked at (``unseen_marks``);
    ``facts`` each run's file read whole, by key, for the query's ``cfg.`` and ``summary.`` terms.
    """
    problems = problems or {}
    marks = marks or {}
    shown = matching([entry for entry in entries if not job_type or entry.job_type == job_type], parse(pattern), facts)
    if grouping != "group":
        return [line for entry in shown for line in run_lines(entry, grouping, job_type, problems.get(entry.key, ""), marks.get(entry.key), (facts or {}).get(entry.key))]
    groups: dict[str, list[RunEntry]] = {}
    for entry in shown:
        groups.setdefault(entry.group, []).append(entry)
    if "" in groups:
        groups[""] = groups.pop("")  # to the end
    rows: list[ListRow] = []
    for group, members in groups.items():
        rows.append(GroupHeader(group or NO_GROUP, len(members), sum(entry.live for entry in members)))
        rows += [line for entry in members for line in run_lines(entry, grouping, job_type, problems.get(entry.key, ""), marks.get(entry.key), (facts or {}).get(entry.key))]
    return rows


def waiting_lines(root: str) -> tuple[str, ...]:
    """What the runs list says while the folder holds no runs: it is watched, and runs show up as they start."""
    return ("Waiting for runs in", root, "", "A run shows up here as soon as", "W&B starts writing it.")


def header_left(root: str, total: int, selected: int, room: int) -> list[tuple[str, str]]:
    """The header's left runs, in parts that give way whole; the folder keeps its tail when cut (``…`` inside)."""
    counts = [(f" · {total} run{'' if total == 1 else 's'}", "muted"), (f" · {selected} selected", "muted")] if total else [(" · waiting for runs", "warn")]
    path = clean(root)
    path = fit_middle(path, max(min(len(path), 24), room - 1 - len(counts[0][0])))
    return [(f" {path}", "heading"), *counts]


def list_note(grouping: str, job_type: str, pattern: str) -> str:
    """What the runs list title says about how it is cut: grouping, job type, text filter."""
    parts = ["by group" if grouping == "group" else "flat", f"job: {clean(job_type)}" if job_type else "all jobs"]
    if pattern:
        parts.append(f"filter: {clean(pattern)}")
    return " · ".join(parts)


class WorkspaceScreen(PauseActions, GridActions, ChartLook, MediaHost, RunFilter, Screen[None]):
    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(WORKSPACE_KEYS)]
    AUTO_FOCUS = "RunList"

    def __init__(self, source: WorkspaceView, *, clock: Callable[[], float] = time.time, labels: LabelFilter | None = None) -> None:
        super().__init__()
        self.source = source
        self._clock = clock
        self.labels = labels or LabelFilter()  # the node filter a run opens with (``--label``)
        self.filters = {"runs": "", "metrics": ""}
        self._modes: dict[str, str] = {}
        self.init_looks()
        self.init_run_filter()
        self._auto_selected = False
        self._titles: dict[str, str] = {}
        self.grouping = GROUPINGS[0]
        self.job_type = ""  # "": every job type
        self._alerts_seen: WorkspaceSeen | None = None  # each run's state and alert count at the last look
        self._looked: dict[str, int] = {}  # each run's alert count when the person last selected or opened it
        self._viewing = ""  # the run open in a run view: that view tells its news
        self.media_panel: MediaPanel | None = None  # the selected runs' images side by side, mounted on the first 3

    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="ws-body"):
            yield RunList(id="runs")
            yield RunPeek(lambda: self.query_one(RunList).cursor_key, lambda key: next((e for e in self.source.entries() if e.key == key), None), id="peek")
            yield ChartGrid(3, 2, id="metrics")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.restore_layout(remembered_view(self.app, self.LAYOUT_NAME))
        self.update_view()

    def on_screen_resume(self) -> None:
        self.update_view()

    # -- the remembered layout (leet.ui.layout_keeper) -------------------------------
    LAYOUT_NAME = "workspace"

    def remembered_layout(self) -> dict:
        return {
            "grid": [self.grid.rows, self.grid.cols], "runs": bool(self.query_one(RunList).display), "peek": self.query_one(RunPeek).shown, "modes": dict(self._modes),
            **self.remembered_looks(), **self.remembered_pins(), **self.remembered_media(),
        }

    def restore_layout(self, saved: dict) -> None:
        """Take back what ``remembered_layout()`` gave, each value checked; one that is not valid is left at the start's."""
        grid = remembered_grid(saved.get("grid"))
        if grid:
            self.grid.set_grid(*grid)
        runs = remembered_switch(saved.get("runs"))
        if runs is not None:
            self.query_one(RunList).display = runs
        peek = remembered_switch(saved.get("peek"))
        if peek is not None:
            self.query_one(RunPeek).set_shown(peek)
        self._modes.update(remembered_modes(saved.get("modes"), MODES))
        self.restore_looks(saved)
        self.restore_pins(saved)
        self.restore_media(remembered_switch(saved.get("media")))

    @property
    def grid(self) -> ChartGrid:
        return self.query_one(ChartGrid)

    # -- drawing --------------------------------------------------------------------
    def update_view(self, force: bool = False) -> None:
        if self.paused and not force:
            return
        entries = self.source.entries()
        readable = [entry for entry in entries if not entry.error]
        if readable and not self._auto_selected:
            # Open on something: the newest run that can be read is selected, as a person would.
            self._auto_selected = True
            self.source.select(readable[0].key)
        self.keep_pins_selected(readable)
        self._titles = {entry.key: entry.title for entry in entries}
        runs = self._selected_runs()
        snapshots = [source.snapshot(console_lines=0) for _, _, source in runs]
        problems = {key: snapshot.error for (key, _, _), snapshot in zip(runs, snapshots) if snapshot.error}
        pattern = self.filters["runs"]
        alerts = self._tell_news(entries)
        rows = list_rows(entries, self.grouping, self.job_type, pattern, problems, unseen_marks(alerts, self._looked), self.run_facts(entries))
        empty = waiting_lines(str(self.source.root)) if not entries else ()
        self.query_one(RunList).set_runs(rows, self.source.selected(), list_note(self.grouping, self.job_type, pattern), empty, self.pins)
        with self.app.batch_update():
            self._draw_metrics(runs, snapshots)
            self._draw_bars(len(entries))
            self.draw_media(entries)

    def draw_media(self, entries: list[RunEntry] | None = None) -> None:
        if self.media_panel is None or not self.media_panel.shown:
            return
        files = {entry.key: entry.file for entry in (self.source.entries() if entries is None else entries)}
        self.media_panel.draw_side_by_side([(self._titles.get(key, key), files[key]) for key in self.source.selected() if key in files])

    # -- alerts ----------------------------------------------------------------------------
    def _run_alerts(self) -> Mapping[str, RunAlerts]:
        """By run key, the alerts the workspace read while open."""
        return self.source.alerts()

    def _tell_news(self, entries: list[RunEntry]) -> Mapping[str, RunAlerts]:
        """Toast what is new since the last look (alerts, runs ending); the runs' alerts, by key."""
        alerts = self._run_alerts()
        if self._viewing:
            self._look(self._viewing, alerts, entries)
        self._alerts_seen, news = workspace_news(self._alerts_seen, entries, alerts, self._clock())
        if news:
            announce(self.app, news)
        return alerts

    def check_alerts(self) -> None:
        """Look for news without drawing (the alerts pane is over this screen)."""
        if not self.paused:
            self._tell_news(self.source.entries())

    def _look(self, key: str, alerts: Mapping[str, RunAlerts] | None = None, entries: list[RunEntry] | None = None) -> None:
        """The person looked at run ``key``: its alerts are no longer unseen, nor news."""
        found = (self._run_alerts() if alerts is None else alerts).get(key)
        total = found.total if found is not None else 0
        self._looked[key] = total
        entry = next((e for e in (self.source.entries() if entries is None else entries) if e.key == key), None)
        if entry is not None:
            self._alerts_seen = rebaseline(self._alerts_seen, key, entry.state, total)

    def _selected_runs(self) -> list[tuple[str, str, Snapshots]]:
        runs = []
        for key in self.source.selected():
            source = self.source.source(key)
            if source is not None:
                runs.append((key, self._titles.get(key, key), source))
        return runs

    def _draw_metrics(self, runs: list[tuple[str, str, Snapshots]] | None = None, snapshots: list[RunSnapshot] | None = None) -> None:
        if runs is None or snapshots is None:
            runs = self._selected_runs()
            snapshots = [source.snapshot(console_lines=0) for _, _, source in runs]
        last_step = max((snapshot.charted_last_step or 0 for snapshot in snapshots), default=0)
        # Each run's define_metric decides a chart's axis; runs that disagree are drawn by step (views.overlay).
        charts = {chart.metric: chart for chart in overlay_charts([(key, snapshot) for (key, _, _), snapshot in zip(runs, snapshots)], self.filters["metrics"])}
        self._specs = charts
        grid = self.grid
        grid.set_charts(list(charts))
        visible = grid.visible_charts()
        store = self.source.store
        data = store.snapshot([charts[chart_id].key_of(key) for chart_id, _ in visible for key, _, _ in runs])
        names = [(key, title) for key, title, _ in runs]
        for chart_id, widget in visible:
            chart = charts[chart_id]
            x_range = overlay_range(chart, [key for key, _ in names], float(last_step), store.time_span)
            window = self.shown_range(chart_id, x_range)
            self.show_view(widget, chart_id, overlay_view(chart, names, data, window, self._modes.get(chart_id, "line")))

    def redraw_looks(self) -> None:
        self._draw_metrics()

    def _draw_bars(self, total: int) -> None:
        selected = len(self.source.selected())
        first, last, charts = self.grid.page_range()
        right = [(f"metrics {first}-{last} of {charts} " if charts else "no metrics ", "muted")]
        failed = [(f" ⚠ {clean(self.source.error)} ", "error")] if self.source.error else []
        room = (self.size.width or self.app.size.width) - sum(len(text) for text, _ in self.pause_mark(" · ") + failed + right) - 1
        left = header_left(str(self.source.root), total, selected, room)
        notes = [(f" · job type: {clean(self.job_type)}", "warn")] if self.job_type else []
        notes += [(f" · {name} filter: {clean(value)}", "warn") for name, value in self.filters.items() if value]
        self.query_one("#header", TextLine).set_content(left + notes, self.pause_mark(" · ") + failed + right)
        self.query_one("#status", TextLine).set_content(*status_line(HINTS, self.query_note() + failed, self.size.width or self.app.size.width))

    def on_resize(self) -> None:
        if self.is_mounted:  # the footer's hints fit the width
            self.call_after_refresh(lambda: self._draw_bars(len(self.source.entries())))

    def on_chart_grid_page_changed(self, event: ChartGrid.PageChanged) -> None:
        if self.is_mounted:  # the header counts the charts shown: a pane beside the grid changes how many
            self.call_after_refresh(self._draw_metrics)
            self.call_after_refresh(lambda: self._draw_bars(len(self.source.entries())))

    # -- runs ----------------------------------------------------------------------------
    def on_run_list_toggled(self, event: RunList.Toggled) -> None:
        self._look(event.key)
        if self.keeps_pinned(event.key):
            return
        if event.key in self.source.selected():
            self.source.deselect(event.key)
        elif self.source.select(event.key) is None:
            self._say_why(event.key)
        self.update_view(force=True)

    def _say_why(self, key: str) -> None:
        """Why run ``key`` cannot be loaded, if its entry knows."""
        entry = next((e for e in self.source.entries() if e.key == key), None)
        if entry is not None and entry.error:
            self.notify(clean(f"{entry.key}: {entry.error}"), severity="error", timeout=4, markup=False)

    def on_run_list_opened(self, event: RunList.Opened) -> None:
        entry = next((e for e in self.source.entries() if e.key == event.key), None)
        if entry is None:
            return
        if entry.error:
            self._say_why(entry.key)
            return
        view_key = f"{entry.key}#open"
        try:
            run = open_run(list(entry.files) or [entry.file], self.source.store, key=view_key)  # every writer of a shared run
        except (RunFileError, OSError) as error:  # deleted since the last scan, or unreadable now
            self.notify(clean(str(error)), severity="error", timeout=4, markup=False)
            return
        app = leet_app(self.app)
        app.attach(run)
        self._look(entry.key)
        self._viewing = entry.key  # the run view shows (and tells) what happens to it meanwhile

        def closed(_result: object) -> None:
            self._look(entry.key)
            self._viewing = ""
            app.detach(run)
            self.source.store.drop_run(view_key)
            self.source.store.drop_run(system_key(view_key))

        self.app.push_screen(RunScreen(run, labels=self.labels), closed)

    def active_grid(self) -> ChartGrid:
        return self.grid

    # -- actions -----------------------------------------------------------------------
    def action_settings(self) -> None:
        from leet.ui.screens.settings import SettingsScreen

        self.app.push_screen(SettingsScreen())

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(WORKSPACE_KEYS, "workspace"))

    def action_quit(self) -> None:
        self.app.exit()

    def action_alerts(self) -> None:
        self.app.push_screen(AlertsScreen())

    def action_focus_runs(self) -> None:
        self.query_one(RunList).focus()

    def action_cycle_focus(self, step: int) -> None:
        if self.query_one(RunList) is self.focused:  # not has_focus, which lags a key typed quickly
            self.grid.focus_chart(0)
        else:
            self.set_focus(self.query_one(RunList))

    def action_toggle_media(self) -> None:
        if self.media_panel is None:
            from leet.ui.screens.media import MediaPanel

            self.media_panel = MediaPanel(leet_app(self.app).config.images)
        shown = self.media_panel.toggle(self.query_one("#ws-body"), after=self.grid)
        self.grid.display = not shown  # the images take the charts' place
        if shown:
            self.draw_media()  # the first frame with the pane has its tiles
            self.call_after_refresh(self.focus_media)
        elif self.focused is self.media_panel.pane:
            self.set_focus(self.query_one(RunList))

    def action_toggle_peek(self) -> None:
        self.query_one(RunPeek).toggle()

    def action_toggle_runs(self) -> None:
        runs = self.query_one(RunList)
        runs.display = not runs.display

    def action_cycle_grouping(self) -> None:
        self.grouping = GROUPINGS[(GROUPINGS.index(self.grouping) + 1) % len(GROUPINGS)]
        self.update_view(force=True)

    def action_cycle_job_type(self) -> None:
        entries = self.source.entries()
        if not job_types(entries) and not self.job_type:
            self.notify("These runs have no job types", timeout=2)
            return
        self.job_type = next_job_type(entries, self.job_type)
        self.update_view(force=True)

    def action_compare(self) -> None:
        """The selected runs and the one under the cursor side by side; the cursor's run is selected, so that it loads."""
        readable = {entry.key for entry in self.source.entries() if not entry.error}
        keys = [key for key in self.source.selected() if key in readable]
        cursor = self.query_one(RunList).cursor_key
        if cursor in readable and cursor not in keys:
            keys.append(cursor)
        if len(keys) < 2:
            self.notify("Compare needs two runs: select runs with space, or put the cursor on another", timeout=3)
            return
        for key in keys:
            self.source.select(key)
        self.app.push_screen(CompareScreen(self.source, keys, self._titles))

    def action_records(self) -> None:
        """The records of the run under the cursor (a shared run's: its primary writer's)."""
        key = self.query_one(RunList).cursor_key
        entry = next((e for e in self.source.entries() if e.key == key), None)
        if entry is None:
            self.notify("Put the cursor on a run first", timeout=2)
            return
        self.app.push_screen(RecordsScreen(entry.files[0] if entry.files else entry.file, entry.title))

    def action_cycle_mode(self) -> None:
        chart_id = self.grid.focused_chart_id()
        if chart_id is None:
            self.notify("Focus a chart first (tab, then arrows)", timeout=2)
            return
        # Overlaid runs are not nodes of one run: no spread here.
        modes = tuple(mode for mode in MODES if mode != "spread")
        current = self._modes.get(chart_id, "line")
        self._modes[chart_id] = modes[(modes.index(current) + 1) % len(modes)]
        self._draw_metrics()

    def action_filter(self, name: str) -> None:
        prompt = FILTER_PROMPT if name == "runs" else "Metrics filter (regex or text):"
        self.query_one(FilterBar).open(name, prompt, self.filters[name])

    def action_clear_filter(self, name: str) -> None:
        self._apply_filter(name, "")

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        self._apply_filter(event.target, event.pattern)

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self._apply_filter(event.target, event.pattern)
        if event.target == "runs":
            self.query_one(RunList).focus()
        else:
            self.grid.focus_chart(0)

    def _apply_filter(self, name: str, pattern: str) -> None:
        if name != "runs" or self.take_query(pattern):  # an invalid query leaves the one in force, and says why
            self.filters[name] = pattern
        self.update_view(force=True)
