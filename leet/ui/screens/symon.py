"""The live system monitor: header, vitals and processes, a paged chart grid.

The screen pulls from the store when a source says data changed, and only
for what is visible: the charts on the current page, the sidebar when shown.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.notifications import Notification, Notify
from textual.screen import Screen

from leet.common.matching import is_regex
from leet.common.text import clean
from leet.config.layout_state import remembered_choice, remembered_grid, remembered_modes, remembered_sort, remembered_switch
from leet.model.catalog import ChartSpec, group, name_gpu_vendors
from leet.model.time_window import tail_window
from leet.sources.live import LiveSource
from leet.ui.bindings import SYMON_KEYS, footer_hints, screen_keys
from leet.ui.layout_keeper import remembered_view
from leet.ui.screens.chart_look import ChartLook
from leet.ui.screens.grid_actions import GridActions, next_mode
from leet.ui.screens.pause import PauseActions
from leet.ui.screens.process_dialogs import Sender, SignalPicker, SortPicker, Target, send_signal
from leet.ui.views.charts import MODES, chart_view, default_mode, filter_specs, read_resolution
from leet.ui.views.energy import host_energy_line
from leet.ui.views.footer import status_line
from leet.ui.views.gpu import device_sections, fit_accelerators, fit_gpu_section, gpu_vendors, lost_gpu_notes
from leet.ui.views.health import (
    ACCELERATOR_BACKENDS,
    GPU_BACKENDS,
    absent_gpu_reasons,
    extra_notes,
    gpu_notes,
    health_notes,
)
from leet.ui.views.symon import host_summary, process_charts_first, vitals_model
from widgets.filterbar import FilterBar
from widgets.gpuprocs import GpuProcessTable
from widgets.grid import ChartGrid
from widgets.processes import ProcessTable
from widgets.textline import TextLine
from widgets.vitals import Vitals, vitals_line_count

HINTS = footer_hints(SYMON_KEYS)
# The sampling intervals ``+`` and ``-`` step through, in seconds.
INTERVALS = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


def next_interval(current: float, step: int) -> float:
    """The interval one step longer (``step`` > 0) or shorter than ``current``; ``current`` at either end."""
    if step > 0:
        return next((seconds for seconds in INTERVALS if seconds > current), current)
    return next((seconds for seconds in reversed(INTERVALS) if seconds < current), current)

# Which process tables the sidebar shows on a machine with GPUs; ``g`` steps through them.
TABLES = ("both", "gpu", "host")
# Lines the vitals leave for the tables below them before each GPU shrinks to one line.
TABLE_ROOM = {"both": 16, "gpu": 10, "host": 10}
GPU_TABLE_SHARE = 0.6  # of the room below the vitals, when both tables share it


class SymonScreen(PauseActions, GridActions, ChartLook, Screen[None]):
    """Live host metrics from a ``LiveSource``."""

    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(SYMON_KEYS)]
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
        watched_pid: int | None = None,
        watch_tree: bool = False,
        send_signal: Sender = os.kill,
        energy_price: float | None = None,
        energy_currency: str = "$",
    ) -> None:
        super().__init__()
        self.source = source
        self.watched_pid = watched_pid  # --pid: marked in the process table (with --tree, its descendants too)
        self.watch_tree = watch_tree
        self.send_signal = send_signal  # how k sends: os.kill, or a stand-in under test
        self.energy_price = (energy_price, energy_currency)  # per kWh, for the energy line's cost; None: no cost
        self._grid_size = grid
        self._history = history_seconds
        self._disk_paths = disk_paths
        self._sidebar_visible = sidebar
        self._interval = interval
        self._interval_note: Notification | None = None
        self._clock = clock
        self._specs: list[ChartSpec] = []
        self._spec_by_id: dict[str, ChartSpec] = {}
        self._specs_for: tuple | None = None  # (the run's roster version, GPU vendors) the specs were grouped for
        self._modes: dict[str, str] = {}
        self.init_looks()
        self.chart_filter = ""
        self._drawn_version = -1
        self.tables = TABLES[0]

    # -- layout ----------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Vitals(id="vitals")
                yield GpuProcessTable(id="gpu-processes")
                yield ProcessTable(id="processes")
            yield ChartGrid(*self._grid_size, id="grid")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.restore_layout(remembered_view(self.app, self.LAYOUT_NAME))
        self.query_one("#sidebar").display = self._sidebar_visible
        self.processes.set_watched(self.watched_pid, self.watch_tree)
        self.update_view(force=True)
        if self.source.time_span is None:
            # The first sample may land between this pull and the app's
            # message loop starting; look again shortly rather than wait a tick.
            self._first_data = self.set_interval(0.05, self._await_first_data)

    def on_screen_resume(self) -> None:
        # Back from help: catch up on what arrived meanwhile.
        self.update_view()

    # -- the remembered layout (leet.ui.layout_keeper) -------------------------
    LAYOUT_NAME = "symon"

    def remembered_layout(self) -> dict:
        table = self.processes
        return {
            "grid": [self.grid.rows, self.grid.cols],
            "sidebar": self._sidebar_visible,
            "tables": self.tables,
            "sort": [table.sort, table.descending],
            "tree": table.tree_view,
            "modes": dict(self._modes),
            **self.remembered_looks(zooms=False),
        }

    def restore_layout(self, saved: dict) -> None:
        """Take back what ``remembered_layout()`` gave, each value checked; one that is not valid is left at the start's."""
        grid = remembered_grid(saved.get("grid"))
        if grid:
            self.grid.set_grid(*grid)
        sidebar = remembered_switch(saved.get("sidebar"))
        self._sidebar_visible = self._sidebar_visible if sidebar is None else sidebar
        self.tables = remembered_choice(saved.get("tables"), TABLES) or self.tables
        table = self.processes
        sort = remembered_sort(saved.get("sort"), {key for key, _, _ in table.sort_choices()} | set(table.SORTS))
        if sort:
            table.set_sort(*sort)
        if remembered_switch(saved.get("tree")) is not None:
            table.set_tree(saved["tree"])
        self._modes.update(remembered_modes(saved.get("modes"), MODES))
        self.restore_looks(saved, zooms=False)

    def _await_first_data(self) -> None:
        if self.source.time_span is not None:
            self._first_data.stop()
            self.update_view()

    @property
    def grid(self) -> ChartGrid:
        return self.query_one(ChartGrid)

    @property
    def processes(self) -> ProcessTable:
        return self.query_one("#processes", ProcessTable)

    @property
    def gpu_processes(self) -> GpuProcessTable:
        return self.query_one(GpuProcessTable)

    def on_resize(self, event) -> None:
        width = event.size.width
        self.query_one("#sidebar").styles.width = max(28, min(46, int(width * 0.3)))
        if self._sidebar_visible and self.is_mounted:
            # Taller or shorter: GPUs may take one line each, or two.
            self._draw_sidebar()
        if self.is_mounted:
            self.call_after_refresh(self._draw_bars)  # the footer's hints fit the width

    # -- pulling data --------------------------------------------------------
    def update_view(self, force: bool = False) -> None:
        """Redraw what is visible from the store; cheap when nothing changed."""
        store = self.source.store
        version = store.version()
        if not force and (self.paused or version == self._drawn_version):
            return
        self._drawn_version = version
        self._refresh_specs()
        self._draw_charts()
        if self._sidebar_visible:
            self._draw_sidebar()
        self._draw_bars()

    def _refresh_specs(self) -> None:
        store, run = self.source.store, self.source.run
        vendors = gpu_vendors(self.source.extras)
        wanted = (store.roster_version(run), vendors)
        if wanted != self._specs_for:
            self._specs_for = wanted
            self._specs = name_gpu_vendors(group(store.series(run), order="symon"), vendors)
            if self.watched_pid is not None:
                self._specs = process_charts_first(self._specs)
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
        full = self._x_range()
        visible = self.grid.visible_charts()
        windows = {chart_id: self.shown_range(chart_id, full) for chart_id, _ in visible}
        since = min((window[0] for window in windows.values()), default=full[0])
        wanted = [key for chart_id, _ in visible for key in self._spec_by_id[chart_id].keys]
        widths = [widget.size.width for _, widget in visible]
        # A zoomed chart reads as finely as its narrower window asks.
        steps = [read_resolution(window, widths) for window in {full, *windows.values()}]
        resolution = None if None in steps else min(step for step in steps if step is not None)
        snapshots = self.source.store.snapshot(wanted, since=since, resolution=resolution)
        with self.app.batch_update():
            for chart_id, widget in visible:
                spec = self._spec_by_id[chart_id]
                mode = self._modes.get(chart_id) or default_mode(spec)
                self.show_view(widget, chart_id, chart_view(spec, snapshots, windows[chart_id], mode))

    def redraw_looks(self) -> None:
        self._draw_charts()

    def _draw_sidebar(self) -> None:
        extras = self.source.extras
        notes = self._notes(extras)
        stored = self.source.store.latest_values(self.source.run)
        latest = {key.key: value for key, value in stored.items()}
        gpu, accelerators = device_sections(latest, stored, extras, absent_gpu_reasons(self.source.status))
        energy = host_energy_line(extras, *self.energy_price)
        model = vitals_model(latest, extras.get("host"), self._disk_paths, notes, gpu, extras.get("disk_space"), accelerators, energy)
        tables = self._shown_tables(extras)
        sidebar_height = self.size.height - 2  # less the header and status lines
        model = fit_gpu_section(model, sidebar_height, TABLE_ROOM[tables])
        model = fit_accelerators(model, sidebar_height, TABLE_ROOM[tables])
        self.query_one(Vitals).set_model(model)
        self._show_tables(tables, sidebar_height - vitals_line_count(model) - 1)
        if tables != "host":
            self.gpu_processes.set_notes(gpu_notes(extras))
            self.gpu_processes.set_processes(extras.get("gpu_processes") or ())
        rows = extras.get("processes")
        if rows is not None:
            self.processes.set_processes(rows)

    def _has_gpus(self, extras) -> bool:
        # A backend that cannot put processes on its GPUs (AMD's) gets no table saying there are none.
        return bool(extras.get("gpus")) and "gpu_processes" in extras

    def _shown_tables(self, extras) -> str:
        """``self.tables`` where there are GPUs; host processes alone where there are none."""
        return self.tables if self._has_gpus(extras) else "host"

    def _show_tables(self, tables: str, room: int) -> None:
        """Show the tables ``tables`` names in ``room`` lines; with both, GPUs get up to 60%."""
        gpu_table, host_table = self.gpu_processes, self.processes
        gpu_table.display = tables != "host"
        host_table.display = tables != "gpu"
        gpu_table.set_class(tables == "gpu", "-alone")
        most = max(4, round(room * GPU_TABLE_SHARE)) if tables == "both" else None
        # styles.max_height reads back as a Scalar, never equal to an int: keep what was set,
        # or every redraw would set it again and force a relayout of the whole screen.
        if getattr(self, "_gpu_table_most", "unset") != most:
            self._gpu_table_most = most
            gpu_table.styles.max_height = most
        for table in (gpu_table, host_table):
            if table.has_focus and not table.display:
                self.set_focus(None)

    def _notes(self, extras) -> list[str]:
        # No GPU driver (or TPU, NeuronCore …) is how most machines are, not trouble;
        # the sidebar says it calmly and the backends list (b) says why.
        # GPU notes belong to the GPU process table, next to the rows they explain.
        statuses = health_notes(self.source.status, calm_when_absent=ACCELERATOR_BACKENDS)
        return statuses + extra_notes(extras, skip=GPU_BACKENDS if self._has_gpus(extras) else ())

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
        right = self.pause_mark() + right
        room = (self.size.width or self.app.size.width) - sum(len(text) for text, _ in right) - 1  # less the leading space
        header.set_content([(" " + clean(host_summary(host, self._clock(), room)), "heading")], right)
        status = self.query_one("#status", TextLine)
        problems = self._notes(extras) + lost_gpu_notes(extras.get("gpus"))
        right_status = [(f" ⚠ {clean(problems[0])} ", "warn")] if problems else []
        status.set_content(*status_line(HINTS, right_status, self.size.width or self.app.size.width))

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
        if event.target in ("processes", "gpu-processes"):
            self.query_one(f"#{event.target}", ProcessTable).focus()
        else:
            self.grid.focus_chart(0)

    def _apply_filter(self, target: str, pattern: str) -> None:
        if target in ("processes", "gpu-processes"):
            self.query_one(f"#{target}", ProcessTable).set_filter(pattern)
        else:
            self.chart_filter = pattern
            self._refresh_specs()
            self._redraw_visible()

    def active_grid(self) -> ChartGrid:
        return self.grid

    # -- actions -------------------------------------------------------------
    def action_settings(self) -> None:
        from leet.ui.screens.settings import SettingsScreen

        self.app.push_screen(SettingsScreen())

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(SYMON_KEYS, "system monitor"))

    def action_quit(self) -> None:
        self.app.exit()

    def action_backends(self) -> None:
        from leet.ui.screens.backends import BackendsScreen

        self.app.push_screen(BackendsScreen(lambda: self.source.status))

    def _visible_tables(self) -> list[ProcessTable]:
        """The sidebar's process tables on screen, top to bottom."""
        if not self._sidebar_visible:
            return []
        return [table for table in (self.gpu_processes, self.processes) if table.display]

    def _active_table(self) -> ProcessTable:
        """The focused table, else the host table when shown: what ``t`` and ``f`` act on."""
        tables = self._visible_tables()
        for table in tables:
            if table.has_focus:
                return table
        return self.processes if self.processes in tables or not tables else tables[0]

    def action_cycle_focus(self, step: int) -> None:
        panes: list = [*self._visible_tables(), self.grid]
        # ``self.focused``, not ``has_focus``: that lags a key pressed right after the last one.
        current = next((pane for pane in panes[:-1] if pane is self.focused), self.grid)
        target = panes[(panes.index(current) + step) % len(panes)]
        if target is self.grid:
            self.grid.focus_chart(0)
        else:
            target.focus()

    def action_unfocus(self) -> None:
        self.set_focus(None)

    def action_cycle_mode(self) -> None:
        chart_id = self.grid.focused_chart_id()
        if chart_id is None:
            self.notify("Focus a chart first (arrows or wasd)", timeout=2)
            return
        self._modes[chart_id] = next_mode(self._spec_by_id[chart_id], self._modes.get(chart_id))
        self._draw_charts()

    def action_filter_focused(self) -> None:
        """Filter the focused process table, else the charts."""
        if any(table.has_focus for table in self._visible_tables()):
            self.action_filter_processes()
        else:
            self.action_filter_charts()

    def action_change_interval(self, step: int) -> None:
        """Sample more often (``step`` < 0) or less often, one step of ``INTERVALS``."""
        wanted = next_interval(self._interval, step)
        if wanted == self._interval:
            self._tell_interval(f"Sampling every {self._interval:g}s: the {'longest' if step > 0 else 'shortest'} step", timeout=2)
            return
        self._interval = self.source.set_interval(wanted)
        self._draw_bars()
        self._tell_interval(f"Sampling every {self._interval:g}s", timeout=1.5)

    def _tell_interval(self, message: str, timeout: float) -> None:
        """One toast for the interval: a new one takes the place of the last, so presses never stack them."""
        shown = self.app._notifications
        if self._interval_note is not None and self._interval_note in shown:
            del shown[self._interval_note]
        self._interval_note = Notification(message, "", "information", timeout, markup=False)
        self.app.post_message(Notify(self._interval_note))

    def action_filter_charts(self) -> None:
        self.query_one(FilterBar).open("charts", "Chart filter (regex or text):", self.chart_filter)

    def action_clear_chart_filter(self) -> None:
        self._apply_filter("charts", "")

    def action_filter_processes(self) -> None:
        if not self._sidebar_visible:
            self.action_toggle_sidebar()
        table = self._active_table()
        what = "GPU process" if table is self.gpu_processes else "Process"
        self.query_one(FilterBar).open(table.id or "processes", f"{what} filter (name or PID):", table.pattern)

    def action_clear_process_filter(self) -> None:
        table = self._active_table()
        self._apply_filter(table.id or "processes", "")

    def action_cycle_sort(self) -> None:
        self._active_table().cycle_sort()

    # -- the process table: sort, tree, signals ------------------------------------
    def _shown_table(self) -> ProcessTable:
        """The table the process keys act on, with the sidebar shown so the effect is seen."""
        if not self._sidebar_visible:
            self.action_toggle_sidebar()
        return self._active_table()

    def action_choose_sort(self) -> None:
        table = self._shown_table()

        def chosen(key: str | None) -> None:
            if key is not None:
                table.sort_by(key)

        self.app.push_screen(SortPicker(table.sort_choices(), table.sort, table.descending), chosen)

    def action_sort_column(self, step: int) -> None:
        self._shown_table().move_sort(step)

    def action_toggle_tree(self) -> None:
        self._shown_table()
        table = self.processes  # GPU rows are one per process and GPU: only host processes make a tree
        table.set_tree(not table.tree_view)
        self.notify("Process tree" if table.tree_view else "Flat process list", timeout=1.5)

    def action_toggle_kernel_threads(self) -> None:
        self._shown_table()
        table = self.processes
        table.set_show_kernel(not table.show_kernel)
        self.notify("Kernel threads shown" if table.show_kernel else "Kernel threads hidden", timeout=1.5)

    def action_kill(self) -> None:
        row = self._shown_table().selected_row
        if row is None:
            self.notify("No process selected", severity="warning", timeout=2)
            return
        if not (row.command or row.user):
            # A GPU process seen only by its host PID: that number means another process here.
            self.notify(f"PID {row.pid} is not visible from here: no signal sent", severity="warning", timeout=3, markup=False)
            return
        target = Target(row.pid, row.command, row.user)

        def chosen(number: int | None) -> None:
            if number is not None:
                message, severity = send_signal(target, number, self.send_signal)
                self.notify(message, severity=severity, timeout=4, markup=False)

        self.app.push_screen(SignalPicker(target), chosen)

    def action_cycle_tables(self) -> None:
        if not self._has_gpus(self.source.extras):
            what = "These GPUs' processes are not known" if self.source.extras.get("gpus") else "No GPUs here"
            self.notify(f"{what}: the sidebar lists host processes", timeout=2, markup=False)
            return
        self.tables = TABLES[(TABLES.index(self.tables) + 1) % len(TABLES)]
        if not self._sidebar_visible:
            self.action_toggle_sidebar()
        else:
            self._draw_sidebar()
        shown = {"both": "GPU and host processes", "gpu": "GPU processes", "host": "host processes"}
        self.notify(f"Sidebar: {shown[self.tables]}", timeout=1.5)

    def action_toggle_sidebar(self) -> None:
        self._sidebar_visible = not self._sidebar_visible
        sidebar = self.query_one("#sidebar")
        if not self._sidebar_visible and self.focused is not None and sidebar in self.focused.ancestors:
            # Focus leaves with the sidebar; left to itself it can land on the other, hidden, table.
            self.set_focus(None)
        sidebar.display = self._sidebar_visible
        if self._sidebar_visible:
            self._draw_sidebar()
