"""A braille chart panel on Textual's Line API.

Rows are laid out once per data change (``chartframe.compose_rows``); the
``StyledLines`` base caches their Strips and repaints only changed cells, so a
chart whose newest column moved costs a few bytes instead of a full panel.

The mouse asks, the owner decides: the wheel, a drag and the pointer's moves
become messages (``ZoomRequest``, ``PanRequest``, ``PointerMoved``) that say
where across the plot they happened; the owner answers with a new view and
``set_crosshair``.
"""

from __future__ import annotations

from textual import events
from textual.message import Message

from widgets.chartframe import ChartView, Row, compose_rows, same_picture
from widgets.crosshair import plot_span, with_crosshair
from widgets.lines import StyledLines
from widgets.zoom import ZOOM_IN, ZOOM_OUT


class Chart(StyledLines, can_focus=True):
    """One chart panel; its owner feeds it ``ChartView``s."""

    DEFAULT_CSS = """
    Chart {
        width: 1fr;
        height: 1fr;
        min-width: 16;
        min-height: 5;
    }
    """

    class ChartMessage(Message):
        """Something the mouse did over a chart, at ``fraction`` (0 left edge, 1 right edge) across its plot."""

        def __init__(self, chart: "Chart", fraction: float) -> None:
            super().__init__()
            self.chart = chart
            self.fraction = fraction

        @property
        def control(self) -> "Chart":
            return self.chart

    class ZoomRequest(ChartMessage):
        """The wheel turned: zoom by ``factor`` around ``fraction``."""

        def __init__(self, chart: "Chart", fraction: float, factor: float) -> None:
            super().__init__(chart, fraction)
            self.factor = factor

    class PanRequest(ChartMessage):
        """A drag: move the x window by ``fraction`` of its width (positive: later)."""

    class PointerMoved(ChartMessage):
        """The pointer moved over the plot, without a button held."""

    def __init__(self, view: ChartView | None = None, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._view = view or ChartView(title="")
        self._crosshair: float | None = None
        self._plot = (0, 0)  # the plot's first cell and width, from the last layout
        self._drag_x: int | None = None

    @property
    def view(self) -> ChartView:
        return self._view

    @property
    def crosshair(self) -> float | None:
        return self._crosshair

    @property
    def plot_width(self) -> int:
        """Cells across the plot at the last layout (0 before one)."""
        return self._plot[1]

    def set_view(self, view: ChartView) -> None:
        old, self._view = self._view, view
        width, height = self.size
        # An idle series (a quiet network, a steady gauge) adds points that draw
        # nothing new: skip laying the panel out again for the same picture.
        if self._rows and (width, height) == self._laid_out_size and not self.ascii and same_picture(old, view, width, height):
            return
        self.relayout()

    def set_crosshair(self, x: float | None) -> None:
        """Read out the series at ``x`` (None: no crosshair)."""
        if x != self._crosshair:
            self._crosshair = x
            self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        # ``StyledLines`` lays out again whenever ``has_focus`` changes: the frame follows focus.
        rows = compose_rows(self._view, width, height, self.has_focus, ascii=self.ascii)
        self._plot = plot_span(rows) or (0, 0)
        if self._crosshair is not None:
            rows = with_crosshair(rows, self._view, self._crosshair)
        return rows

    # -- the mouse -------------------------------------------------------------------
    def _fraction(self, x: int) -> float:
        left, width = self._plot
        if width <= 1:
            return x / max(1, self.size.width - 1)
        return min(max((x - left) / (width - 1), 0.0), 1.0)

    def _wheel(self, event: events.MouseScrollUp | events.MouseScrollDown, factor: float) -> None:
        event.stop()
        self.post_message(self.ZoomRequest(self, self._fraction(event.x), factor))

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, ZOOM_IN)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, ZOOM_OUT)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._drag_x = event.x
        self.capture_mouse()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._drag_x = None
        self.release_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._drag_x is not None and event.button:
            moved = event.x - self._drag_x
            if moved and self._plot[1] > 0:
                self._drag_x = event.x
                # The picture follows the pointer: dragging right shows earlier data.
                self.post_message(self.PanRequest(self, -moved / self._plot[1]))
            return
        self.post_message(self.PointerMoved(self, self._fraction(event.x)))
