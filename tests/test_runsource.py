"""A run file read into the store and the run model, checked against what the real SDK logged.

Most tests drive ``RunSource.step()`` by hand until the first read reaches
the end of the file; the live-run test starts the worker thread, as the app does.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import time
from pathlib import Path

from wandb_runs import BLOCK_SIZE

from leet.common.text import clean
from leet.model.run import RunState
from leet.model.store import SeriesKey, Store
from leet.runfile.decode import RawJSON, flatten, iter_decoded, json_value
from leet.runfile.events import HistoryRow
from leet.sources.run import RunSource
from leet.ui.views import run as runviews
from widgets.textpane import TextPane

CONTROL = [chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))]


class FakeMonotonic:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def load(path, **options) -> RunSource:
    """A source that has read ``path`` to its end, synchronously."""
    source = RunSource(path, Store(), **options)
    for _ in range(10_000):
        source.step()
        if source.model.loaded:
            return source
    raise AssertionError(f"{path} never finished loading")


def points(source: RunSource, key: str) -> list[tuple[float, float]]:
    series = SeriesKey(source.run_key, key)
    data = source.store.snapshot([series])[series]
    return list(zip(data.t, data.mean))


def logged(rows, path: tuple[str, ...]) -> list[tuple[float, float]]:
    """(step, value) for every row that logged the key ``path``."""
    out = []
    for step, row in enumerate(rows):
        value = row
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            out.append((float(step), float(value)))
    return out


def same_points(got, want) -> bool:
    return len(got) == len(want) and all(
        t1 == t2 and (v1 == v2 or (math.isnan(v1) and math.isnan(v2))) for (t1, v1), (t2, v2) in zip(got, want)
    )


def decoded(value):
    return json_value(value) if isinstance(value, RawJSON) else value


def overview_text(snapshot) -> str:
    return "\n".join(text for text, _ in runviews.overview_lines(snapshot, time.time()))


def header_text(snapshot) -> str:
    left, right = runviews.header_parts(snapshot)
    return "".join(text for text, _ in left + right)


# -- a finished run -------------------------------------------------------------


def test_basic_run_loads_finished_with_every_step_and_key(basic_run):
    source = load(basic_run.run_dir)
    snapshot = source.snapshot()
    assert snapshot.state is RunState.FINISHED
    assert snapshot.exit_code == 0
    assert snapshot.last_step == basic_run.steps - 1
    assert set(snapshot.history_keys) == {(".".join(path), None) for path in basic_run.keys} == {(key, None) for key in ("loss", "acc", "lr", "eval.loss")}
    assert snapshot.run_key == basic_run.run_id
    assert snapshot.lost_bytes == snapshot.lost_records == 0
    assert snapshot.bytes_read == snapshot.file_size == basic_run.wandb_path.stat().st_size


def test_history_in_the_store_is_exactly_what_was_logged_nan_and_inf_included(basic_run):
    source = load(basic_run.run_dir)
    for path in basic_run.keys:
        assert same_points(points(source, ".".join(path)), logged(basic_run.rows, path)), path
    (key,), nan_step = basic_run.nan_at
    (_,), inf_step = basic_run.inf_at
    values = dict(points(source, key))
    assert math.isnan(values[nan_step])
    assert values[inf_step] == math.inf


def test_system_metrics_go_under_their_own_key_not_the_runs(basic_run):
    source = load(basic_run.run_dir)
    system = {series.key for series in source.store.series(source.system_key)}
    assert "memory_percent" in system
    assert not system & {key for key, _ in source.snapshot().history_keys}
    assert {(series.key, series.label) for series in source.store.series(source.run_key)} == set(source.snapshot().history_keys)


def test_config_summary_and_identity_reach_the_overview(basic_run):
    snapshot = load(basic_run.run_dir).snapshot()
    assert flatten({k: decoded(v) for k, v in snapshot.config.items()}) == flatten(basic_run.config)
    summary = {k: decoded(v) for k, v in snapshot.summary.items()}
    assert summary["best_acc"] == basic_run.summary["best_acc"]
    # run.summary.update after the last step wins over the last logged value.
    assert summary["loss"] == basic_run.summary["loss"] != basic_run.rows[-1]["loss"]
    text = overview_text(snapshot)
    for expected in (
        "leet-tests", basic_run.name, basic_run.group, basic_run.job_type, basic_run.notes,
        ", ".join(basic_run.tags), basic_run.run_id, "finished", f"{basic_run.steps - 1}",
    ):
        assert expected in text, expected
    lines = text.splitlines()
    assert any(line.split() == ["model.depth", "12"] for line in lines), "nested config shows as dotted leaves"
    assert any(line.split() == ["model.width", "768"] for line in lines)
    assert any(line.split() == ["best_acc", "0.875"] for line in lines)
    assert any(line.split() == ["loss", "0.125"] for line in lines)


def test_header_names_the_run_its_state_and_step(basic_run):
    header = header_text(load(basic_run.run_dir).snapshot())
    assert basic_run.name in header and basic_run.run_id in header and "leet-tests" in header
    assert "finished" in header and f"step {basic_run.steps - 1}" in header


def test_a_run_reads_as_loading_until_the_first_read_reaches_its_end(basic_run):
    source = RunSource(basic_run.run_dir, Store())
    assert source.snapshot().state is RunState.LOADING
    assert "loading" in header_text(source.snapshot())
    while not source.model.loaded:
        source.step()
    assert source.snapshot().state is RunState.FINISHED
    assert not source.step(), "nothing new after the end of a finished file"


# -- console ----------------------------------------------------------------------


def test_console_collapses_progress_bars_and_marks_stderr(console_run):
    snapshot = load(console_run.run_dir).snapshot()
    lines = [(clean(text), style) for text, style in runviews.console_lines(snapshot)]
    stdout = [text for text, style in lines if style == "value"]
    stderr = [text for text, style in lines if style == "error"]
    assert stdout == [
        "starting training",
        "green ok bold",
        "Epoch 0: 100%|██████████| 100/100",
        *(f"step {step} loss {1.0 / (step + 1):.3f}" for step in range(5)),
        "A", "B", "C",
        "done",
    ]
    assert stderr == ["warning: using the CPU", "ERROR something red"]
    assert sum("Epoch 0" in text for text, _ in lines) == 1, "one line per progress bar, in its final state"


def test_console_filter_keeps_matching_lines(console_run):
    snapshot = load(console_run.run_dir).snapshot()
    assert [text for text, _ in runviews.console_lines(snapshot, "loss")] == [
        f"step {step} loss {1.0 / (step + 1):.3f}" for step in range(5)
    ]


# -- how a run ended ---------------------------------------------------------------


def test_failed_run_shows_failed_with_its_exit_code(failed_run):
    snapshot = load(failed_run.run_dir).snapshot()
    assert snapshot.state is RunState.FAILED
    assert snapshot.exit_code == 3
    assert runviews.state_text(snapshot) == "failed (exit 3)"
    assert "failed (exit 3)" in header_text(snapshot)
    assert [style for text, style in runviews.console_lines(snapshot) if "RuntimeError: boom" in text] == ["error"]


def test_killed_run_is_running_until_crash_after_passes_without_growth(killed_run):
    clock = FakeMonotonic()
    written = killed_run.wandb_path.stat().st_mtime  # opened as its writer died, however old the fixture is by now
    source = load(killed_run.run_dir, monotonic=clock, wall=lambda: written, crash_after=60.0)
    snapshot = source.snapshot()
    assert snapshot.exit_code is None
    assert snapshot.state is RunState.RUNNING
    assert snapshot.last_step is not None and snapshot.last_step > 0
    clock.now += 59.0
    assert source.snapshot().state is RunState.RUNNING
    clock.now += 2.0
    snapshot = source.snapshot()
    assert snapshot.state is RunState.CRASHED
    assert runviews.state_text(snapshot) == "presumed crashed"
    assert "presumed crashed" in header_text(snapshot)


def test_a_presumed_crashed_run_revives_when_its_file_grows(killed_run, tmp_path):
    data = killed_run.wandb_path.read_bytes()
    path = tmp_path / killed_run.wandb_path.name
    path.write_bytes(data[:BLOCK_SIZE])  # the file as it was earlier in the run
    clock = FakeMonotonic()
    source = load(path, monotonic=clock, crash_after=60.0)
    steps_before = source.snapshot().last_step
    clock.now += 120.0
    assert source.snapshot().state is RunState.CRASHED
    with open(path, "ab") as handle:
        handle.write(data[BLOCK_SIZE:])
    assert source.step()
    while source.step():
        pass
    snapshot = source.snapshot()
    assert snapshot.state is RunState.RUNNING
    assert snapshot.last_step > steps_before


def test_a_file_last_written_long_ago_is_presumed_crashed_as_soon_as_it_loads(killed_run, tmp_path):
    path = tmp_path / killed_run.wandb_path.name
    shutil.copyfile(killed_run.wandb_path, path)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))
    snapshot = load(path, crash_after=600.0).snapshot()
    assert snapshot.state is RunState.CRASHED, "a run whose file stopped growing an hour ago is not running"


def test_an_old_finished_file_is_still_finished(basic_run, tmp_path):
    path = tmp_path / basic_run.wandb_path.name
    shutil.copyfile(basic_run.wandb_path, path)
    os.utime(path, (0, 0))
    assert load(path, crash_after=600.0).snapshot().state is RunState.FINISHED


# -- damage and hostile text -----------------------------------------------------------


def steps_outside(path: Path, start: int, end: int) -> set[int]:
    """Steps whose history record lies wholly outside bytes [start, end) of the intact file."""
    items = list(iter_decoded(path))
    ends = [item.offset for item in items[1:]] + [path.stat().st_size]
    return {
        item.event.step
        for item, stop in zip(items, ends)
        if isinstance(item.event, HistoryRow) and (stop <= start or item.offset >= end)
    }


def test_corrupted_run_loads_reports_the_loss_and_keeps_everything_else(basic_run, corrupted_run):
    source = load(corrupted_run.run_dir)
    snapshot = source.snapshot()
    assert snapshot.state is RunState.FINISHED
    assert snapshot.lost_bytes > 0 and snapshot.lost_records > 0
    assert "lost to damage" in header_text(snapshot)
    assert f"{snapshot.lost_records:,} records" in overview_text(snapshot)
    damaged_block = corrupted_run.offset - corrupted_run.offset % BLOCK_SIZE
    expected = steps_outside(basic_run.wandb_path, damaged_block, damaged_block + BLOCK_SIZE)
    read = points(source, "acc")
    steps = {int(t) for t, _ in read}
    assert expected <= steps, f"steps lost outside the damaged block: {sorted(expected - steps)}"
    assert len(steps) >= basic_run.steps // 2
    assert max(steps) == basic_run.steps - 1, "steps after the damage are read"
    want = dict(logged(basic_run.rows, ("acc",)))
    assert all(value == want[t] for t, value in read), "what is read is what was logged"


def test_hostile_text_loads_and_is_inert_once_shown(hostile_run):
    snapshot = load(hostile_run.run_dir).snapshot()
    assert snapshot.state is RunState.FINISHED
    assert len(snapshot.history_keys) > len(hostile_run.texts)
    shown = []
    for lines in (runviews.overview_lines(snapshot, time.time()), runviews.console_lines(snapshot)):
        pane = TextPane()
        pane.set_lines(lines)  # what the pane will draw
        shown += pane.lines
    shown.append(header_text(snapshot))
    shown += [spec.title for spec in runviews.metric_specs(snapshot.history_keys)]
    bad = [text for text in shown if any(char in text for char in CONTROL)]
    assert not bad, f"control characters would reach the terminal: {bad[:3]}"
    assert "[bold red]x[/]" in shown, "markup look-alikes are shown as written"
    assert any("[bold red]run[/]" in text for text in shown)


# -- a run still being written, with the worker thread ----------------------------------


def test_live_run_new_steps_reach_the_source_soon_after_the_file_grows(live_run):
    live = live_run(seconds=30.0, step_interval=0.1, flush_interval=0.1)
    source = RunSource(live.run_dir, Store())
    seen: list[tuple[float, int]] = []  # (when, bytes read) after each change the worker made
    source.on_change(lambda: seen.append((time.perf_counter(), source.model.bytes_read)))
    source.start()
    try:
        first = _wait(lambda: source.snapshot().last_step, 30.0, "a first step")
        growths = _watch_growth(live, seconds=2.0)
        later = _wait(lambda: source.snapshot().last_step if source.snapshot().last_step > first else None, 10.0, "a later step")
        assert source.snapshot().state is RunState.RUNNING
    finally:
        source.close()
    latencies = _read_latencies(growths, seen)
    print(
        f"\nlive run: the file grew {len(growths)} times, {len(latencies)} ending on a record boundary; "
        f"file growth -> source: median {statistics.median(latencies) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms; steps {first} -> {later}"
    )
    assert len(latencies) >= len(growths) // 2, "most writes end on a record boundary"
    assert statistics.median(latencies) < 1.0


def _wait(probe, timeout: float, what: str):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.01)
    raise AssertionError(f"no {what} within {timeout:g} s")


def _watch_growth(live, seconds: float) -> list[tuple[float, int]]:
    """(when, new size) each time the file grew, polled every few milliseconds."""
    growths = []
    size = live.size()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        now_size = live.size()
        if now_size > size:
            growths.append((time.perf_counter(), now_size))
            size = now_size
        time.sleep(0.005)
    assert growths, "the live writer did not write for seconds"
    return growths


def _read_latencies(growths: list[tuple[float, int]], seen: list[tuple[float, int]]) -> list[float]:
    """Seconds from each growth until the source had read all of it.

    Growths that ended inside a record are read only with the next one; they are left out.
    """
    latencies = []
    ends = [when for when, _ in growths[1:]] + [float("inf")]
    for (grew_at, size), next_growth in zip(growths, ends):
        caught = next((when for when, read in seen if read >= size), None)
        if caught is not None and caught < next_growth:
            latencies.append(max(0.0, caught - grew_at))
    return latencies
