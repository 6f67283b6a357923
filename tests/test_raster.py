"""Line and heatmap rasterising: envelopes, gaps, clipping, log scale, bands."""

from __future__ import annotations

import math
from collections import deque

import pytest

from widgets.braille import BRAILLE_BASE
from widgets.glyphs import heat_glyph
from widgets.raster import (
    BAND,
    BAND_MIDDLE,
    HEAT_GLYPH,
    SeriesView,
    heatmap_layout,
    render_band,
    render_heatmap,
    render_lines,
    y_bounds,
)

NAN = math.nan
INF = math.inf

_BITS = {0x01: (0, 0), 0x02: (0, 1), 0x04: (0, 2), 0x40: (0, 3),
         0x08: (1, 0), 0x10: (1, 1), 0x20: (1, 2), 0x80: (1, 3)}


def dots(rows) -> set[tuple[int, int]]:
    """Lit dots (x, y) read back from rendered rows."""
    found = set()
    for r, row in enumerate(rows):
        text = "".join(t for t, _ in row)
        for c, char in enumerate(text):
            bits = 0 if char == " " else ord(char) - BRAILLE_BASE
            for bit, (dx, dy) in _BITS.items():
                if bits & bit:
                    found.add((c * 2 + dx, r * 4 + dy))
    return found


def owners(rows) -> list[list[int]]:
    """Owner of every cell, row by row."""
    return [[owner for text, owner in row for _ in text] for row in rows]


def columns_of(found: set[tuple[int, int]]) -> dict[int, set[int]]:
    by_column: dict[int, set[int]] = {}
    for x, y in found:
        by_column.setdefault(x, set()).add(y)
    return by_column


def assert_shape(rows, width: int, height: int) -> None:
    assert len(rows) == height
    for row in rows:
        assert sum(len(text) for text, _ in row) == width


# ------------------------------------------------------------------ lines


def test_two_points_are_joined_corner_to_corner() -> None:
    rows = render_lines([SeriesView.points([0, 10], [0, 10])], 5, 2, (0, 10), (0, 10))
    assert_shape(rows, 5, 2)
    found = dots(rows)
    assert (0, 7) in found and (9, 0) in found
    assert set(columns_of(found)) == set(range(10)), "no column skipped"


def test_every_row_covers_the_width_with_merged_runs() -> None:
    t = list(range(50))
    series = [SeriesView.points(t, [math.sin(i / 5) for i in t]),
              SeriesView.points(t, [math.cos(i / 5) for i in t])]
    rows = render_lines(series, 17, 5, (0, 49), (-1, 1))
    assert_shape(rows, 17, 5)
    for row in rows:
        found = [owner for _, owner in row]
        assert all(a != b for a, b in zip(found, found[1:]))


def test_dense_sine_draws_an_envelope_not_a_block() -> None:
    n, width, height = 10_000, 20, 6
    t = list(range(n))
    values = [math.sin(2 * math.pi * 3 * i / n) for i in t]
    rows = render_lines([SeriesView.points(t, values)], width, height, (0, n - 1), (-1, 1))
    by_column = columns_of(dots(rows))
    dot_w, dot_h = width * 2, height * 4

    expected: dict[int, list[int]] = {}
    for ti, v in zip(t, values):
        x = min(int(ti * dot_w / (n - 1)), dot_w - 1)
        y = round((1 - v) * (dot_h - 1) / 2)
        expected.setdefault(x, []).append(y)
    for x, ys in expected.items():
        top, bottom = min(ys), max(ys)
        lit_rows = by_column[x]
        assert set(range(top, bottom + 1)) <= lit_rows, f"column {x} misses part of its span"
        assert min(lit_rows) >= top - 1 and max(lit_rows) <= bottom + 1, f"column {x} overdrawn"
    assert sum(len(r) for r in by_column.values()) < dot_w * dot_h / 2


