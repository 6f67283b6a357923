"""``leet inspect``: the records of a W&B run file, as text or JSON, or the run's state in brief.

    leet inspect RUN_DIR_OR_FILE                 one line per record
    leet inspect PATH --json                     one JSON object per record
    leet inspect PATH --summary [--json]         state, identity, config, summary, console tail
    leet inspect PATH --follow [--idle-timeout 10m]
    leet inspect PATH --plot loss,gpu.*.gpu [--width N --height N]   (see plot.py)

Text from the file (names, values, console output) is untrusted: the text
output shows control characters, escape sequences and bidirectional
controls as ``\\xNN``/``\\uNNNN`` escapes, so nothing in a file can drive the
terminal. JSON output escapes all non-ASCII (``ensure_ascii``), which makes
it inert too. JSON has no NaN or infinities: they are written as the strings
``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.

Imports no Textual: this runs on machines where the UI is unwanted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable, TextIO

from leet.commands.plot import add_arguments as add_plot_arguments
from leet.commands.plot import plot_run
from leet.common.text import escaped
from leet.model.energy import energy_report, energy_report_line
from leet.model.progress import Total, ended, progress_of, total_argument
from leet.model.run import RunModel
from leet.model.state import CRASH_AFTER, Verdict, duration, judge, parse_duration
from leet.model.values import collapse_media, describe_value, is_finite, plain
from leet.runfile.decode import Decoded, EventReader, flatten
from leet.runfile.events import (
    ConfigUpdate,
    ConsoleOutput,
    DataLoss,
    Environment,
    HistoryRow,
    MetricDefinition,
    OtherRecord,
    RunAlert,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)
from leet.runfile.locate import find_run_file
from leet.runfile.reader import FileChanged, RunFileError

DEFAULT_IDLE_TIMEOUT = 600.0
POLL_INTERVAL = 0.25
CONSOLE_TAIL_LINES = 20
HINT_WIDTH = 72
READ_BATCH = 4096  # records per read: bounded memory on long runs


# ---------------------------------------------------------------- command line


def idle_timeout(text: str) -> float:
    """``30``, ``30s``, ``10m``, ``1h``, ``500ms`` → seconds."""
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``leet inspect`` options, on a parser (or sub-parser) made by the caller."""
    parser.add_argument("path", metavar="PATH", help="a run-*.wandb file, or a run directory holding one")
    parser.add_argument("--json", action="store_true", help="one JSON object per record (with --summary: one object)")
    parser.add_argument("--summary", action="store_true", help="the run's state, config, latest summary and console tail")
    parser.add_argument("--follow", "-f", action="store_true", help="keep reading as the file grows, until the run exits")
    parser.add_argument(
        "--idle-timeout",
        type=idle_timeout,
        default=DEFAULT_IDLE_TIMEOUT,
        metavar="SECONDS",
        help="with --follow: stop after this long without new data (default 10m; 30s, 10m, 1h work)",
    )
    parser.add_argument(
        "--crash-after",
        type=idle_timeout,
        default=None,
        metavar="SECONDS",
        help="a run with no exit record and no write for this long is presumed crashed (default: the crash_after setting, 10m)",
    )
    parser.add_argument("--total", type=total_argument, metavar="KEY=N", help="with --summary: the ETA counts to this (e.g. epoch=10) instead of the config's total")
    add_plot_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Carry out ``leet inspect``; returns the exit status."""
    _tolerate_unencodable(sys.stdout)
    if args.plot is not None and (args.follow or args.json or args.summary):
        print("leet inspect: --plot draws one finished picture: it does not go with --follow, --json or --summary", file=sys.stderr)
        return 2
    try:
        path = find_run_file(Path(args.path))
        if args.plot is not None:
            return plot_run(path, args)
        if args.summary:
            return _print_summary(path, args)
        return _print_records(path, args)
    except RunFileError as error:
        print(f"leet inspect: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (e.g. `| head`): not an error
        return 0
    except OSError as error:
        print(f"leet inspect: {error.filename or args.path}: {error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _tolerate_unencodable(stream: TextIO) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


# ---------------------------------------------------------------- reading


class _Follower:
    """Reads a run file to its end (or, following, to its exit record) and keeps the reader's counters."""

    def __init__(self, path: Path, follow: bool, timeout: float, history_values: bool = True, lazy_summary: bool = False) -> None:
        self.path = path
        self.follow = follow
        self.timeout = timeout
        self.history_values = history_values
        self.lazy_summary = lazy_summary
        self.reader: EventReader | None = None
        self.torn_bytes = 0
        self.gone = False  # following, the file was deleted

    def batches(self) -> Iterable[list[Decoded]]:
        """Batches of records; following, a file truncated or replaced is read again from its start."""
        while True:
            try:
                yield from self._read()
                return
            except FileChanged as change:
                if change.how == "deleted":
                    print(f"leet inspect: {safe_text(str(self.path))} was deleted; stopped following", file=sys.stderr)
                    self.gone = True
                    return
                print(f"leet inspect: {safe_text(str(self.path))} was {change.how}; reading it again from the start", file=sys.stderr)

    def _read(self) -> Iterable[list[Decoded]]:
        with EventReader(self.path, live=self.follow, history_values=self.history_values, lazy_summary=self.lazy_summary) as reader:
            self.reader = reader
            quiet_since = time.monotonic()
            size = reader.size()
            while True:
                batch = reader.poll(READ_BATCH)
                if batch.items:
                    yield batch.items
                    if any(item.kind == "exit" for item in batch.items):
                        break
                if not batch.at_eof:
                    continue
                if not self.follow:
                    break
                now_size = reader.size()
                if now_size != size or batch.items:
                    size, quiet_since = now_size, time.monotonic()
                elif time.monotonic() - quiet_since >= self.timeout:
                    print(f"leet inspect: no new data for {_duration(self.timeout)}; stopped following", file=sys.stderr)
                    break
                time.sleep(POLL_INTERVAL)
            self.torn_bytes = reader.size() - reader.offset if batch.torn else 0


