"""One W&B run: its metrics, its system metrics, an overview and the console.

The screen pulls from the store and the run source's snapshot whenever the
source says the file grew, and draws only what is visible.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from leet.common.text import clean
from leet.common.ticks import step_range
from leet.config.layout_state import remembered_grid, remembered_modes, remembered_switch
from leet.model.catalog import ChartSpec, group
from leet.model.keys import axis_key
from leet.model.node_filter import LabelFilter
from leet.model.progress import Total
from leet.model.run import RunSnapshot, RunState
from leet.sources.base import RunView
from leet.ui.app import leet_app
from leet.ui.bindings import RUN_KEYS, footer_hints, screen_keys
from leet.ui.layout_keeper import remembered_view
from leet.ui.screens.alerts import AlertsScreen, announce
from leet.ui.screens.chart_look import ChartLook
from leet.ui.screens.grid_actions import GridActions, next_mode
from leet.ui.screens.media_host import MediaHost
from leet.ui.screens.pause import PauseActions
from leet.ui.screens.records import RecordsScreen
from leet.ui.views.alerts import RunSeen, alert_markers, run_news
from leet.ui.views.charts import MODES, chart_view, default_mode, filter_specs
from leet.ui.views.footer import status_line
from leet.ui.views.run import (
    NARROW_COLUMNS,
    console_lines,
    header_parts,
    metric_specs,
    no_charts_text,
    overview_lines,
    time_range,
)
from widgets.filterbar import FilterBar
from widgets.grid import ChartGrid
from widgets.textline import TextLine
from widgets.textpane import TextPane

if TYPE_CHECKING:
    from leet.ui.screens.media import MediaPanel

HINTS = footer_hints(RUN_KEYS, skip=("pick_labels",))
SHARED_HINTS = footer_hints(RUN_KEYS)  # a shared run's nodes can be picked
PROMPTS = {
    "metrics": "Metrics filter (regex or text):",
    "system": "System filter (title, key or label):",
    "overview": "Overview filter:",
    "console": "Console filter:",
}


CAPPED_NOUNS = {"metrics": "metrics", "system": "system metrics", "config": "config keys", "summary": "summary keys"}


def capped_notes(snapshot: RunSnapshot, names: tuple[str, ...]) -> list[str]:
    """``10,000 of 1,000,000 metrics shown`` for each of ``names`` a cap cut short; ``≥`` when only a lower bound is known."""
    notes = []
    for name in names:
        if name in snapshot.capped:
            kept, left_out, exact = snapshot.capped[name]
            notes.append(f"{kept:,} of {'' if exact else '≥'}{kept + left_out:,} {CAPPED_NOUNS[name]} shown")
    return notes


class RunScreen(PauseActions, GridActions, ChartLook, MediaHost, Screen[None]):
    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(RUN_KEYS)]
    AUTO_FOCUS = ""

    def __init__(self, source: RunView, *, clock: Callable[[], float] = time.time, labels: LabelFilter | str | None = None, total: Total | None = None) -> None:
        super().__init__()
        self.source = source
        self.total = total  # --total: what the ETA counts to, over the config's own
        self._clock = clock
        # Which nodes of a shared run show in the system charts and the console.
        self.labels = labels if isinstance(labels, LabelFilter) else LabelFilter.parse(labels)
        self._system_specs_for: tuple | None = None  # (the roster version, node filter) the system specs were grouped for
        self.filters = {"metrics": "", "system": "", "overview": "", "console": ""}
        self._modes: dict[str, str] = {}
        self.init_looks()
        self._metric_specs: dict[str, ChartSpec] = {}
        self._system_specs: dict[str, ChartSpec] = {}
        self._all_system_specs: list[ChartSpec] = []  # before the system filter
        self._metric_specs_for: tuple | None = None
        self._snapshot: RunSnapshot | None = None
        self._alerts_seen: RunSeen | None = None  # what the last look saw: alerts and state (news is what differs)
        self.media_panel: MediaPanel | None = None  # mounted on the first 3
        # The overview as the person left it in a wide terminal (remembered), and in a narrow one (hidden at first).
        self._overview_wide = True
        self._overview_narrow = False
        self._narrow: bool | None = None  # whether the width is below NARROW_COLUMNS; None before the first look

    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="run-body"):
            yield TextPane("Overview", id="overview")
            with Vertical(id="run-center"):
                yield ChartGrid(3, 3, id="metrics")
                yield TextPane("Console", follow=True, id="console")
            yield ChartGrid(4, 1, id="system", title="System")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.query_one("#console").display = False
        self.restore_layout(remembered_view(self.app, self.LAYOUT_NAME))
        self._fit_width(self.app.size.width)
        self.update_view()

    def on_screen_resume(self) -> None:
        self.update_view()

    # -- the remembered layout (leet.ui.layout_keeper) -------------------------------
    LAYOUT_NAME = "run"
    PANES = ("metrics", "system", "console", "overview")

    def remembered_layout(self) -> dict:
        return {
            "panes": {**{name: bool(self.query_one(f"#{name}").display) for name in self.PANES}, "overview": self._overview_wide},
            "metrics_grid": [self._grid("metrics").rows, self._grid("metrics").cols],
            "system_grid": [self._grid("system").rows, self._grid("system").cols],
            "modes": dict(self._modes),
            **self.remembered_looks(), **self.remembered_media(),
        }

    def restore_layout(self, saved: dict) -> None:
        """Take back what ``remembered_layout()`` gave, each value checked; one that is not valid is left at the start's."""
        panes = saved.get("panes")
        for name in self.PANES:
            shown = remembered_switch(panes.get(name)) if isinstance(panes, dict) else None
            if shown is not None and name == "overview":
                self._overview_wide = shown
                shown = shown if not self._narrow else None
            if shown is not None:
                self.query_one(f"#{name}").display = shown
        for name in ("metrics", "system"):
            grid = remembered_grid(saved.get(f"{name}_grid"))
            if grid:
                self._grid(name).set_grid(*grid)
        self._modes.update(remembered_modes(saved.get("modes"), MODES))
        self.restore_looks(saved)
        self.restore_media(remembered_switch(saved.get("media")))

    # -- pulling data ------------------------------------------------------------
    def update_view(self, force: bool = False) -> None:
        if self.paused and not force:
            return
        snapshot = self.source.snapshot()
        self._snapshot = snapshot
        self._tell_news(snapshot)
        with self.app.batch_update():
            self._draw_metrics(snapshot)
            self._draw_system()
            self._draw_text(snapshot)
            self._draw_bars(snapshot)
            self.draw_media()

    def draw_media(self) -> None:
        if self.media_panel is not None and self.media_panel.shown:
            path = getattr(self.source, "path", None)
            self.media_panel.draw_run(Path(path) if path is not None else None)

    def _tell_news(self, snapshot: RunSnapshot) -> None:
        """Toast (and maybe ring for) alerts and a run ending since the last look; never while paused."""
        self._alerts_seen, news, seen = run_news(self._alerts_seen, snapshot, self._clock())
        if news or seen:
            announce(self.app, news, seen)

    def check_alerts(self) -> None:
        """Look for news without drawing (the alerts pane is over this screen)."""
        if not self.paused:
            self._tell_news(self.source.snapshot(console_lines=0))

    def _grid(self, name: str) -> ChartGrid:
        return self.query_one(f"#{name}", ChartGrid)

    def _draw_metrics(self, snapshot: RunSnapshot) -> None:
        grid = self._grid("metrics")
        # Grouping thousands of keys costs tens of milliseconds: only when the keys or the filter change.
        wanted = (snapshot.history_keys, self.filters["metrics"], snapshot.axes, snapshot.hidden, snapshot.run_key)
        if wanted != self._metric_specs_for:
            self._metric_specs_for = wanted
            series, pattern, axes, hidden, run = wanted
            specs = metric_specs(series, pattern, axes, hidden, run=run)
            self._metric_specs = {spec.chart: spec for spec in specs}
            grid.set_charts([spec.chart for spec in specs])
        if not grid.display:
            return
        last = snapshot.charted_last_step  # a resumed segment's steps lie after the earlier segments'
        x_range = step_range(0.0, float(last) if last is not None else None)
        markers = tuple((step + snapshot.step_offset, level) for step, level in alert_markers(snapshot))
        self._draw_grid(grid, self._metric_specs, snapshot.run_key, x_range, "step", markers)

    def _draw_system(self) -> None:
        grid = self._grid("system")
        store = self.source.store
        run = self.source.system_key
        wanted = (store.roster_version(run), self.labels)
        if wanted != self._system_specs_for:
            self._system_specs_for = wanted
            self._all_system_specs = group((s for s in store.series(run) if self.labels.matches(s.label)), order="title")
        specs = filter_specs(self._all_system_specs, self.filters["system"])
        self._system_specs = {spec.chart: spec for spec in specs}
        grid.set_charts([spec.chart for spec in specs])
        if not grid.display or not specs:
            return
        span = store.time_span(run)
        self._draw_grid(grid, self._system_specs, run, time_range(*span) if span else (0.0, 1.0), "time")

    def _draw_grid(
        self, grid: ChartGrid, specs: dict[str, ChartSpec], run: str, x_range: tuple[float, float], x_kind: str,
        markers: tuple[tuple[float, str], ...] = (),
    ) -> None:
        """Draw the visible charts; ``markers`` (alerts by step) go on charts whose x axis is the step."""
        visible = grid.visible_charts()
        # A chart with a define_metric axis reads its own store namespace, and gets that axis's range.
        runs = {chart_id: axis_key(run, specs[chart_id].x_axis) if specs[chart_id].x_axis else run for chart_id, _ in visible}
        wanted = [key for chart_id, _ in visible for key in specs[chart_id].keys]
        store = self.source.store
        snapshots = store.snapshot(wanted)
        ranges: dict[str, tuple[float, float]] = {run: x_range}
        for chart_id, widget in visible:
            spec = specs[chart_id]
            where = runs[chart_id]
            if where not in ranges:
                span = store.time_span(where)
                ranges[where] = step_range(min(0.0, span[0]), span[1]) if span else (0.0, 1.0)
            key = f"{grid.id}:{chart_id}"
            mode = self._modes.get(key) or default_mode(spec)
            window = self.shown_range(key, ranges[where])
            self.show_view(widget, key, chart_view(spec, snapshots, window, mode, x_kind=x_kind, markers=() if spec.x_axis else markers))

    def _draw_text(self, snapshot: RunSnapshot) -> None:
        overview = self.query_one("#overview", TextPane)
        if overview.display:
            parts = [self._filter_note("overview"), *capped_notes(snapshot, ("config", "summary"))]
            note = " · ".join(part for part in parts if part)
            overview.set_lines(overview_lines(snapshot, self._clock(), self.filters["overview"]), note)
        console = self.query_one("#console", TextPane)
        if console.display:
            note = " · ".join(part for part in (self._filter_note("console"), self.labels.describe(snapshot.labels)) if part)
            console.set_lines(console_lines(snapshot, self.filters["console"], self.labels), note)

    def _filter_note(self, name: str) -> str:
        return f"filter: {self.filters[name]}" if self.filters[name] else ""

    def _draw_bars(self, snapshot: RunSnapshot) -> None:
        extra: list[tuple[str, str]] = []
        if self.labels.active:
            # On the right, which a narrow terminal never cuts: the node filter must stay in view.
            missing = self.labels.unmatched(snapshot.labels) if snapshot.state is not RunState.LOADING else []
            note = clean(self.labels.describe(snapshot.labels)) + (" · no node " + clean(",".join(missing)) if missing else "")
            extra = [(f" {note} ·", "warn")]
        extra = self.pause_mark() + extra
        # The run's name gives way before its state and step (the header spans the screen).
        width = self.size.width - sum(len(text) for text, _ in extra) if self.size.width else None
        left, right = header_parts(snapshot, width, self.total)
        right = extra + right
        metrics = self._grid("metrics")
        first, last, total = metrics.page_range()
        charts = f" · metrics {first}-{last} of {total}" if total else " · " + no_charts_text(snapshot)
        notes = [f" · {name} filter: {clean(value)}" for name, value in self.filters.items() if value]
        notes += [f" · {note}" for note in capped_notes(snapshot, ("metrics", "system"))]
        self.query_one("#header", TextLine).set_content(left + [(charts, "muted")] + [(n, "warn") for n in notes], right)
        failed = [(f" ⚠ {clean(snapshot.error)} ", "error")] if snapshot.error else []
        hints = SHARED_HINTS if snapshot.labels else HINTS
        self.query_one("#status", TextLine).set_content(*status_line(hints, failed, self.size.width or self.app.size.width))

    def on_resize(self, event: events.Resize) -> None:
        if self.is_mounted:
            self._fit_width(event.size.width)
        # The header fits the run's name to the width.
        if self.is_mounted and self._snapshot is not None:
            self.call_after_refresh(self._draw_bars_again)

    def _fit_width(self, width: int) -> None:
        """Below ``NARROW_COLUMNS`` the charts come first: the overview hides (``[`` shows it, narrower)."""
        narrow = width < NARROW_COLUMNS
        if narrow is self._narrow:
            return
        self._narrow = narrow
        self.set_class(narrow, "-narrow")
        overview = self.query_one("#overview", TextPane)
        shown = self._overview_narrow if narrow else self._overview_wide
        if overview.display and not shown and self.focused is overview:
            self.set_focus(None)
        if shown and not overview.display and self._snapshot is not None:
            self.call_after_refresh(self._draw_text, self._snapshot)
        overview.display = shown

    def _draw_bars_again(self) -> None:
        if self._snapshot is not None:
            self._draw_bars(self._snapshot)

    def on_chart_grid_page_changed(self, event: ChartGrid.PageChanged) -> None:
        if self.is_mounted and self._snapshot is not None:
            self.call_after_refresh(self._redraw_charts)

    def _redraw_charts(self) -> None:
        if self._snapshot is not None:
            self._draw_metrics(self._snapshot)
            self._draw_system()
            self._draw_bars(self._snapshot)

    # -- focus helpers -----------------------------------------------------------
    def _focused_grid(self) -> ChartGrid:
        system = self._grid("system")
        if system.display and system.focused_index() is not None:
            return system
        return self._grid("metrics")

    def _panes(self) -> list[str]:
        return [name for name in ("overview", "metrics", "console", "system") if self.query_one(f"#{name}").display]

    def _focused_pane(self) -> str | None:
        for name in ("overview", "console"):
            if self.query_one(f"#{name}") is self.focused:  # not has_focus, which lags a key typed quickly
                return name
        for name in ("metrics", "system"):
            if self._grid(name).focused_index() is not None:
                return name
        return None

    def _focus_pane(self, name: str) -> None:
        if name in ("metrics", "system"):
            self._grid(name).focus_chart(0)
        else:
            self.set_focus(self.query_one(f"#{name}"))

    def active_grid(self) -> ChartGrid:
        return self._focused_grid()

    # -- actions -----------------------------------------------------------------
    def action_settings(self) -> None:
        from leet.ui.screens.settings import SettingsScreen

        self.app.push_screen(SettingsScreen())

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(RUN_KEYS, "run"))

    def action_quit(self) -> None:
        self.app.exit()

    def action_alerts(self) -> None:
        self.app.push_screen(AlertsScreen())

    def action_unfocus(self) -> None:
        """Leave the focused pane; with nothing focused, go back to the workspace (if we came from one)."""
        if self.focused is not None:
            self.set_focus(None)
        elif self.app.screen_stack.index(self) > 1:
            self.dismiss()

    def action_cycle_focus(self, step: int) -> None:
        panes = self._panes()
        if not panes:
            return
        current = self._focused_pane()
        index = panes.index(current) + step if current in panes else (0 if step > 0 else -1)
        self._focus_pane(panes[index % len(panes)])

    def action_toggle_pane(self, name: str) -> None:
        pane = self.query_one(f"#{name}")
        if pane.display and self._focused_pane() == name:
            # Focus leaves with the pane; left to itself it can land on a hidden chart of the same grid.
            self.set_focus(None)
        pane.display = not pane.display
        if name == "overview" and self._narrow:
            self._overview_narrow = pane.display
        elif name == "overview":
            self._overview_wide = pane.display
        if pane.display and self._snapshot is not None:
            self.call_after_refresh(self.update_view, True)

    def action_toggle_media(self) -> None:
        if self.media_panel is None:
            from leet.ui.screens.media import MediaPanel

            self.media_panel = MediaPanel(leet_app(self.app).config.images)
        center = self.query_one("#run-center")
        if self.media_panel.toggle(center, after=self._grid("metrics")):
            self.draw_media()  # the first frame with the pane has its tiles
            self.call_after_refresh(self.focus_media)
        elif self.media_panel.pane is not None and self.media_panel.pane.has_focus:
            self.set_focus(None)

    def action_records(self) -> None:
        """The run file's records (a shared run's: the primary writer's)."""
        path = getattr(self.source, "path", None)
        if path is None:
            self.notify("This run has no file to read records from", timeout=3)
            return
        self.app.push_screen(RecordsScreen(path))

    def action_cycle_mode(self) -> None:
        grid = self._focused_grid()
        chart_id = grid.focused_chart_id()
        if chart_id is None:
            self.notify("Focus a chart first (arrows or wasd)", timeout=2)
            return
        specs = self._metric_specs if grid.id == "metrics" else self._system_specs
        key = f"{grid.id}:{chart_id}"
        self._modes[key] = next_mode(specs[chart_id], self._modes.get(key))
        self._redraw_charts()

    def look_key(self, grid: ChartGrid, chart_id: str) -> str:
        return f"{grid.id}:{chart_id}"

    def redraw_looks(self) -> None:
        self._redraw_charts()

    def action_pick_labels(self) -> None:
        snapshot = self._snapshot
        if snapshot is None or not snapshot.labels:
            self.notify("This run has no node labels (not a shared-mode run)", timeout=3)
            return
        from leet.ui.screens.label_picker import LabelPicker

        def chosen(labels: LabelFilter | None) -> None:
            if labels is not None:
                self.set_labels(labels)

        self.app.push_screen(LabelPicker(snapshot.writers, snapshot.labels, self.labels, self.set_labels), chosen)

    def set_labels(self, labels: LabelFilter) -> None:
        """Show only these nodes' system metrics and console lines."""
        self.labels = labels
        if self._snapshot is not None:
            self._draw_system()
            self._draw_text(self._snapshot)
            self._draw_bars(self._snapshot)

    def action_filter(self, name: str) -> None:
        if name == "metrics" and self._focused_pane() == "console":
            name = "console"
        if name == "console":
            self.query_one("#console").display = True
        self.query_one(FilterBar).open(name, PROMPTS[name], self.filters[name])

    def action_clear_filter(self, name: str) -> None:
        self._apply_filter(name, "")

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        self._apply_filter(event.target, event.pattern)

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self._apply_filter(event.target, event.pattern)
        self._focus_pane(event.target if event.target in ("overview", "console", "system") else "metrics")

    def _apply_filter(self, name: str, pattern: str) -> None:
        self.filters[name] = pattern
        if self._snapshot is not None:
            self._draw_metrics(self._snapshot)
            self._draw_system()
            self._draw_text(self._snapshot)
            self._draw_bars(self._snapshot)
