"""Render the monitor on fake hardware and the run view on a made-up run to SVG, and to PNG when Chromium is here.

    python3 screenshots/make.py [--out DIR] [--scale N] [--no-png] [--only NAME ...]

The apps and their data come from ``leet.testing.demo`` (the same fake machine and
run the snapshot tests use) and the clock is fake, so the output only changes
when the app's look does. PNGs are drawn by headless Chromium, which lays out
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
from dataclasses import dataclass
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


SHOTS = (
    Shot("symon", (160, 48)),
    Shot("symon-120x36", (120, 36)),
    Shot("symon-gpus", (160, 48), gpus=8, caption="leet symon — 8 GPUs"),
    Shot("run", (160, 48), keys=("4",), caption="leet PATH — a W&B run", view="run"),
    Shot("run-shared", (160, 48), keys=("4",), caption="leet PATH — a 4-node shared run, rank2 slow", view="run", nodes=4),
    Shot("workspace", (160, 48), caption="leet ./wandb — runs overlaid", view="workspace"),
    Shot("workspace-groups", (160, 48), keys=("g",), caption="leet ./wandb — runs by W&B group", view="workspace"),
    Shot("cluster", (160, 48), gpus=8, caption="leet cluster — 64 nodes of 8 GPUs through Prometheus", view="cluster", nodes=64),
)


async def render_svg(shot: Shot) -> str:
    from leet.testing.demo import make_demo, make_run_demo
    from leet.testing.workspace_demo import make_workspace_demo

    if shot.view == "run":
        app = make_run_demo(nodes=shot.nodes, slow_node=2 if shot.nodes > 2 else None).app
    elif shot.view == "workspace":
        app = make_workspace_demo().app
    elif shot.view == "cluster":
        from leet.testing.cluster_demo import make_cluster_demo

        app = make_cluster_demo(nodes=shot.nodes, gpus=shot.gpus).app
    else:
        app = make_demo(gpus=shot.gpus).app
    async with app.run_test(size=shot.size) as pilot:
        await pilot.pause()
        if shot.keys:
            await pilot.press(*shot.keys)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        return app.export_screenshot(title=shot.caption)


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


def fixed_environment() -> None:
    """Same output on every machine: UTC time labels, colour on, default theme."""
    os.environ["TZ"] = "UTC"
    time.tzset()
    for name in ("NO_COLOR", "TEXTUAL_THEME"):
        os.environ.pop(name, None)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    fixed_environment()
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
