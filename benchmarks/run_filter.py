"""What the workspace's run filter costs: parsing a query, matching runs, and reading run files for ``cfg.`` / ``summary.`` terms.

    python3 benchmarks/run_filter.py [--steps 100000] [--runs 1000] [--repeats 5]

* parse: ``parse`` of a query using every form;
* match: that query over ``--runs`` runs, each with a nested config of 40
  keys and a summary of 40 (the time per run);
* first read: ``FactsBook.poll`` of a run file of ``--steps`` steps (written
  by the test framer as the SDK lays a run out: per step one history record
  and two summary records), read whole for its config and summary;
* read on: the same file after another 1,000 steps were appended;
* unchanged: a poll of that file when nothing was added (a ``stat``).

Prints one table of medians over ``--repeats``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

QUERY = '(tag:"big model" | -state:failed) resnet cfg.optimizer.lr<=1e-3 summary.val/loss<0.3 | note:ablation'


def write_run(path: Path, steps: int) -> Path:
    """A run of ``steps`` steps; a longer one starts with the same bytes."""
    from framer import RunWriter

    writer = RunWriter("bench")
    writer.config(optimizer={"name": "adamw", "lr": 3e-4}, batch=256)
    for step in range(steps):
        writer.history(step, {"val/loss": 1 / (step + 1), "acc": step * 1e-6})
        writer.summary(**{"val/loss": 1 / (step + 1)})
        writer.summary(acc=step * 1e-6)
    return writer.write(path)


def timed(action, repeats: int) -> float:
    """The median seconds of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    from leet.model.run_query import RunFields, parse
    from leet.sources.run_facts import FactsBook

    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--steps", type=int, default=100_000)
    options.add_argument("--runs", type=int, default=1000)
    options.add_argument("--repeats", type=int, default=5)
    args = options.parse_args()

    runs = [
        RunFields(
            words=(f"resnet-{n}", f"id{n:06d}", "cifar10", "sweep", "train"), state=("running", "finished", "failed")[n % 3],
            tags=("big model",) if n % 2 else ("baseline",), notes="a run",
            config={"optimizer": {"lr": 10 ** -(n % 5), "name": "adamw"}, **{f"k{i}": i for i in range(38)}},
            summary={"val/loss": 1 / (n + 1), **{f"m{i}": float(i) for i in range(39)}},
        )
        for n in range(args.runs)
    ]
    query = parse(QUERY)
    rows = [
        ("parse a query of every form", timed(lambda: parse(QUERY), args.repeats * 100) * 1e6, "µs"),
        (f"match it, per run ({args.runs} runs)", timed(lambda: [query.matches(run) for run in runs], args.repeats) / args.runs * 1e6, "µs"),
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = write_run(Path(folder) / "run-bench.wandb", args.steps)
        size = path.stat().st_size

        def first_read() -> None:
            book = FactsBook()
            while book.poll([path]) or book.unfinished:
                pass

        rows.append((f"first read, {args.steps:,} steps ({size / 2**20:.0f} MiB)", timed(first_read, args.repeats) * 1e3, "ms"))
        book = FactsBook()
        while book.poll([path]) or book.unfinished:
            pass
        rows.append(("unchanged file, poll", timed(lambda: book.poll([path]), args.repeats * 100) * 1e6, "µs"))
        grown = write_run(Path(folder) / "run-grown.wandb", args.steps + 1000)
        assert grown.read_bytes()[:size] == path.read_bytes(), "the longer run starts as the shorter one"
        reads = []
        for _ in range(args.repeats):
            book = FactsBook()
            path.write_bytes(grown.read_bytes()[:size])
            while book.poll([path]) or book.unfinished:
                pass
            path.write_bytes(grown.read_bytes())
            started = time.perf_counter()
            book.poll([path])
            reads.append(time.perf_counter() - started)
        rows.append(("read on, 1,000 steps more", statistics.median(reads) * 1e3, "ms"))

    print("| what | median | |\n|---|---:|---|")
    for what, value, unit in rows:
        print(f"| {what} | {value:,.1f} | {unit} |")


if __name__ == "__main__":
    main()
