"""Short, readable numbers with units for labels, legends and axes.

Units: "%", "°C", "W", "Hz", "B", "B/s" and "" (a plain count); any other
unit is a plain number followed by the unit. Pure Python, no Textual.

Sizes ("B") and rates ("B/s") follow one rule wherever they are shown:
binary prefixes, a space before the unit, three significant digits with
trailing zeros kept ("3.91 MiB", "15.2 MiB", "1.00 GiB"), and the next prefix
before a number reaches 1000 ("1000 MiB" reads "0.98 GiB"). A size is then
never wider than ``SIZE_WIDTH`` cells (``RATE_WIDTH`` for a rate); a table
column narrower than that gets one narrower form for every row (see
:func:`format_value`'s ``width``), so a column never mixes spacings.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import NamedTuple, Sequence

from leet.common.ticks import LIMIT, integer_ticks, nice_ticks

MISSING = "–"

_BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_SI = ("", "k", "M", "G", "T", "P", "E")
_NONE = ("",)

# Sizes and rates take the next prefix before their number reaches this:
# "0.98 GiB", never "1000 MiB".
_SWITCH = 1000
_SIZE_SYMBOLS = ("B", "B/s")

SIZE_WIDTH = 8  # the widest size: "0.98 GiB", "9.99 MiB", "999 MiB"
RATE_WIDTH = 10  # the widest rate: "0.98 GiB/s"

# Beyond this spread between the smallest and largest tick an axis is
# logarithmic, and its labels are formatted one by one.
_LOG_SPREAD = 100.0
# A value this many times the unit's largest prefix (or more) reads as 1.5e+308:
# in whole digits it would fill the chart.
_WHOLE_BEYOND = 1e6


class _Style(NamedTuple):
    symbol: str
    base: float  # prefix step; 1 means no prefixes
    prefixes: tuple[str, ...]
    space: bool  # "350 W" rather than "350W"
    digits: int  # significant digits for a single value
    max_decimals: int
    whole_below_base: bool  # bytes: "512 B", never "0.08 B"


_STYLES = {
    "%": _Style("%", 1, _NONE, False, 2, 2, False),
    "°C": _Style("°C", 1, _NONE, False, 2, 1, False),
    "W": _Style("W", 1000, _SI, True, 2, 1, False),
    "Hz": _Style("Hz", 1000, _SI, True, 3, 2, False),
    "B": _Style("B", 1024, _BINARY, True, 2, 1, True),
    "B/s": _Style("B/s", 1024, _BINARY, True, 2, 1, True),
    "": _Style("", 1000, _SI, False, 3, 6, False),
}


def _style(unit: str) -> tuple[_Style, str]:
    """The style to format with, and any foreign unit to append after a space."""
    style = _STYLES.get(unit)
    if style is not None:
        return style, ""
    return _STYLES[""], unit


def prefix_step(unit: str) -> float:
    """How far apart the unit's prefixes are: 1024 for bytes, 1000 for SI, 1 for none."""
    return _style(unit)[0].base


def _special(value: float) -> str | None:
    if math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return None


def _prefix_index(magnitude: float, style: _Style) -> int:
    """The prefix a magnitude takes: the next one from 1000 of the current (1000 B is 0.98 KiB)."""
    index = 0
    while magnitude >= min(style.base, _SWITCH) and index < len(style.prefixes) - 1 and style.base > 1:
        magnitude /= style.base
        index += 1
    return index


# -- sizes and rates ------------------------------------------------------------


class _SizeForm(NamedTuple):
    """How a size is written: significant digits, a space before the unit, one-letter prefixes."""

    digits: int
    space: bool
    short: bool  # "3.9M" for "3.9 MiB", as htop writes sizes


# Widest first; a width picks the first form whose widest text fits, for every value alike.
_SIZE_FORMS = (
    _SizeForm(3, True, False),  # "9.99 MiB", 8 cells (10 for a rate)
    _SizeForm(2, True, False),  # "9.9 MiB", 7 cells (9 for a rate)
    _SizeForm(2, False, True),  # "9.9M", 4 cells (6 for a rate)
)


