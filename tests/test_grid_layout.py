from widgets.grid import page_layout
from widgets.gridfit import fit_grid


def test_page_layout_fills_the_page():
    assert page_layout(9, 3, 3) == page_layout(9, 3, 3)
    layout = page_layout(2, 3, 3)
    assert (layout.cols, layout.rows, layout.last_span) == (2, 1, 1)
    layout = page_layout(5, 3, 3)
    assert (layout.cols, layout.rows) == (3, 2)
    assert layout.last_span == 2  # the last chart takes the spare cell
    assert page_layout(1, 3, 3).cols == 1


def test_fit_grid_shrinks_to_the_minimum_cell():
    assert fit_grid(3, 3, 120, 46) == (3, 3)
    rows, cols = fit_grid(3, 3, 60, 20)
    assert cols == 2 and rows == 2
    assert fit_grid(3, 3, 84, 30)[1] == 3
    assert fit_grid(3, 3, 10, 3) == (1, 1)
