"""From a run snapshot to what the run screen shows: overview, console, charts, header.

Pure functions, like ``views.py`` for the live monitor.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Iterable, Mapping, Sequence

from leet.model.catalog import ChartSpec, MetricInfo
from leet.model.keys import natural_key
from leet.model.run import RunSnapshot, RunState
from leet.model.store import SeriesData, SeriesKey
from leet.runfile.records import RawJSON, flatten, json_value
from leet.ui.views.symon import format_uptime
from widgets.chartframe import ChartView
from widgets.matching import compile_filter
from widgets.raster import SeriesView
from widgets.text import clean
from widgets.units import format_value

Line = tuple[str, str]

STATE_STYLE = {
    RunState.LOADING: "muted",
    RunState.RUNNING: "ok",
    RunState.FINISHED: "heading",
    RunState.FAILED: "error",
    RunState.CRASHED: "warn",
}

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
    return snapshot.state.value


def display_value(value: Any) -> str:
    """A config or summary value as one short line of plain text."""
    if isinstance(value, RawJSON):
        try:
            value = json_value(value)
        except ValueError:
            return str(value)
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= 200 else text[:199] + "…"
    return str(value)


def _time(seconds: float | None) -> str:
    if not seconds:
        return "–"
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def overview_lines(snapshot: RunSnapshot, now: float, pattern: str = "") -> list[Line]:
    """Run, environment, config and summary as (text, style) lines; ``pattern`` filters items."""
    info = snapshot.info
    matches = compile_filter(pattern)
    lines: list[Line] = []

    def section(title: str, items: Iterable[tuple[str, str]]) -> None:
        chosen = [(k, v) for k, v in items if not pattern or matches(k) or matches(v)]
        if not chosen:
            return
        lines.append((title, "heading"))
        width = min(24, max(len(k) for k, _ in chosen))
        for key, value in chosen:
            lines.append((f"  {key.ljust(width)} {value}", "value"))

    run_items = [("State", state_text(snapshot)), ("ID", snapshot.run_id or snapshot.run_key)]
    if info is not None:
        run_items += [(name, value) for name, value in (
            ("Project", info.project), ("Name", info.display_name), ("Entity", info.entity),
            ("Group", info.group), ("Job type", info.job_type), ("Host", info.host),
            ("Tags", ", ".join(info.tags)), ("Notes", info.notes),
        ) if value]
        run_items.append(("Started", _time(info.start_time)))
        if info.start_time:
            runtime = snapshot.summary.get("_runtime")
            seconds = float(json_value(runtime)) if isinstance(runtime, RawJSON) else runtime
            if isinstance(seconds, (int, float)):
                run_items.append(("Runtime", format_uptime(seconds)))
    if snapshot.last_step is not None:
        run_items.append(("Step", f"{snapshot.last_step:,}"))
    if snapshot.lost_bytes or snapshot.lost_records:
        run_items.append(("Lost", f"{snapshot.lost_records:,} records, {snapshot.lost_bytes:,} bytes (damaged file)"))
    if snapshot.writers:
        run_items.append(("Writers", f"{len(snapshot.writers)} (shared run)"))
    section("Run", run_items)
    if snapshot.writers:
        section("Nodes", [(writer.label or "(no label)", writer_text(writer)) for writer in snapshot.writers])
    writers = merged_environments(snapshot.environments)
    for writer_id, fields in list(writers.items())[:16]:
        title = "Environment" + (f" · {writer_id}" if len(writers) > 1 and writer_id else "")
        section(title, [(label, display_value(fields[name])) for name, label in ENVIRONMENT_FIELDS if fields.get(name) not in (None, "", 0)])
    # Nested config shows one line per leaf (``model.depth``), as the W&B UI does.
    config = flatten(snapshot.config)
    section("Config", sorted(((k, display_value(v)) for k, v in config.items()), key=lambda kv: natural_key(kv[0])))
    summary = {k: v for k, v in snapshot.summary.items() if not k.startswith("_wandb")}
    section("Summary", sorted(((k, display_value(v)) for k, v in summary.items()), key=lambda kv: natural_key(kv[0])))
    return lines


def writer_text(writer: Any) -> str:
    state = f"failed (exit {writer.exit_code})" if writer.exit_code not in (None, 0) else writer.state.value
    role = "primary · " if writer.primary else ""
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


def metric_specs(keys: Sequence[str], pattern: str = "") -> list[ChartSpec]:
    """One chart per logged metric, in natural order; ``pattern`` filters by name."""
    matches = compile_filter(pattern)
    specs = []
    for key in sorted(keys, key=natural_key):
        if pattern and not matches(key):
            continue
        # Titles reach the terminal through plain Segments: metric names are untrusted text.
        title = clean(key)
        info = MetricInfo(key=key, label=None, family="Metrics", chart=key, title=title, unit="", scale=1.0, series="Default", percent=False, y_min=None, y_max=None)
        specs.append(ChartSpec(chart=key, title=title, unit="", family="Metrics", percent=False, y_min=None, y_max=None, series=(info,)))
    return specs


def header_parts(snapshot: RunSnapshot) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The header bar's left and right runs; the run's own text is cleaned (it is untrusted)."""
    info = snapshot.info
    name = clean(info.display_name) if info and info.display_name else ""
    run_key = clean(snapshot.run_key)
    left = [(f" {name}", "heading"), (f" · {run_key}", "muted")] if name else [(f" {run_key}", "heading")]
    if info and info.project:
        left.append((f" · {clean(info.project)}", "muted"))
    if info and (info.group or info.job_type):
        left.append((" · " + " / ".join(clean(part) for part in (info.group, info.job_type) if part), "muted"))
    if snapshot.writers:
        left.append((f" · {len(snapshot.writers)} writers", "value"))
    left.append((f" · {state_text(snapshot)}", STATE_STYLE[snapshot.state]))
    if snapshot.last_step is not None:
        left.append((f" · step {snapshot.last_step:,}", "value"))
    right: list[tuple[str, str]] = []
    if snapshot.state is RunState.LOADING and snapshot.file_size:
        done = snapshot.bytes_read / snapshot.file_size
        doing = "stopped at" if snapshot.stopped else "loading"
        right.append((f"{doing} {done:.0%} · {snapshot.records:,} records · {format_value(snapshot.bytes_read, 'B')} ", "warn"))
    else:
        right.append((f"{snapshot.records:,} records · {format_value(snapshot.file_size, 'B')} ", "muted"))
    if snapshot.lost_bytes:
        right.insert(0, (f"⚠ {snapshot.lost_records:,} records lost to damage · ", "warn"))
    if snapshot.error:
        right.insert(0, (f"⚠ {clean(snapshot.error)} · ", "error"))
    # A gap between the sides when a narrow terminal cuts the left one short.
    right[0] = (" " + right[0][0], right[0][1])
    return left, right


def time_range(first: float | None, last: float | None) -> tuple[float, float]:
    """The x range of a wall-clock axis (system metrics of a run): first to last sample."""
    if first is None or last is None:
        return 0.0, 1.0
    return (first, last) if last > first else (first, first + 1)



def overlay_view(
    metric: str,
    runs: Sequence[tuple[str, str]],
    snapshots: Mapping[SeriesKey, SeriesData],
    x_range: tuple[float, float],
    mode: str = "line",
) -> ChartView:
    """One metric across several runs: a series per run (store key, display name), in selection order.

    A run without this metric keeps its place (an empty series), so each run
    has the same colour in every chart and in the runs list.
    """
    names: list[str] = []
    data: list[SeriesView] = []
    for key, name in runs:
        found = snapshots.get(SeriesKey(key, metric, None))
        names.append(name)
        data.append(SeriesView(found.t, found.lo, found.hi, found.mean) if found is not None else SeriesView((), (), (), ()))
    return ChartView(title=metric, series_names=tuple(names), data=tuple(data), x_range=x_range, mode=mode, x_kind="step")
