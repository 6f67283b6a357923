"""``leet inspect RUN --plot KEY[,KEY…]``: a run's metrics as one static text plot.

For CI logs, pipes and terminals where a full-screen UI is unwanted. Keys are
exact names or globs (``train/*``, ``gpu.*.gpu``), matched against the run's
history keys and its system-metric keys (a node label ``/l:rank0`` aside).

- History metrics are drawn against the step, on the run view's step axis:
  from 0 to a round number at or past the run's last step; a metric with a
  ``define_metric`` step metric is drawn against that metric instead, one
  plot per axis (``metrics by epoch``). A metric ``define_metric`` hides is
  left out of a glob, and drawn only when named exactly.
- A resumed segment (offline, its ``_step`` from 0 again) is drawn at its
  real steps, after the segments before it (``discovery.resume``).
- System metrics are drawn against seconds since the run's first record,
  one series per node label (``gpu.0.gpu rank0``). As in the run view, a
  shared-mode run is read whole: every writer's file, history from the primary.
- Asked for both, they come as two plots stacked in one figure, history on
  top; ``height`` is the whole figure's.

NaN and infinities are left out (the line joins over them). A series longer
than ``MAX_POINTS`` keeps each stretch's lowest and highest point, so a spike
still shows. Colour only goes to a terminal, and never with ``NO_COLOR`` set:
a log stays free of escape codes.

plotext (5.x API) is imported only when a plot is drawn: ``leet --help`` stays light.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TextIO

from leet.common.text import escaped
from leet.common.ticks import step_range, step_ticks
from leet.discovery.layout import resolve
from leet.discovery.resume import offset_among
from leet.model.axes import MetricAxes
from leet.model.catalog import describe
from leet.model.keys import LABEL_SEPARATOR, natural_key, split_label
from leet.runfile.decode import EventReader
from leet.runfile.events import HistoryRow, MetricDefinition, RunInfo, StatsRow

MAX_POINTS = 4000  # per series: plenty for any terminal width, and plotext stays quick
DEFAULT_SIZE = (100, 25)  # columns, rows: when there is no terminal to measure
MIN_WIDTH, MIN_HEIGHT = 30, 10
KNOWN_SHOWN = 8  # names listed when a key matches nothing
READ_BATCH = 4096
# Records a plot never needs: passed over unparsed, which makes reading much cheaper.
SKIPPED_RECORDS = ("output", "output_raw", "summary", "config", "files", "telemetry", "artifact", "tbrecord", "alert")
# Without colour, series tell apart by their marker only.
PLAIN_MARKERS = ("*", "+", "o", "x", "#", "=", "%", "@")


# ---------------------------------------------------------------- keys


def parse_keys(values: Iterable[str] | None) -> list[str]:
    """``["loss,acc", "gpu.*"]`` → ``["loss", "acc", "gpu.*"]`` (``--plot`` may be repeated)."""
    keys: list[str] = []
    for value in values or ():
        for key in map(str.strip, value.split(",")):
            if key and key not in keys:
                keys.append(key)
    return keys


class KeySelector:
    """Which requested pattern, if any, a metric key answers to; and which patterns found nothing."""

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns
        self.matched: set[int] = set()
        self._rank: dict[str, int | None] = {}  # checked once per key, not once per row

    def rank(self, key: str) -> int | None:
        """Index of the first pattern matching ``key`` (with or without its node label); None if none does."""
        if key not in self._rank:
            base = split_label(key)[0]
            hits = [i for i, pattern in enumerate(self.patterns) if _matches(pattern, base) or _matches(pattern, key)]
            self.matched.update(hits)
            self._rank[key] = hits[0] if hits else None
        return self._rank[key]

    def unmatched(self) -> list[str]:
        return [pattern for i, pattern in enumerate(self.patterns) if i not in self.matched]


def _matches(pattern: str, key: str) -> bool:
    # The exact name first: a key may hold glob characters ("acc[top1]") meant literally.
    return key == pattern or fnmatchcase(key, pattern)


# ---------------------------------------------------------------- reading


@dataclass
class Series:
    name: str
    rank: int  # the requested pattern it answers to: series keep the order keys were asked in
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    axis: str = ""  # its define_metric step metric: "" for the step


@dataclass
class RunCurves:
    """What one pass over a run file found for the requested keys."""

    # By (writer, key): two writers' unlabelled keys never run into one line.
    history: dict[tuple[int, str], Series] = field(default_factory=dict)
    system: dict[tuple[int, str], Series] = field(default_factory=dict)  # x: unix seconds (``panels`` makes them relative)
    history_keys: set[str] = field(default_factory=set)
    system_keys: set[str] = field(default_factory=set)
    last_step: int | None = None
    first_time: float | None = None
    run_name: str = ""
    step_offset: int = 0  # a resumed segment's steps lie this far on
    axes: MetricAxes = field(default_factory=MetricAxes)
    latest: dict[str, float] = field(default_factory=dict)  # each step metric's latest value: a row without it takes it

    def seen(self, when: float | None) -> None:
        if when is not None and (self.first_time is None or when < self.first_time):
            self.first_time = when


def read_curves(files: list[Path], selector: KeySelector, step_offset: int = 0) -> RunCurves:
    """The requested curves of a run's files, the primary writer's first (the only one whose history counts);
    history steps moved on by ``step_offset``."""
    curves = RunCurves(step_offset=step_offset)
    for writer, path in enumerate(files):
        skip = SKIPPED_RECORDS if writer == 0 else (*SKIPPED_RECORDS, "history")
        with EventReader(path, live=False, skip=skip) as reader:
            while True:
                batch = reader.poll(READ_BATCH)
                for item in batch.items:
                    _take(curves, writer, item.event, selector)
                if batch.at_eof:
                    break
    return curves


def _take(curves: RunCurves, writer: int, event: object, selector: KeySelector) -> None:
    if isinstance(event, HistoryRow):
        step = event.step + curves.step_offset
        curves.last_step = step if curves.last_step is None else max(curves.last_step, step)
        curves.seen(event.timestamp)
        _add_history(curves, writer, event.values, step, selector)
    elif isinstance(event, MetricDefinition):
        curves.axes.define(event)
    elif isinstance(event, StatsRow):
        curves.seen(event.timestamp)
        _add_values(curves.system, writer, curves.system_keys, event.values, event.timestamp, selector, name=system_name)
    elif isinstance(event, RunInfo):
        curves.seen(event.start_time)
        curves.run_name = curves.run_name or event.display_name or event.run_id


def _add_values(
    into: dict[tuple[int, str], Series],
    writer: int,
    known: set[str],
    values: Mapping[str, float],
    x: float,
    selector: KeySelector,
    name: Callable[[str], str],
) -> None:
    known.update(values)
    for key, value in values.items():
        rank = selector.rank(key)
        if rank is None or not math.isfinite(value):
            continue
        series = into.get((writer, key))
        if series is None:
            series = into[writer, key] = Series(name(key), rank)
        series.xs.append(x)
        series.ys.append(value)


def _add_history(curves: RunCurves, writer: int, values: Mapping[str, float], step: int, selector: KeySelector) -> None:
    """A history row's requested values, each against its define_metric axis (that metric's value in the row, or its latest)."""
    axes = curves.axes
    if not axes.exact and not axes.globs:
        _add_values(curves.history, writer, curves.history_keys, values, step, selector, name=str)
        return
    curves.history_keys.update(values)
    latest = curves.latest
    for key, value in values.items():
        if axes.axis(key) == "" and math.isfinite(value):
            latest[key] = value  # any metric may be another's axis
    for key, value in values.items():
        rank = selector.rank(key)
        if rank is None or not math.isfinite(value) or (axes.hidden(key) and key not in selector.patterns):
            continue
        axis = axes.axis(key)
        x = latest.get(axis) if axis else step
        if x is None:
            continue  # before the axis has a value: no place on it
        series = curves.history.get((writer, key))
        if series is None:
            series = curves.history[writer, key] = Series(key, rank, axis=axis)
        series.xs.append(x)
        series.ys.append(value)


def system_name(key: str) -> str:
    """``gpu.0.gpu/l:rank0`` → ``gpu.0.gpu rank0``: the label reads as part of the name."""
    base, label = split_label(key)
    return base if label is None else f"{base} {label.replace(LABEL_SEPARATOR, '/')}"


def known_keys(curves: RunCurves) -> list[str]:
    """History keys, then system keys without their node labels, each in natural order."""
    system = {split_label(key)[0] for key in curves.system_keys}
    return sorted(curves.history_keys, key=natural_key) + sorted(system, key=natural_key)


# ---------------------------------------------------------------- shaping


def envelope(xs: list[float], ys: list[float], limit: int = MAX_POINTS) -> tuple[list[float], list[float]]:
    """At most ``limit`` points: each run of neighbours keeps its lowest and highest point, in order."""
    if len(xs) <= limit:
        return xs, ys
    size = math.ceil(len(xs) / max(1, limit // 2))
    kept_x: list[float] = []
    kept_y: list[float] = []
    for start in range(0, len(xs), size):
        span = range(start, min(start + size, len(xs)))
        for i in sorted({min(span, key=ys.__getitem__), max(span, key=ys.__getitem__)}):
            kept_x.append(xs[i])
            kept_y.append(ys[i])
    return kept_x, kept_y


def step_axis(last_step: int | None) -> tuple[tuple[float, float], list[int]]:
    """The run view's step axis (``step_range``: from 0 to just past the last step) and its round ticks."""
    x_range = step_range(0.0, None if last_step is None else float(last_step))
    return x_range, step_ticks(*x_range)