def test_a_single_spike_among_many_points_survives() -> None:
    n = 20_000
    values = [0.0] * n
    values[12_345] = 1.0
    rows = render_lines([SeriesView.points(list(range(n)), values)], 10, 3, (0, n - 1), (0, 1))
    found = dots(rows)
    assert any(y == 0 for _, y in found), "the spike reaches the top row"
    assert all(y in (0, 11) or x in (12, 13) for x, y in found)


def test_buckets_draw_from_lo_to_hi() -> None:
    view = SeriesView(t=[5.0], lo=[2.0], hi=[8.0], mean=[5.0])
    rows = render_lines([view], 5, 3, (0, 10), (0, 10))
    found = dots(rows)
    assert {x for x, _ in found} == {5}
    ys = sorted(y for _, y in found)
    assert ys == list(range(ys[0], ys[-1] + 1))
    assert ys[0] == round((10 - 8) * 11 / 10) and ys[-1] == round((10 - 2) * 11 / 10)


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_non_finite_values_leave_a_gap(bad: float) -> None:
    t = [0, 1, 2, 3, 4, 5, 6]
    values = [1.0, 1.0, 1.0, bad, 1.0, 1.0, 1.0]
    rows = render_lines([SeriesView.points(t, values)], 14, 2, (0, 6), (0, 2))
    drawn = set(columns_of(dots(rows)))
    x_of = {i: min(int(i * 28 / 6), 27) for i in t}
    assert x_of[2] in drawn and x_of[4] in drawn
    assert not drawn & set(range(x_of[2] + 1, x_of[4])), "no line across the gap"


def test_points_outside_the_time_range_are_clipped() -> None:
    t = [-50, -20, 0, 5, 10, 30, 80]
    rows = render_lines([SeriesView.points(t, [9, 9, 5, 5, 5, 1, 1])], 5, 2, (0, 10), (0, 10))
    assert_shape(rows, 5, 2)
    found = dots(rows)
    assert {x for x, _ in found} <= set(range(10))


def test_a_line_from_outside_enters_through_the_left_edge() -> None:
    rows = render_lines([SeriesView.points([-100, 100], [5, 5])], 5, 2, (0, 10), (0, 10))
    found = dots(rows)
    assert {x for x, _ in found} == set(range(10))
    assert len({y for _, y in found}) == 1


def test_values_beyond_the_y_range_sit_on_the_edge() -> None:
    rows = render_lines([SeriesView.points([0, 10], [1e6, -1e6])], 3, 2, (0, 10), (0, 1))
    found = dots(rows)
    assert (0, 0) in found and (5, 7) in found


def test_each_series_owns_its_cells_and_later_ones_sit_on_top() -> None:
    t = [0, 10]
    low = SeriesView.points(t, [1, 1])
    high = SeriesView.points(t, [9, 9])
    rows = render_lines([low, high, SeriesView.points(t, [9, 9])], 4, 3, (0, 10), (0, 10))
    cells = owners(rows)
    assert set(cells[0]) == {2}, "the last series drawn on the same cells wins"
    assert set(cells[2]) == {0}
    assert set(cells[1]) == {-1}


def test_log_scale_spaces_decades_evenly() -> None:
    view = SeriesView.points([0, 1, 2, 3], [1, 10, 100, 1000])
    rows = render_lines([view], 2, 4, (0, 3), (1, 1000), log_y=True)
    assert {(0, 15), (1, 10), (2, 5), (3, 0)} <= dots(rows)


def test_log_scale_skips_non_positive_points() -> None:
    view = SeriesView.points([0, 1, 2], [10, 0, 10])
    rows = render_lines([view], 3, 2, (0, 2), (1, 100), log_y=True)
    drawn = set(columns_of(dots(rows)))
    assert drawn == {0, 5}, "the zero is a gap, its neighbours still show"


def test_log_scale_with_a_zero_lower_bound_uses_the_data() -> None:
    view = SeriesView.points([0, 1], [0.5, 50])
    rows = render_lines([view], 2, 2, (0, 1), (0, 50), log_y=True)
    found = dots(rows)
    assert (0, 7) in found and (3, 0) in found


