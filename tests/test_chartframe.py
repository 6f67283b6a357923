"""The chart panel as text: frame, title, axes, legend, empty state, diffing."""

from __future__ import annotations

import math

import pytest

from widgets.chartframe import ChartView, changed_span, compose_rows, headline, row_text
from widgets.raster import SeriesView

BRAILLE = {chr(c) for c in range(0x2801, 0x2900)}


def series(values, start=0.0, step=1.0):
    t = [start + i * step for i in range(len(values))]
    return SeriesView(t, list(values), list(values), list(values))


def text_of(view, width=40, height=10, focused=False):
    return [row_text(row) for row in compose_rows(view, width, height, focused)]


def test_every_row_has_the_panel_width():
    view = ChartView("Network Rx", "B/s", ("Default",), (series([0, 1024, 4096, 2048]),), (0, 10))
    for width, height in [(16, 5), (40, 10), (77, 23)]:
        rows = text_of(view, width, height)
        assert len(rows) == height
        assert all(len(row) == width for row in rows)


def test_title_unit_and_latest_value_in_the_top_border():
    view = ChartView("Network Rx", "B/s", ("Default",), (series([0, 1024, 1536]),), (0, 10))
    top = text_of(view)[0]
    assert "Network Rx (B/s)" in top
    assert "1.50 KiB/s" in top
    assert top.startswith("╭") and top.endswith("╮")


def test_data_draws_braille_and_empty_chart_says_so():
    drawn = text_of(ChartView("CPU", "%", ("Default",), (series([10, 50, 90]),), (0, 3), percent=True))
    assert any(ch in BRAILLE for row in drawn for ch in row)
    empty = text_of(ChartView("CPU", "%", (), (), (0, 3), percent=True))
    assert any("waiting for data" in row for row in empty)
    assert not any(ch in BRAILLE for row in empty for ch in row)


def test_percent_axis_is_zero_to_hundred_with_top_and_bottom_labels():
    rows = text_of(ChartView("CPU", "%", ("Default",), (series([10, 12]),), (0, 2), percent=True), 40, 12)
    assert "100%┤" in rows[1]
    assert "0%┤" in rows[-3]


def test_multi_series_legend_names_each_series():
    view = ChartView("GPU Utilization", "%", ("GPU 0", "GPU 1"), (series([10, 20]), series([70, 80])), (0, 2), percent=True)
    bottom = text_of(view, 60, 10)[-1]
    assert "GPU 0 20%" in bottom and "GPU 1 80%" in bottom
    assert "[2]" in text_of(view, 60, 10)[0]


def test_heatmap_labels_rows_with_series_names():
    names = tuple(f"Core {i}" for i in range(4))
    view = ChartView("CPU Core", "%", names, tuple(series([i * 20, i * 25]) for i in range(4)), (0, 2), percent=True, mode="heatmap")
    rows = text_of(view, 50, 12)
    assert "heatmap" in rows[-1]
    body = "\n".join(rows[1:-2])
    assert "Core 0" in body and "Core 3" in body


def test_nan_only_series_counts_as_no_data():
    rows = text_of(ChartView("X", "", ("a",), (series([math.nan, math.nan]),), (0, 2)))
    assert any("waiting for data" in row for row in rows)


def test_headline_for_several_series():
    a, b = series([10.0]), series([30.0])
    assert headline(ChartView("CPU", "%", ("a", "b"), (a, b), (0, 1), percent=True)) == "avg 20%"
    assert headline(ChartView("Net", "B/s", ("a", "b"), (a, b), (0, 1))) == "max 30 B/s"


def test_focus_changes_only_the_frame_style():
    view = ChartView("CPU", "%", ("Default",), (series([10, 20]),), (0, 2), percent=True)
    plain = compose_rows(view, 30, 8, False)
    focused = compose_rows(view, 30, 8, True)
    assert [row_text(r) for r in plain] == [row_text(r) for r in focused]
    assert plain[0] != focused[0]


def test_changed_span_finds_the_smallest_dirty_range():
    old = [("abcdef", "x")]
    assert changed_span(old, [("abcdef", "x")]) is None
    assert changed_span(old, [("abXdeY", "x")]) == (2, 5)
    assert changed_span(old, [("abc", "x"), ("def", "y")]) == (3, 5)


