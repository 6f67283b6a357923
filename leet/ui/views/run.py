"""From a run snapshot to what the run screen shows: overview, console, charts, header.

Pure functions, like ``views.py`` for the live monitor.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from leet.common.clock import clock_text
from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.common.units import format_value
from leet.model.catalog import ChartSpec, MetricInfo
from leet.model.energy import run_energy_items
from leet.model.keys import KeyLabel, axis_key, natural_key
from leet.model.progress import Progress, Total, ended, progress_of
from leet.model.run import RunSnapshot, RunState
from leet.model.store import SeriesKey
from leet.model.values import collapse_media, describe_value, format_duration, media_noun, plain
from leet.runfile.decode import flatten
from leet.ui.views.alerts import alert_section

Line = tuple[str, str]

STATE_STYLE = {
    RunState.LOADING: "muted",
    RunState.RUNNING: "ok",
    RunState.FINISHED: "heading",
    RunState.FAILED: "error",
    RunState.CRASHED: "warn",
    RunState.UNKNOWN: "muted",
}

# Config leaves listed at most: a config can hold a million, and the overview is rebuilt per redraw.
OVERVIEW_ENTRIES = 5000

# Below this many columns the charts come first: the overview hides until asked for (``[``), and is narrower then.
# At 110 the metrics grid beside a full overview and the system charts is about 30 columns: three charts of ten.
NARROW_COLUMNS = 110

ENVIRONMENT_FIELDS = (
    ("host", "Host"),
    ("os", "OS"),
    ("python", "Python"),
    ("program", "Program"),
    ("cpu_count", "CPU cores"),
    ("cpu_count_logical", "CPU threads"),
    ("gpu_type", "GPU"),
    ("gpu_count", "GPUs"),
    ("cuda_version", "CUDA"),
    ("x_label", "Label"),
)


def state_text(snapshot: RunSnapshot) -> str:
    if snapshot.state is RunState.FAILED:
        return f"failed (exit {snapshot.exit_code})"
    if snapshot.state is RunState.FINISHED:
        return "finished"
    if snapshot.state is RunState.LOADING and snapshot.stopped:
        return "stopped"  # reading broke off: nothing more will load
    return snapshot.state.value


def display_value(value: Any, key: str = "") -> str:
    """A config or summary value as one short line of plain text (``values.describe_value``)."""
    return describe_value(value, key)


def _time(seconds: float | None) -> str:
    if not seconds:
        return "–"
    return clock_text(seconds)


def overview_lines(snapshot: RunSnapshot, now: float, pattern: str = "") -> list[Line]:
    """Run, environment, config and summary as (text, style) lines; ``pattern`` filters items."""
    info = snapshot.info
    matches = compile_filter(pattern)
    lines: list[Line] = []

    def section(title: str, items: Iterable[tuple[str, str]], more: str = "") -> None:
        chosen = [(k, v) for k, v in items if not pattern or matches(k) or matches(v)]
        if not chosen and not more:
            return
        lines.append((title, "heading"))
        width = min(24, max((len(k) for k, _ in chosen), default=0))
        for key, value in chosen:
            lines.append((f"  {key.ljust(width)} {value}", "value"))
        if more:
            lines.append((f"  {more}", "muted"))

    run_items = [("State", state_text(snapshot))] + ([("ID", snapshot.run_id)] if snapshot.run_id else [])
    if info is not None:
        run_items += [(name, value) for name, value in (
            ("Project", info.project), ("Name", info.display_name), ("Entity", info.entity),
            ("Group", info.group), ("Job type", info.job_type), ("Host", info.host),
            ("Tags", ", ".join(info.tags)), ("Notes", info.notes),
        ) if value]
        run_items.append(("Started", _time(info.start_time)))
        if info.start_time:
            seconds = plain(snapshot.summary.get("_runtime"))
            if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
                run_items.append(("Runtime", format_duration(seconds)))
    if snapshot.last_step is not None:
        run_items.append(("Step", f"{snapshot.last_step:,}"))
    if snapshot.lost_text:
        run_items.append(("Lost", f"{snapshot.lost_text}, {format_value(snapshot.lost_bytes, 'B')} (damaged file)"))
    if snapshot.writers:
        run_items.append(("Writers", f"{len(snapshot.writers)} (shared run)"))
    section("Run", run_items)
    lines += alert_section(snapshot, pattern)
    if snapshot.writers:
        section("Nodes", [(writer.label or "(no label)", writer_text(writer)) for writer in snapshot.writers])
    if snapshot.segments:
        section("Segments", segment_items(snapshot))
    if snapshot.goals:
        section("Goals", goal_items(snapshot))
    if snapshot.energy:  # a run without GPU power gets no section: most runs have no GPU
        section("Energy", run_energy_items(snapshot.energy))
    writers = merged_environments(snapshot.environments)
    for writer_id, fields in list(writers.items())[:16]:
        title = "Environment" + (f" · {writer_id}" if len(writers) > 1 and writer_id else "")
        section(title, [(label, display_value(fields[name])) for name, label in ENVIRONMENT_FIELDS if fields.get(name) not in (None, "", 0)])
    # Nested config shows one line per leaf (``model.depth``), as the W&B UI does.
    config = flatten(snapshot.config, limit=OVERVIEW_ENTRIES + 1)
    more = f"… only the first {OVERVIEW_ENTRIES:,} entries are listed" if len(config) > OVERVIEW_ENTRIES else ""
    shown = list(config.items())[:OVERVIEW_ENTRIES]
    section("Config", sorted(((k, display_value(v, k)) for k, v in shown), key=lambda kv: natural_key(kv[0])), more)
    summary = collapse_media({k: v for k, v in snapshot.summary.items() if not k.startswith("_wandb")})
    section("Summary", sorted(((k, display_value(v, k)) for k, v in summary.items()), key=lambda kv: natural_key(kv[0])))
    return lines


def segment_items(snapshot: RunSnapshot) -> list[tuple[str, str]]:
    """The run id's segments (resumed, or the id used again), oldest first: where each is and which is shown."""
    items = []
    for index, segment in enumerate(snapshot.segments):
        when = "earlier" if index < _current_segment(snapshot) else "later" if not segment.current else "this one"
        items.append((f"{index + 1} of {len(snapshot.segments)}", f"{when} · {_time(segment.start_time)} · {clean(segment.file.parent.name)}"))
    return items


