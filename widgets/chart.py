"""A braille chart panel on Textual's Line API.

Rows are laid out once per data change (``chartframe.compose_rows``); the
``StyledLines`` base caches their Strips and repaints only changed cells, so a
chart whose newest column moved costs a few bytes instead of a full panel.
"""

from __future__ import annotations

from widgets.chartframe import ChartView, Row, compose_rows, same_picture
from widgets.lines import StyledLines


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

    def __init__(self, view: ChartView | None = None, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._view = view or ChartView(title="")

    @property
    def view(self) -> ChartView:
        return self._view

    def set_view(self, view: ChartView) -> None:
        old, self._view = self._view, view
        width, height = self.size
        # An idle series (a quiet network, a steady gauge) adds points that draw
        # nothing new: skip laying the panel out again for the same picture.
        if self._rows and (width, height) == self._laid_out_size and not self.ascii and same_picture(old, view, width, height):
            return
        self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        # ``StyledLines`` lays out again whenever ``has_focus`` changes: the frame follows focus.
        return compose_rows(self._view, width, height, self.has_focus, ascii=self.ascii)
