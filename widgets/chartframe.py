"""Lay out one chart panel as rows of styled runs: frame, title, axes, plot.

Pure: no Textual. The widget in ``chart.py`` turns these rows into cached
Strips and repaints only the cells that changed, so everything a person sees
in a chart is decided here and can be tested as plain text. With ``ascii``
every character of the panel is ASCII (see ``glyphs`` and ``asciicanvas``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple, Sequence

from rich.cells import cell_len, set_cell_size

from leet.common.text import clean
from leet.common.ticks import integer_ticks, log_ticks, time_ticks
from leet.common.units import axis_ticks, format_axis_labels, format_value, prefix_step
from widgets.glyphs import heat_glyph, to_ascii
from widgets.raster import (
    ASCII_BAND_SHADE,
    BAND,
    BAND_MIDDLE,
    HEAT_LEVELS,
    LIMIT,
    SeriesView,
    heatmap_layout,
    render_band,
    render_heatmap,
    render_lines,
    tame,
    y_bounds,
)

Run = tuple[str, str]  # (text, style key)
Row = list[Run]

MODES = ("line", "log", "heatmap", "spread")

BAND_MARK = "⢕"  # the band's shade, as the legend shows it
MARKER = "▲"  # an event on the x-axis row (``^`` in ASCII)
MARKER_STYLES = {"info": "key", "warning": "warn", "warn": "warn", "error": "error"}
_MARKER_RANK = {"info": 1, "warning": 2, "warn": 2, "error": 3}


@dataclass(frozen=True)
class ChartView:
    """Everything needed to draw one chart, independent of any widget.

    Mode "spread" draws ``band`` (lo to hi shaded, its mean as a line) with
    ``data`` as highlighted lines over it; without a band it draws as "line".
    With ``groups``, series of one group share a colour (``series_group``
    gives each series' group) and the legend names groups. ``markers``
    are ``(x, level)`` events (``info``, ``warning``, ``error``) marked on the
    x-axis row in the level's colour, the most severe where several share a cell.
    """

    title: str
    unit: str = ""
    series_names: tuple[str, ...] = ()
    data: tuple[SeriesView, ...] = ()
    x_range: tuple[float, float] = (0.0, 1.0)
    y_min: float | None = None
    y_max: float | None = None
    percent: bool = False
    mode: str = "line"
    x_kind: str = "time"  # "time" (wall clock) or "step"
    empty_note: str = "waiting for data"
    time_format: Callable[[float], str] | None = field(default=None, compare=False)
    band: SeriesView | None = None
    band_name: str = ""  # legend text for the band, e.g. "4 nodes"
    note: str = ""  # a warning after the title, e.g. which series lags the rest
    groups: tuple[str, ...] = ()
    series_group: tuple[int, ...] = ()
    integer: bool = False  # the values are counts: y ticks are whole numbers
    markers: tuple[tuple[float, str], ...] = ()  # (x, level) events marked on the x-axis row
    faint: tuple[SeriesView, ...] = ()  # raw lines drawn dim behind ``data`` (a smoothed chart), named nowhere

    def __post_init__(self) -> None:
        if self.mode == "spread" and self.band is None:
            object.__setattr__(self, "mode", "line")

    def plotted(self) -> tuple[SeriesView, ...]:
        """Every series that takes part in the y range."""
        if self.band is not None and self.mode == "spread":
            return (self.band, *self.data)
        return (*self.faint, *self.data) if self.faint else self.data

    def color(self, index: int) -> str:
        """Style key of series ``index`` in line and log mode."""
        if index < len(self.series_group):
            index = self.series_group[index]
        return f"s{index % 12}"


def text_width(text: str) -> int:
    return cell_len(text)


def fit(text: str, width: int) -> str:
    """Cut to ``width`` cells, marking the cut with an ellipsis."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    if width == 1:
        return "…"
    return cut_cells(text, width - 1) + "…"


def cut_cells(text: str, width: int) -> str:
    """The longest start of ``text`` that fits ``width`` cells (a wide character never half drawn)."""
    used = 0
    for index, character in enumerate(text):
        used += cell_len(character)
        if used > width:
            return text[:index]
    return text


def _tail_cells(text: str, width: int) -> str:
    """The longest end of ``text`` that fits ``width`` cells."""
    return cut_cells(text[::-1], width)[::-1]


def _latest(series: SeriesView) -> float:
    for value in reversed(series.mean):
        if math.isfinite(value):
            return value
    return math.nan


def headline(view: ChartView) -> str:
    """The value shown at the top right: the newest reading."""
    if view.mode == "spread" and view.band is not None:
        middle = _latest(view.band)
        return f"med {format_value(middle, view.unit)}" if math.isfinite(middle) else ""
    if not view.data:
        return ""
    latest = [_latest(s) for s in view.data]
    finite = [v for v in latest if math.isfinite(v)]
    if not finite:
        return ""
    if len(view.data) == 1:
        return format_value(finite[0], view.unit)
    if view.percent:
        return f"avg {format_value(sum(finite) / len(finite), view.unit)}"
    return f"max {format_value(max(finite), view.unit)}"


def chart_title(view: ChartView) -> str:
    # Titles and names may come from files: never let a control sequence through.
    title = clean(view.title)
    if view.unit:
        title += f" ({view.unit})"
    if len(view.series_names) > 1 and view.mode != "spread":
        title += f" [{len(view.series_names)}]"
    return title


_MIN_NOTE = 8  # a note cut shorter than this says nothing


def _top_border(view: ChartView, width: int, focused: bool) -> Row:
    """``╭─ Title (unit) ─ note ──── value ╮``: the title wins when space is short, then the note."""
    frame = "frame-focus" if focused else "frame"
    title_style = "title-focus" if focused else "title"
    inner = width - 2
    title = chart_title(view)
    note = clean(view.note)
    value = headline(view)
    wanted = cell_len(title) + (cell_len(note) + 3 if note else 0)
    value_part = f" {value} " if value and wanted + cell_len(value) + 6 <= inner else ""
    room = inner - 2 - cell_len(value_part)  # "─" before the title, at least one after
    title = fit(title, room - 2)
    title_part = f" {title} " if title else ""
    note_room = room - cell_len(title_part) - 3  # "─" before the note and its two spaces
    note_part = f" {fit(note, note_room)} " if note and note_room >= _MIN_NOTE else ""
    fill = inner - 1 - cell_len(title_part) - cell_len(value_part) - (cell_len(note_part) + 1 if note_part else 0)
    row: Row = [("╭─", frame)]
    if title_part:
        row.append((title_part, title_style))
    if note_part:
        row.extend([("─", frame), (note_part, "warn")])
    row.append(("─" * max(0, fill), frame))
    if value_part:
        row.append((value_part, "value"))
    row.append(("╮", frame))
    return trim_row(row, width)


def fit_middle(text: str, width: int) -> str:
    """Cut from the middle: run names often differ only at their ends."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return cut_cells(text, max(0, width))
    head = (width - 1) * 2 // 5
    start = cut_cells(text, head)
    return start + "…" + _tail_cells(text, width - 1 - cell_len(start))


def fit_apart(names: Sequence[str], width: int) -> list[str]:
    """Cut each name to ``width`` cells so that names that differ still read differently.

    Cut in the middle first; when that makes two alike, drop the start and
    the end every name shares, and cut what is left.
    """
    shown = [fit_middle(name, width) for name in names]
    if len(set(shown)) == len(set(names)):
        return shown
    return [fit_middle(name, width) for name in _without_shared(names)]


def _without_shared(names: Sequence[str]) -> list[str]:
    """Each name less the start and end every name shares, marked ``…`` where cut."""
    if len(names) < 2 or len(set(names)) < len(names):
        return list(names)
    shortest = min(len(name) for name in names)
    prefix = 0
    while prefix < shortest and len({name[prefix] for name in names}) == 1:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and len({name[len(name) - 1 - suffix] for name in names}) == 1:
        suffix += 1
    parts = []
    for name in names:
        middle = name[prefix : len(name) - suffix]
        parts.append(("…" if prefix else "") + middle + ("…" if suffix else ""))
    return parts


class _Entry(NamedTuple):
    """One legend entry: a coloured mark, a name and the newest value (NaN: none)."""

    mark: str
    style: str
    name: str
    value: float


def _legend_entries(view: ChartView, ascii: bool = False) -> list[_Entry]:
    if view.mode == "spread":
        mark = ASCII_BAND_SHADE if ascii else BAND_MARK
        entries = [_Entry(mark, "band", view.band_name, math.nan)] if view.band_name else []
        entries.append(_Entry("●", "median", "median", _latest(view.band) if view.band else math.nan))
        entries += [_Entry("●", "outlier", name, _latest(series)) for name, series in zip(view.series_names, view.data)]
        return entries
    if view.mode == "heatmap" or len(view.series_names) < 2:
        return []
    if view.groups:
        return _group_entries(view)
    return [_Entry("●", view.color(i), name, _latest(series)) for i, (name, series) in enumerate(zip(view.series_names, view.data))]


def _group_entries(view: ChartView) -> list[_Entry]:
    """One entry per group that has series; its value is the mean of their newest readings."""
    latest: dict[int, list[float]] = {}
    for index, series in enumerate(view.data):
        group = view.series_group[index] if index < len(view.series_group) else index
        value = _latest(series)
        latest.setdefault(group, []).extend([value] if math.isfinite(value) else [])
    entries = []
    for group in sorted(latest):
        name = view.groups[group] if 0 <= group < len(view.groups) else ""
        values = latest[group]
        entries.append(_Entry("●", f"s{group % 12}", name, sum(values) / len(values) if values else math.nan))
    return entries


def _legend_texts(view: ChartView, entries: Sequence[_Entry], with_values: bool, name_width: int | None) -> list[str]:
    texts = []
    names = [clean(entry.name) for entry in entries]
    if name_width is not None:
        names = fit_apart(names, name_width)
    for entry, name in zip(entries, names):
        value = entry.value
        texts.append(f" {name} {format_value(value, view.unit)}" if with_values and math.isfinite(value) else f" {name}")
    return texts


def _legend(view: ChartView, width: int, ascii: bool = False) -> Row:
    """Coloured series names for the bottom border when several series share a chart.

    When everything does not fit, the values go first, then names are cut in
    the middle to an equal share, so every series stays named.
    """
    entries = _legend_entries(view, ascii)
    count = len(entries)
    if not entries:
        return []
    share = max(4, width // count - 3)
    for texts in (
        _legend_texts(view, entries, True, None),
        _legend_texts(view, entries, False, None),
        _legend_texts(view, entries, False, share),
    ):
        if sum(cell_len(text) + 2 for text in texts) <= width:
            break
    runs: Row = []
    used = 0
    for entry, text in zip(entries, texts):
        if used + cell_len(text) + 2 > width:
            runs.append((" …", "muted"))
            break
        runs.append((f" {entry.mark}", entry.style))
        runs.append((text, "label"))
        used += cell_len(text) + 2
    if runs:
        runs.append((" ", "label"))
    return runs


def heat_scale(lo: float, hi: float, unit: str, width: int, ascii: bool = False) -> Row:
    """`` 0% ░░▒▒▓▓██ 100% ``: the heatmap's shades (in their colours) from ``lo`` to ``hi``.

    The end values go first when ``width`` is short, then the whole scale.
    """
    shades: Row = [(heat_glyph(level, HEAT_LEVELS, ascii), f"h{level}") for level in range(HEAT_LEVELS)]
    low, high = format_value(lo, unit), format_value(hi, unit)
    if len(low) + len(high) + HEAT_LEVELS + 5 <= width:
        return [(f" {low} ", "label"), *shades, (f" {high} ", "label")]
    if HEAT_LEVELS + 2 <= width:
        return [(" ", "label"), *shades, (" ", "label")]
    return []


def _bottom_border(view: ChartView, width: int, focused: bool, heat: tuple[float, float] | None = None, ascii: bool = False) -> Row:
    """Legend (or the heatmap's scale) on the left, the chart's mode (when not plain lines) on the right."""
    frame = "frame-focus" if focused else "frame"
    inner = width - 2
    mode = f" {'log y' if view.mode == 'log' else view.mode} " if view.mode != "line" else ""
    if len(mode) + 4 > inner:
        mode = ""
    room = inner - 3 - len(mode)
    legend = heat_scale(*heat, view.unit, room, ascii) if heat is not None else _legend(view, room, ascii)
    legend_width = sum(cell_len(text) for text, _ in legend)
    row: Row = [("╰─", frame)]
    row.extend(legend)
    row.append(("─" * max(0, inner - 2 - legend_width - len(mode)), frame))
    if mode:
        row.append((mode, "warn"))
    row.append(("─╯", frame))
    return trim_row(row, width)


def trim_row(row: Row, width: int) -> Row:
    """Cut or pad a row to exactly ``width`` cells."""
    out: Row = []
    used = 0
    for text, style in row:
        if used >= width:
            break
        if used + cell_len(text) > width:
            text = set_cell_size(text, width - used)
        out.append((text, style))
        used += cell_len(text)
    if used < width:
        out.append((" " * (width - used), "empty"))
    return out


# A log axis spans at most these powers of ten: each has a tick a float can hold.
_LOG_FLOOR, _LOG_CEILING = 1 / LIMIT, LIMIT


def _y_range(view: ChartView, t0: float, t1: float) -> tuple[float, float] | None:
    """The data's y range, tamed: an axis steps through it without overflow or subnormal ticks."""
    if view.mode == "log":
        bounds = y_bounds(view.data, t0, t1, positive=True)
        if bounds is None:
            return None
        return _log_bound(bounds[0]), _log_bound(bounds[1])
    bounds = y_bounds(view.plotted(), t0, t1)
    if bounds is None:
        return None
    lo, hi = tame(bounds[0]), tame(bounds[1])
    if view.y_min is not None:
        lo = min(lo, view.y_min)
    if view.percent:
        lo, hi = min(lo, 0.0), max(hi, 100.0)
    return lo, hi


def _log_bound(value: float) -> float:
    return min(max(value, _LOG_FLOOR), _LOG_CEILING)


def _axis(view: ChartView, lo: float, hi: float, rows: int) -> tuple[float, float, list[float], list[str]]:
    """Axis bounds, tick values and their labels, all sharing one unit prefix."""
    target = max(2, min(5, rows // 3))
    if view.mode == "log":
        ticks = log_ticks(lo, hi, target, prefix_step(view.unit))
        return ticks[0], ticks[-1], ticks, format_axis_labels(ticks, view.unit)
    if view.percent and lo >= 0 and hi <= 100:
        ticks = [0.0, 50.0, 100.0] if rows >= 5 else [0.0, 100.0]
        return 0.0, 100.0, ticks, format_axis_labels(ticks, view.unit)
    ticks, labels = axis_ticks(lo, hi, view.unit, target, integer=view.integer)
    return ticks[0], ticks[-1], list(ticks), list(labels)


def _tick_row(value: float, lo: float, hi: float, rows: int, log: bool) -> int:
    if log:
        lo, hi, value = math.log10(lo), math.log10(hi), math.log10(value)
    if hi == lo:
        return rows - 1
    return round((hi - value) / (hi - lo) * (rows - 1))


def _label_rows(ticks: Sequence[float], labels: Sequence[str], lo: float, hi: float, rows: int, log: bool) -> dict[int, str]:
    placed: dict[int, str] = {}
    for value, label in zip(ticks, labels):
        row = _tick_row(value, lo, hi, rows, log)
        if 0 <= row < rows and all(abs(row - other) > 1 for other in placed):
            placed[row] = label
    return placed


def _x_labels(view: ChartView, width: int) -> Row:
    t0, t1 = view.x_range
    if view.x_kind == "step":
        ticks = [t for t in integer_ticks(t0, t1, max(2, width // 10)) if t0 <= t <= t1]
        span = (t1 - t0) or 1.0
        labels = format_axis_labels([float(t) for t in ticks], "")
        marks = [(round((t - t0) / span * (width - 1)), label) for t, label in zip(ticks, labels)]
    else:
        marks = time_ticks(t0, t1, width)
    markers = marker_cells(view, width)
    line = [" "] * width
    last_end = -2
    for column, label in marks:
        start = min(max(0, column - len(label) // 2), width - len(label))
        if start <= last_end + 1 or start < 0:
            continue
        if markers and any(start - 1 <= cell <= start + len(label) for cell in markers):
            continue  # a marker's cell, and one either side, stay clear of tick labels
        line[start : start + len(label)] = list(label)
        last_end = start + len(label) - 1
    if not markers:
        return [("".join(line), "label")]
    row: Row = []
    at = 0
    for cell in sorted(markers):
        if cell > at:
            row.append(("".join(line[at:cell]), "label"))
        row.append((MARKER, MARKER_STYLES.get(markers[cell], "label")))
        at = cell + 1
    if at < width:
        row.append(("".join(line[at:]), "label"))
    return row


def marker_cells(view: ChartView, width: int) -> dict[int, str]:
    """The cell of each marker inside the x range (the cell its x is plotted in), and its level:
    the most severe where several share one."""
    t0, t1 = view.x_range
    if not view.markers or width <= 0 or not t1 > t0:
        return {}
    scale = width / (t1 - t0)
    cells: dict[int, str] = {}
    for x, level in view.markers:
        if not t0 <= x <= t1:  # NaN fails too
            continue
        cell = min(width - 1, int((x - t0) * scale))
        held = cells.get(cell)
        if held is None or _MARKER_RANK.get(level, 0) > _MARKER_RANK.get(held, 0):
            cells[cell] = level
    return cells


def _plot_rows(view: ChartView, width: int, height: int, lo: float, hi: float, ascii: bool = False) -> list[Row]:
    style: Callable[[int], str]
    if view.mode == "heatmap":
        raw = render_heatmap(view.data, width, height, view.x_range, (lo, hi), HEAT_LEVELS, ascii=ascii)
        style = _heat_style
    elif view.mode == "spread" and view.band is not None:
        raw = render_band(view.band, view.data, width, height, view.x_range, (lo, hi), ascii=ascii)
        style = _band_style
    else:
        faint = len(view.faint)
        raw = render_lines((*view.faint, *view.data), width, height, view.x_range, (lo, hi), log_y=view.mode == "log", ascii=ascii)
        style = (lambda owner: "muted" if owner < faint else view.color(owner - faint)) if faint else view.color
    return [[(text, "empty" if owner < 0 else style(owner)) for text, owner in raw_row] for raw_row in raw]


def _heat_style(owner: int) -> str:
    return f"h{owner}"


def _band_style(owner: int) -> str:
    if owner == BAND:
        return "band"
    return "median" if owner == BAND_MIDDLE else "outlier"


def _heatmap_labels(view: ChartView, rows: int) -> dict[int, str]:
    """Series names down the left edge, on the first row of each series' band."""
    labels: dict[int, str] = {}
    shown: set[int] = set()
    for row, members in enumerate(heatmap_layout(len(view.series_names), rows)):
        if members and members.start not in shown:
            shown.add(members.start)
            labels[row] = view.series_names[members.start]
    return labels


def compose_rows(view: ChartView, width: int, height: int, focused: bool = False, ascii: bool = False) -> list[Row]:
    """The whole panel, ``height`` rows of exactly ``width`` cells each; only ASCII with ``ascii``."""
    if width < 4 or height < 3:
        return [[(" " * max(0, width), "empty")] for _ in range(max(0, height))]
    if ascii:  # names in ASCII before they are measured: a wide character becomes two cells of "?"
        view = _ascii_view(view)
    frame = "frame-focus" if focused else "frame"
    inner_w, inner_h = width - 2, height - 2
    show_x = inner_h >= 4
    plot_h = inner_h - (1 if show_x else 0)
    body, heat = _body(view, inner_w, plot_h, show_x, ascii)
    rows = [_top_border(view, width, focused)]
    for content in body:
        rows.append([("│", frame), *content, ("│", frame)])
    rows.append(_bottom_border(view, width, focused, heat, ascii))
    if ascii:  # the frame, the axes, the marks: whatever is left
        rows = [trim_row([(to_ascii(text), style) for text, style in row], width) for row in rows]
    return rows


def _ascii_view(view: ChartView) -> ChartView:
    def plain(text: str) -> str:
        return to_ascii(clean(text))

    return replace(
        view, title=plain(view.title), unit=plain(view.unit), note=plain(view.note), band_name=plain(view.band_name),
        series_names=tuple(map(plain, view.series_names)), groups=tuple(map(plain, view.groups)), empty_note=plain(view.empty_note),
    )


def _body(view: ChartView, width: int, plot_h: int, show_x: bool, ascii: bool = False) -> tuple[list[Row], tuple[float, float] | None]:
    """The rows inside the frame, and the value range of the heatmap's shades (None unless a heatmap is drawn)."""
    layout = _plot_layout(view, width, plot_h)
    if layout is None:
        return _empty_body(view, width, plot_h, show_x), None
    lo, hi, labels, label_w, plot_w = layout
    plot = _plot_rows(view, plot_w, plot_h, lo, hi, ascii)
    body: list[Row] = []
    for r in range(plot_h):
        label = labels.get(r)
        text = fit(label, label_w).rjust(label_w) if label else " " * label_w
        axis = "┤" if label and view.mode != "heatmap" else "│"
        body.append([(text, "label"), (axis, "axis"), *plot[r]])
    if show_x:
        body.append([(" " * (label_w + 1), "empty"), *_x_labels(view, plot_w)])
    return [trim_row(row, width) for row in body], ((lo, hi) if view.mode == "heatmap" else None)


def _plot_layout(view: ChartView, width: int, plot_h: int) -> tuple[float, float, dict[int, str], int, int] | None:
    """The value range, the y labels by row, their width and the plot's width in cells; None with nothing to plot."""
    t0, t1 = view.x_range
    y_range = _y_range(view, t0, t1) if view.plotted() else None
    if y_range is None:
        return None
    lo, hi = y_range
    if view.mode == "heatmap":
        lo, hi = (0.0, 100.0) if view.percent else (lo, hi)
        labels = {r: fit(clean(name), 8) for r, name in _heatmap_labels(view, plot_h).items()}
    else:
        lo, hi, ticks, tick_labels = _axis(view, lo, hi, plot_h)
        labels = _label_rows(ticks, tick_labels, lo, hi, plot_h, view.mode == "log")
    label_w = min(max((len(s) for s in labels.values()), default=1), max(1, width // 3))
    return lo, hi, labels, label_w, max(1, width - label_w - 1)


def same_picture(old: ChartView, new: ChartView, width: int, height: int) -> bool:
    """Whether ``new`` draws exactly what ``old`` drew in a ``width`` × ``height`` panel.

    True only in one common case, cheap to prove: every series ends with points
    equal to its last one, inside the dot column that point already filled (an
    idle network, a steady gauge), and nothing else changed. Then the panel
    need not be laid out again. Anything else, NaN included, says False.
    """
    if replace(new, data=old.data, band=old.band) != old:
        return False
    before, after = old.plotted(), new.plotted()
    if len(before) != len(after) or not before or width < 4 or height < 3:
        return False
    inner_h = height - 2
    layout = _plot_layout(new, width - 2, inner_h - (1 if inner_h >= 4 else 0))
    if layout is None:
        return False
    t0, t1 = new.x_range
    if not t1 > t0:
        return False
    dots = 2 * layout[4] / (t1 - t0)  # dot columns per second

    def column(t: float) -> int:
        return math.floor((t - t0) * dots)

    for was, now in zip(before, after):
        n = len(was.t)
        if n == 0 or len(now.t) < n:
            return False
        last = was.mean[-1]
        if not (was.lo[-1] == was.hi[-1] == last):
            return False
        if now.t[:n] != was.t or now.mean[:n] != was.mean or now.lo[:n] != was.lo or now.hi[:n] != was.hi:
            return False
        home = column(was.t[-1])
        for i in range(n, len(now.t)):
            if not (now.lo[i] == now.hi[i] == now.mean[i] == last) or now.t[i] < was.t[-1] or column(now.t[i]) != home:
                return False
    return True


def _empty_body(view: ChartView, width: int, plot_h: int, show_x: bool) -> list[Row]:
    rows: list[Row] = [[(" " * width, "empty")] for _ in range(plot_h + (1 if show_x else 0))]
    note = fit(view.empty_note, width)
    middle = plot_h // 2
    pad = (width - len(note)) // 2
    rows[middle] = trim_row([(" " * pad, "empty"), (note, "muted")], width)
    return rows


def row_text(row: Row) -> str:
    return "".join(text for text, _ in row)


def row_cells(row: Row) -> tuple[str, tuple[str, ...]]:
    """Per-cell text and style keys, for finding what changed between frames."""
    chars: list[str] = []
    styles: list[str] = []
    for text, style in row:
        chars.append(text)
        styles.extend([style] * len(text))
    return "".join(chars), tuple(styles)


def _common_prefix(a: Sequence, b: Sequence, n: int) -> int:
    """Length of the longest common prefix of the first ``n`` items, by halving: slices compare in C."""
    low, high = 0, n
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: Sequence, b: Sequence, n: int, floor: int) -> int:
    """Index of the first item of the longest common suffix starting at or after ``floor``."""
    low, high = floor, n
    while low < high:
        middle = (low + high) // 2
        if a[middle:high] == b[middle:high]:
            high = middle
        else:
            low = middle + 1
    return low


def _span(old: tuple[str, tuple[str, ...]], new: tuple[str, tuple[str, ...]]) -> tuple[int, int] | None:
    (old_text, old_styles), (new_text, new_styles) = old, new
    n = len(new_text)
    if len(old_text) != n:
        return 0, max(len(old_text), n) - 1
    first = min(_common_prefix(old_text, new_text, n), _common_prefix(old_styles, new_styles, n))
    if first == n:
        return None
    last = max(_common_suffix(old_text, new_text, n, first), _common_suffix(old_styles, new_styles, n, first)) - 1
    return first, max(first, last)


def changed_span(old: Row, new: Row) -> tuple[int, int] | None:
    """First and last changed column (inclusive), or None when identical."""
    if old == new:
        return None
    return _span(row_cells(old), row_cells(new))


# Unchanged cells between two changes that are cheaper to skip (a cursor move and
# a style, about a dozen bytes) than to write again.
SKIP_GAP = 8


def changed_spans(old: Row, new: Row, gap: int = SKIP_GAP) -> list[tuple[int, int]]:
    """Changed columns as ``(first, last)`` runs (inclusive), split where ``gap`` or more cells in between did not change."""
    if old == new:
        return []
    old_cells, new_cells = row_cells(old), row_cells(new)
    whole = _span(old_cells, new_cells)
    if whole is None:
        return []
    (old_text, old_styles), (new_text, new_styles) = old_cells, new_cells
    if len(old_text) != len(new_text):
        return [whole]
    runs: list[tuple[int, int]] = []
    first, last = whole
    start = end = first
    same = 0
    for x in range(first, last + 1):
        if old_text[x] == new_text[x] and old_styles[x] == new_styles[x]:
            same += 1
            continue
        if same >= gap and x - same > start:
            runs.append((start, end))
            start = x
        end = x
        same = 0
    runs.append((start, end))
    return runs