def test_appending_a_point_changes_few_cells():
    # The property the SSH bandwidth budget rests on: a new sample on a fixed
    # window repaints a narrow strip, not the panel.
    values = [50 + 10 * math.sin(i / 5) for i in range(60)]
    before = ChartView("CPU", "%", ("Default",), (series(values),), (0, 200), percent=True)
    after = ChartView("CPU", "%", ("Default",), (series(values + [55]),), (0, 200), percent=True)
    old_rows, new_rows = compose_rows(before, 80, 20), compose_rows(after, 80, 20)
    spans = [changed_span(o, n) for o, n in zip(old_rows, new_rows)]
    widths = [last - first + 1 for span in spans if span for first, last in [span]]
    assert sum(widths) <= 12


def test_titles_and_legends_from_files_cannot_reach_the_terminal_as_commands():
    hostile = "loss\x1b[2J\x1b]0;pwned\x07"
    view = ChartView(hostile, "", (hostile, "b\x1b[31m"), (series([1, 2]), series([2, 3])), (0, 2))
    text = "".join(text_of(view, 60, 8))
    assert "\x1b" not in text and "\x07" not in text
    assert "loss" in text


def test_legend_keeps_every_series_named_when_space_is_short():
    names = ("resnet50-adamw-lr5e-4", "resnet50-adamw-lr3e-4")
    view = ChartView("acc", "", names, (series([0.5, 0.9]), series([0.4, 0.8])), (0, 2))
    wide = text_of(view, 100, 8)[-1]
    assert "resnet50-adamw-lr5e-4 0.9" in wide and "resnet50-adamw-lr3e-4 0.8" in wide
    narrow = text_of(view, 44, 8)[-1]
    assert "lr5e-4" in narrow and "lr3e-4" in narrow  # cut in the middle: the ends that differ stay


def spread_view(note="rank2 low (41% vs median 95%)", outlier=True, **extra):
    n = 40
    lo = [41.0 + (i % 3) for i in range(n)]
    band = SeriesView(list(range(n)), lo, [97.0] * n, [95.0] * n)
    data = (series(lo),) if outlier else ()
    names = ("rank2",) if outlier else ()
    return ChartView(
        "GPU Utilization", "%", names, data, (0, n - 1), percent=True, mode="spread",
        band=band, band_name="4 nodes", note=note, **extra,
    )


def test_spread_mode_draws_a_band_with_the_median_and_the_outlier_line():
    rows = compose_rows(spread_view(), 72, 14)
    styles = {style for row in rows for _, style in row}
    assert {"band", "median", "outlier"} <= styles
    text = [row_text(row) for row in rows]
    assert "⢕⢕⢕" in "".join(text[3:6])  # the shade between the nodes' min and max
    assert text[0].startswith("╭─ GPU Utilization (%) ─ rank2 low (41% vs median 95%) ")
    assert "med 95%" in text[0]
    assert "⢕ 4 nodes ● median 95% ● rank2 41%" in text[-1] and text[-1].endswith(" spread ─╯")
    note_styles = [style for run, style in rows[0] if "rank2" in run]
    assert note_styles == ["warn"]


def test_spread_note_gives_way_to_the_title_on_a_narrow_chart():
    top = text_of(spread_view(), 30, 10)[0]
    assert top.startswith("╭─ GPU Utilization (%) ") and len(top) == 30
    mid = text_of(spread_view(), 44, 10)[0]
    assert "rank2 low" in mid and "…" in mid and len(mid) == 44


def test_spread_without_an_outlier_or_a_band():
    calm = text_of(spread_view(note="", outlier=False), 60, 10)
    assert "rank" not in calm[0] and "rank" not in calm[-1] and "4 nodes" in calm[-1]
    no_band = ChartView("CPU", "%", ("a", "b"), (series([1, 2]), series([3, 4])), (0, 1), mode="spread")
    assert no_band.mode == "line"  # nothing to spread: plain lines
    empty = ChartView("X", "%", (), (), (0, 1), mode="spread", band=SeriesView((), (), (), ()))
    assert any("waiting for data" in row for row in text_of(empty))


def test_grouped_series_share_their_group_colour_and_the_legend_names_groups():
    data = tuple(series([10 * i, 10 * i + 5]) for i in range(4))
    view = ChartView("GPU", "%", ("GPU 0 · a", "GPU 1 · a", "GPU 0 · b", "GPU 1 · b"), data, (0, 1), percent=True,
                     groups=("a", "b"), series_group=(0, 0, 1, 1))
    rows = compose_rows(view, 60, 12)
    plot_styles = {style for row in rows[1:-2] for _, style in row if style.startswith("s")}
    assert plot_styles <= {"s0", "s1"}
    bottom = row_text(rows[-1])
    assert "● a 10%" in bottom and "● b 30%" in bottom and "GPU" not in bottom