# ---------------------------------------------------------------- record lines


def _print_records(path: Path, args: argparse.Namespace) -> int:
    follower = _Follower(path, args.follow, args.idle_timeout)
    out = sys.stdout
    for items in follower.batches():
        lines = [json_line(item) if args.json else text_line(item) for item in items]
        out.write("\n".join(lines) + "\n")
        out.flush()
    _report_losses(follower)
    return 1 if follower.gone else 0


def _report_losses(follower: _Follower) -> None:
    reader = follower.reader
    if reader is None:
        return
    if reader.lost_bytes:
        records = _record_count(reader.lost_records, bool(reader.uncounted_losses))
        print(f"leet inspect: skipped damaged data: {reader.lost_bytes:,} bytes, {records}", file=sys.stderr)
    if follower.torn_bytes:
        print(f"leet inspect: the file ends inside a record ({follower.torn_bytes:,} bytes unfinished)", file=sys.stderr)


def safe_text(text: str) -> str:
    """``text`` with control characters and bidi controls escaped, so a terminal shows it as it is."""
    return escaped(text)


def _short(text: str, width: int = HINT_WIDTH) -> str:
    text = safe_text(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _names(keys: Iterable[str], limit: int = 4) -> str:
    keys = list(keys)
    shown = ", ".join(safe_text(key) for key in keys[:limit])
    return shown + (f", … ({len(keys)} in all)" if len(keys) > limit else "")


def describe(item: Decoded) -> str:
    """A short human hint for one record, e.g. ``step 12 (3 values)``."""
    event = item.event
    if isinstance(event, HistoryRow):
        return f"step {event.step} ({len(event.values)} value{'s' if len(event.values) != 1 else ''})"
    if isinstance(event, SummaryUpdate):
        removed = f", removes {_names(event.remove)}" if event.remove else ""
        return f"{_names(event.update)}{removed}"
    if isinstance(event, ConfigUpdate):
        removed = f", removes {_names(event.remove)}" if event.remove else ""
        return f"{_names(event.update)}{removed}"
    if isinstance(event, StatsRow):
        return f"{len(event.values)} system metrics"
    if isinstance(event, ConsoleOutput):
        return f"{event.stream} {_short(event.text)}" if event.text else f"{event.stream} (empty write)"
    if isinstance(event, RunInfo):
        return f"id {safe_text(event.run_id)}, project {_short(event.project or '-', 40)}, name {_short(event.display_name or '-', 40)}"
    if isinstance(event, Environment):
        return _names(event.fields, 5)
    if isinstance(event, RunExit):
        return f"exit code {event.exit_code}, runtime {_duration(event.runtime or 0)}"
    if isinstance(event, RunAlert):
        return _short(f"{event.level} {event.title}: {event.text}")
    if isinstance(event, MetricDefinition):
        axis = f" against {safe_text(event.step_metric)}" if event.step_metric else ""
        return f"{safe_text(event.name or event.glob_name)}{axis}"
    if isinstance(event, DataLoss):
        records = f", {event.lost_records} records" if event.lost_records is not None else ""
        return f"DAMAGED: {event.lost_bytes:,} bytes skipped{records} ({event.reason})"
    if isinstance(event, OtherRecord):
        return _other_hint(event)
    return ""


def _other_hint(event: OtherRecord) -> str:
    fields = event.fields
    if event.kind == "header":
        return f"written by wandb {safe_text(str(fields.get('version_info', {}).get('producer', '?')))}"
    if event.kind == "files":
        return _names(str(entry.get("path", "")) for entry in fields.get("files", []))
    return _names(fields) if fields else ""


def text_line(item: Decoded) -> str:
    return f"{item.offset:>10}  {item.kind:<12} {describe(item)}"


# ---------------------------------------------------------------- JSON


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by their JSON-text names (JSON has no such numbers)."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(key): _finite(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(inner) for inner in value]
    return value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(event: Any) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = tuple(spec.name for spec in dataclasses.fields(event) if spec.name != "kind")
    return names


def event_fields(item: Decoded) -> dict[str, Any]:
    """The record as one JSON-ready object: offset, type, num, then the event's fields."""
    event = item.event
    body: dict[str, Any] = {"offset": item.offset, "type": item.kind, "num": item.num}
    for name in _field_names(event):
        body[name] = getattr(event, name)
    return body


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return list(value)
    if hasattr(value, "items"):
        return dict(value.items())
    return str(value)


# One encoder for every line: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(allow_nan=False, default=_jsonable)


def to_json(value: Any) -> str:
    """JSON text of ``value``; NaN and infinities become the strings "NaN", "Infinity", "-Infinity"."""
    try:
        return _ENCODER.encode(value)
    except ValueError:
        return _ENCODER.encode(_finite(value))


def json_line(item: Decoded) -> str:
    return to_json(event_fields(item))


# ---------------------------------------------------------------- summary


def run_verdict(state: RunModel, seconds_since_write: float, size: int, crash_after: float = CRASH_AFTER) -> Verdict:
    """The run's state by the rule every view uses (``leet.model.state``)."""
    return judge(
        exit_code=state.exit.exit_code if state.exit is not None else None,
        last_write_age=seconds_since_write,
        crash_after=crash_after,
        size=size,
        has_run_record=state.info is not None or state.records > 0,
    )


def run_runtime(state: RunModel) -> float | None:
    """Seconds the run ran: the exit record's, or (old writers left it 0, a running run has none) the summary's ``_runtime``."""
    recorded = state.exit.runtime if state.exit is not None else None
    if recorded:
        return recorded
    for key in ("_runtime", "_wandb.runtime"):
        value = state.summary.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and is_finite(value) and value > 0:
            return float(value)
    return recorded


def _crash_after(args: argparse.Namespace) -> float:
    chosen = getattr(args, "crash_after", None)
    if chosen is not None:
        return chosen
    from leet.config import ConfigError, load

    try:
        return load().crash_after
    except ConfigError as error:
        print(f"leet inspect: {error}; judging the run with the default crash threshold ({CRASH_AFTER:.0f} s)", file=sys.stderr)
        return CRASH_AFTER


def read_state(path: Path, follow: bool, timeout: float, lazy_summary: bool = True) -> tuple[RunModel, _Follower]:
    """The run's state from its file, and the follower that read it (with its loss counters).

    Only steps of history are kept, not curves; with ``lazy_summary`` each summary
    value stays JSON text until the last one is known, so only the final values are decoded.
    """
    follower = _Follower(path, follow, timeout, history_values=False, lazy_summary=lazy_summary)
    state = RunModel()
    for items in follower.batches():
        for item in items:
            state.apply(item.event)
    state.summary = {key: plain(value) for key, value in state.summary.items()}
    return state, follower


def _print_summary(path: Path, args: argparse.Namespace) -> int:
    state, follower = read_state(path, args.follow, args.idle_timeout)
    report = _summary_report(path, state, follower, _crash_after(args), args.total)
    if args.json:
        print(to_json(report))
    else:
        sys.stdout.write(_summary_text(report))
    return 0


def _summary_report(path: Path, state: RunModel, follower: _Follower, crash_after: float = CRASH_AFTER, total: Total | None = None) -> dict[str, Any]:
    reader = follower.reader
    stat = path.stat()
    info = state.info
    verdict = run_verdict(state, max(0.0, time.time() - stat.st_mtime), stat.st_size, crash_after)
    return {
        "path": str(path),
        "state": verdict.state.code,
        "exit_code": verdict.exit_code,
        "last_write_age_s": round(verdict.last_write_age_s, 3) if verdict.last_write_age_s is not None else None,
        "reason": verdict.reason,
        "state_text": verdict.text,
        "runtime": run_runtime(state),
        "run_id": info.run_id if info else "",
        "project": info.project if info else "",
        "entity": info.entity if info else "",
        "name": info.display_name if info else "",
        "writer": state.writer,
        "last_step": state.last_step,
        "history_rows": state.history_rows,
        "progress": progress_of(state.trail.copy(), state.config, state.summary, last_step=state.last_step, finished=ended(verdict.state), total=total).as_dict(),
        "records": state.records,
        "file_bytes": stat.st_size,
        "config": flatten(state.config),
        "summary": {key: value for key, value in state.summary.items() if not key.startswith("_wandb")},
        "console_tail": state.console.tail(CONSOLE_TAIL_LINES),
        "gpu_energy": energy_report(state.energy.nodes()),
        "lost": {
            "bytes": reader.lost_bytes if reader else 0,
            "records": reader.lost_records if reader else 0,
            "undecodable": reader.undecodable if reader else 0,
            "records_at_least": bool(reader and reader.uncounted_losses),
            "unfinished_tail_bytes": follower.torn_bytes,
        },
    }


def _summary_text(report: dict[str, Any]) -> str:
    lines = [
        f"run        {safe_text(report['run_id'] or '?')}  project {safe_text(report['project'] or '-')}  name {safe_text(report['name'] or '-')}",
        f"state      {report['state_text']}"
        + (f", runtime {_duration(report['runtime'])}" if report["runtime"] is not None else "")
        + (f" ({report['reason']})" if report["exit_code"] is None else ""),
        f"file       {safe_text(report['path'])} ({report['file_bytes']:,} bytes, {report['records']:,} records"
        + (f", written by wandb {safe_text(report['writer'])})" if report["writer"] else ")"),
        f"last step  {report['last_step'] if report['last_step'] is not None else '-'} ({report['history_rows']:,} history rows)",
        f"progress   {safe_text(report['progress']['text'] or '-')}",
        f"lost data  {_losses_text(report['lost'])}",
        safe_text(energy_report_line(report["gpu_energy"])),
    ]
    lines += _section("config", report["config"])
    lines += _section("summary", report["summary"])
    tail = report["console_tail"]
    lines.append(f"console    (last {len(tail)} lines)" if tail else "console    -")
    lines += [f"  {safe_text(line)}" for line in tail]
    return "\n".join(lines) + "\n"


def _section(title: str, values: dict[str, Any]) -> list[str]:
    values = collapse_media(values)
    if not values:
        return [f"{title:<10} -"]
    lines = [f"{title}"]
    for key in sorted(values):
        lines.append(f"  {safe_text(key)} = {_value_text(values[key], key)}")
    return lines


def _value_text(value: Any, key: str = "") -> str:
    """One summary or config value for people: media by kind and size, times as times (``values.describe_value``)."""
    return _short(describe_value(value, key))


def _losses_text(lost: dict[str, int]) -> str:
    parts = []
    if lost["bytes"]:
        parts.append(f"{lost['bytes']:,} damaged bytes skipped ({_record_count(lost['records'], bool(lost['records_at_least']))})")
    if lost["undecodable"]:
        parts.append(f"{lost['undecodable']:,} undecodable records")
    if lost["unfinished_tail_bytes"]:
        parts.append(f"unfinished record at the end ({lost['unfinished_tail_bytes']:,} bytes)")
    return "; ".join(parts) if parts else "none"


def _record_count(count: int, at_least: bool) -> str:
    if at_least:
        return f"at least {count:,} records" if count else "records lost: unknown"
    return f"{count:,} records"


_duration = duration
