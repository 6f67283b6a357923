"""Opening the media pane (``3``) on a run that logged 1,000 images, and scrubbing through them.

    python3 benchmarks/media_pane.py [--steps 1000] [--size 64] [--repeats 5] [--scrub 200] [--run DIR]

The real SDK writes a run that logs one SIZE×SIZE PNG (``wandb.Image`` of a
random array) every step for STEPS steps, unless ``--run`` names one already
written. Each repeat starts a fresh interpreter that loads the run into the
run view (headless, 160×48, half-block images) and then, with Textual's
pilot (posting keys straight to its driver):

1. posts the key ``3`` to the app (as the terminal driver does) and waits
   for the first frame the app composes with a picture cell in it: the time
   from the key to that frame is "open";
2. posts ← SCRUB times, each time waiting for the frame with the new step's
   picture: "scrub" is the median per step;
3. reads its resident memory (``VmRSS``) before ``3``, once the pane shows,
   and after the scrubbing.

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


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Frames:
    """The frames the app composes (headless, nothing is written): when the first one with a picture cell came."""

    def __init__(self, app) -> None:
        self.first_picture: float | None = None
        display = app._display

        def watched(screen, update) -> None:
            if self.first_picture is None and update is not None and has_picture(update):
                self.first_picture = time.perf_counter()
            display(screen, update)

        app._display = watched


def has_picture(update) -> bool:
    lines = getattr(update, "strips", None)
    if lines is None:
        lines = [line.values() for line in getattr(update, "chops", ())]
    return any("▀" in strip.text for line in lines for strip in (line if not hasattr(line, "text") else [line]) if strip is not None)


async def until_picture(frames: Frames, started: float) -> float:
    """Seconds from ``started`` to the first frame with a picture in it."""
    frames.first_picture = None
    while frames.first_picture is None:
        await asyncio.sleep(0.001)
    return frames.first_picture - started


async def measure(run_dir: str, scrubs: int) -> dict:
    from textual import events

    from leet.config import Config
    from leet.model.store import Store
    from leet.sources.run import RunSource
    from leet.ui.app import LeetApp
    from leet.ui.screens.run import RunScreen

    source = RunSource(run_dir, Store())
    while not source.model.loaded:
        source.step()
    app = LeetApp(source, Config(images="blocks"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        frames = Frames(app)
        before = rss_mib()

        def key(name: str) -> float:
            started = time.perf_counter()
            app._driver.send_message(events.Key(name, name if len(name) == 1 else None))
            return started

        opened = await until_picture(frames, key("3"))
        await pilot.pause()
        shown = rss_mib()
        times = []
        for _ in range(scrubs):
            times.append(await until_picture(frames, key("left")))
        await pilot.pause()
        after = rss_mib()
        held = app.screen.query_one("#media").cache.held_bytes
        step = "".join(text for text, _ in app.screen.query_one("#media").model.scrubber)
    return {"open": opened, "scrub": statistics.median(times) if times else 0.0, "before": before, "shown": shown, "after": after,
            "held": held, "step": step}


def child(run_dir: str, scrubs: int) -> None:
    print(json.dumps(asyncio.run(measure(run_dir, scrubs))))


def make_run(steps: int, size: int, where: Path) -> Path:
    from wandb_runs import make_image_series_run

    print(f"writing a run of {steps} steps, one {size}×{size} image each, with the SDK …", file=sys.stderr)
    return make_image_series_run(where, steps=steps, size=size).run_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scrub", type=int, default=200)
    parser.add_argument("--run", help="a run directory already written")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.scrub)
        return 0
    with tempfile.TemporaryDirectory(prefix="leet-media-bench-") as scratch:
        run_dir = Path(args.run) if args.run else make_run(args.steps, args.size, Path(scratch))
        rows = []
        for _ in range(args.repeats):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(run_dir), "--scrub", str(args.scrub)], capture_output=True, text=True, check=True,
            )
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"media pane on a run of {args.steps} logged {args.size}×{args.size} images, 160×48 headless, {args.repeats} fresh processes")
    print(f"{'repeat':<8}{'open (ms)':>10}{'scrub/step (ms)':>17}{'RSS +open (MiB)':>17}{'RSS +scrub (MiB)':>18}{'cache (KiB)':>13}")
    for index, row in enumerate(rows, 1):
        print(
            f"{index:<8}{row['open'] * 1000:>10.0f}{row['scrub'] * 1000:>17.1f}{row['shown'] - row['before']:>17.1f}"
            f"{row['after'] - row['before']:>18.1f}{row['held'] / 1024:>13.0f}"
        )
    for name, pick in (("min", min), ("median", statistics.median), ("max", max)):
        print(
            f"{name:<8}{pick(r['open'] for r in rows) * 1000:>10.0f}{pick(r['scrub'] for r in rows) * 1000:>17.1f}"
            f"{pick(r['shown'] - r['before'] for r in rows):>17.1f}{pick(r['after'] - r['before'] for r in rows):>18.1f}"
            f"{pick(r['held'] for r in rows) / 1024:>13.0f}"
        )
    print("targets: open ≤ 200 ms, RSS ≤ 50 MiB more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
