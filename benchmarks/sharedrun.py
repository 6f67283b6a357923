"""Measure how long a shared-mode run with many writers takes to load, against its largest writer alone.

    python3 benchmarks/sharedrun.py [--writers 16] [--steps 20000] [--metrics 10] [--every-rank-logs] [--trials 3] [--cache DIR]

The run is written once with the real wandb SDK into the cache: ``--writers``
processes share one run id, labelled ``rank0…``, ``rank0`` the primary. The
primary logs ``--steps`` history rows of ``--metrics`` values and prints a
console line every 100 steps; the other writers print a line every 0.5 s
until the primary is done. Every writer samples system metrics every 0.5 s.
With ``--every-rank-logs`` every writer logs the same history as the primary
(ranks that log their own loss): the history leet passes over unread.

Each trial loads in this process, without a screen, until every record is in:
the largest writer's file alone (``RunSource``), then the whole run
(``SharedRunSource``, what ``leet RUN_DIR`` opens). The page cache is warmed
first, so both read from memory. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leet.model.store import Store  # noqa: E402
from leet.sources.run import RunSource  # noqa: E402
from leet.sources.shared import SharedRunSource, writer_files  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "leet-bench"
TARGET_RATIO = 1.2

WRITER = """
import math, os, sys, time, wandb
run_id, label, primary, steps, metrics, where, logs = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7] == "1"
done = os.path.join(where, "primary-done")
run = wandb.init(project="leet-bench", mode="offline", dir=where, id=run_id, group="bench", job_type="train",
                 settings=wandb.Settings(x_label=label, x_primary=primary, x_stats_sampling_interval=0.5))
rank = int(label[4:])
if logs:
    for step in range(steps):
        run.log({f"m{i:02d}": math.sin(step / 500 + i + rank) + i for i in range(metrics)})
        if step % 100 == 0:
            print(f"{label} step {step}", flush=True)
    if primary:
        open(done, "w").close()
while not os.path.exists(done):
    print(f"{label} waiting for the primary", flush=True)
    time.sleep(0.5)
run.finish()
"""


def cached_run(cache: Path, writers: int, steps: int, metrics: int, every_rank: bool) -> Path:
    """The wandb/ folder of the shared run for this size, written with the SDK on first use."""
    home = cache / f"shared-{writers}w-{steps}x{metrics}" if every_rank else cache / f"shared-{writers}w-{steps}x{metrics}-primary"
    if sorted(home.glob("wandb/offline-run-*")):
        return home / "wandb"
    if importlib.util.find_spec("wandb") is None:
        raise SystemExit("wandb is not installed, so no run can be written")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"writing a {writers}-writer shared run ({steps:,} steps × {metrics} metrics each) into {home} …", flush=True)
    started = time.perf_counter()
    scratch = tempfile.mkdtemp(dir=cache, prefix=".writing-")
    run_id = f"bench{writers}w{steps}"
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    try:
        procs = []
        for rank in range(writers):
            logs = every_rank or rank == 0
            argv = [sys.executable, "-c", WRITER, run_id, f"rank{rank}", "1" if rank == 0 else "0", str(steps), str(metrics), scratch, "1" if logs else "0"]
            procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            time.sleep(0.3)  # the primary first, as a launcher starts rank 0
        for proc in procs:
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"a writer failed (exit {proc.returncode}):\n{err[-2000:]}")
        if home.exists():
            shutil.rmtree(home)
        os.rename(scratch, home)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"  written in {time.perf_counter() - started:.0f} s", flush=True)
    return home / "wandb"


def warm(files: list[Path]) -> None:
    for file in files:
        with open(file, "rb") as handle:
            while handle.read(1 << 20):
                pass


def loaded(source) -> bool:
    writers = getattr(source, "writers", [source])
    return all(writer.model.loaded for writer in writers)


def load_seconds(make) -> tuple[float, object]:
    """Seconds from opening to every record read, reading as the source's worker thread does."""
    started = time.perf_counter()
    source = make()
    while not loaded(source):
        if not source.step():
            time.sleep(0.001)  # a split-load child still working
    elapsed = time.perf_counter() - started
    return elapsed, source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--every-rank-logs", action="store_true", help="every writer logs history, not only the primary")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)

    root = cached_run(args.cache, args.writers, args.steps, args.metrics, args.every_rank_logs)
    first = sorted(root.glob("offline-run-*/run-*.wandb"))[0]
    files = writer_files(first.parent)
    largest = max(files, key=lambda f: f.stat().st_size)
    warm(files)
    alone, merged = [], []
    for _ in range(args.trials):
        seconds, source = load_seconds(lambda: RunSource(largest, Store()))
        source.close()
        alone.append(seconds)
        seconds, source = load_seconds(lambda: SharedRunSource(files, Store(), rescan=0))
        snapshot = source.snapshot(console_lines=0)
        source.close()
        merged.append(seconds)
    total = sum(f.stat().st_size for f in files)
    ratio = statistics.median(merged) / statistics.median(alone)
    print()
    print(f"shared run: {len(files)} writers, labels {snapshot.labels[0]}…{snapshot.labels[-1]} ({len(snapshot.labels)}), "
          f"{total / 2**20:.1f} MiB in all, largest writer {largest.stat().st_size / 2**20:.1f} MiB, {snapshot.records:,} records")
    print(f"{'':34} {'median':>8} {'min':>8} {'max':>8}")
    for name, values in (("largest writer's file alone (s)", alone), (f"all {len(files)} writers merged (s)", merged)):
        print(f"{name:34} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f}")
    verdict = "met" if ratio <= TARGET_RATIO else "missed"
    print(f"{'ratio merged / alone':34} {ratio:8.2f}   target ≤ {TARGET_RATIO} ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
