"""A config or summary value as one short line of plain text, for people.

One rule for the run screen's overview and ``leet inspect --summary``:

* W&B media (objects with a ``_type``) by kind and size: ``image 640×480``,
  ``table 10×3``, ``histogram 64 bins``, ``3 images 32×32``, ``video``.
  In a summary the SDK may have split such an object into dotted keys
  (``img._type``, ``img.width`` …); :func:`collapse_media` joins them again.
* Keys that hold a time: ``_timestamp`` (and ``…timestamp``/``…_time`` keys
  with a plausible unix time) as a local date and time, ``_runtime`` as a
  duration.
* Floats to six significant digits (big ones keep their digits), ints past
  twenty digits in the same short form, booleans and null as JSON spells
  them, lists and objects on one line, cut short. A value nested too deep to
  decode shows its top levels with ``…`` where it was cut; a time no
  calendar holds is ``?``.

Pure: no Textual, no terminal. The text is not cleaned; callers that write
it to a terminal clean it as they clean any text from a run file.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Mapping

from leet.common.clock import clock_text
from leet.common.units import format_value
from leet.model.state import LONGEST_WHOLE, in_days
from leet.runfile.decode import DeepJSON, RawJSON, json_value

# A summary value whose JSON text is longer is shown from its text, undecoded.
BIG_JSON_TEXT = 1 << 20
LINE_LIMIT = 200  # characters a list or object may take before it is cut
_WHOLE_DIGITS = 20  # an int up to this long is shown whole (steps and counters are exact)
_WHOLE_BELOW = 10**_WHOLE_DIGITS
DEEP_LEVELS_SHOWN = 8  # of a value nested too deep to decode, the levels shown before "…"

# Unix times a timestamp key may plausibly hold: 2001-09-09 .. 2096-10-02.
_EPOCH_LOW, _EPOCH_HIGH = 1e9, 4e9

# W&B media types (``_type``) and the noun shown for them.
_MEDIA_NOUNS = {
    "image-file": "image",
    "images/separated": "images",
    "table-file": "table",
    "table": "table",
    "joined-table": "joined table",
    "partitioned-table": "partitioned table",
    "histogram": "histogram",
    "video-file": "video",
    "audio-file": "audio",
    "audio": "audio",
    "html-file": "html",
    "object3D-file": "3D object",
    "molecule-file": "molecule",
    "plotly-file": "plotly chart",
    "bokeh-file": "bokeh chart",
    "graph-file": "graph",
}


def plain(value: Any) -> Any:
    """``value`` decoded if it is still JSON text (a lazy summary's ``RawJSON``)."""
    if isinstance(value, RawJSON):
        return json_value(value)
    return value


def describe_value(value: Any, key: str = "") -> str:
    """``value`` (of config or summary ``key``, if known) as one short line of plain text."""
    if isinstance(value, RawJSON) and len(value) > BIG_JSON_TEXT:
        return _describe_big_text(value)
    value = plain(value)
    if isinstance(value, DeepJSON):
        return _describe_deep(value)
    if key and _is_number(value):
        if key == "_runtime":
            return format_duration(float(value))
        if is_time_key(key) and _EPOCH_LOW <= value <= _EPOCH_HIGH:
            return format_time(float(value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, dict):
        media = describe_media(value)
        if media is not None:
            return media
    if isinstance(value, (dict, list, tuple)):
        return one_line(value)
    return str(value)


def _describe_big_text(text: str, limit: int = LINE_LIMIT) -> str:
    """Its first characters as written: decoding megabytes on every redraw to show a line would stall the view."""
    tail = f"… ({format_value(len(text), 'B')} of JSON)"
    return text[: max(1, limit - len(tail))].replace("\r", "\\r").replace("\n", "\\n") + tail


def _describe_deep(value: DeepJSON) -> str:
    shallow = value.shallow(DEEP_LEVELS_SHOWN)
    head = one_line(shallow) if isinstance(shallow, (dict, list)) else str(shallow)
    return f"{head} ({value.depth():,} levels)"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and is_finite(value)


def is_finite(number: float) -> bool:
    """``math.isfinite`` for any number from a file: an int no float can hold counts as not finite."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def is_time_key(key: str) -> bool:
    """Whether ``key`` names a point in time (``_timestamp``, ``start_time``, ``eval/timestamp`` …)."""
    name = key.lower()
    return name.endswith("timestamp") or name.endswith("_time")


def format_time(seconds: float) -> str:
    """A unix time as a local date and time, ``2026-11-24 00:05:33``; ``?`` for a time no calendar holds."""
    return clock_text(seconds)


def format_duration(seconds: float) -> str:
    """A length of time, coarser as it grows: ``4.2s``, ``42s``, ``7m 3s``, ``5h 7m``, ``2d 3h``."""
    if not is_finite(seconds):
        return format_number(seconds)
    seconds = max(0.0, float(seconds))
    if seconds >= LONGEST_WHOLE:
        return in_days(seconds)
    if seconds < 60:
        if seconds < 10 and seconds != int(seconds):
            return f"{seconds:.1f}s"
        return f"{int(seconds)}s"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s"


def format_number(value: float) -> str:
    """Six significant digits; big values (counters, times) keep their whole digits."""
    if isinstance(value, int):
        return _int_text(value)
    if not math.isfinite(value):
        return str(value)
    if 1e6 <= abs(value) < 1e15:
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{value:.6g}"


def _int_text(value: int) -> str:
    """An int whole up to ``_WHOLE_DIGITS`` digits, past that as ``1.23457e+400`` (no float holds it)."""
    if -_WHOLE_BELOW < value < _WHOLE_BELOW:
        return str(value)
    mantissa, _, exponent = f"{Decimal(value):.6g}".partition("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"


def one_line(value: Any, limit: int = LINE_LIMIT) -> str:
    """A list or object as compact JSON on one line, cut to ``limit`` characters."""
    try:
        # Only what can show: a list of a million items costs its first ``limit`` here.
        text = json.dumps(_preview(value, [limit]), ensure_ascii=False, default=str, allow_nan=True)
    except (TypeError, ValueError):
        text = _repr(value)
    except RecursionError:  # nested deeper than Python recurses: not from a file (those are cut), so say little
        text = "…"
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) <= limit:
        return text
    if isinstance(value, (list, tuple)):
        tail = f"… ({len(value):,} items)"
    elif isinstance(value, dict):
        tail = f"… ({len(value):,} keys)"
    else:
        tail = "…"
    return text[: max(1, limit - len(tail))] + tail


def _preview(value: Any, room: list[int]) -> Any:
    """``value`` with its containers cut once ``room[0]`` entries in all were taken (each shows as a character or more)."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, inner in value.items():
            if room[0] <= 0:
                break
            room[0] -= 1
            out[key] = _preview(inner, room)
        return out
    if isinstance(value, (list, tuple)):
        items = []
        for inner in value:
            if room[0] <= 0:
                break
            room[0] -= 1
            items.append(_preview(inner, room))
        return items
    return value


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except (RecursionError, ValueError):
        return "…"


# ---------------------------------------------------------------- media


def is_media(value: Any) -> bool:
    """Whether ``value`` is a W&B media object (a dict with a media ``_type``)."""
    return isinstance(value, dict) and _media_type(value.get("_type")) is not None


def _media_type(kind: Any) -> str | None:
    """``kind`` if it names a media type (known, or any ``…-file``)."""
    kind = plain(kind)
    if not isinstance(kind, str):
        return None
    if kind in _MEDIA_NOUNS or kind.endswith("-file") or kind.endswith("-table"):
        return kind
    return None


def media_noun(kind: str) -> str:
    """What a person calls a media type: ``image-file`` → ``image``."""
    noun = _MEDIA_NOUNS.get(kind)
    if noun is not None:
        return noun
    return kind.removesuffix("-file").replace("-", " ").replace("_", " ") or "media"


def describe_media(value: Mapping[str, Any]) -> str | None:
    """A media object as ``image 640×480``, ``table 10×3``, ``histogram 64 bins`` …; None if it is not one."""
    kind = _media_type(value.get("_type"))
    if kind is None:
        return None
    noun = media_noun(kind)
    get = _getter(value)
    if kind == "images/separated":
        count = _whole(get("count"))
        size = _size(get("width"), get("height"))
        head = f"{count} images" if count is not None else "images"
        return f"{head} {size}" if size else head
    if kind == "image-file":
        size = _size(get("width"), get("height"))
        return f"image {size}" if size else "image"
    if noun.endswith("table"):
        rows, cols = _whole(get("nrows")), _whole(get("ncols"))
        if rows is not None and cols is not None:
            return f"{noun} {rows:,}×{cols:,}"
        if rows is not None:
            return f"{noun} {rows:,} rows"
        return noun
    if kind == "histogram":
        bins = _histogram_bins(get)
        return f"histogram {bins} bins" if bins is not None else "histogram"
    return noun


def _getter(value: Mapping[str, Any]) -> Any:
    """Field lookup on a media object, plain or with dotted inner keys (``packedBins.count``)."""

    def get(name: str) -> Any:
        found = plain(value.get(name))
        if found is None and "." in name:
            outer, inner = name.split(".", 1)
            nested = plain(value.get(outer))
            if isinstance(nested, dict):
                found = plain(nested.get(inner))
        return found

    return get


def _whole(value: Any) -> int | None:
    if _is_number(value) and float(value) == int(value):
        return int(value)
    return None


def _size(width: Any, height: Any) -> str:
    width, height = _whole(width), _whole(height)
    if width is None or height is None:
        return ""
    return f"{width}×{height}"


def _histogram_bins(get: Any) -> int | None:
    values = get("values")
    if isinstance(values, list):
        return len(values)
    packed = _whole(get("packedBins.count"))
    if packed is not None:
        return packed
    bins = get("bins")
    if isinstance(bins, list) and bins:
        return len(bins) - 1
    return None


def collapse_media(values: Mapping[str, Any]) -> dict[str, Any]:
    """Media the SDK split into dotted keys (``img._type``, ``img.width`` …) joined again as ``img = {...}``.

    Other keys pass through unchanged, in their order.
    """
    kinds = {}
    for key, value in values.items():
        if key.endswith("._type"):
            kind = _media_type(value)
            if kind is not None:
                kinds[key[: -len("._type")]] = kind
    if not kinds:
        return dict(values)
    # The longest name first, so media nested in media (rare) finds its own object.
    names = sorted(kinds, key=len, reverse=True)
    joined: dict[str, dict[str, Any]] = {name: {} for name in kinds}
    out: dict[str, Any] = {}
    for key, value in values.items():
        owner = next((name for name in names if key.startswith(name + ".")), None)
        if owner is None:
            out[key] = value
            continue
        if owner not in out:
            out[owner] = joined[owner]
        joined[owner][key[len(owner) + 1 :]] = plain(value)
    return out


__all__ = [
    "DEEP_LEVELS_SHOWN",
    "LINE_LIMIT",
    "collapse_media",
    "describe_media",
    "describe_value",
    "format_duration",
    "format_number",
    "format_time",
    "is_finite",
    "is_media",
    "is_time_key",
    "media_noun",
    "one_line",
    "plain",
]
