"""Zoom, crosshair and smoothing of the charts of a screen: the keys, the mouse, and what each chart is dressed in.

A screen mixes in ``ChartLook`` beside ``GridActions``, draws each chart with
``shown_range`` (the x window) and ``show_view`` (smoothing, the zoom's mark,
the crosshair), and says how to redraw (``redraw_looks``). The state lies in
plain attributes keyed like the screen's chart modes:

- ``chart_zooms``: chart key → the x window it is zoomed to (absent: the whole range);
- ``chart_smoothing``: chart key → its EMA weight (absent: ``smoothing_all``);
- ``crosshair``: ``(chart key, x, x kind)`` or None; with ``crosshair_synced``
  every chart of that x kind on the page shows it.

Each chart zooms on its own: charts that share an axis keep their own
windows, so zooming into one loss curve leaves the others whole; the
crosshair is what lines charts up (``V``).

The smoothing and the crosshair's sync are remembered with the screen's
layout (``remembered_looks`` / ``restore_looks``), and so are the zooms of
charts whose x axis stands still (a run's steps, its wall clock); a
remembered window waits until its chart shows data that reaches it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, cast

from textual.screen import Screen

from leet.config.layout_state import MAX_TEXT, remembered_switch, remembered_weight, remembered_weights, remembered_windows
from widgets.chart import Chart
from widgets.chartframe import ChartView
from widgets.grid import ChartGrid
from widgets.smoothing import WEIGHTS, next_weight, smoothed_view, weight_label
from widgets.zoom import Window, anchor_at, pan_window, zoom_label, zoom_window

# Charts whose smoothing (and zoom) is remembered at most, the latest added: the layout file takes 1000 entries an object.
REMEMBERED_CHARTS = 200


class ChartLook:
    """Zoom (z Z x , . wheel, drag), crosshair (v V , . pointer) and smoothing (e E) for a screen's charts."""

    chart_zooms: dict[str, Window]
    chart_smoothing: dict[str, float]
    smoothing_all: float
    crosshair: tuple[str, float, str] | None
    crosshair_synced: bool

    def init_looks(self) -> None:
        self.chart_zooms = {}
        self.chart_smoothing = {}
        self.smoothing_all = 0.0
        self.crosshair = None
        self.crosshair_synced = False
        self._full_ranges: dict[str, Window] = {}
        self._key_of: dict[Chart, str] = {}
        self._remembered_zooms: dict[str, Window] = {}  # restored, waiting for their charts' data to reach them

    # -- what a screen provides ---------------------------------------------------
    def active_grid(self) -> ChartGrid:
        raise NotImplementedError

    def look_key(self, grid: ChartGrid, chart_id: str) -> str:
        """The key a chart's look is kept under (the screen's key for its mode)."""
        return chart_id

    def redraw_looks(self) -> None:
        raise NotImplementedError

    # -- drawing ------------------------------------------------------------------
    def shown_range(self, key: str, full: Window) -> Window:
        """The x window chart ``key`` shows, its whole range being ``full``."""
        self._full_ranges[key] = full
        waiting = self._remembered_zooms.get(key)
        # A loading run's range grows: a remembered window is taken once the range reaches into it.
        if waiting is not None and (key in self.chart_zooms or (waiting[0] < full[1] and full[0] < waiting[1])):
            del self._remembered_zooms[key]
            self.chart_zooms.setdefault(key, waiting)
        return self.chart_zooms.get(key, full)

    def smoothing_of(self, key: str) -> float:
        return self.chart_smoothing.get(key, self.smoothing_all)

    def dressed(self, key: str, view: ChartView) -> ChartView:
        """``view`` smoothed as the chart asks, its title marked when zoomed."""
        view = smoothed_view(view, self.smoothing_of(key))
        window = self.chart_zooms.get(key)
        if window is not None:
            view = replace(view, title=f"{view.title} {zoom_label(window, view.x_kind)}")
        return view

    def show_view(self, widget: Chart, key: str, view: ChartView) -> None:
        """Hand ``widget`` chart ``key``'s view, dressed, and its crosshair."""
        self._key_of[widget] = key
        widget.set_view(self.dressed(key, view))
        widget.set_crosshair(self._crosshair_for(key, view.x_kind))

    def _crosshair_for(self, key: str, x_kind: str) -> float | None:
        if self.crosshair is None:
            return None
        held, x, kind = self.crosshair
        return x if held == key or (self.crosshair_synced and kind == x_kind) else None

    # -- the focused chart -------------------------------------------------------
    def _focused(self, quiet: bool = False) -> tuple[str, Chart] | None:
        grid = self.active_grid()
        chart_id = grid.focused_chart_id()
        if chart_id is None:
            if not quiet:
                cast(Screen, self).notify("Focus a chart first (arrows or wasd)", timeout=2)
            return None
        widget = dict(grid.visible_charts())[chart_id]
        return self.look_key(grid, chart_id), widget

    # -- zoom ---------------------------------------------------------------------
    def _zoom(self, key: str, fraction: float | None, factor: float) -> None:
        full = self._full_ranges.get(key)
        if full is None:
            return
        window = self.chart_zooms.get(key, full)
        if fraction is not None:
            anchor = anchor_at(window, fraction)
        elif self.crosshair is not None and self.crosshair[0] == key:
            anchor = self.crosshair[1]
        else:
            # Around the newest data while the window shows it (a live run), else the middle.
            anchor = anchor_at(window, 1.0 if window[1] >= full[1] else 0.5)
        zoomed = zoom_window(window, full, anchor, factor)
        if zoomed is None:
            self.chart_zooms.pop(key, None)
        else:
            self.chart_zooms[key] = zoomed
        self.redraw_looks()

    def _pan(self, key: str, share: float) -> None:
        window = self.chart_zooms.get(key)
        full = self._full_ranges.get(key)
        if window is None or full is None:
            return
        self.chart_zooms[key] = pan_window(window, full, 1, share)
        self.redraw_looks()

    def action_zoom(self, factor: float) -> None:
        focused = self._focused()
        if focused is not None:
            self._zoom(focused[0], None, factor)

    def action_reset_zoom(self) -> None:
        focused = self._focused()
        if focused is not None and self.chart_zooms.pop(focused[0], None) is not None:
            self.redraw_looks()

    def action_step(self, direction: int) -> None:
        """``,``/``.``: move the crosshair a column when it is on the focused chart, else pan."""
        focused = self._focused()
        if focused is None:
            return
        key, widget = focused
        if self.crosshair is not None and self.crosshair[0] == key:
            lo, hi = widget.view.x_range
            column = (hi - lo) / max(1, widget.plot_width)
            x = min(max(self.crosshair[1] + direction * column, lo), hi)
            self.crosshair = (key, x, self.crosshair[2])
            self.redraw_looks()
            return
        self._pan(key, direction * 0.25)

    # -- crosshair ----------------------------------------------------------------
    def action_toggle_crosshair(self) -> None:
        focused = self._focused()
        if focused is None:
            return
        key, widget = focused
        if self.crosshair is not None and self.crosshair[0] == key:
            self.crosshair = None
        else:
            view = widget.view
            self.crosshair = (key, anchor_at(view.x_range, 0.5), view.x_kind)
        self.redraw_looks()

    def action_sync_crosshair(self) -> None:
        self.crosshair_synced = not self.crosshair_synced
        cast(Screen, self).notify("crosshair on every chart of the same x axis" if self.crosshair_synced else "crosshair on one chart", timeout=1.5)
        self.redraw_looks()

    # -- smoothing ----------------------------------------------------------------
    def action_smooth(self) -> None:
        focused = self._focused()
        if focused is not None:
            key = focused[0]
            self.chart_smoothing[key] = next_weight(self.smoothing_of(key))
            self.redraw_looks()

    def action_smooth_all(self) -> None:
        self.smoothing_all = next_weight(self.smoothing_all)
        self.chart_smoothing.clear()
        weight = self.smoothing_all
        cast(Screen, self).notify(f"smoothing {weight_label(weight)} on every chart" if weight else "smoothing off", timeout=1.5, markup=False)
        self.redraw_looks()

    # -- remembered with the layout ------------------------------------------------
    def remembered_looks(self, zooms: bool = True) -> dict[str, Any]:
        """The looks as JSON values for the layout file; ``zooms`` only where the x axis stands still."""
        looks: dict[str, Any] = {
            "smoothing": latest(self.chart_smoothing),
            "smoothing_all": self.smoothing_all,
            "crosshair_synced": self.crosshair_synced,
        }
        if zooms:
            windows = {**self._remembered_zooms, **self.chart_zooms}
            looks["zooms"] = {key: list(window) for key, window in latest(windows).items()}
        return looks

    def restore_looks(self, saved: Mapping[str, Any], zooms: bool = True) -> None:
        """Take back what ``remembered_looks`` gave, each value checked; one that is not valid is left as it is."""
        self.chart_smoothing.update(remembered_weights(saved.get("smoothing"), WEIGHTS))
        weight = remembered_weight(saved.get("smoothing_all"), WEIGHTS)
        if weight is not None:
            self.smoothing_all = weight
        synced = remembered_switch(saved.get("crosshair_synced"))
        if synced is not None:
            self.crosshair_synced = synced
        if zooms:
            self._remembered_zooms.update(remembered_windows(saved.get("zooms")))

    # -- the mouse ----------------------------------------------------------------
    def on_chart_zoom_request(self, message: Chart.ZoomRequest) -> None:
        key = self._key_of.get(message.chart)
        if key is not None:
            self._zoom(key, message.fraction, message.factor)

    def on_chart_pan_request(self, message: Chart.PanRequest) -> None:
        key = self._key_of.get(message.chart)
        if key is not None:
            self._pan(key, message.fraction)

    def on_chart_pointer_moved(self, message: Chart.PointerMoved) -> None:
        """The pointer places a crosshair that is on: on the chart under it."""
        key = self._key_of.get(message.chart)
        if key is None or self.crosshair is None:
            return
        view = message.chart.view
        x = anchor_at(view.x_range, message.fraction)
        if self.crosshair[:2] != (key, x):
            self.crosshair = (key, x, view.x_kind)
            self.redraw_looks()



def latest(looks: Mapping[str, Any]) -> dict[str, Any]:
    """The last ``REMEMBERED_CHARTS`` entries of ``looks`` whose key the layout file can hold."""
    fitting = [(key, value) for key, value in looks.items() if len(key) <= MAX_TEXT]
    return dict(fitting[-REMEMBERED_CHARTS:])
