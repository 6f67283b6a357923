"""Wall-clock text for any number a run file may hold (``leet.common.clock``)."""

from __future__ import annotations

import math
from datetime import timedelta, timezone

import pytest

from leet.common.clock import UNKNOWN_TIME, clock_text, moment, utc_offset

UTC = timezone.utc


def test_a_plain_time_in_utc_and_in_local_time():
    assert clock_text(1_700_000_000, tz=UTC) == "2023-11-14 22:13:20"
    assert clock_text(1_700_000_000, "%H:%M", tz=timezone(timedelta(hours=5, minutes=30))) == "03:43"
    assert clock_text(0.0, tz=UTC) == "1970-01-01 00:00:00"


def test_times_before_the_epoch_are_times_too():
    assert clock_text(-1e9, tz=UTC) == "1938-04-24 22:13:20"


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf, 1e12, -1e12, 2.0**62, -(2.0**62), 1.7e308, 10**400, 2**63 - 1])
def test_an_instant_no_calendar_holds_is_a_question_mark(seconds):
    assert moment(seconds) is None
    assert clock_text(seconds) == UNKNOWN_TIME == "?"
    assert clock_text(seconds, "%H:%M", tz=UTC) == "?"
    assert utc_offset(seconds) == 0.0


def test_the_offset_of_a_zone():
    assert utc_offset(1_700_000_000, timezone(timedelta(hours=-3))) == -3 * 3600
