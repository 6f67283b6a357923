"""How many charts a grid fits: pure, no Textual (the CLI sizes requests with it before Textual loads)."""

from __future__ import annotations

MIN_CELL_WIDTH = 28
MIN_CELL_HEIGHT = 7


def fit_grid(rows: int, cols: int, width: int, height: int) -> tuple[int, int]:
    """The configured grid, shrunk until every cell has room for a chart."""
    cols = max(1, min(cols, width // MIN_CELL_WIDTH or 1))
    rows = max(1, min(rows, height // MIN_CELL_HEIGHT or 1))
    return rows, cols