@pytest.mark.parametrize(
    ("x_range", "y_range"),
    [((5, 5), (0, 1)), ((0, 10), (3, 3)), ((NAN, 1), (0, 1)), ((0, 1), (0, INF)), ((10, 0), (1, 0))],
)
def test_odd_ranges_never_crash(x_range, y_range) -> None:
    rows = render_lines([SeriesView.points([0, 5, 10], [0, 3, 1])], 6, 3, x_range, y_range)
    assert_shape(rows, 6, 3)


def test_flat_ranges_still_show_the_points() -> None:
    rows = render_lines([SeriesView.points([5], [3])], 4, 2, (5, 5), (3, 3))
    assert len(dots(rows)) == 1


def test_no_series_no_size_no_points() -> None:
    assert_shape(render_lines([], 4, 2, (0, 1), (0, 1)), 4, 2)
    assert render_lines([SeriesView.points([0], [1])], 0, 2, (0, 1), (0, 1)) == [[], []]
    assert render_lines([SeriesView.points([0], [1])], 4, 0, (0, 1), (0, 1)) == []
    assert dots(render_lines([SeriesView.points([], [])], 4, 2, (0, 1), (0, 1))) == set()


def test_junk_times_are_skipped_not_fatal() -> None:
    view = SeriesView.points([0, NAN, 2, INF, 5], [1, 2, 3, 4, 5])
    assert_shape(render_lines([view], 5, 2, (0, 5), (0, 5)), 5, 2)
    assert_shape(render_heatmap([view], 5, 2, (0, 5), (0, 5)), 5, 2)


def test_deques_are_accepted() -> None:
    t, v = deque([0, 5, 10]), deque([0.0, 5.0, 10.0])
    rows = render_lines([SeriesView.points(t, v)], 5, 2, (2, 10), (0, 10))
    assert (9, 0) in dots(rows)


# --------------------------------------------------------------- y_bounds


def test_y_bounds_takes_finite_extremes_inside_the_window() -> None:
    inside = SeriesView(t=[0, 1, 2, 3], lo=[-9, 1, NAN, 2], hi=[99, 4, INF, 6], mean=[0, 2, NAN, 4])
    other = SeriesView.points([2, 50], [-3, 1000])
    assert y_bounds([inside, other], 1, 3) == (-3, 6)


def test_y_bounds_none_when_nothing_is_visible() -> None:
    assert y_bounds([], 0, 1) is None
    assert y_bounds([SeriesView.points([5, 6], [1, 2])], 0, 1) is None
    assert y_bounds([SeriesView.points([0, 1], [NAN, INF])], 0, 1) is None


def test_y_bounds_positive_only_for_log_axes() -> None:
    view = SeriesView.points([0, 1, 2], [0, -5, 0.25])
    assert y_bounds([view], 0, 2, positive=True) == (0.25, 0.25)
    assert y_bounds([view], 0, 2) == (-5, 0.25)


# ---------------------------------------------------------------- heatmap


def texts(rows) -> list[str]:
    return ["".join(t for t, _ in row) for row in rows]


def test_heatmap_cells_are_quantised_means() -> None:
    t = list(range(10))
    rising = SeriesView.points(t, [i * 10 + 5 for i in t])
    rows = render_heatmap([rising], 10, 1, (0, 10), (0, 100), levels=10)
    assert texts(rows) == ["░░▒▒▒▓▓▓" + HEAT_GLYPH * 2], "each level its shade, denser as it rises"
    assert owners(rows)[0] == list(range(10))


def test_heatmap_averages_points_within_a_cell() -> None:
    view = SeriesView.points([0, 1, 2, 3], [0, 100, 40, 60])
    rows = render_heatmap([view], 2, 1, (0, 4), (0, 100), levels=4)
    assert owners(rows)[0] == [2, 2]


