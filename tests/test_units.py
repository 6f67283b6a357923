"""Numbers with units, for labels, legends and axes."""

from __future__ import annotations

import math

import pytest

from leet.common.units import RATE_WIDTH, SIZE_WIDTH, axis_ticks, format_axis_labels, format_used_total, format_value

GiB = 2**30
MiB = 2**20


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (42, "%", "42%"),
        (42.4, "%", "42%"),
        (4.2, "%", "4.2%"),
        (4.0, "%", "4%"),
        (0.42, "%", "0.42%"),
        (0.004, "%", "0%"),
        (-0.001, "%", "0%"),
        (100, "%", "100%"),
        (0, "B", "0 B"),
        (512, "B", "512 B"),
        (1536, "B", "1.50 KiB"),
        (1023.7, "B", "1.00 KiB"),
        (3.2 * GiB, "B", "3.20 GiB"),
        (23.5 * GiB, "B", "23.5 GiB"),
        (0.0833, "B/s", "0 B/s"),
        (0.9, "B/s", "0 B/s"),
        (1536, "B/s", "1.50 KiB/s"),
        (200 * MiB, "B/s", "200 MiB/s"),
        (61.4, "°C", "61°C"),
        (-5, "°C", "-5°C"),
        (350, "W", "350 W"),
        (1500, "W", "1.5 kW"),
        (1.41e9, "Hz", "1.41 GHz"),
        (2.4e9, "Hz", "2.4 GHz"),
        (800e6, "Hz", "800 MHz"),
        (0, "", "0"),
        (7, "", "7"),
        (123.456, "", "123"),
        (1200, "", "1.2k"),
        (1234, "", "1.23k"),
        (999.7, "", "1k"),
        (3.4e6, "", "3.4M"),
        (-2.5e9, "", "-2.5G"),
        (0.0234, "", "0.0234"),
        (1.5e-5, "", "1.5e-5"),
        (12.3, "ms", "12.3 ms"),
        (math.nan, "%", "–"),
        (math.nan, "B", "–"),
        (math.inf, "W", "∞"),
        (-math.inf, "", "-∞"),
    ],
)
def test_format_value(value: float, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


@pytest.mark.parametrize(
    ("value", "unit"),
    [(v, u) for u in ("B", "B/s", "W", "Hz", "") for v in (0, 0.5, 7.77, 99.9, 512.5, 1e4, 3.3e7, 9.99e11)]
    + [(v, u) for u in ("%", "°C") for v in (0, 0.05, 0.5, 7.77, 99.9, 512.5, 1e4)],
)
def test_single_values_stay_short(value: float, unit: str) -> None:
    widest = {"B": SIZE_WIDTH, "B/s": RATE_WIDTH}.get(unit, 9)
    assert len(format_value(value, unit)) <= widest
    assert len(format_value(-value, unit)) <= widest + 1


@pytest.mark.parametrize(
    ("value", "unit", "width", "text"),
    [
        (1.41e9, "Hz", 7, "1.41GHz"),
        (1.41e9, "Hz", 6, "1.4GHz"),
        (1536, "B/s", 8, "1.5K/s"),  # a rate column under 9 cells: htop's short form, for every row
        (12.3 * GiB, "B", 5, "12G"),
        (0.42, "%", 4, "0.4%"),
        (12.3, "ms", 5, "12 ms"),
        (123456, "", 2, "123k"),  # whole digits are never cut
    ],
)
def test_width_trades_precision_for_room(value: float, unit: str, width: int, text: str) -> None:
    assert format_value(value, unit, width=width) == text


@pytest.mark.parametrize(
    ("ticks", "unit", "labels"),
    [
        ([0, 512 * MiB, GiB], "B", ["0 GiB", "0.5 GiB", "1.0 GiB"]),
        ([0, 25, 50, 75, 100], "%", ["0%", "25%", "50%", "75%", "100%"]),
        ([0, 250, 500, 750, 1000], "", ["0", "250", "500", "750", "1000"]),
        ([0, 10_000, 20_000, 30_000, 40_000], "", ["0", "10k", "20k", "30k", "40k"]),
        ([0, 0.5e9, 1e9, 1.5e9], "Hz", ["0 GHz", "0.5 GHz", "1.0 GHz", "1.5 GHz"]),
        ([-5, -2.5, 0, 2.5, 5], "°C", ["-5.0°C", "-2.5°C", "0°C", "2.5°C", "5.0°C"]),
        ([0, 0.025, 0.05], "%", ["0%", "0.025%", "0.050%"]),
        ([1, 10, 100, 1000, 10_000], "B/s", ["1 B/s", "10 B/s", "100 B/s", "0.98 KiB/s", "9.77 KiB/s"]),
        ([0, 1, 2], "ms", ["0 ms", "1 ms", "2 ms"]),
        ([0, 0], "W", ["0 W", "0 W"]),
        ([0, 1e9, 2e9], "B", ["0 GiB", "0.93 GiB", "1.86 GiB"]),
        ([1e9, 1e9 + 0.5, 1e9 + 1], "", ["1000000000.0", "1000000000.5", "1000000001.0"]),
        ([0, math.nan], "%", ["0%", "–"]),
        ([], "%", []),
    ],
)
def test_axis_labels_share_one_prefix_and_precision(ticks, unit: str, labels: list[str]) -> None:
    assert format_axis_labels(ticks, unit) == labels


@pytest.mark.parametrize(
    ("lo", "hi", "unit", "ticks", "labels"),
    [
        (0, 0.0833, "B/s", [0, 1], ["0 B/s", "1 B/s"]),
        (0, 3.2 * GiB, "B", [0, GiB, 2 * GiB, 3 * GiB, 4 * GiB],
         ["0 GiB", "1 GiB", "2 GiB", "3 GiB", "4 GiB"]),
        (0, 700, "B", [0, 200, 400, 600, 800], ["0 B", "200 B", "400 B", "600 B", "800 B"]),
        (0, 100, "%", [0, 25, 50, 75, 100], ["0%", "25%", "50%", "75%", "100%"]),
        (0, 1.2e9, "Hz", [0, 0.5e9, 1e9, 1.5e9], ["0 GHz", "0.5 GHz", "1.0 GHz", "1.5 GHz"]),
    ],
)
def test_axis_ticks_step_in_the_units_own_prefix(lo, hi, unit, ticks, labels) -> None:
    assert axis_ticks(lo, hi, unit) == (ticks, labels)


def test_byte_axes_step_in_binary_units() -> None:
    ticks, labels = axis_ticks(0, 900 * MiB, "B")
    assert all(t % MiB == 0 for t in ticks)
    assert labels[-1] == "1.00 GiB"  # never "1000 MiB"
    assert len(set(labels)) == len(labels)
    ticks, labels = axis_ticks(0, 600 * MiB, "B")
    assert labels == ["0 MiB", "200 MiB", "400 MiB", "600 MiB"]


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (1e308, "", "1e+308"),
        (-1.7e308, "", "-1.7e+308"),
        (1.7e308, "%", "1.7e+308%"),
        (1e308, "B", "1e+308 B"),
        (5e-324, "", "4.94e-324"),
        (5e-324, "%", "0%"),
        (10**400, "", "1e+400"),
        (-(10**400), "W", "-1e+400 W"),
        (2e21, "", "2000E"),
    ],
)
def test_extreme_values_read_short(value, unit, text):
    assert format_value(value, unit) == text