def _form_width(form: _SizeForm, symbol: str) -> int:
    number = max(form.digits + 1, 3)  # "9.99", "0.98" or "999"; "9.9", "1.0" or "999"
    rate = len(symbol) - 1  # "/s"
    return number + form.space + (1 if form.short else 3) + rate


def _size_form(width: int | None, symbol: str) -> _SizeForm:
    for form in _SIZE_FORMS:
        if width is None or _form_width(form, symbol) <= width:
            return form
    return _SIZE_FORMS[-1]


def _significant(scaled: float, digits: int) -> str:
    """``scaled`` (0.1 or more) to ``digits`` significant digits, at most ``digits - 1`` decimals, zeros kept."""
    if scaled == 0:
        return "0"
    decimals = min(max(digits - 1 - math.floor(math.log10(scaled)), 0), digits - 1)
    text = f"{scaled:.{decimals}f}"
    if decimals and len(text.replace(".", "").lstrip("0")) > digits:
        text = f"{scaled:.{decimals - 1}f}"  # 9.996 rounded up to "10.00": one decimal fewer
    return text


def _size_number(magnitude: float, style: _Style, digits: int, index: int | None = None) -> tuple[str, int]:
    """The number and the prefix index for a size: whole bytes, else below 1000 of the prefix.

    With ``index`` the number is written in that prefix instead.
    """
    last = len(style.prefixes) - 1
    current = 0 if index is None else index
    while True:
        if current == 0:
            number = f"{magnitude:.0f}" if magnitude >= 1 else "0"  # never "0.08 B", nor 0.9 B as 1
        else:
            number = _significant(magnitude / style.base**current, digits)
        if index is not None or float(number) < _SWITCH or current == last:
            return number, current
        current += 1


def _size_unit(index: int, style: _Style, form: _SizeForm) -> str:
    if form.short:
        letter = style.prefixes[index][:1] or "B"
        return letter + style.symbol[1:]  # "M", "M/s", "B", "B/s"
    return style.prefixes[index] + style.symbol


def _size_text(value: float, style: _Style, form: _SizeForm) -> str:
    number, index = _size_number(abs(value), style, form.digits)
    sign = "-" if value < 0 and float(number) != 0 else ""
    unit = _size_unit(index, style, form)
    return f"{sign}{number} {unit}" if form.space else f"{sign}{number}{unit}"


def format_used_total(used: float, total: float, unit: str) -> str:
    """A used amount and its total: "6.21/31.3 GiB", "0.55/8.00 GiB", "0/0 B", "9.90 MiB/31.3 GiB".

    Sizes share the total's prefix when the used amount reads at least 0.1
    in it (or is zero), and then the unit is written once; otherwise, and
    for other units, both are written in full.
    """
    style, _ = _style(unit)
    whole = format_value(total, unit)
    if unit not in _SIZE_SYMBOLS or not (math.isfinite(used) and math.isfinite(total)) or _beyond_prefixes(abs(total), style):
        return f"{format_value(used, unit)}/{whole}"
    form = _SIZE_FORMS[0]
    own, index = _size_number(abs(used), style, form.digits)
    _, total_index = _size_number(abs(total), style, form.digits)
    shared = index == total_index or float(own) == 0 or (index < total_index and abs(used) >= 0.1 * style.base**total_index)
    if not shared:
        return f"{format_value(used, unit)}/{whole}"
    number, _ = _size_number(abs(used), style, form.digits, total_index)
    sign = "-" if used < 0 and float(number) != 0 else ""
    return f"{sign}{number}/{whole}"


def _decimals(scaled: float, style: _Style) -> int:
    if scaled == 0:
        return 0
    wanted = style.digits - 1 - math.floor(math.log10(abs(scaled)))
    return min(max(wanted, 0), style.max_decimals)


def _number(scaled: float, decimals: int, trim: bool) -> str:
    text = f"{scaled:.{decimals}f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def _join(number: str, prefix: str, style: _Style, space: bool) -> str:
    suffix = prefix + style.symbol
    if not suffix:
        return number
    return f"{number} {suffix}" if space else number + suffix


def _beyond_prefixes(magnitude: float, style: _Style) -> bool:
    return magnitude >= _WHOLE_BEYOND * style.base ** (len(style.prefixes) - 1)