def test_heatmap_levels_clamp_at_the_ends() -> None:
    view = SeriesView.points([0, 1, 2], [-50, 100, 500])
    rows = render_heatmap([view], 3, 1, (0, 3), (0, 100), levels=8)
    assert owners(rows)[0] == [0, 7, 7]


def test_heatmap_runs_merge_equal_levels() -> None:
    view = SeriesView.points([0, 1, 2, 3], [10, 10, 90, 90])
    rows = render_heatmap([view], 4, 1, (0, 4), (0, 100), levels=2)
    assert rows == [[(heat_glyph(0, 2) * 2, 0), (HEAT_GLYPH * 2, 1)]]


def test_heatmap_gives_each_series_a_band() -> None:
    t = [0, 1]
    series = [SeriesView.points(t, [v, v]) for v in (0, 50, 99)]
    rows = render_heatmap(series, 2, 7, (0, 2), (0, 100), levels=4)
    assert_shape(rows, 2, 7)
    assert [row[0][1] for row in rows] == [0, 0, 2, 2, 3, 3, 3]


def test_heatmap_merges_neighbours_with_their_maximum() -> None:
    t = [0]
    series = [SeriesView.points(t, [v]) for v in (10, 90, 20, 30, 60)]
    rows = render_heatmap(series, 1, 2, (0, 1), (0, 100), levels=10)
    assert [row[0][1] for row in rows] == [9, 6]


def test_heatmap_layout_rules() -> None:
    assert heatmap_layout(3, 7) == [range(0, 1)] * 2 + [range(1, 2)] * 2 + [range(2, 3)] * 3
    assert heatmap_layout(5, 2) == [range(0, 3), range(3, 5)]
    assert heatmap_layout(16, 10) == [range(2 * r, 2 * r + 2) for r in range(8)] + [range(16, 16)] * 2
    assert heatmap_layout(0, 3) == [range(0)] * 3


def test_heatmap_holds_values_across_sparse_cells_but_not_past_the_end() -> None:
    view = SeriesView.points([0, 5], [80, 20])
    rows = render_heatmap([view], 10, 1, (0, 10), (0, 100), levels=10)
    assert owners(rows)[0] == [8, 8, 8, 8, 8, 2, -1, -1, -1, -1]
    assert texts(rows)[0] == heat_glyph(8, 10) * 5 + heat_glyph(2, 10) + " " * 4


def test_heatmap_holds_into_the_window_from_points_beyond_it() -> None:
    view = SeriesView.points([-5, 20], [50, 50])
    rows = render_heatmap([view], 4, 1, (0, 10), (0, 100), levels=2)
    assert owners(rows)[0] == [1, 1, 1, 1]


def test_heatmap_nan_cells_are_gaps() -> None:
    view = SeriesView.points([0, 1, 2, 3], [50, NAN, NAN, 50])
    rows = render_heatmap([view], 4, 1, (0, 4), (0, 100), levels=2)
    assert owners(rows)[0] == [1, -1, -1, 1]


def test_heatmap_blank_for_no_series_or_bad_ranges() -> None:
    assert texts(render_heatmap([], 3, 2, (0, 1), (0, 1))) == ["   ", "   "]
    view = SeriesView.points([0], [1])
    assert texts(render_heatmap([view], 3, 1, (0, NAN), (0, 1))) == ["   "]
    assert render_heatmap([view], 0, 2, (0, 1), (0, 1)) == [[], []]


def test_heatmap_refuses_zero_levels() -> None:
    with pytest.raises(ValueError, match="levels"):
        render_heatmap([], 3, 2, (0, 1), (0, 1), levels=0)


# ------------------------------------------------------------------- band


def band(lo, hi, mid, start=0.0, step=1.0) -> SeriesView:
    t = [start + i * step for i in range(len(lo))]
    return SeriesView(t, list(lo), list(hi), list(mid))


