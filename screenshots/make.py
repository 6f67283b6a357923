"""Render the monitor on fake hardware and the run view on a made-up run to SVG, and to PNG when Chromium is here.

    python3 screenshots/make.py [--out DIR] [--scale N] [--no-png] [--only NAME ...]

The apps and their data come from ``leet.testing.demo`` (the same fake machine and
run the snapshot tests use) and the clock is fake, so the output only changes
when the app's look does. Shots of screens that read a run's own file (the
record viewer, the media pane) read small files ``staged_runs`` writes to a
scratch folder the same way each time; F2's settings are remembered there too.
PNGs are drawn by headless Chromium, which lays out
Rich's SVG text correctly (braille included); without Chromium the script
writes the SVGs and says the PNGs were skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, Python puts screenshots/ on the path, not the repository.
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chromium-headless-shell")


@dataclass(frozen=True)
class Shot:
    name: str
    size: tuple[int, int]
    gpus: int = 0
    keys: tuple[str, ...] = ()
    caption: str = "leet symon"
    view: str = "symon"  # "run": leet.testing.demo's made-up run; "workspace": leet.testing.workspace_demo's runs; "cluster": leet.testing.cluster_demo's nodes
    nodes: int = 0  # with view "run": a shared run of this many nodes, one of them slow; with "cluster": that many nodes of ``gpus`` GPUs
    run_file: str = ""  # with view "run": "records" or "media", a small run file of ``staged_runs`` under the demo's charts
    remembers: bool = False  # with view "symon": settings changed on screen are remembered (in a scratch folder), as F2 needs
    settle: str = ""  # a pane the keys open whose reads finish off the main thread: "records", "media" or "peek"


SHOTS = (
    Shot("symon", (160, 48)),
    Shot("symon-120x36", (120, 36)),
    Shot("symon-gpus", (160, 48), gpus=8, caption="leet symon — 8 GPUs"),
    Shot("run", (160, 48), keys=("4",), caption="leet PATH — a W&B run", view="run"),
    Shot("run-shared", (160, 48), keys=("4",), caption="leet PATH — a 4-node shared run, rank2 slow", view="run", nodes=4),
    Shot("workspace", (160, 48), caption="leet ./wandb — runs overlaid", view="workspace"),
    Shot("workspace-groups", (160, 48), keys=("g",), caption="leet ./wandb — runs by W&B group", view="workspace"),
    Shot("cluster", (160, 48), gpus=8, caption="leet cluster — 64 nodes of 8 GPUs through Prometheus", view="cluster", nodes=64),
    Shot("run-crosshair", (160, 48), keys=("d", "z", "e", "v", "comma", "comma"), caption="leet PATH — a smoothed, zoomed chart read out under the crosshair", view="run"),
    Shot("workspace-compare", (160, 48), keys=("down",) * 5 + ("D",) + ("down",) * 5 + ("s",), caption="leet ./wandb — runs compared, sorted by a column", view="workspace"),
    Shot("workspace-peek", (160, 48), keys=("right_square_bracket",), caption="leet ./wandb — the highlighted run peeked at beside the charts", view="workspace", settle="peek"),
    Shot("media", (160, 48), keys=("1", "3"), caption="leet PATH — logged images drawn in half-blocks", view="run", run_file="media", settle="media"),
    Shot("records", (160, 40), keys=("i",), caption="leet PATH — the run file's records", view="run", run_file="records", settle="records"),
    Shot("settings", (120, 36), keys=("f2", "down", "down"), caption="leet symon — settings, each with where its value came from", remembers=True),
)


async def render_svg(shot: Shot) -> str:
    from leet.ui.screens.run_peek import RunPeek

    opener = RunPeek.opener
    try:
        with tempfile.TemporaryDirectory() as scratch:
            return await render_in(shot, Path(scratch))
    finally:
        RunPeek.opener = opener


async def render_in(shot: Shot, scratch: Path) -> str:
    from leet.testing.demo import make_demo, make_run_demo
    from leet.testing.workspace_demo import make_workspace_demo

    if shot.view == "run":
        demo = make_run_demo(nodes=shot.nodes, slow_node=2 if shot.nodes > 2 else None)
        if shot.run_file:
            from staged_runs import STAGED_RUNS

            demo.source.path = STAGED_RUNS[shot.run_file](scratch)
            demo.app.config = replace(demo.app.config, images="blocks")
        app = demo.app
    elif shot.view == "workspace":
        workspace = make_workspace_demo()
        if shot.settle == "peek":
            from staged_runs import peek_demo_runs

            peek_demo_runs(workspace)
        app = workspace.app
    elif shot.view == "cluster":
        from leet.testing.cluster_demo import make_cluster_demo

        app = make_cluster_demo(nodes=shot.nodes, gpus=shot.gpus).app
    elif shot.remembers:
        from leet.config.remembered import remembered
        from leet.ui.app import LeetApp

        symon = make_demo(gpus=shot.gpus)
        config, remembering = remembered(symon.app.config)
        app = LeetApp(symon.source, config, clock=symon.clock, live=False, remembering=remembering)
    else:
        app = make_demo(gpus=shot.gpus).app
    async with app.run_test(size=shot.size) as pilot:
        await pilot.pause()
        if shot.keys:
            await pilot.press(*shot.keys)
        if shot.settle:
            await settled(pilot, shot.settle)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        return app.export_screenshot(title=shot.caption)


async def settled(pilot, screen_kind: str) -> None:
    """Waits, frame by frame, until the opened screen's off-thread reads are drawn."""

    def done() -> bool:
        screen = pilot.app.screen
        if screen_kind == "peek":
            from staged_runs import peek_drawn

            return peek_drawn(pilot.app)
        if screen_kind == "media":
            panel = getattr(screen, "media_panel", None)
            return panel is not None and not panel.busy
        index = getattr(screen, "index", None)
        return index is not None and index.reached_end and screen.lines.count == len(index)

    for _ in range(2000):
        if done():
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise RuntimeError(f"the {screen_kind} screen never finished reading")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def svg_size(svg: str) -> tuple[int, int]:
    """The SVG's viewBox width and height, rounded up to whole pixels."""
    match = re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) ([\d.]+)"', svg)
    if match is None:
        raise ValueError("SVG has no viewBox")
    return int(float(match.group(1)) + 0.999), int(float(match.group(2)) + 0.999)


