"""Whole-screen snapshots of the monitor on fake hardware.

The SVGs live in ``tests/__snapshots__/test_snapshots/``. After a deliberate
change to what the screen looks like, regenerate them with
``python3 -m pytest tests/test_snapshots.py --snapshot-update`` and look at
``snapshot_report.html`` or the SVGs before keeping them. They depend on the
pinned Textual version and on the environment that conftest.py fixes (UTC,
no NO_COLOR); run pytest without TEXTUAL_THEME set.
"""

from __future__ import annotations

from leet.testing.demo import make_demo

SYMON = (120, 36)
SMALL = (80, 24)
LARGE = (160, 48)
FILTER_NET = ("backslash", "n", "e", "t", "enter")


def test_symon(snap_compare):
    assert snap_compare(make_demo().app, terminal_size=SYMON)


def test_symon_small_terminal(snap_compare):
    assert snap_compare(make_demo().app, terminal_size=SMALL)


def test_symon_with_two_gpus(snap_compare):
    # GPU charts come after the host's; the filter brings them to the first page.
    keys = ("backslash", "g", "p", "u", "enter")
    assert snap_compare(make_demo(gpus=2).app, terminal_size=LARGE, press=keys)


def test_help_screen(snap_compare):
    assert snap_compare(make_demo().app, terminal_size=SYMON, press=("h",))


def test_chart_filter(snap_compare):
    assert snap_compare(make_demo().app, terminal_size=SYMON, press=FILTER_NET)


def test_chart_in_log_mode(snap_compare):
    # Sidebar hidden so each title has room for its mode marker.
    keys = ("left_square_bracket", "d", "d", "y")  # CPU Temp: line → log
    assert snap_compare(make_demo().app, terminal_size=SYMON, press=keys)


def test_chart_in_heatmap_mode(snap_compare):
    keys = ("left_square_bracket", "d", "d", "d", "y", "y")  # System Memory: line → log → heatmap
    assert snap_compare(make_demo().app, terminal_size=SYMON, press=keys)
