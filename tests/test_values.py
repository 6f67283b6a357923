"""Config and summary values as people read them: media, times, numbers, long lists (``leet.model.values``)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from leet.model.values import collapse_media, describe_value, format_duration, format_time, one_line
from leet.runfile.decode import RawJSON

IMAGE = {
    "_type": "image-file",
    "width": 640,
    "height": 480,
    "format": "png",
    "path": "media/images/x_0_abc.png",
    "sha256": "abc",
    "size": 12345,
}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (IMAGE, "image 640×480"),
        ({"_type": "image-file", "width": 28}, "image"),  # no height: no size
        ({"_type": "images/separated", "count": 3, "width": 32, "height": 32, "format": "png"}, "3 images 32×32"),
        ({"_type": "table-file", "nrows": 10, "ncols": 3, "path": "media/table/t.json"}, "table 10×3"),
        ({"_type": "table-file", "nrows": 12_000, "ncols": 3}, "table 12,000×3"),
        ({"_type": "table-file"}, "table"),
        ({"_type": "joined-table", "path": "x"}, "joined table"),
        ({"_type": "partitioned-table", "parts_path": "x"}, "partitioned table"),
        ({"_type": "histogram", "values": [1] * 64, "bins": list(range(65))}, "histogram 64 bins"),
        ({"_type": "histogram", "packedBins": {"min": 0, "size": 1, "count": 32}, "values": None}, "histogram 32 bins"),
        ({"_type": "histogram", "bins": list(range(11))}, "histogram 10 bins"),
        ({"_type": "video-file", "path": "v.mp4"}, "video"),
        ({"_type": "audio-file", "path": "a.wav"}, "audio"),
        ({"_type": "html-file", "path": "p.html"}, "html"),
        ({"_type": "object3D-file", "path": "o.glb"}, "3D object"),
        ({"_type": "molecule-file", "path": "m.pdb"}, "molecule"),
        ({"_type": "plotly-file", "path": "p.json"}, "plotly chart"),
        ({"_type": "bokeh-file", "path": "b.json"}, "bokeh chart"),
        ({"_type": "point-cloud-file", "path": "x"}, "point cloud"),  # an unknown file type, by its name
    ],
)
def test_media_by_kind_and_size(value: dict, text: str) -> None:
    assert describe_value(value) == text
    assert describe_value(value, "samples") == text


def test_media_still_in_json_text_is_decoded_first() -> None:
    assert describe_value(RawJSON('{"_type": "table-file", "nrows": 2, "ncols": 5}')) == "table 2×5"


def test_dicts_with_a_type_of_their_own_are_not_media() -> None:
    assert describe_value({"_type": "adamw", "lr": 0.1}) == '{"_type": "adamw", "lr": 0.1}'


def test_split_media_keys_are_joined_back() -> None:
    summary = {
        "loss": 0.5,
        "img._type": "image-file",
        "img.width": 64,
        "img.height": 48,
        "img.path": "media/images/img.png",
        "preds.nrows": 10,  # the SDK may write the parts in any order
        "preds._type": RawJSON('"table-file"'),
        "preds.ncols": 3,
        "img_count": 3,  # shares a prefix with "img", but not "img."
        "optimizer._type": "adamw",  # not a media type: left alone
    }
    joined = collapse_media(summary)
    assert set(joined) == {"loss", "img", "preds", "img_count", "optimizer._type"}
    assert joined["img"] == {"_type": "image-file", "width": 64, "height": 48, "path": "media/images/img.png"}
    assert describe_value(joined["img"]) == "image 64×48"
    assert describe_value(joined["preds"]) == "table 10×3"
    assert joined["img_count"] == 3 and joined["optimizer._type"] == "adamw"


def test_split_histograms_with_packed_bins_are_joined_back() -> None:
    joined = collapse_media({"grads._type": "histogram", "grads.packedBins.count": 16, "grads.values": [0] * 16})
    assert describe_value(joined["grads"]) == "histogram 16 bins"


def test_nothing_to_join_is_a_plain_copy() -> None:
    summary = {"a": 1, "b.c": 2}
    assert collapse_media(summary) == summary and collapse_media(summary) is not summary


def local(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.parametrize("key", ["_timestamp", "start_timestamp", "eval/timestamp", "timestamp", "start_time", "train.end_time"])
def test_time_keys_with_unix_times_read_as_local_times(key: str) -> None:
    assert describe_value(1_795_478_733.4, key) == local(1_795_478_733.4)
    assert describe_value(RawJSON("1795478733"), key) == local(1_795_478_733)


def test_timestamp_in_the_format_asked_for() -> None:
    text = format_time(1_795_478_733.4)
    assert len(text) == 19 and text[4] == text[7] == "-" and text[10] == " " and text[13] == text[16] == ":"


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [
        ("_timestamp", 12.5, "12.5"),  # not a plausible unix time
        ("step_time", 0.25, "0.25"),
        ("_timestamp", 5e9, "5000000000"),
        ("start_time", "yesterday", "yesterday"),
        ("lifetime", 1_795_478_733.0, "1795478733"),  # not a time key
        ("_timestamp", math.nan, "nan"),
    ],
)
def test_values_that_are_not_times_stay_values(key: str, value: object, text: str) -> None:
    assert describe_value(value, key) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (4.25, "4.2s"), (42.7, "42s"), (423, "7m 3s"), (3600, "1h 0m"), (5 * 3600 + 7 * 60 + 9, "5h 7m"), (2 * 86400 + 3 * 3600, "2d 3h"), (-3, "0s")],
)
def test_durations(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_runtime_reads_as_a_duration() -> None:
    assert describe_value(3725.2, "_runtime") == "1h 2m"
    assert describe_value(RawJSON("42"), "_runtime") == "42s"
    assert describe_value(3725.2) == "3725.2"  # the same number under no key


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.1234567, "0.123457"),
        (3e-4, "0.0003"),
        (1e-9, "1e-09"),
        (12_345_678.25, "12345678.25"),  # big values keep their digits
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        ("adamw", "adamw"),
        ([1, 2, 3], "[1, 2, 3]"),
        ({"a": 1, "b": [True, None]}, '{"a": 1, "b": [true, null]}'),
        (RawJSON("0.5"), "0.5"),
        (RawJSON('"text"'), "text"),
        (RawJSON("NaN"), "nan"),
    ],
)
def test_plain_values(value: object, text: str) -> None:
    assert describe_value(value) == text


def test_long_lists_and_dicts_are_cut_to_one_line() -> None:
    long = list(range(1000))
    text = describe_value(long)
    assert len(text) <= 200 and "\n" not in text and text.startswith("[0, 1, 2") and text.endswith("… (1,000 items)")
    nested = {f"key{i}": {"inner": "x\ny"} for i in range(100)}
    text = describe_value(nested)
    assert len(text) <= 200 and "\n" not in text and text.endswith("… (100 keys)")
    assert one_line({"a": "x\ny"}) == '{"a": "x\\ny"}'


# ---------------------------------------------------------------- hostile values


def test_ints_past_any_float_read_short_and_never_raise():
    assert describe_value(10**400) == "1e+400"
    assert describe_value(-(10**400), "_runtime") == "-1e+400"
    assert describe_value(123456789 * 10**300) == "1.23457e+308"
    assert describe_value(2**63 - 1) == "9223372036854775807", "a step or counter keeps its digits"
    assert format_duration(10**400) == "1e+400"


def test_a_duration_of_ages_is_days_in_short():
    assert format_duration(1e300) == "1.16e+295d"
    assert format_duration(86400 * 3 + 3600) == "3d 1h"


@pytest.mark.parametrize("seconds", [1e12, -1e12, 2.0**62, math.nan, math.inf, -math.inf])
def test_a_time_no_calendar_holds_is_a_question_mark(seconds):
    assert format_time(seconds) == "?"


def test_a_too_deep_value_shows_its_top_levels_cut_and_its_depth():
    text = describe_value(RawJSON("[" * 5000 + "]" * 5000))
    assert text == '[[[[[[[["…"]]]]]]]] (5,000 levels)'
    assert describe_value(RawJSON('{"a": ' * 40 + "1" + "}" * 40)).startswith('{"a": {"a": ')


def test_a_value_within_the_cap_is_shown_as_it_is():
    assert describe_value(RawJSON("[" * 30 + "1" + "]" * 30)) == "[" * 30 + "1" + "]" * 30