def svg_to_png(chromium: str, svg_path: Path, png_path: Path, scale: int) -> None:
    width, height = svg_size(svg_path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as profile:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--force-device-scale-factor={scale}",
            f"--window-size={width},{height}",
            f"--screenshot={png_path}",
            svg_path.resolve().as_uri(),
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or not png_path.exists():
        raise RuntimeError(f"chromium failed ({result.returncode}): {result.stderr.strip()[-500:]}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Render leet screenshots from fake data.")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: screenshots/)")
    parser.add_argument("--scale", type=int, default=1, help="PNG pixels per SVG pixel (default 1)")
    parser.add_argument("--no-png", action="store_true", help="write only the SVGs")
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=[shot.name for shot in SHOTS], help="render only these shots")
    return parser.parse_args(argv)


def fixed_environment(state: Path) -> None:
    """Same output on every machine: UTC time labels, colour on, default theme, no remembered settings."""
    os.environ["TZ"] = "UTC"
    os.environ["LEET_STATE_DIR"] = str(state)
    time.tzset()
    for name in ("NO_COLOR", "TEXTUAL_THEME"):
        os.environ.pop(name, None)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as state:
        fixed_environment(Path(state))
        return render_all(args)


def render_all(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    svg_paths = []
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        path = args.out / f"{shot.name}.svg"
        path.write_text(asyncio.run(render_svg(shot)), encoding="utf-8")
        svg_paths.append(path)
        print(f"wrote {path}")
    if args.no_png:
        return 0
    chromium = find_chromium()
    if chromium is None:
        print(f"PNGs skipped: no headless Chromium found ({', '.join(CHROMIUM_NAMES)})")
        return 0
    for svg_path in svg_paths:
        png_path = svg_path.with_suffix(".png")
        try:
            svg_to_png(chromium, svg_path, png_path, args.scale)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
            print(f"PNG failed for {svg_path.name}: {error}", file=sys.stderr)
            return 1
        print(f"wrote {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