@dataclass
class Panel:
    title: str
    x_label: str
    series: list[Series]
    x_range: tuple[float, float]
    x_ticks: list[int] | None = None  # None: plotext chooses


def panels(curves: RunCurves) -> list[Panel]:
    """The plots to draw: history against the step, then system metrics against seconds."""
    found: list[Panel] = []
    name = escaped(curves.run_name) if curves.run_name else "run"
    by_axis: dict[str, list[Series]] = {}
    for series in _ordered(curves.history.values()):
        by_axis.setdefault(series.axis, []).append(series)
    for axis, history in by_axis.items():
        if not axis:
            x_range, ticks = step_axis(curves.last_step)
            found.append(Panel(f"{name} · metrics", "step", history, x_range, ticks))
            continue
        x_range = step_range(min(0.0, *(min(one.xs) for one in history)), max(max(one.xs) for one in history))
        found.append(Panel(f"{name} · metrics by {escaped(axis)}", escaped(axis), history, x_range, step_ticks(*x_range)))
    system = _ordered(curves.system.values())
    if system:
        origin = curves.first_time or 0.0
        system = [Series(one.name, one.rank, [x - origin for x in one.xs], one.ys) for one in system]
        last = max(max(one.xs) for one in system)
        found.append(Panel(f"{name} · {escaped(_system_title(curves.system))}", "seconds", system, (0.0, max(last, 1.0))))
    return found