def _scientific(value: float | int, style: _Style, space: bool) -> str:
    """``value`` as ``1.7e+308``, in the style's digits; Decimal holds ints past any float."""
    number = f"{Decimal(value):.{style.digits}g}" if isinstance(value, int) else f"{value:.{style.digits}g}"
    mantissa, _, exponent = number.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return _join(f"{mantissa}e{exponent}" if exponent else mantissa, "", style, space)


def _plain_tiny(value: float, style: _Style) -> str | None:
    """Plain numbers too small for decimals read better as 1.5e-5."""
    if style.symbol or value == 0 or abs(value) >= 1e-3:
        return None
    return f"{value:.{style.digits}g}".replace("e-0", "e-")


def _format(value: float, style: _Style, decimals: int | None, space: bool) -> tuple[str, int]:
    """The text and the decimals used (``None`` picks them from the value)."""
    magnitude = abs(value)
    if style.whole_below_base and magnitude < 1:
        return _join("0", "", style, space), 0
    index = _prefix_index(magnitude, style)
    while True:
        scaled = value / style.base**index
        whole = style.whole_below_base and index == 0
        places = 0 if whole else decimals if decimals is not None else _decimals(scaled, style)
        if abs(round(scaled, places)) >= style.base > 1 and index < len(style.prefixes) - 1:
            index += 1  # 1023.7 B rounds to 1024 B: say 1 KiB instead
            continue
        return _join(_number(scaled, places, trim=True), style.prefixes[index], style, space), places


def format_value(value: float, unit: str, width: int | None = None) -> str:
    """``value`` in ``unit``, short: "42%", "1.50 KiB", "1.41 GHz", "3.4M", "61°C".

    NaN is "–". Sizes and rates follow the module's rule. With ``width``, a
    size or rate takes the widest form that fits ``width`` for any value
    ("9.99 MiB" from 8 cells, "9.9 MiB" from 7, "9.9M" below), so a table
    column is written alike in every row; other units drop the space before
    the unit, then decimals, until the text fits. Digits left of the point
    are never cut. Values far past the unit's largest prefix (and ints past
    any float) read as ``1.7e+308``.
    """
    style, foreign = _style(unit)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT_INT:
        return _with_foreign(_scientific(value, style, style.space), foreign)
    special = _special(value)
    if special is not None:
        return special
    tiny = _plain_tiny(value, style)
    if tiny is not None:
        text = tiny
    elif _beyond_prefixes(abs(value), style):
        text = _scientific(value, style, style.space)
    elif style.symbol in _SIZE_SYMBOLS:
        text = _size_text(value, style, _size_form(width, style.symbol))
    else:
        text = _fitted(value, style, None if width is None else width - _extra(foreign))
    return _with_foreign(text, foreign)


_FLOAT_INT = 2**1023  # past this an int may not fit a float


def _with_foreign(text: str, foreign: str) -> str:
    return f"{text} {foreign}" if foreign else text


def _fitted(value: float, style: _Style, width: int | None) -> str:
    """The most precise text that fits ``width``; the space before the unit goes before digits do."""
    text, decimals = _format(value, style, None, style.space)
    if width is None or len(text) <= width:
        return text
    spacings = (True, False) if style.space else (False,)
    for places in range(decimals, -1, -1):
        for space in spacings:
            text, _ = _format(value, style, places, space)
            if len(text) <= width:
                return text
    return text


def _extra(foreign: str) -> int:
    return len(foreign) + 1 if foreign else 0


def _shared_decimals(scaled: Sequence[float], gap: float) -> int | None:
    """Fewest decimals that show every value exactly (to a millionth of ``gap``), or None beyond six."""
    tolerance = 1e-6 * gap
    for decimals in range(7):
        if all(abs(v - round(v, decimals)) <= tolerance for v in scaled):
            return decimals
    return None


def _smallest_gap(scaled: Sequence[float]) -> float | None:
    ordered = sorted(set(scaled))
    return min((b - a for a, b in zip(ordered, ordered[1:])), default=None)


