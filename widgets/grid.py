"""A paged, focusable grid of charts that reflows to fill its space.

The grid owns a fixed pool of ``Chart`` widgets and assigns the charts of the
current page to them, so paging never mounts or unmounts anything. Which
charts exist and what they show is the owner's business: the grid only knows
chart ids, pages and focus. Given a title, the grid heads itself with it and
its page counter (``System [1-4 of 13]``), as the text panes beside it do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget

from widgets.chart import Chart
from widgets.chartframe import Row, fit
from widgets.gridfit import fit_grid
from widgets.lines import StyledLines


@dataclass(frozen=True)
class PageLayout:
    """Where the charts of one page go: columns, rows, and the last chart's span."""

    cols: int
    rows: int
    count: int
    last_span: int


def page_layout(count: int, rows: int, cols: int) -> PageLayout:
    """Reflow ``count`` charts so they fill the page: no blank cells left over."""
    if count <= 0:
        return PageLayout(1, 1, 0, 1)
    cols = min(cols, count)
    rows = min(rows, math.ceil(count / cols))
    spare = rows * cols - count
    return PageLayout(cols, rows, count, 1 + spare)


class GridCaption(StyledLines):
    """The grid's title and which of its charts are on screen; highlighted while one of them has focus."""

    DEFAULT_CSS = """
    GridCaption {
        dock: top;
        height: 1;
        width: 1fr;
    }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = title
        self._shown: tuple[int, int, int] = (0, 0, 0)
        self._focused = False

    def show(self, page_range: tuple[int, int, int], focused: bool) -> None:
        if (page_range, focused) != (self._shown, self._focused):
            self._shown, self._focused = page_range, focused
            self.relayout()

    def text(self) -> str:
        first, last, total = self._shown
        return f"{self.title} [{first}-{last} of {total}]" if total else f"{self.title} · no charts"

    def build_rows(self, width: int, height: int) -> list[Row]:
        style = "title-focus" if self._focused else "title"
        return [[(fit(self.text(), width).ljust(width), style)]] + [[(" " * width, "empty")] for _ in range(height - 1)]


class ChartGrid(Widget):
    """Pages of charts; arrows/wasd move focus, n/N page."""

    DEFAULT_CSS = """
    ChartGrid {
        layout: grid;
        grid-size: 1 1;
        grid-gutter: 0 0;
        height: 1fr;
        width: 1fr;
    }
    """

    class PageChanged(Message):
        """The visible charts changed (page, filter, size or chart set)."""

        def __init__(self, grid: "ChartGrid") -> None:
            super().__init__()
            self.grid = grid

        @property
        def control(self) -> "ChartGrid":
            return self.grid

    def __init__(self, rows: int = 3, cols: int = 3, *, id: str | None = None, title: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = rows
        self.cols = cols
        self._chart_ids: list[str] = []
        self._page = 0
        self._pool: list[Chart] = []
        self._fitted = (rows, cols)
        self._caption = GridCaption(title) if title is not None else None

    def compose(self) -> ComposeResult:
        if self._caption is not None:
            yield self._caption
        self._pool = [self._new_chart(i) for i in range(self.rows * self.cols)]
        yield from self._pool

    @staticmethod
    def _new_chart(index: int) -> Chart:
        chart = Chart(id=f"chart-{index}")
        chart.display = False
        return chart

    def _ensure_pool(self, size: int) -> None:
        """Mount more chart widgets when the grid grows; never fewer."""
        if size <= len(self._pool):
            return
        extra = [self._new_chart(i) for i in range(len(self._pool), size)]
        self._pool.extend(extra)
        self.mount_all(extra)

    # -- what is shown -------------------------------------------------
    @property
    def per_page(self) -> int:
        rows, cols = self._fitted
        return rows * cols

    @property
    def page(self) -> int:
        return self._page

    @property
    def page_count(self) -> int:
        return max(1, math.ceil(len(self._chart_ids) / self.per_page))

    @property
    def chart_ids(self) -> list[str]:
        return list(self._chart_ids)

    def visible_charts(self) -> list[tuple[str, Chart]]:
        """(chart id, widget) for every chart on the current page."""
        start = self._page * self.per_page
        ids = self._chart_ids[start : start + self.per_page]
        return list(zip(ids, self._pool))

    def page_range(self) -> tuple[int, int, int]:
        """1-based first and last chart on this page, and the total."""
        total = len(self._chart_ids)
        if total == 0:
            return 0, 0, 0
        start = self._page * self.per_page
        return start + 1, min(total, start + self.per_page), total

    def set_charts(self, chart_ids: list[str]) -> None:
        """Replace the chart list, keeping the focused chart in view where possible."""
        if chart_ids == self._chart_ids:
            return
        focused_id = self.focused_chart_id()
        self._chart_ids = list(chart_ids)
        if focused_id in self._chart_ids:
            self._page = self._chart_ids.index(focused_id) // self.per_page
        self._page = min(self._page, self.page_count - 1)
        self._apply_page(focus_id=focused_id)

    def _chart_area(self) -> tuple[int, int]:
        """Width and height the charts share: the grid less its caption."""
        width, height = self.size
        return width, max(0, height - 1) if self._caption is not None else height

    def max_fit(self) -> tuple[int, int]:
        """The most rows and columns this grid's size can show."""
        width, height = self._chart_area()
        return fit_grid(9, 9, width, height) if width and height else (9, 9)

    def set_grid(self, rows: int, cols: int) -> None:
        self.rows, self.cols = max(1, min(9, rows)), max(1, min(9, cols))
        self._refit()

    # -- focus and paging ----------------------------------------------
    def _focused_widget(self) -> Widget | None:
        # The screen's record, not ``has_focus``: that follows only once the Focus event is handled,
        # and keys typed quickly arrive before it.
        return self.screen.focused if self.is_attached else None

    def focused_index(self) -> int | None:
        focused = self._focused_widget()
        for index, chart in enumerate(self._pool):
            if chart is focused:
                return index
        return None

    def focused_chart_id(self) -> str | None:
        index = self.focused_index()
        visible = self.visible_charts()
        if index is None or index >= len(visible):
            return None
        return visible[index][0]

    def focus_chart(self, index: int) -> None:
        visible = self.visible_charts()
        if visible:
            # At once, so that the next key already moves from here.
            self.screen.set_focus(self._pool[max(0, min(index, len(visible) - 1))])

    def move_focus(self, dx: int, dy: int) -> None:
        """Move focus within the page; stepping past an edge turns the page."""
        count = len(self.visible_charts())
        if count == 0:
            return
        layout = page_layout(count, *self._fitted)
        index = self.focused_index()
        if index is None:
            self.focus_chart(0)
            return
        target = index + dx + dy * layout.cols
        if target < 0:
            if self._page > 0:
                self.turn_page(self._page - 1)
                self.focus_chart(len(self.visible_charts()) - 1)
            return
        if target >= count:
            if self._page < self.page_count - 1:
                self.turn_page(self._page + 1)
                self.focus_chart(0)
            return
        self.focus_chart(target)

    def turn_page(self, page: int) -> None:
        page = max(0, min(page, self.page_count - 1))
        had_focus = self.focused_index() is not None
        if page != self._page:
            self._page = page
            self._apply_page()
        if had_focus:
            self.focus_chart(0)

    # -- layout ----------------------------------------------------------
    def on_resize(self) -> None:
        self._refit()

    def _refit(self) -> None:
        width, height = self._chart_area()
        fitted = fit_grid(self.rows, self.cols, width, height) if width and height else (self.rows, self.cols)
        if fitted != self._fitted:
            focused_id = self.focused_chart_id()
            self._fitted = fitted
            if focused_id in self._chart_ids:
                self._page = self._chart_ids.index(focused_id) // self.per_page
            self._page = min(self._page, self.page_count - 1)
            self._apply_page(focus_id=focused_id)
        else:
            self._apply_page()

    def _apply_page(self, focus_id: str | None = None) -> None:
        self._ensure_pool(self.per_page)
        visible = self.visible_charts()
        layout = page_layout(len(visible), *self._fitted)
        self.styles.grid_size_columns = layout.cols
        self.styles.grid_size_rows = layout.rows
        for index, chart in enumerate(self._pool):
            shown = index < len(visible)
            if chart.display != shown:
                chart.display = shown
            span = layout.last_span if shown and index == len(visible) - 1 else 1
            if chart.styles.column_span != span:
                chart.styles.column_span = span
        if focus_id is not None:
            ids = [chart_id for chart_id, _ in visible]
            if focus_id in ids:
                self.focus_chart(ids.index(focus_id))
        self._show_caption()
        self.post_message(self.PageChanged(self))

    def _show_caption(self) -> None:
        if self._caption is not None:
            self._caption.show(self.page_range(), self.focused_index() is not None)

    def on_descendant_focus(self) -> None:
        self._show_caption()

    def on_descendant_blur(self) -> None:
        self._show_caption()
