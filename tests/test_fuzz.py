"""Fuzzing in CI, for a bounded time: mutated real SDK files through every layer.

Each seed mutates one SDK file (its framing, its payloads under valid
checksums, or its values under valid checksums) and then: the run is loaded,
every view the run screen builds is built, ``leet inspect`` prints it as
text, JSON and a summary, and a live read at random moments must find the
records a re-read finds. ``LEET_FUZZ_SECONDS`` sets the time (default 15);
a failure names its seed, and leaves the file in the test's directory.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import random
import sys
import time

from fuzzing import mutant
from loading import load

from leet.commands import inspect_run
from leet.common.ticks import step_range
from leet.model.catalog import group
from leet.runfile.reader import RecordReader, read_records
from leet.ui.views.charts import chart_view, modes_for
from leet.ui.views.run import console_lines, header_parts, metric_specs, no_charts_text, overview_lines, time_range
from widgets.chartframe import compose_rows

BUDGET = float(os.environ.get("LEET_FUZZ_SECONDS", "15"))
WATCHDOG = 120.0  # seconds one case may take before the run is stopped with every thread's stack


def draw_charts(source, specs, x_range, x_kind) -> None:
    store = source.store
    for spec in specs[:40]:
        snapshots = store.snapshot(spec.keys)
        for mode in modes_for(spec):
            for width, height in ((60, 12), (12, 4)):
                compose_rows(chart_view(spec, snapshots, x_range, mode, x_kind=x_kind), width, height)


def look_at_everything(source) -> None:
    """What the run screen builds for a person, without the screen."""
    snapshot = source.snapshot()
    overview_lines(snapshot, time.time())
    overview_lines(snapshot, time.time(), "a")
    for width in (160, 40, None):
        header_parts(snapshot, width)
    console_lines(snapshot)
    no_charts_text(snapshot)
    specs = metric_specs(snapshot.history_keys, "", snapshot.axes, snapshot.hidden, run=snapshot.run_key)
    last = float(snapshot.last_step) if snapshot.last_step is not None else None
    draw_charts(source, specs, step_range(0.0, last), "step")
    system = source.system_key
    span = source.store.time_span(system)
    draw_charts(source, group(source.store.series(system), order="title"), time_range(*span) if span else (0.0, 1.0), "time")


def inspect_everything(path, capsys) -> None:
    for argv in ([], ["--json"], ["--summary"], ["--summary", "--json"]):
        parser = argparse.ArgumentParser(prog="leet inspect")
        inspect_run.add_arguments(parser)
        status = inspect_run.run(parser.parse_args([str(path), *argv]))
        out, err = capsys.readouterr()
        assert status == 0, f"leet inspect {' '.join(argv)} exited {status}: {err[-500:]}"
        assert "\x1b" not in out + err and "\x07" not in out + err, "escapes reach the terminal"
        if "--json" in argv:
            for line in out.splitlines():
                json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def live_equals_reread(path, data: bytes, rng: random.Random) -> None:
    live = path.with_name("live.wandb")
    live.write_bytes(b"")
    got = []
    written = 0
    with RecordReader(live) as reader:
        for cut in [*sorted(rng.randrange(len(data)) for _ in range(6)), len(data)]:
            with open(live, "ab") as handle:
                handle.write(data[written:cut])
            written = max(written, cut)
            got.extend(reader.poll().records)
        got.extend(reader.poll().records)
    assert got == read_records(path).records, "a live read and a re-read disagree"


def test_mutated_sdk_files_never_crash_hang_or_disagree(tmp_path, capsys):
    deadline = time.monotonic() + BUDGET
    seed = 0
    kinds: dict[str, int] = {}
    while time.monotonic() < deadline or seed < 20:
        kind, origin, data = mutant(seed)
        folder = tmp_path / f"seed{seed}"
        folder.mkdir()
        path = folder / "run-fuzz.wandb"
        path.write_bytes(data)
        faulthandler.dump_traceback_later(WATCHDOG, exit=True, file=sys.__stderr__)
        try:
            look_at_everything(load(path))
            inspect_everything(path, capsys)
            live_equals_reread(path, data, random.Random(seed))
        except Exception as error:
            raise AssertionError(f"seed {seed} ({kind} mutation of {origin.relative_to(origin.parents[4])}, kept at {path}): {error!r}") from error
        finally:
            faulthandler.cancel_dump_traceback_later()
        kinds[kind] = kinds.get(kind, 0) + 1
        seed += 1
    with capsys.disabled():
        print(f"\nfuzz: {seed} mutated files in {BUDGET:.0f} s ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
