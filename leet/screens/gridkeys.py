"""Chart-grid keys shared by every screen that shows grids of charts."""

from __future__ import annotations

from widgets.grid import ChartGrid


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
        self.notify(f"grid {grid.rows}×{grid.cols}", timeout=1.5)