# ---------------------------------------------------------------- extreme values


def braille_cells(rows) -> int:
    return sum(char in BRAILLE for row in rows for char in row)


@pytest.mark.parametrize("mode", ["line", "log", "heatmap"])
@pytest.mark.parametrize(
    "values",
    [
        [5e-324] * 6,
        [1e308] * 6,
        [1.7e308, -1.7e308, 1.7e308, -1.7e308],
        [1e308, 1.7e308, 1.0, -5e-324, 0.0],
        [math.inf, 1.0, math.nan, -math.inf, 2.0],
    ],
)
def test_extreme_values_draw_with_short_labels(values, mode):
    view = ChartView("x", "", ("a",), (series(values),), (0, len(values) - 1), mode=mode)
    rows = text_of(view, 60, 12)
    assert len(rows) == 12 and all(len(row) == 60 for row in rows)
    drawn = braille_cells(rows) if mode != "heatmap" else sum(row.count("█") for row in rows)
    assert drawn > 0 or mode == "log" and max(values) <= 5e-324
    labels = [row[1:].split("┤")[0].strip() for row in rows if "┤" in row]
    assert all(len(label) <= 10 for label in labels), labels


def test_a_line_between_the_largest_floats_reaches_both_edges():
    view = ChartView("x", "", ("a",), (series([1.7e308, -1.7e308]),), (0, 1))
    rows = text_of(view, 40, 12)
    top, bottom = rows[1], rows[-3]
    assert "1e+300┤" in top and "-1e+300┤" in bottom
    assert set(top) & BRAILLE and set(bottom) & BRAILLE


def test_the_headline_of_a_huge_value_is_short():
    assert headline(ChartView("x", "", ("a",), (series([1.0, 1.7e308]),), (0, 1))) == "1.7e+308"


def _flat_view(times, values, x_range=(0.0, 600.0)):
    from widgets.raster import SeriesView

    return ChartView(title="Network Rx", unit="B/s", series_names=("rx",), data=(SeriesView.points(list(times), list(values)),), x_range=x_range)


def test_an_idle_series_adding_equal_points_in_its_last_dot_column_draws_the_same_picture():
    from widgets.chartframe import same_picture

    old = _flat_view([0, 2, 4], [0.0, 0.0, 0.0])
    new = _flat_view([0, 2, 4, 5], [0.0, 0.0, 0.0, 0.0])
    assert same_picture(old, new, 40, 12)
    assert compose_rows(old, 40, 12) == compose_rows(new, 40, 12)


def test_a_new_value_a_new_dot_column_or_another_title_is_a_new_picture():
    from widgets.chartframe import same_picture

    old = _flat_view([0, 2, 4], [0.0, 0.0, 0.0])
    assert not same_picture(old, _flat_view([0, 2, 4, 5], [0.0, 0.0, 0.0, 1.0]), 40, 12)
    assert not same_picture(old, _flat_view([0, 2, 4, 60], [0.0, 0.0, 0.0, 0.0]), 40, 12)
    assert not same_picture(old, _flat_view([0, 2, 4], [0.0, 0.0, 0.0], x_range=(0.0, 300.0)), 40, 12)
    nan = _flat_view([0, 2, 4], [0.0, 0.0, float("nan")])
    assert not same_picture(nan, _flat_view([0, 2, 4, 5], [0.0, 0.0, float("nan"), float("nan")]), 40, 12)


def test_the_same_picture_rule_agrees_with_drawing_on_random_idle_data():
    import random

    from widgets.chartframe import same_picture

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 30)
        times = sorted(rng.uniform(0, 590) for _ in range(n))
        values = [rng.choice([0.0, 5.0]) for _ in range(n)]
        extra = rng.randint(1, 3)
        more = [times[-1] + rng.uniform(0, 12) for _ in range(extra)]
        more.sort()
        new_values = values + [values[-1] if rng.random() < 0.8 else 7.0 for _ in range(extra)]
        old, new = _flat_view(times, values), _flat_view(times + more, new_values)
        width, height = rng.randint(20, 60), rng.randint(6, 16)
        if same_picture(old, new, width, height):
            assert compose_rows(old, width, height) == compose_rows(new, width, height)