def _ordered(series: Iterable[Series]) -> list[Series]:
    return sorted(series, key=lambda one: (one.rank, natural_key(one.name)))


def _system_title(system: dict[tuple[int, str], Series]) -> str:
    """The chart's title when every key is one chart's, with its unit where the values are in it ("GPU Utilization (%)")."""
    infos = {(info.title, info.unit if info.scale == 1 else "") for info in (describe(key) for _, key in system)}
    if len(infos) != 1:
        return "system metrics"
    title, unit = infos.pop()  # no unit for scaled keys: proc.memory.rssMB is plotted in MB, not the chart's bytes
    return f"{title} ({unit})" if unit else title


# ---------------------------------------------------------------- drawing


def wants_colour(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def figure_size(width: int | None, height: int | None) -> tuple[int, int]:
    """The size asked for, else the terminal's, else ``DEFAULT_SIZE`` (a pipe or a log has no size)."""
    columns, rows = shutil.get_terminal_size((0, 0))
    columns = columns or DEFAULT_SIZE[0]
    rows = rows - 1 if rows else DEFAULT_SIZE[1]  # on a terminal, a row for the prompt keeps the title on screen
    return width or max(MIN_WIDTH, columns), height or max(MIN_HEIGHT, rows)


def render(plots: list[Panel], width: int, height: int, colour: bool) -> str:
    import plotext as plt  # late: the import costs time that --help should not pay

    # plotext keeps one global figure: back to its top (a subplot is left active after a build), then start afresh.
    plt.main()
    plt.clear_figure()
    plt.limitsize(False, False)  # the size asked for, even when it is larger than the terminal
    plt.plotsize(width, height)
    if len(plots) > 1:
        plt.subplots(len(plots), 1)
    for row, panel in enumerate(plots, 1):
        if len(plots) > 1:
            plt.subplot(row, 1)
        _draw(plt, panel, colour)
    text = plt.build().rstrip("\n")
    return text if colour else plt.uncolorize(text)  # the clear theme still ends lines with a reset code


def _draw(plt, panel: Panel, colour: bool) -> None:
    plt.theme("pro" if colour else "clear")
    distinct = not colour and len(panel.series) > 1
    for index, series in enumerate(panel.series):
        xs, ys = envelope(series.xs, series.ys)
        marker = PLAIN_MARKERS[index % len(PLAIN_MARKERS)] if distinct else None
        plt.plot(xs, ys, label=escaped(series.name), marker=marker)
    plt.title(panel.title)
    plt.xlabel(panel.x_label)
    plt.xlim(*panel.x_range)
    if panel.x_ticks:
        plt.xticks(panel.x_ticks)


# ---------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--plot`` options of ``leet inspect``."""
    parser.add_argument(
        "--plot",
        action="append",
        metavar="KEY[,KEY…]",
        help="draw these metrics as a text plot and exit (repeatable; globs work: 'train/*', 'gpu.*.gpu'); "
        "history against the step (or its define_metric step metric: a plot per axis), system metrics against seconds, both: plots stacked",
    )
    parser.add_argument("--width", type=_columns, metavar="N", help=f"with --plot: columns (default: the terminal's, else {DEFAULT_SIZE[0]})")
    parser.add_argument("--height", type=_rows, metavar="N", help=f"with --plot: rows of the whole figure (default: the terminal's, else {DEFAULT_SIZE[1]})")


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_columns = _at_least(MIN_WIDTH)
_rows = _at_least(MIN_HEIGHT)


def plot_run(path: Path, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Draw the metrics ``args.plot`` names, from the run file at ``path``; returns the exit status."""
    out = out or sys.stdout
    requested = parse_keys(args.plot)
    if not requested:
        print("leet inspect: --plot needs a metric name, e.g. --plot loss", file=sys.stderr)
        return 2
    selector = KeySelector(requested)
    layout = resolve(path)
    offset = offset_among([head.file for head in layout.segments], layout.file) if layout.file is not None else 0
    curves = read_curves(list(layout.files), selector, offset)  # a shared run: every writer's file
    missing = selector.unmatched()
    if missing:
        print(no_match_message(missing[0], known_keys(curves)), file=sys.stderr)
        return 2
    plots = panels(curves)
    if not plots:
        print(f"leet inspect: nothing to plot: no finite values for {', '.join(map(escaped, requested))}", file=sys.stderr)
        return 1
    width, height = figure_size(args.width, args.height)
    out.write(render(plots, width, height, wants_colour(out)) + "\n")
    out.flush()
    return 0


def no_match_message(pattern: str, known: list[str]) -> str:
    """E.g. ``leet inspect: no metric matches 'los'; known: acc, eval.loss, loss, lr``."""
    if not known:
        return f"leet inspect: no metric matches '{escaped(pattern)}'; the run has no metrics"
    shown = ", ".join(map(escaped, known[:KNOWN_SHOWN]))
    more = f", … ({len(known)} in all)" if len(known) > KNOWN_SHOWN else ""
    return f"leet inspect: no metric matches '{escaped(pattern)}'; known: {shown}{more}"
