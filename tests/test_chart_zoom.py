"""The zoom window arithmetic: zoom around a point, pan, stay inside the full range."""

from __future__ import annotations

from widgets.zoom import ZOOM_IN, ZOOM_OUT, anchor_at, clamp_window, pan_window, zoom_label, zoom_window

FULL = (0.0, 100.0)


def test_zoom_in_keeps_the_anchor_where_it_was_on_screen():
    # Anchor at 25 (a quarter across): half the span, still a quarter across.
    assert zoom_window(FULL, FULL, 25.0, ZOOM_IN) == (12.5, 62.5)


def test_zoom_in_at_the_right_edge_keeps_the_newest_data_in_view():
    assert zoom_window(FULL, FULL, 100.0, ZOOM_IN) == (50.0, 100.0)


def test_zoom_out_to_the_full_range_or_beyond_means_not_zoomed():
    assert zoom_window((50.0, 100.0), FULL, 100.0, ZOOM_OUT) is None
    assert zoom_window((40.0, 60.0), FULL, 50.0, 10.0) is None


def test_zoom_out_is_moved_back_inside_the_full_range():
    assert zoom_window((0.0, 20.0), FULL, 0.0, ZOOM_OUT) == (0.0, 40.0)
    assert zoom_window((80.0, 90.0), FULL, 90.0, ZOOM_OUT) == (70.0, 90.0)


def test_an_anchor_outside_the_window_is_taken_at_its_edge():
    assert zoom_window((20.0, 40.0), FULL, 500.0, ZOOM_IN) == (30.0, 40.0)


def test_pan_moves_a_quarter_of_the_width_and_stops_at_the_ends():
    assert pan_window((40.0, 60.0), FULL, 1) == (45.0, 65.0)
    assert pan_window((40.0, 60.0), FULL, -1) == (35.0, 55.0)
    assert pan_window((85.0, 99.0), FULL, 1) == (86.0, 100.0)
    assert pan_window((1.0, 11.0), FULL, -1) == (0.0, 10.0)


def test_clamp_cuts_a_window_wider_than_the_full_range():
    assert clamp_window((-10.0, 200.0), FULL) == FULL


def test_anchor_at_is_the_x_that_far_across():
    assert anchor_at((10.0, 30.0), 0.5) == 20.0
    assert anchor_at((10.0, 30.0), 2.0) == 30.0


def test_zoom_label_says_the_step_range_or_the_time_span():
    assert zoom_label((120.0, 480.0), "step") == "⌕ 120–480"
    assert zoom_label((1000.0, 1060.0), "time") == "⌕ 60s"
