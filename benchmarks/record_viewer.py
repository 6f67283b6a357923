"""Opening the record viewer (``i``) on a run of 200,000 steps: about 600,000 records.

    python3 benchmarks/record_viewer.py [--steps 200000] [--repeats 3] [--run FILE]

The run file is written by the test framer (``tests/framer.py``) the way the
SDK lays a run out: a run record, then per step one history record (``loss``,
``acc``, ``_step``) and two summary records; ``--run`` names a real one
instead. Each repeat starts a fresh interpreter that opens the run view of the
made-up demo run on that file (headless, 160×48) and, with Textual's pilot:

1. runs ``i``'s action and waits until the list has drawn record lines: "first lines";
2. moves the cursor down (the list's ``down`` action) while the file is still
   being indexed and times until the JSON pane shows the record: "key while
   indexing";
3. waits for the whole file to be indexed: "all indexed";
4. reads its resident memory (``VmRSS``) before ``i`` and once indexed.

Prints one row per repeat and min/median/max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SIZE = (160, 48)


def write_run(path: Path, steps: int) -> Path:
    from framer import RunWriter

    writer = RunWriter("bench")
    for step in range(steps):
        writer.history(step, {"loss": 1 / (step + 1), "acc": step / steps})
        writer.summary(loss=1 / (step + 1))
        writer.summary(acc=step / steps)
    return writer.write(path)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def drawn(screen) -> bool:
    """The viewer is up and its list has drawn a record line."""
    from leet.ui.screens.records import RecordsScreen
    from widgets.linelist import LineList

    lines = screen.query(LineList) if isinstance(screen, RecordsScreen) else ()
    return bool(lines and lines.first().count and lines.first().plain_rows()[1:2] and lines.first().plain_rows()[1].strip())


async def one_repeat(path: Path) -> dict:
    from leet.testing.demo import make_run_demo

    demo = make_run_demo()
    demo.source.path = path
    app = demo.app
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = rss_mib()
        started = time.perf_counter()
        app.screen.action_records()  # what ``i`` runs, without the pilot's own waits
        while not drawn(app.screen):
            await asyncio.sleep(0.001)
        first = time.perf_counter() - started
        screen = app.screen
        indexing = not screen.index.reached_end
        pressed = time.perf_counter()
        screen.lines.action_cursor(1)  # what ``down`` runs, without the pilot's own waits
        while screen.shown_entry != screen.index.positions()[1]:
            await asyncio.sleep(0.001)
        key = time.perf_counter() - pressed
        while not (screen.index.reached_end and screen.lines.count == len(screen.index)):
            await asyncio.sleep(0.005)
        indexed = time.perf_counter() - started
        return {
            "first_ms": first * 1000,
            "key_ms": key * 1000,
            "key_while_indexing": indexing,
            "indexed_s": indexed,
            "records": len(screen.index),
            "rss_mib": rss_mib() - before,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--run", type=Path)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(asyncio.run(one_repeat(options.one))))
        return
    with tempfile.TemporaryDirectory() as scratch:
        path = options.run or write_run(Path(scratch) / "run-bench.wandb", options.steps)
        rows = []
        for _ in range(options.repeats):
            done = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{rows[0]['records']:,} records, {path.name}")
    print("| repeat | first lines (ms) | key while indexing (ms) | all indexed (s) | RSS + (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for number, row in enumerate(rows, 1):
        note = "" if row["key_while_indexing"] else " (index done)"
        print(f"| {number} | {row['first_ms']:.0f} | {row['key_ms']:.1f}{note} | {row['indexed_s']:.2f} | {row['rss_mib']:.1f} |")
    for name, pick in (("min", min), ("median", statistics.median), ("max", max)):
        values = [pick(row[key] for row in rows) for key in ("first_ms", "key_ms", "indexed_s", "rss_mib")]
        print(f"| {name} | {values[0]:.0f} | {values[1]:.1f} | {values[2]:.2f} | {values[3]:.1f} |")


if __name__ == "__main__":
    main()
