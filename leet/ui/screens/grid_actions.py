"""Chart-grid keys shared by every screen that shows grids of charts."""

from __future__ import annotations

from typing import cast

from textual.screen import Screen

from leet.model.catalog import ChartSpec
from leet.ui.views.charts import default_mode, modes_for
from widgets.grid import ChartGrid


def next_mode(spec: ChartSpec, current: str | None) -> str:
    """The mode ``y`` moves a chart to from ``current`` (None: the chart's default).

    Only the modes the chart offers take part ("spread" needs several nodes);
    a mode it does not offer moves to the first one.
    """
    modes = modes_for(spec)
    current = current or default_mode(spec)
    if current not in modes:
        return modes[0]
    return modes[(modes.index(current) + 1) % len(modes)]


class GridActions:
    """Move focus, turn pages and resize the grid that ``active_grid()`` names."""

    def active_grid(self) -> ChartGrid:
        raise NotImplementedError

    def action_move(self, dx: int, dy: int) -> None:
        self.active_grid().move_focus(dx, dy)

    def action_page(self, step: int) -> None:
        grid = self.active_grid()
        grid.turn_page(grid.page + step)

    def action_page_to(self, page: int) -> None:
        grid = self.active_grid()
        grid.turn_page(page if page >= 0 else grid.page_count - 1)

    def action_grid(self, d_rows: int, d_cols: int) -> None:
        grid = self.active_grid()
        max_rows, max_cols = grid.max_fit()
        grid.set_grid(max(1, min(grid.rows + d_rows, max_rows)), max(1, min(grid.cols + d_cols, max_cols)))
        cast(Screen, self).notify(f"grid {grid.rows}×{grid.cols}", timeout=1.5)  # mixed into a Screen
