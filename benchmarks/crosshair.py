"""Cost of a run-view chart redraw as the crosshair moves, beside a redraw without it.

    python3 benchmarks/crosshair.py [--steps 10000] [--moves 200] [--repeats 3]

A made-up finished run of STEPS steps (``leet.testing.demo.make_run_demo``:
its metrics and system charts) is shown in the run view at 120×40 headless,
the first metric chart focused. Each repeat moves MOVES times across that
chart's x range and times, on the UI thread, what one move costs
(``RunScreen.redraw_looks()``: the visible charts' views built again and the
changed ones laid out, crosshair and readout included):

- no crosshair: the same redraw, every visible chart laid out again (what a
  data change costs);
- crosshair on one chart: ``v`` on the focused chart, then the moves;
- crosshair synced: ``V`` as well, so every chart of the metrics grid shows it.

Prints min, median and max milliseconds per redraw over all repeats.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leet.testing.demo import make_run_demo  # noqa: E402
from leet.ui.screens.run import RunScreen  # noqa: E402

SIZE = (120, 40)


async def time_moves(steps: int, moves: int, how: str) -> list[float]:
    app = make_run_demo(steps=steps).app
    times = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await pilot.press("d")
        if how != "none":
            await pilot.press("v")
        if how == "synced":
            await pilot.press("V")
        await pilot.pause()
        grid = screen.active_grid()
        charts = [widget for _, widget in grid.visible_charts()]
        focused = charts[grid.focused_index() or 0]
        lo, hi = focused.view.x_range
        key = f"{grid.id}:{grid.focused_chart_id()}"
        for move in range(moves):
            x = lo + (hi - lo) * move / max(1, moves - 1)
            began = time.perf_counter()
            if how == "none":
                screen.redraw_looks()
                for chart in charts:
                    chart.relayout()
            else:
                screen.crosshair = (key, x, focused.view.x_kind)
                screen.redraw_looks()
            times.append(time.perf_counter() - began)
        await pilot.pause()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"run view {SIZE[0]}×{SIZE[1]}, {args.steps:,} steps, {args.moves} moves × {args.repeats} repeats; ms per redraw")
    print(f"{'redraw':<26}{'min':>8}{'median':>9}{'max':>9}")
    for how, label in (("none", "no crosshair"), ("one", "crosshair on one chart"), ("synced", "crosshair synced (V)")):
        times: list[float] = []
        for _ in range(args.repeats):
            times += asyncio.run(time_moves(args.steps, args.moves, how))
        ms = [t * 1000 for t in times]
        print(f"{label:<26}{min(ms):>8.2f}{statistics.median(ms):>9.2f}{max(ms):>9.2f}")


if __name__ == "__main__":
    main()