def test_an_axis_between_the_largest_floats_has_short_labels():
    ticks, labels = axis_ticks(-1.7e308, 1.7e308, "")
    assert ticks[0] == -1e300 and ticks[-1] == 1e300
    assert labels == ["-1e+300", "-5e+299", "0", "5e+299", "1e+300"]


def test_an_axis_around_a_subnormal_opens_up_from_zero():
    ticks, _ = axis_ticks(5e-324, 5e-324, "")
    assert ticks[0] == 0 and ticks[-1] == 1


# -- one rule for sizes and rates ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0, "B", "0 B"),
        (0.4, "B", "0 B"),
        (999, "B", "999 B"),
        (999.6, "B", "0.98 KiB"),  # 1000 B is never written: the next prefix first
        (1000, "B", "0.98 KiB"),
        (1024, "B", "1.00 KiB"),
        (3.9 * MiB, "B", "3.90 MiB"),
        (15 * MiB, "B", "15.0 MiB"),  # beside 3.90 MiB: the same spacing, three digits each
        (152 * MiB, "B", "152 MiB"),
        (999 * MiB, "B", "999 MiB"),
        (1000 * MiB, "B", "0.98 GiB"),
        (1023 * MiB, "B", "1.00 GiB"),
        (9.996 * MiB, "B", "10.0 MiB"),  # rounding up to a new digit drops a decimal
        (99.96 * MiB, "B", "100 MiB"),
        (79.6 * GiB, "B", "79.6 GiB"),
        (512 * GiB, "B", "512 GiB"),
        (2**50, "B", "1.00 PiB"),
        (-3 * MiB, "B", "-3.00 MiB"),
        (1000 * MiB, "B/s", "0.98 GiB/s"),
        (12_500_000, "B/s", "11.9 MiB/s"),
    ],
)
def test_sizes_and_rates(value: float, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


@pytest.mark.parametrize("unit", ["B", "B/s"])
def test_a_size_never_reads_1000_or_more_of_a_prefix_nor_grows_past_its_width(unit: str) -> None:
    widest = SIZE_WIDTH if unit == "B" else RATE_WIDTH
    for exponent in range(0, 500):  # up to 1000 EiB, the last prefix
        value = 1.1**exponent
        text = format_value(value, unit)
        number, _, suffix = text.partition(" ")
        assert float(number) < 1000, text
        assert suffix.endswith(unit) and len(text) <= widest, text


@pytest.mark.parametrize(
    ("width", "texts"),
    [
        (None, ["512 B", "3.90 MiB", "15.0 MiB", "0.98 GiB"]),
        (8, ["512 B", "3.90 MiB", "15.0 MiB", "0.98 GiB"]),
        (7, ["512 B", "3.9 MiB", "15 MiB", "1.0 GiB"]),
        (6, ["512B", "3.9M", "15M", "1.0G"]),
        (4, ["512B", "3.9M", "15M", "1.0G"]),
    ],
)
def test_a_table_column_writes_every_size_alike(width: int | None, texts: list[str]) -> None:
    """A width picks one form for the whole column: never "3.9MiB" above "15 MiB"."""
    values = [512, 3.9 * MiB, 15 * MiB, 1000 * MiB]
    got = [format_value(v, "B", width=width) for v in values]
    assert got == texts
    assert len({" " in text for text in got[1:]}) == 1
    if width is not None:
        assert all(len(text) <= width for text in got)


@pytest.mark.parametrize(
    ("used", "total", "text"),
    [
        (6.21 * GiB, 31.3 * GiB, "6.21/31.3 GiB"),
        (0, 0, "0/0 B"),  # no swap
        (0, 8 * GiB, "0/8.00 GiB"),
        (564 * MiB, 8 * GiB, "0.55/8.00 GiB"),
        (9.9 * MiB, 31.3 * GiB, "9.90 MiB/31.3 GiB"),  # 0.0097 GiB would say little
        (1.5 * GiB, 2 * 2**40, "1.50 GiB/2.00 TiB"),
        (1000 * MiB, 31 * GiB, "0.98/31.0 GiB"),
        (61.2 * GiB, 80 * GiB, "61.2/80.0 GiB"),
        (math.nan, 8 * GiB, "–/8.00 GiB"),
        (42, 100, "42/100"),
    ],
)
def test_used_of_total(used: float, total: float, text: str) -> None:
    unit = "" if total == 100 else "B"
    assert format_used_total(used, total, unit) == text


# -- counts: whole-number ticks ------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (0, 2, [0, 1, 2]),  # not 0, 0.5, 1, 1.5, 2
        (0, 3, [0, 1, 2, 3]),
        (0, 1, [0, 1]),
        (0, 0, [0, 1]),
        (3, 3, [0, 1, 2, 3]),  # a flat line opens down to zero
        (0, 0.4, [0, 1]),
        (96, 98, [96, 97, 98]),
        (1000, 1001, [1000, 1001]),
        (0, 37, [0, 10, 20, 30, 40]),
        (0, 1_500_000, [0, 500_000, 1_000_000, 1_500_000]),
    ],
)
def test_count_axes_tick_whole_numbers(lo: float, hi: float, ticks: list[int]) -> None:
    got, labels = axis_ticks(lo, hi, "", integer=True)
    assert got == ticks
    assert all(t == int(t) for t in got) and len(set(labels)) == len(labels)
    assert not any("." in label for label in labels if not label.endswith(("k", "M")))