def _current_segment(snapshot: RunSnapshot) -> int:
    return next((index for index, segment in enumerate(snapshot.segments) if segment.current), len(snapshot.segments))


def goal_items(snapshot: RunSnapshot) -> list[tuple[str, str]]:
    """Each define_metric goal with the best value the summary holds for it."""
    items = []
    for name in sorted(snapshot.goals, key=natural_key):
        goal = snapshot.goals[name]
        best = _best(snapshot.summary, name, "min" if goal == "minimize" else "max")
        items.append((clean(name), goal + (f" · best {display_value(best)}" if best is not None else "")))
    return items


def _best(summary: Mapping[str, Any], name: str, which: str) -> Any:
    value = plain(summary.get(name))
    if isinstance(value, dict):
        return value.get(which, value.get("best"))
    return plain(summary.get(f"{name}.{which}", summary.get(f"{name}.best")))


def writer_state(writer: Any) -> str:
    return f"failed (exit {writer.exit_code})" if writer.exit_code not in (None, 0) else writer.state.value


def writer_text(writer: Any) -> str:
    state = writer_state(writer)
    role = "primary · " if writer.primary else "opened · " if writer.opened else ""
    return f"{role}{state} · {writer.records:,} records · {writer.file.parent.name}"


def merged_environments(environments: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """One field set per writer: a writer records its software and its hardware separately."""
    merged: dict[str, dict[str, Any]] = {}
    for environment in environments:
        merged.setdefault(environment.writer_id, {}).update(environment.fields)
    return merged


def console_lines(snapshot: RunSnapshot, pattern: str = "", labels: Any = None) -> list[Line]:
    """Console lines as (text, style); ``pattern`` matches text or label, ``labels`` is a ``LabelFilter``."""
    matches = compile_filter(pattern)
    lines = []
    for line in snapshot.console:
        if labels is not None and labels.active and not labels.matches(line.label):
            continue
        if pattern and not (matches(line.text) or (line.label and matches(line.label))):
            continue
        prefix = f"[{line.label}] " if line.label else ""
        lines.append((prefix + line.text, "error" if line.stream == "stderr" else "value"))
    return lines


def metric_specs(
    series: Iterable[KeyLabel],
    pattern: str = "",
    axes: Mapping[str, str] | None = None,
    hidden: Iterable[str] = (),
    run: str = "",
) -> list[ChartSpec]:
    """One chart per logged metric, in natural order; ``pattern`` filters by name.

    ``series`` are (key, writer label) as the store holds a run's history: a
    shared run's writers each add a series to the chart of their metric.
    ``axes`` gives a metric's ``define_metric`` x axis (its title says so),
    and ``hidden`` metrics get no chart. ``run`` is the store namespace the
    charts read (a chart with an axis reads the axis's one beside it).
    """
    matches = compile_filter(pattern)
    axes = axes or {}
    hidden = set(hidden)
    charts: dict[str, list[MetricInfo]] = {}
    for metric, label in series:
        if metric in hidden or (pattern and not matches(metric)):
            continue
        # Titles reach the terminal through plain Segments: metric names are untrusted text.
        charts.setdefault(metric, []).append(
            MetricInfo(key=metric, label=label, family="Metrics", chart=metric, title=clean(metric), unit="", scale=1.0, series="Default", percent=False, y_min=None, y_max=None)
        )
    specs = []
    for metric in sorted(charts, key=natural_key):
        axis = axes.get(metric, "")
        title = clean(metric) + (f" · by {clean(axis)}" if axis else "")
        infos = tuple(sorted(charts[metric], key=lambda info: natural_key(info.label or "")))
        where = axis_key(run, axis) if axis else run
        stored = tuple(SeriesKey(where, metric, info.label) for info in infos)
        specs.append(ChartSpec(chart=metric, title=title, unit="", family="Metrics", percent=False, y_min=None, y_max=None, series=infos, keys=stored, x_axis=axis))
    return specs


def snapshot_progress(snapshot: RunSnapshot, total: Total | None = None) -> Progress:
    """The run's rates and ETA; an ended run gets its mean rate and no ETA."""
    return progress_of(
        snapshot.trail, snapshot.config, snapshot.summary,
        last_step=snapshot.charted_last_step, finished=ended(snapshot.state), total=total,
    )


def header_parts(snapshot: RunSnapshot, width: int | None = None, total: Total | None = None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The header bar's left and right runs; the run's own text is cleaned (it is untrusted).

    With ``width`` (the bar's cells) the run's own words give way so that
    state and step always fit: the group goes first, then the project, then
    the name is cut with ``…`` (to 16 characters, then to its first). Text the
    caller adds after the left runs is what a narrow bar cuts next.
    """
    info = snapshot.info
    name = clean(info.display_name) if info and info.display_name else ""
    # The run's own id: never ``run_key``, which says where the store keeps the run (``<key>#open``).
    run_id = clean(snapshot.run_id) or "run"
    left = [(f" {name}", "heading"), (f" · {run_id}", "muted")] if name else [(f" {run_id}", "heading")]
    # (index in left, fewest cells it keeps), in the order they give way; 0 cells: dropped.
    shrink: list[tuple[int, int]] = []
    if info and info.project:
        left.append((f" · {clean(info.project)}", "muted"))
        project = len(left) - 1
    else:
        project = -1
    if info and (info.group or info.job_type):
        left.append((" · " + " / ".join(clean(part) for part in (info.group, info.job_type) if part), "muted"))
        shrink.append((len(left) - 1, 0))
    if project >= 0:
        shrink.append((project, 0))
    shrink += [(0, 17), (1, 0), (0, 3)] if name else [(0, 13)]
    if snapshot.writers:
        left.append((f" · {len(snapshot.writers)} writers", "value"))
    left.append((f" · {state_text(snapshot)}", STATE_STYLE[snapshot.state]))
    opened = next((writer for writer in snapshot.writers if writer.opened and not writer.primary), None)
    if opened is not None:  # the writer the user named, beside the run's state
        left.append((f" · {clean(opened.label or 'this writer')} {writer_state(opened)}", STATE_STYLE[opened.state]))
    # An opened secondary's history is charted on its own axis: the step is the one it reached. One that logged
    # none says so: the run's step beside its name would read as its own.
    if opened is not None and opened.last_step is None:
        left.append((" · no history", "muted"))
    step = opened.last_step if opened is not None else snapshot.charted_last_step
    if step is not None:
        left.append((f" · step {step:,}", "value"))
    progress = snapshot_progress(snapshot, total) if opened is None else None
    # Rates beside a step count that names no end or throughput are noise: they show when there is an ETA or a unit.
    if progress is not None and (progress.total or progress.throughput) and (rates := progress.parts()):
        left.append((" · " + " · ".join(rates), "muted"))
        shrink.insert(0, (len(left) - 1, 0))  # rates give way before the run's own words
    right: list[tuple[str, str]] = []
    if snapshot.state is RunState.LOADING and snapshot.file_size:
        done = snapshot.bytes_read / snapshot.file_size
        doing = "stopped at" if snapshot.stopped else "loading"
        right.append((f"{doing} {done:.0%} · {snapshot.records:,} records · {format_value(snapshot.bytes_read, 'B')} ", "warn"))
    else:
        right.append((f"{snapshot.records:,} records · {format_value(snapshot.file_size, 'B')} ", "muted"))
    if snapshot.lost_text:
        right.insert(0, (f"⚠ {snapshot.lost_text} lost to damage · ", "warn"))
    if snapshot.error:
        right.insert(0, (f"⚠ {clean(snapshot.error)} · ", "error"))
    # A gap between the sides when a narrow terminal cuts the left one short.
    right[0] = (" " + right[0][0], right[0][1])
    if width is not None:
        left = _give_way(left, shrink, width - sum(len(text) for text, _ in right))
    return left, right


def _give_way(runs: list[tuple[str, str]], shrink: list[tuple[int, int]], room: int) -> list[tuple[str, str]]:
    """``runs`` cut to ``room`` cells by shortening the runs ``shrink`` names, in its order, with ``…``."""
    runs = list(runs)
    over = sum(len(text) for text, _ in runs) - room
    for index, least in shrink:
        if over <= 0:
            break
        text, style = runs[index]
        keep = max(least, len(text) - over)
        if keep >= len(text):
            continue
        # A part that may go entirely goes rather than keep a stub (" · s…").
        cut = text[: keep - 1] + "…" if keep >= (8 if least == 0 else 3) else ""
        over -= len(text) - len(cut)
        runs[index] = (cut, style)
    return [run for run in runs if run[0]]


def no_charts_text(snapshot: RunSnapshot) -> str:
    """What the header says while the run has no metric charts: media-only runs name their media."""
    if snapshot.media_keys and not snapshot.history_keys:
        return "no charts: this run logged only media — " + media_text(snapshot.media_keys)
    return "no metrics yet"


_PLURAL_SAME = ("audio", "html", "images")


def media_text(media_keys: Iterable[tuple[str, str]], per_kind: int = 3) -> str:
    """Media keys by kind, ``tables: preds · histograms: grads, weights +2 more``; names cleaned."""
    kinds: dict[str, list[str]] = {}
    for key, kind in media_keys:
        kinds.setdefault(media_noun(kind), []).append(clean(key))
    parts = []
    for noun, keys in sorted(kinds.items()):
        plural = noun if noun.endswith(_PLURAL_SAME) or noun.endswith("s") else noun + "s"
        shown = ", ".join(sorted(keys, key=natural_key)[:per_kind])
        more = f" +{len(keys) - per_kind} more" if len(keys) > per_kind else ""
        parts.append(f"{plural}: {shown}{more}")
    return " · ".join(parts)


def time_range(first: float | None, last: float | None) -> tuple[float, float]:
    """The x range of a wall-clock axis (system metrics of a run): first to last sample.

    One sample opens a second (or, far from the epoch where a float cannot
    tell seconds apart, the next value a float can hold).
    """
    if first is None or last is None:
        return 0.0, 1.0
    if last > first:
        return first, last
    after = first + max(1.0, math.ulp(first))
    return (first, after) if math.isfinite(after) else (first - math.ulp(first), first)

