"""The cluster screen's proportions, pure: what ``leet cluster`` needs before Textual loads.

The history's step is chosen for the chart width (a point a cell), and
the first query goes out while Textual imports, so the CLI works the width
out from the terminal's columns the way the screen will lay it out.
"""

from __future__ import annotations

import math

from widgets.gridfit import fit_grid

SIDEBAR_MIN, SIDEBAR_MAX, SIDEBAR_SHARE = 28, 46, 0.3  # the node table's width, as symon's sidebar
GRID = (3, 3)  # rows, columns of charts


def sidebar_width(columns: int) -> int:
    return max(SIDEBAR_MIN, min(SIDEBAR_MAX, int(columns * SIDEBAR_SHARE)))


def chart_cells(columns: int, grid: tuple[int, int] = GRID, sidebar: bool = True) -> int:
    """The widest chart's width in cells, for a terminal ``columns`` wide."""
    main = columns - (sidebar_width(columns) if sidebar else 0)
    _, cols = fit_grid(grid[0], grid[1], main, 10 * grid[0] * 7)
    return max(1, math.ceil(main / cols))
