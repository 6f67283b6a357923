"""Every node a Prometheus knows: a node table, a heatmap of their GPUs, and charts per metric family.

The charts are a shared run's system pane: the source stores each series
under ``CLUSTER_RUN`` with the node as its label, so the label picker
(``l``), the ``--label`` start filter, the chart filter (``\\``) and spread
mode work as they do for a shared run. The screen pulls from its source when
told that something changed, draws only what is visible, and once a second
words the ages again (last answer, last scrape, the retry countdown).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Protocol

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static

from leet.common.gc_pause import collection_paused
from leet.common.matching import is_regex
from leet.common.text import clean
from leet.config.layout_state import remembered_grid, remembered_modes, remembered_sort, remembered_switch
from leet.model.catalog import ChartSpec, group
from leet.model.cluster import CLUSTER_RUN, NodeState, PrometheusStatus
from leet.model.node_filter import LabelFilter
from leet.model.store import Store
from leet.model.time_window import tail_window
from leet.ui.bindings import CLUSTER_KEYS, footer_hints, screen_keys
from leet.ui.layout_keeper import remembered_view
from leet.ui.screens.chart_look import ChartLook
from leet.ui.screens.grid_actions import GridActions, next_mode
from leet.ui.screens.pause import PauseActions
from leet.ui.screens.process_dialogs import SortPicker
from leet.ui.views.charts import MODES, chart_view, default_mode, filter_specs
from leet.ui.views.cluster import (
    header_parts,
    heatmap_model,
    metric_named,
    next_metric,
    node_order,
    node_rows,
    status_problem,
)
from leet.ui.views.cluster_layout import sidebar_width
from leet.ui.views.footer import status_line
from widgets.chartframe import ChartView
from widgets.filterbar import FilterBar
from widgets.gpuheatmap import GpuHeatmap
from widgets.grid import ChartGrid
from widgets.nodetable import NodeTable
from widgets.textline import TextLine

HINTS = footer_hints(CLUSTER_KEYS)
HEATMAP_SHARE = 0.4  # of the body's height, at most, for the heatmap
MIN_WINDOW = 60.0  # seconds the charts span at least


class ClusterView(Protocol):
    """What the cluster screen reads of its source (``leet.sources.cluster.ClusterSource``, or a demo)."""

    store: Store

    @property
    def error(self) -> str: ...

    @property
    def interval(self) -> float: ...

    @property
    def range_s(self) -> float: ...

    def nodes(self) -> tuple[NodeState, ...]: ...

    def status(self) -> PrometheusStatus: ...

    def labels(self) -> tuple[str, ...]: ...

    def set_width(self, cells: int) -> None: ...


class NodeSortPicker(SortPicker):
    """The process table's sort chooser, worded for nodes."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Sort nodes by", classes="dialog-title")
            yield self.list
            yield Static("enter sort · the sorted column again reverses · esc cancel", classes="dialog-help")