def test_band_shades_between_lo_and_hi_with_its_mean_on_top() -> None:
    rows = render_band(band([20] * 11, [80] * 11, [50] * 11), [], 10, 10, (0, 10), (0, 100))
    assert_shape(rows, 10, 10)
    cells = owners(rows)
    assert cells[5] == [BAND_MIDDLE] * 10  # the mean, at 50 of 0..100
    assert {r for r, row in enumerate(cells) if BAND in row} == {2, 3, 4, 6, 7}  # 80 down to 20
    assert all(row == [-1] * 10 for row in (cells[0], cells[1], cells[8], cells[9]))


def test_band_shade_is_every_other_dot_so_lines_stay_readable() -> None:
    rows = render_band(band([0] * 5, [100] * 5, [100] * 5), [], 4, 4, (0, 4), (0, 100))
    shade = [[(text, owner) if owner == BAND else (" " * len(text), -1) for text, owner in row] for row in rows]
    lit = dots(shade)
    assert all((x + y) % 2 == 0 for x, y in lit)
    assert len(lit) == 8 * 12 // 2  # the three rows under the mean line, half their dots


def test_band_lines_sit_over_the_shade_in_their_own_owner() -> None:
    lows = [10.0] * 21
    rows = render_band(band(lows, [90] * 21, [80] * 21), [SeriesView.points(list(range(21)), lows)], 20, 8, (0, 20), (0, 100))
    cells = owners(rows)
    assert BAND_MIDDLE + 1 in cells[7]  # the highlighted line at 10, in the bottom row
    assert BAND_MIDDLE in cells[1]


def test_band_edges_run_straight_between_sparse_points() -> None:
    rows = render_band(band([0, 0], [100, 100], [50, 50], step=10), [], 20, 4, (0, 10), (0, 100))
    shaded_columns = {c for row in owners(rows) for c, owner in enumerate(row) if owner in (BAND, BAND_MIDDLE)}
    assert shaded_columns == set(range(20))


def test_band_gaps_where_no_node_has_a_value() -> None:
    lo = [20, 20, NAN, NAN, NAN, NAN, 20, 20]
    rows = render_band(band(lo, [80] * 8, [50, 50, NAN, NAN, NAN, NAN, 50, 50]), [], 14, 4, (0, 7), (0, 100))
    cells = owners(rows)
    assert all(cells[r][c] == -1 for r in range(4) for c in (6, 7))


def test_band_blank_for_bad_sizes_and_ranges() -> None:
    data = band([1, 2], [3, 4], [2, 3])
    assert render_band(data, [], 0, 3, (0, 1), (0, 5)) == [[], [], []]
    assert owners(render_band(data, [], 4, 2, (NAN, 1), (0, 5))) == [[-1] * 4, [-1] * 4]


# ---------------------------------------------------------------- extreme values


def inked(rows) -> int:
    return sum(text.count(char) for row in rows for text, _ in row for char in text if char != " ")


@pytest.mark.parametrize(
    "y_range",
    [(5e-324, 5e-324), (0.0, 5e-324), (1e308, 1e308), (-1.7e308, 1.7e308), (2.0**62, 2.0**62)],
)
def test_ranges_at_the_edges_of_floats_draw(y_range):
    view = SeriesView.points([0.0, 1.0, 2.0], [y_range[0], y_range[1], y_range[0]])
    for render in (render_lines, render_heatmap):
        assert inked(render([view], 20, 5, (0.0, 2.0), y_range)) > 0


def test_an_x_range_that_floats_collapse_far_from_zero_still_draws():
    t = 2.0**62
    view = SeriesView.points([t, t], [1.0, 2.0])
    assert inked(render_lines([view], 20, 5, (t, t + 1), (0.0, 3.0))) > 0


def test_a_heatmap_cell_whose_mean_overflows_takes_the_top_level():
    view = SeriesView.points([0.0, 0.1, 1.0], [1.7e308, 1.7e308, 0.0])
    rows = render_heatmap([view], 2, 1, (0.0, 1.0), (0.0, 1e300))
    assert [owner for _, owner in rows[0]] == [7, 0]