def _labels_with_prefix(ticks: Sequence[float], style: _Style, index: int) -> list[str] | None:
    divisor = style.base**index
    scaled = [t / divisor for t in ticks if math.isfinite(t)]
    gap = _smallest_gap(scaled)
    if gap is None:
        decimals = _shared_decimals(scaled, 1.0) or 0
    else:
        # Show the gap to two digits, fewer when the ticks are rounder than
        # that; ticks that are not round in this prefix (bytes stepped in
        # powers of ten) are rounded to what tells them apart.
        decimals = max(0, 1 - math.floor(math.log10(gap)))
        exact = _shared_decimals(scaled, gap)
        if exact is not None:
            decimals = min(decimals, exact)
    if decimals > 6:
        return None
    prefix = style.prefixes[index]
    labels = []
    for tick in ticks:
        special = _special(tick)
        if special is not None:
            labels.append(special)
        elif tick == 0:
            labels.append(_join("0", prefix if style.symbol else "", style, style.space))
        else:
            labels.append(_join(_number(tick / divisor, decimals, trim=False), prefix, style, style.space))
    finite = {(tick, label) for tick, label in zip(ticks, labels) if math.isfinite(tick)}
    if len({label for _, label in finite}) < len({tick for tick, _ in finite}):
        return None  # rounding merged ticks
    return labels


def format_axis_labels(ticks: Sequence[float], unit: str) -> list[str]:
    """Labels for one axis with a shared prefix and precision so they align.

    0, 0.5 GiB, 1 GiB → "0 GiB", "0.5 GiB", "1.0 GiB". Ticks spread over more
    than a factor of 100 (a log axis) are formatted one by one.
    """
    style, foreign = _style(unit)
    nonzero = [abs(t) for t in ticks if math.isfinite(t) and t != 0]
    if nonzero and (max(nonzero) / min(nonzero) >= _LOG_SPREAD or _beyond_prefixes(max(nonzero), style)):
        return [format_value(t, unit) for t in ticks]
    if not nonzero:
        labels = [_special(t) or _join("0", "", style, style.space) for t in ticks]
    else:
        index = _prefix_index(max(nonzero), style)
        # Sizes never read 1000 or more of a prefix: only their own prefix will do.
        smallest = index if style.symbol in _SIZE_SYMBOLS else 0
        choices = [_labels_with_prefix(ticks, style, i) for i in range(index, smallest - 1, -1)]
        usable = [labels for labels in choices if labels is not None]
        if not usable:
            return [format_value(t, unit) for t in ticks]
        # The shorter set wins; on a tie the larger prefix (listed first) does.
        labels = min(usable, key=lambda found: max(len(label) for label in found))
    return [f"{label} {foreign}" if foreign and label != MISSING else label for label in labels]


def axis_ticks(lo: float, hi: float, unit: str, target: int = 4, integer: bool = False) -> tuple[list[float], list[str]]:
    """Round ticks covering [lo, hi] in the unit's own prefix, with their labels.

    Byte axes step in binary units (0, 256 MiB, 512 MiB …) and never show
    fractions of a byte; other units use ``nice_ticks``. ``integer`` (a
    count: processes, threads, errors) keeps every tick a whole number:
    0, 1, 2 rather than 0, 0.5, 1, 1.5, 2.
    """
    style, _ = _style(unit)
    # Past ±LIMIT a tick times its prefix would overflow to infinity.
    lo, hi = min(max(lo, -LIMIT), LIMIT), min(max(hi, -LIMIT), LIMIT)
    if style.base == 1:
        ticks = nice_ticks(lo, hi, target)
    else:
        index = _prefix_index(max(abs(lo), abs(hi)), style)
        while True:
            divisor = style.base**index
            if index == 0 and style.whole_below_base:
                ticks = [float(t) for t in integer_ticks(lo, hi, target)]
            else:
                ticks = [_clean_product(t, divisor) for t in nice_ticks(lo / divisor, hi / divisor, target)]
            top = max(abs(t) for t in ticks) / divisor
            if top >= min(style.base, _SWITCH) and index < len(style.prefixes) - 1:
                index += 1
                continue
            break
    if integer and not all(t.is_integer() for t in ticks):
        ticks = [float(t) for t in integer_ticks(lo, hi, target)]
    return ticks, format_axis_labels(ticks, unit)


def _clean_product(value: float, divisor: float) -> float:
    return float(f"{value * divisor:.15g}") + 0.0
