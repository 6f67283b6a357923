"""Cost of one run-view redraw on the UI thread, for runs with many metric keys.

    python3 benchmarks/redraw.py [--keys 500,5000] [--redraws 30]

A made-up finished run (``leet.testing.demo.DemoRunSource``) with KEYS
history keys (``layer{i}/grad_norm``, as per-layer metrics of a large model
log them) is shown in the run view at 160×48 headless; then
``RunScreen.update_view()`` is timed REDRAWS times: as it runs now (chart
specs regrouped only when the keys or the filter change), and with that
cache emptied before each redraw (every redraw regroups, as the view did
before the cache). Prints a table of median and 90th-percentile
milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leet.config import Config  # noqa: E402
from leet.model.store import Store  # noqa: E402
from leet.runfile.events import HistoryRow, RunExit, RunInfo  # noqa: E402
from leet.testing.demo import DemoRunSource  # noqa: E402
from leet.ui.app import LeetApp  # noqa: E402
from leet.ui.screens.run import RunScreen  # noqa: E402

STEPS = 20
START = 1_790_000_000.0


def made_up_run(keys: int) -> DemoRunSource:
    source = DemoRunSource(Store(), clock=lambda: START + 3600, file_size=1 << 20)
    events: list = [RunInfo(run_id="many-keys", project="bench", display_name=f"{keys} keys")]
    names = [f"layer{i}/grad_norm" for i in range(keys)]
    for step in range(STEPS):
        events.append(HistoryRow(step=step, timestamp=START + step, runtime=float(step), values={name: float(step + i % 7) for i, name in enumerate(names)}))
    events.append(RunExit(exit_code=0, runtime=STEPS))
    source.feed(events)
    return source


async def time_redraws(keys: int, redraws: int, cached: bool) -> list[float]:
    source = made_up_run(keys)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    times = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        for _ in range(redraws):
            if not cached:
                screen._metric_specs_for = None  # what every redraw paid before the cache
            began = time.perf_counter()
            screen.update_view()
            times.append((time.perf_counter() - began) * 1000)
            await pilot.pause()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", default="500,5000", help="comma-separated key counts")
    parser.add_argument("--redraws", type=int, default=30)
    args = parser.parse_args()
    print(f"{'keys':>6} | {'regroup every redraw (ms)':>26} | {'cached (ms)':>12}")
    print(f"{'':>6} | {'median':>12} {'p90':>13} | {'median':>6} {'p90':>5}")
    for keys in (int(k) for k in args.keys.split(",")):
        rows = {}
        for cached in (False, True):
            times = sorted(asyncio.run(time_redraws(keys, args.redraws, cached))[1:])  # the first fills caches
            rows[cached] = (statistics.median(times), times[int(len(times) * 0.9) - 1])
        (um, up), (cm, cp) = rows[False], rows[True]
        print(f"{keys:>6} | {um:>12.1f} {up:>13.1f} | {cm:>6.1f} {cp:>5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