class ClusterScreen(PauseActions, GridActions, ChartLook, Screen[None]):
    """A cluster through its Prometheus: ``ClusterScreen(source, labels="node1*")``."""

    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(CLUSTER_KEYS)]
    AUTO_FOCUS = ""

    def __init__(
        self,
        source: ClusterView,
        *,
        clock: Callable[[], float] = time.time,
        labels: LabelFilter | str | None = None,
        grid: tuple[int, int] = (3, 3),
        sidebar: bool = True,
        heatmap: bool = True,
        heat_metric: str = "util",
    ) -> None:
        super().__init__()
        self.source = source
        self._clock = clock
        self.labels = labels if isinstance(labels, LabelFilter) else LabelFilter.parse(labels)
        self._grid_size = grid
        self._sidebar_visible = sidebar
        self._heatmap_visible = heatmap
        self.heat_metric = metric_named(heat_metric).name
        self.chart_filter = ""
        self._modes: dict[str, str] = {}
        self.init_looks()
        self._all_specs: list[ChartSpec] = []
        self._spec_by_id: dict[str, ChartSpec] = {}
        self._specs_for: tuple | None = None  # (the roster version, node filter) the specs were grouped for
        self._drawn: tuple | None = None
        self._told_width = 0
        self._views: dict[str, tuple[tuple, ChartView]] = {}  # chart id → (what it was built from, the view)
        self._default_modes: dict[str, tuple[ChartSpec, str]] = {}  # chart id → (its spec, its default mode)
        self._cluster: tuple[NodeState, ...] = ()
        self._status: PrometheusStatus | None = None
        self._retry_seen: tuple[PrometheusStatus, float] | None = None  # a status with a retry, and when it was first seen

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="cluster-body"):
            with Vertical(id="cluster-sidebar"):
                yield NodeTable(id="nodes")
            with Vertical(id="cluster-main"):
                yield GpuHeatmap(id="heatmap")
                yield ChartGrid(*self._grid_size, id="grid")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.restore_layout(remembered_view(self.app, self.LAYOUT_NAME))
        self.query_one("#cluster-sidebar").display = self._sidebar_visible
        self.heatmap.display = self._heatmap_visible
        self.update_view(force=True)
        self._ticker = self.set_interval(1.0, self._tick)

    def on_screen_resume(self) -> None:
        self.update_view()

    # -- the remembered layout (leet.ui.layout_keeper) -------------------------------
    LAYOUT_NAME = "cluster"

    def remembered_layout(self) -> dict:
        return {
            "grid": [self.grid.rows, self.grid.cols],
            "nodes": self._sidebar_visible,
            "heatmap": self._heatmap_visible,
            "heat_metric": self.heat_metric,
            "sort": [self.table.sort, self.table.descending],
            "modes": dict(self._modes),
            **self.remembered_looks(zooms=False),
        }

    def restore_layout(self, saved: dict) -> None:
        """Take back what ``remembered_layout()`` gave, each value checked; one that is not valid is left at the start's."""
        grid = remembered_grid(saved.get("grid"))
        if grid:
            self.grid.set_grid(*grid)
        nodes, heatmap = remembered_switch(saved.get("nodes")), remembered_switch(saved.get("heatmap"))
        self._sidebar_visible = self._sidebar_visible if nodes is None else nodes
        self._heatmap_visible = self._heatmap_visible if heatmap is None else heatmap
        if isinstance(saved.get("heat_metric"), str):
            self.heat_metric = metric_named(saved["heat_metric"]).name
        sort = remembered_sort(saved.get("sort"), {key for key, _, _ in self.table.sort_choices()} | set(self.table.SORTS))
        if sort:
            self.table.set_sort(*sort)
        self._modes.update(remembered_modes(saved.get("modes"), MODES))
        self.restore_looks(saved, zooms=False)

    @property
    def grid(self) -> ChartGrid:
        return self.query_one("#grid", ChartGrid)

    @property
    def table(self) -> NodeTable:
        return self.query_one(NodeTable)

    @property
    def heatmap(self) -> GpuHeatmap:
        return self.query_one(GpuHeatmap)

    def on_resize(self, event) -> None:
        width, height = event.size
        self.query_one("#cluster-sidebar").styles.width = sidebar_width(width)
        self.heatmap.set_max_rows(max(4, int((height - 2) * HEATMAP_SHARE)))
        if self.is_mounted:
            self.call_after_refresh(self._draw_bars)

    # -- pulling data -----------------------------------------------------------------------
    def update_view(self, force: bool = False) -> None:
        """Redraw what is visible; cheap when neither the store nor the source's records changed."""
        if self.paused and not force:
            return
        nodes, status = self.source.nodes(), self.source.status()
        drawn = (self.source.store.version(), nodes, status, self.source.error)
        if not force and drawn == self._drawn:
            return
        self._drawn = drawn
        self._cluster, self._status = nodes, status
        with self.app.batch_update(), collection_paused():
            self._refresh_specs()
            self._draw_charts()
            self._draw_nodes()
            self._draw_heatmap()
            self._draw_bars()

    def _tick(self) -> None:
        # Ages move with the clock, not with the data: the header and the table's AGE column.
        if self.paused or self._status is None:
            return
        self._status = self.source.status()
        self._draw_nodes()
        self._draw_bars()

    def _refresh_specs(self) -> None:
        store = self.source.store
        wanted = (store.roster_version(CLUSTER_RUN), self.labels)
        if wanted != self._specs_for:
            self._specs_for = wanted
            self._all_specs = group((s for s in store.series(CLUSTER_RUN) if self.labels.matches(s.label)), order="symon")
        specs = filter_specs(self._all_specs, self.chart_filter)
        self._spec_by_id = {spec.chart: spec for spec in specs}
        self.grid.set_charts([spec.chart for spec in specs])

    def _x_range(self) -> tuple[float, float]:
        span = self.source.store.time_span(CLUSTER_RUN)
        if span is None:
            now = self._clock()
            return now - MIN_WINDOW, now
        return tail_window(span[0], span[1], max(MIN_WINDOW, self.source.range_s))

    def _draw_charts(self) -> None:
        visible = [(chart_id, widget) for chart_id, widget in self.grid.visible_charts() if chart_id in self._spec_by_id]
        if not visible:
            return
        store = self.source.store
        x_range = self._x_range()
        # A chart across 64 nodes' 512 series costs tens of milliseconds (spread most of all):
        # build its view again only when one of its series, its mode or its window moved.
        wanted: dict[str, tuple] = {}
        for chart_id, _ in visible:
            spec = self._spec_by_id[chart_id]
            mode = self._modes.get(chart_id) or self._default_mode(spec)
            wanted[chart_id] = (spec, mode, self.shown_range(chart_id, x_range), tuple(store.series_version(key) for key in spec.keys))
        stale = [chart_id for chart_id, key in wanted.items() if self._views.get(chart_id, (None,))[0] != key]
        since = min((wanted[chart_id][2][0] for chart_id in stale), default=x_range[0])
        snapshots = store.snapshot([key for chart_id in stale for key in self._spec_by_id[chart_id].keys], since=since)
        for chart_id in stale:
            spec, mode, window = wanted[chart_id][:3]
            self._views[chart_id] = (wanted[chart_id], chart_view(spec, snapshots, window, mode))
        for chart_id, widget in visible:
            self.show_view(widget, chart_id, self._views[chart_id][1])
        cells = max(widget.size.width for _, widget in visible)
        if cells and cells != self._told_width:
            # The source asks Prometheus for about one point per cell of the widest chart.
            self._told_width = cells
            self.source.set_width(cells)

    def _default_mode(self, spec: ChartSpec) -> str:
        """A chart's default mode, worked out once for its spec (hundreds of series, sorted by node)."""
        found = self._default_modes.get(spec.chart)
        if found is None or found[0] is not spec:
            found = self._default_modes[spec.chart] = (spec, default_mode(spec))
        return found[1]

    def _draw_nodes(self) -> None:
        if self._sidebar_visible:
            self.table.set_nodes(node_rows(self._cluster, self._clock(), self.source.interval, self.labels))

    def _node_names(self) -> list[str]:
        return node_order(self.source.labels(), self._cluster)

    def _draw_heatmap(self) -> None:
        if not self._heatmap_visible:
            return
        shown = self.labels.shown(self._node_names())
        latest = self.source.store.latest_values(CLUSTER_RUN)
        selected = self.table.selected_node if self._sidebar_visible else None
        self.heatmap.set_model(heatmap_model(metric_named(self.heat_metric), latest, self._cluster, shown, selected))

    def _counted_down(self, status: PrometheusStatus) -> PrometheusStatus:
        """``status`` with its retry countdown moved on by the time since the source said it."""
        if status.retry_in is None:
            self._retry_seen = None
            return status
        if self._retry_seen is None or self._retry_seen[0] != status:
            self._retry_seen = (status, self._clock())
        waited = self._clock() - self._retry_seen[1]
        return replace(status, retry_in=max(0.0, status.retry_in - waited))

    def _draw_bars(self) -> None:
        if self._status is None:
            return
        status = self._counted_down(self._status)
        width = self.size.width or self.app.size.width
        extra = []
        if self.labels.active:
            # On the right, which a narrow terminal never cuts: the node filter must stay in view.
            names = self._node_names()
            missing = self.labels.unmatched(names)
            note = clean(self.labels.describe(names)) + (" · no node " + clean(",".join(missing)) if missing else "")
            extra = [(f" {note} ·", "warn")]
        extra = self.pause_mark() + extra
        reserved = sum(len(text) for text, _ in extra)
        left, right = header_parts(status, self._cluster, self._clock(), self.source.interval, width, reserved)
        first, last, total = self.grid.page_range()
        if total:
            left.append((f" · charts {first}-{last} of {total}", "muted"))
        elif self.chart_filter and self._all_specs:
            left.append((" · no charts match", "warn"))
        else:
            left.append((" · no charts yet", "muted"))
        if self.chart_filter:
            kind = "regex" if is_regex(self.chart_filter) else "text"
            left.append((f" · filter ({kind}): {clean(self.chart_filter)}", "warn"))
        self.query_one("#header", TextLine).set_content(left, extra + right)
        problem = status_problem(status, self.source.error)
        self.query_one("#status", TextLine).set_content(*status_line(HINTS, problem, width))

    # -- messages ------------------------------------------------------------------------------
    def on_chart_grid_page_changed(self, event: ChartGrid.PageChanged) -> None:
        if self.is_mounted:
            self.call_after_refresh(self._redraw_charts)

    def _redraw_charts(self) -> None:
        self._draw_charts()
        self._draw_bars()

    def redraw_looks(self) -> None:
        self._draw_charts()

    def on_node_table_highlighted(self, event: NodeTable.Highlighted) -> None:
        self._draw_heatmap()

    def on_node_table_chosen(self, event: NodeTable.Chosen) -> None:
        only = LabelFilter().only(event.node)
        if self.labels == only:
            self.set_labels(LabelFilter())
            self.notify("Every node", timeout=1.5, markup=False)
        else:
            self.set_labels(only)
            self.notify(f"Only {clean(event.node)} (enter again: every node)", timeout=2, markup=False)

    def on_gpu_heatmap_node_clicked(self, event: GpuHeatmap.NodeClicked) -> None:
        if self._sidebar_visible and self.table.select_pid(event.node):
            self.table.focus()

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        self._apply_filter(event.target, event.pattern)

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self._apply_filter(event.target, event.pattern)
        if event.target == "nodes":
            self.table.focus()
        else:
            self.grid.focus_chart(0)

    def _apply_filter(self, target: str, pattern: str) -> None:
        if target == "nodes":
            self.table.set_filter(pattern)
            return
        self.chart_filter = pattern
        self._refresh_specs()
        self._redraw_charts()

    def active_grid(self) -> ChartGrid:
        return self.grid

    # -- actions ---------------------------------------------------------------------------------
    def action_settings(self) -> None:
        from leet.ui.screens.settings import SettingsScreen

        self.app.push_screen(SettingsScreen())

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(CLUSTER_KEYS, "cluster"))

    def action_quit(self) -> None:
        self.app.exit()

    def action_unfocus(self) -> None:
        self.set_focus(None)

    def action_cycle_focus(self, step: int) -> None:
        panes: list = ([self.table] if self._sidebar_visible else []) + [self.grid]
        current = self.table if self.table is self.focused else self.grid
        target = panes[(panes.index(current) + step) % len(panes)] if current in panes else self.grid
        if target is self.grid:
            self.grid.focus_chart(0)
        else:
            target.focus()

    def action_cycle_mode(self) -> None:
        chart_id = self.grid.focused_chart_id()
        if chart_id is None:
            self.notify("Focus a chart first (arrows or wasd)", timeout=2)
            return
        self._modes[chart_id] = next_mode(self._spec_by_id[chart_id], self._modes.get(chart_id))
        self._draw_charts()

    def action_pick_labels(self) -> None:
        names = self._node_names()
        if not names:
            self.notify("No nodes yet", timeout=2)
            return
        from leet.ui.screens.label_picker import LabelPicker

        def chosen(labels: LabelFilter | None) -> None:
            if labels is not None:
                self.set_labels(labels)

        self.app.push_screen(LabelPicker((), names, self.labels, self.set_labels), chosen)

    def set_labels(self, labels: LabelFilter) -> None:
        """Show only these nodes in the charts and the heatmap; the table marks the others."""
        self.labels = labels
        self.update_view(force=True)

    def action_filter(self, name: str) -> None:
        if name == "nodes":
            self._show_sidebar()
            self.query_one(FilterBar).open("nodes", "Node filter (name, regex or text):", self.table.pattern)
        else:
            self.query_one(FilterBar).open("charts", "Chart filter (title, key or node):", self.chart_filter)

    def action_clear_filter(self, name: str) -> None:
        self._apply_filter(name, "")

    def action_filter_focused(self) -> None:
        self.action_filter("nodes" if self._sidebar_visible and self.table is self.focused else "charts")

    def _show_sidebar(self) -> None:
        if not self._sidebar_visible:
            self.action_toggle_pane("nodes")

    def action_cycle_sort(self) -> None:
        self._show_sidebar()
        self.table.cycle_sort()

    def action_choose_sort(self) -> None:
        self._show_sidebar()
        table = self.table

        def chosen(key: str | None) -> None:
            if key is not None:
                table.sort_by(key)

        self.app.push_screen(NodeSortPicker(table.sort_choices(), table.sort, table.descending), chosen)

    def action_sort_column(self, step: int) -> None:
        self._show_sidebar()
        self.table.move_sort(step)

    def action_cycle_heat_metric(self) -> None:
        self.heat_metric = next_metric(self.heat_metric).name
        if not self._heatmap_visible:
            self.action_toggle_pane("heatmap")
        else:
            self._draw_heatmap()
        self.notify(f"Heatmap: {metric_named(self.heat_metric).title}", timeout=1.5, markup=False)

    def action_toggle_pane(self, name: str) -> None:
        if name == "nodes":
            self._sidebar_visible = not self._sidebar_visible
            pane = self.query_one("#cluster-sidebar")
            if not self._sidebar_visible and self.table is self.focused:
                self.set_focus(None)  # focus leaves with the table
            pane.display = self._sidebar_visible
            if self._sidebar_visible:
                self._draw_nodes()
            self._draw_heatmap()  # the table's cursor is the heatmap's selection only while the table shows
        else:
            self._heatmap_visible = not self._heatmap_visible
            self.heatmap.display = self._heatmap_visible
            self._draw_heatmap()
