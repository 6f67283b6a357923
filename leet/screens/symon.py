"""The live system monitor: header, vitals and processes, a paged chart grid.

The screen pulls from the store when a source says data changed, and only
for what is visible: the charts on the current page, the sidebar when shown.
"""

from __future__ import annotations

import time
from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from leet.screens.gridkeys import GridActions

from leet.catalog import ChartSpec, group
from leet.keys import SYMON_KEYS
from leet.sources import LiveSource
from leet.notes import extra_notes, health_notes
from leet.views import chart_view, default_mode, filter_specs, host_summary, series_keys, vitals_model
from leet.window import tail_window
from widgets.chartframe import MODES
from widgets.filterbar import FilterBar
from widgets.grid import ChartGrid
from widgets.matching import is_regex
from widgets.processes import ProcessTable
from widgets.text import clean
from widgets.textline import TextLine
from widgets.vitals import Vitals

HINTS = (("h", "help"), ("q", "quit"), ("\\", "filter"), ("y", "mode"), ("tab", "focus"), ("n/N", "page"), ("[", "sidebar"))


class SymonScreen(GridActions, Screen[None]):
    """Live host metrics from a ``LiveSource``."""

    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in SYMON_KEYS]
    # Nothing focused at start: page and move keys then act on the chart grid.
    AUTO_FOCUS = ""

    def __init__(
        self,
        source: LiveSource,
        *,
        grid: tuple[int, int] = (3, 3),
        history_seconds: float = 600.0,
        disk_paths: tuple[str, ...] = ("/",),
        sidebar: bool = True,
        interval: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.source = source
        self._grid_size = grid
        self._history = history_seconds
        self._disk_paths = disk_paths
        self._sidebar_visible = sidebar
        self._interval = interval
        self._clock = clock
        self._specs: list[ChartSpec] = []
        self._spec_by_id: dict[str, ChartSpec] = {}
        self._series_count = -1
        self._modes: dict[str, str] = {}
        self.chart_filter = ""
        self._drawn_version = -1

    # -- layout ----------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Vitals(id="vitals")
                yield ProcessTable(id="processes")
            yield ChartGrid(*self._grid_size, id="grid")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.query_one("#sidebar").display = self._sidebar_visible
        self.update_view(force=True)
        if self.source.time_span is None:
            # The first sample may land between this pull and the app's
            # message loop starting; look again shortly rather than wait a tick.
            self._first_data = self.set_interval(0.05, self._await_first_data)

    def on_screen_resume(self) -> None:
        # Back from help: catch up on what arrived meanwhile.
        self.update_view()

    def _await_first_data(self) -> None:
        if self.source.time_span is not None:
            self._first_data.stop()
            self.update_view()

    @property
    def grid(self) -> ChartGrid:
        return self.query_one(ChartGrid)

    @property
    def processes(self) -> ProcessTable:
        return self.query_one(ProcessTable)

    def on_resize(self, event) -> None:
        width = event.size.width
        self.query_one("#sidebar").styles.width = max(28, min(46, int(width * 0.3)))

    # -- pulling data --------------------------------------------------------
    def update_view(self, force: bool = False) -> None:
        """Redraw what is visible from the store; cheap when nothing changed."""
        store = self.source.store
        version = store.version()
        if version == self._drawn_version and not force:
            return
        self._drawn_version = version
        self._refresh_specs()
        self._draw_charts()
        if self._sidebar_visible:
            self._draw_sidebar()
        self._draw_bars()

    def _refresh_specs(self) -> None:
        series = self.source.store.series(self.source.run)
        if len(series) != self._series_count:
            self._series_count = len(series)
            keys = [s.key if s.label is None else f"{s.key}/l:{s.label}" for s in series]
            self._specs = group(keys, order="symon")
            self._spec_by_id = {spec.chart: spec for spec in self._specs}
        shown = filter_specs(self._specs, self.chart_filter)
        self.grid.set_charts([spec.chart for spec in shown])

    def _x_range(self) -> tuple[float, float]:
        span = self.source.time_span
        if span is None:
            now = self._clock()
            return now, now + 60.0
        first, last = span
        return tail_window(first, last, self._history)

    def _draw_charts(self) -> None:
        x_range = self._x_range()
        visible = self.grid.visible()
        wanted = [key for chart_id, _ in visible for key in series_keys(self._spec_by_id[chart_id], self.source.run)]
        snapshots = self.source.store.snapshot(wanted, since=x_range[0])
        with self.app.batch_update():
            for chart_id, widget in visible:
                spec = self._spec_by_id[chart_id]
                mode = self._modes.get(chart_id) or default_mode(spec)
                widget.set_view(chart_view(spec, snapshots, self.source.run, x_range, mode))

    def _latest(self) -> dict[str, float]:
        return {key.key: value for key, value in self.source.store.latest_values(self.source.run).items()}

    def _draw_sidebar(self) -> None:
        extras = self.source.extras
        notes = self._notes(extras)
        self.query_one(Vitals).set_model(vitals_model(self._latest(), extras.get("host"), self._disk_paths, notes))
        rows = extras.get("processes")
        if rows is not None:
            self.processes.set_processes(rows)

    def _notes(self, extras) -> list[str]:
        return health_notes(self.source.status) + extra_notes(extras)

    def _draw_bars(self) -> None:
        extras = self.source.extras
        host = extras.get("host")
        header = self.query_one("#header", TextLine)
        first, last, total = self.grid.page_range()
        if total:
            right = [(f" charts {first}-{last} of {total}", "muted")]
        elif self.chart_filter and self._specs:
            right = [(" no charts match", "warn")]
        else:
            right = [(" no charts yet", "muted")]
        if self.chart_filter:
            kind = "regex" if is_regex(self.chart_filter) else "text"
            right.append((f" · filter ({kind}): {clean(self.chart_filter)}", "warn"))
        right.append((f" · every {self._interval:g}s ", "muted"))
        header.set_content([(" " + clean(host_summary(host, self._clock())), "heading")], right)
        status = self.query_one("#status", TextLine)
        hints = []
        for key, what in HINTS:
            hints += [(f" {key}", "key"), (f" {what}", "muted")]
        problems = self._notes(extras)
        right_status = [(f"⚠ {clean(problems[0])} ", "warn")] if problems else []
        status.set_content(hints, right_status)

    # -- messages ------------------------------------------------------------
    def on_chart_grid_page_changed(self, event: ChartGrid.PageChanged) -> None:
        if self.is_mounted:
            self._draw_charts_soon()

    def _draw_charts_soon(self) -> None:
        self.call_after_refresh(self._redraw_visible)

    def _redraw_visible(self) -> None:
        if self.source.time_span is not None or self._specs:
            self._draw_charts()
        self._draw_bars()

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        self._apply_filter(event.target, event.pattern)

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self._apply_filter(event.target, event.pattern)
        if event.target == "processes":
            self.processes.focus()
        else:
            self.grid.focus_chart(0)

    def _apply_filter(self, target: str, pattern: str) -> None:
        if target == "processes":
            self.processes.set_filter(pattern)
        else:
            self.chart_filter = pattern
            self._refresh_specs()
            self._redraw_visible()

    def active_grid(self) -> ChartGrid:
        return self.grid

    # -- actions -------------------------------------------------------------
    def action_help(self) -> None:
        from leet.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(SYMON_KEYS, "system monitor"))

    def action_quit(self) -> None:
        self.app.exit()

    def action_cycle_focus(self, step: int) -> None:
        panes = ["grid"]
        if self._sidebar_visible:
            panes.insert(0, "processes")
        current = "processes" if self.processes.has_focus else "grid"
        target = panes[(panes.index(current) + step) % len(panes)] if current in panes else panes[0]
        if target == "processes":
            self.processes.focus()
        else:
            self.grid.focus_chart(0)

    def action_unfocus(self) -> None:
        self.set_focus(None)

    def action_cycle_mode(self) -> None:
        chart_id = self.grid.focused_chart_id()
        if chart_id is None:
            self.notify("Focus a chart first (arrows or wasd)", timeout=2)
            return
        spec = self._spec_by_id[chart_id]
        current = self._modes.get(chart_id) or default_mode(spec)
        self._modes[chart_id] = MODES[(MODES.index(current) + 1) % len(MODES)]
        self._draw_charts()

    def action_filter_charts(self) -> None:
        self.query_one(FilterBar).open("charts", "Chart filter (regex or text):", self.chart_filter)

    def action_clear_chart_filter(self) -> None:
        self._apply_filter("charts", "")

    def action_filter_processes(self) -> None:
        if not self._sidebar_visible:
            self.action_toggle_sidebar()
        self.query_one(FilterBar).open("processes", "Process filter (name or PID):", self.processes.pattern)

    def action_clear_process_filter(self) -> None:
        self._apply_filter("processes", "")

    def action_cycle_sort(self) -> None:
        self.processes.cycle_sort()

    def action_toggle_sidebar(self) -> None:
        self._sidebar_visible = not self._sidebar_visible
        self.query_one("#sidebar").display = self._sidebar_visible
        if self._sidebar_visible:
            self._draw_sidebar()
