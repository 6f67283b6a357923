"""Axis ticks: round steps, whole-number step axes, clock axes."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from leet.common.ticks import (
    integer_ticks,
    log_ticks,
    nice_range,
    nice_step,
    nice_ticks,
    step_range,
    step_ticks,
    time_ticks,
)


def mantissa(step: float) -> float:
    return round(step / 10 ** math.floor(math.log10(step)), 6)


@pytest.mark.parametrize(
    ("span", "target", "step"),
    [(100, 4, 25), (100, 5, 20), (10, 4, 2.5), (1, 10, 0.1), (0.0833, 4, 0.025), (7e9, 4, 2e9), (3, 3, 1)],
)
def test_nice_step(span: float, target: int, step: float) -> None:
    assert nice_step(span, target) == step


@pytest.mark.parametrize("span", [0, -1, math.nan, math.inf])
def test_nice_step_refuses_empty_spans(span: float) -> None:
    with pytest.raises(ValueError, match="span"):
        nice_step(span, 4)


RANGES = [
    (0, 100), (0, 0.0833), (1e9, 1.3e9), (3.2e9, 3.3e9), (-5, 5), (-37, -2), (12, 88),
    (0.1, 0.3), (1e-12, 3e-12), (1, 1e15), (0, 1e300), (99.5, 100.5), (1e9, 1e9 + 1),
]


@pytest.mark.parametrize(("lo", "hi"), RANGES)
@pytest.mark.parametrize("target", [2, 4, 6])
def test_nice_ranges_cover_the_data_with_round_steps(lo: float, hi: float, target: int) -> None:
    low, high, step = nice_range(lo, hi, target)
    assert low <= lo and high >= hi
    assert mantissa(step) in {1.0, 2.0, 2.5, 5.0}
    ticks = nice_ticks(lo, hi, target)
    assert ticks[0] == low and ticks[-1] == high
    assert 2 <= len(ticks) <= target + 1
    for a, b in zip(ticks, ticks[1:]):
        assert math.isclose(b - a, step, rel_tol=1e-6)
    for tick in ticks:
        assert len(repr(tick)) <= 22, f"float noise in {tick!r}"


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (0, 100, [0, 25, 50, 75, 100]),
        (0, 0.0833, [0, 0.025, 0.05, 0.075, 0.1]),
        (-5, 5, [-5, -2.5, 0, 2.5, 5]),
        (0.1, 0.3, [0.1, 0.15, 0.2, 0.25, 0.3]),
        (1e9, 1.3e9, [1e9, 1.1e9, 1.2e9, 1.3e9]),
        (-37, -2, [-40, -30, -20, -10, 0]),
    ],
)
def test_nice_ticks_examples(lo: float, hi: float, ticks: list[float]) -> None:
    assert nice_ticks(lo, hi) == ticks


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [(0, 0, (0, 1)), (50, 50, (0, 60)), (-3, -3, (-3, 0)), (1e9, 1e9, (0, 1e9))],
)
def test_equal_bounds_open_up_towards_zero(lo: float, hi: float, expected: tuple[float, float]) -> None:
    low, high, _ = nice_range(lo, hi)
    assert (low, high) == expected


def test_reversed_bounds_are_swapped_and_zero_is_not_negative() -> None:
    assert nice_range(10, 0) == nice_range(0, 10)
    assert all(math.copysign(1, t) > 0 for t in nice_ticks(-1, 1) if t == 0)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nice_range_refuses_non_finite_bounds(bad: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        nice_range(0, bad)


@pytest.mark.parametrize(
    ("lo", "hi", "target", "ticks"),
    [
        (0, 199, 4, [0, 50, 100, 150, 200]),
        (0, 200, 4, [0, 50, 100, 150, 200]),
        (0, 40_000, 4, [0, 10_000, 20_000, 30_000, 40_000]),
        (0, 7, 10, list(range(8))),
        (0, 0, 4, [0, 1]),
        (3, 3, 4, [3, 4]),
        (-13, 17, 4, [-20, -10, 0, 10, 20]),
        (0, 0.3, 4, [0, 1]),
    ],
)
def test_integer_ticks(lo: float, hi: float, target: int, ticks: list[int]) -> None:
    assert integer_ticks(lo, hi, target) == ticks


@pytest.mark.parametrize("hi", [19, 29.63, 178, 199, 300, 18_290, 40_123, 123_456_789])
def test_integer_ticks_are_whole_and_end_on_a_round_number_past_the_max(hi: float) -> None:
    ticks = integer_ticks(0, hi, 5)
    assert all(isinstance(t, int) for t in ticks)
    assert ticks[-1] >= hi
    step = ticks[1] - ticks[0]
    assert mantissa(step) in {1.0, 2.0, 2.5, 5.0} and step == int(step)
    assert ticks[-1] % step == 0
    assert len(ticks) <= 6


def test_log_ticks() -> None:
    assert log_ticks(1, 1000) == [1, 10, 100, 1000]
    assert log_ticks(20, 80) == [10, 20, 50, 100]
    assert log_ticks(0.001, 1e6, target=3) == [0.001, 1, 1000, 1e6]
    with pytest.raises(ValueError, match="positive"):
        log_ticks(0, 10)


# ----------------------------------------------------------------- clock

UTC = timezone.utc
START = datetime(2026, 3, 5, 14, 3, 17, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("span", "width", "labels"),
    [
        (60, 60, ["14:03:20", "14:03:30", "14:03:40", "14:03:50", "14:04:00", "14:04:10"]),
        (600, 60, ["14:04", "14:06", "14:08", "14:10", "14:12"]),
        (3600, 60, ["14:10", "14:20", "14:30", "14:40", "14:50", "15:00"]),
        (86400, 60, ["18:00", "00:00", "06:00", "12:00"]),
        (86400, 120, ["16:00", "18:00", "20:00", "22:00", "00:00", "02:00", "04:00", "06:00",
                      "08:00", "10:00", "12:00", "14:00"]),
        (7 * 86400, 80, ["Mar 06", "Mar 07", "Mar 08", "Mar 09", "Mar 10", "Mar 11", "Mar 12"]),
    ],
)
def test_time_ticks_fall_on_round_instants(span: float, width: int, labels: list[str]) -> None:
    ticks = time_ticks(START, START + span, width, tz=UTC)
    assert [label for _, label in ticks] == labels
    columns = [c for c, _ in ticks]
    assert columns == sorted(columns) and all(0 <= c < width for c in columns)


def test_time_tick_columns_match_their_instants() -> None:
    ticks = time_ticks(START, START + 600, 60, tz=UTC)
    first_instant = datetime(2026, 3, 5, 14, 4, tzinfo=UTC).timestamp()
    assert ticks[0][0] == int((first_instant - START) / 600 * 60)


def test_time_ticks_leave_room_between_labels() -> None:
    for span in (30, 90, 400, 5000, 50_000):
        ticks = time_ticks(START, START + span, 40, tz=UTC)
        for (a, label), (b, _) in zip(ticks, ticks[1:]):
            assert b - a >= len(label) + 1


def test_time_ticks_round_in_the_given_timezone() -> None:
    india = timezone(timedelta(hours=5, minutes=30))
    ticks = time_ticks(START, START + 3 * 3600, 60, tz=india)
    assert ticks and all(label.endswith(":00") or label.endswith(":30") for _, label in ticks)
    assert ticks[0][1] == "20:00"


def test_time_ticks_default_to_local_time() -> None:
    ticks = time_ticks(START, START + 600, 60)
    assert len(ticks) == 5 and all(len(label) == 5 for _, label in ticks)


@pytest.mark.parametrize(("t0", "t1", "width"), [(10, 10, 60), (10, 5, 60), (0, 60, 0), (math.nan, 1, 60)])
def test_time_ticks_empty_for_nothing_to_show(t0: float, t1: float, width: int) -> None:
    assert time_ticks(t0, t1, width) == []


# -- step axes: one rule for the run view, the workspace and --plot ---------------------


@pytest.mark.parametrize(
    ("last", "end", "ticks"),
    [
        (31_257, 32_000, [0, 10_000, 20_000, 30_000]),  # not 0-40k: the axis ends near the last step
        (299, 300, [0, 100, 200, 300]),
        (199, 200, [0, 50, 100, 150, 200]),
        (5, 5, [0, 1, 2, 3, 4, 5]),  # a tiny run: whole steps, ending on the last one
        (1, 1, [0, 1]),
        (45, 46, [0, 10, 20, 30, 40]),
        (10_001, 10_500, [0, 2_500, 5_000, 7_500, 10_000]),
    ],
)
def test_step_axes_end_at_or_just_past_the_last_step(last: int, end: float, ticks: list[int]) -> None:
    assert step_range(0.0, float(last)) == (0.0, end)
    assert step_ticks(*step_range(0.0, float(last))) == ticks


@pytest.mark.parametrize("last", [2, 3, 7, 19, 64, 99, 101, 999, 1_001, 31_257, 40_123, 99_999, 123_456_789])
def test_step_axes_end_within_five_percent_past_the_last_step_and_hold_still(last: int) -> None:
    first, end = step_range(0.0, float(last))
    assert first == 0.0 and end == int(end)
    assert last <= end <= max(last + 1, 1.05 * last)
    ticks = step_ticks(first, end)
    assert ticks[0] == 0 and all(0 <= t <= end for t in ticks) and 2 <= len(ticks) <= 6
    assert all(isinstance(t, int) for t in ticks)


def test_a_growing_run_rescales_its_step_axis_now_and_then_not_every_step() -> None:
    ends = [step_range(0.0, float(last))[1] for last in range(1_000, 2_000)]
    changes = sum(1 for a, b in zip(ends, ends[1:]) if a != b)
    assert changes <= 25  # about every 50 steps, not 1,000 times


def test_step_axes_without_steps_or_with_one_step() -> None:
    assert step_range(None, None) == (0.0, 1.0)
    assert step_range(0.0, 0.0) == (0.0, 1.0)
    assert step_range(7.0, 7.0) == (7.0, 8.0)
    assert step_range(10.0, 57.0)[0] == 10.0 and 57.0 <= step_range(10.0, 57.0)[1] <= 60.0
    assert step_range(-3.7, 57.0) == (-3.7, 58.0)  # a custom axis may start anywhere: the end is still round


# ---------------------------------------------------------------- hostile bounds


def test_time_ticks_where_a_float_cannot_step_end_rather_than_loop():
    ticks = time_ticks(2.0**62, 2.0**62 + 4096, 100, tz=UTC)
    assert 0 < len(ticks) <= 100
    assert {label for _, label in ticks} == {"?"}, "no calendar holds 2**62 seconds"


@pytest.mark.parametrize(("t0", "t1"), [(2.0**62, 2.0**62 + 1), (-1.7e308, 1.7e308), (1.79e308, 1.797e308)])
def test_time_ticks_of_collapsed_or_overflowing_spans_are_total(t0, t1):
    ticks = time_ticks(t0, t1, 60)
    assert all(label == "?" for _, label in ticks)


def test_time_ticks_before_the_epoch_are_labelled():
    assert [label for _, label in time_ticks(-1e9, -1e9 + 60, 60, tz=UTC)] == ["22:13:20", "22:13:30", "22:13:40", "22:13:50", "22:14:00", "22:14:10", "22:14:20"]


def test_value_ticks_between_the_largest_floats_stay_finite():
    assert nice_ticks(-1.7e308, 1.7e308) == [-1e300, -5e299, 0.0, 5e299, 1e300]
    assert nice_ticks(5e-324, 5e-324) == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_log_ticks_from_a_subnormal_start_at_a_float_that_has_a_log():
    ticks = log_ticks(5e-324, 1.7e308)
    assert ticks[0] == 1e-300 and ticks[-1] >= 1e300 and all(math.isfinite(t) and t > 0 for t in ticks)
