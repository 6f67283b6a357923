#!/usr/bin/env python3
"""``leet cluster`` on a big fleet (256 or 1,024 nodes of 8 GPUs): ``--once``, the first screen, steady CPU.

    python3 benchmarks/cluster_scale.py [--nodes 256] [--gpus 8] [--hours 3] [--data DIR]
                                        [--trials 3] [--seconds 60] [--warmup 20] [--rounds 6]
                                        [--size 160x48] [--source DIR] [--no-terminal]

It builds (or reuses, with ``--data``) a TSDB of the cluster the way
``benchmarks/cluster.py`` does, starts a real Prometheus over it, and times
the ``leet`` of ``--source`` (default: this tree; a ``git archive`` of an
older commit gives the "before" figures):

* ``--once`` with default settings (the 10 s timeout included), wall time
  and exit status, ``--trials`` times;
* in tmux, ``--trials`` starts: the first live screen (the header counts
  every node and says Prometheus answered, the node table counts them, the
  heatmap is shaded) and the first full screen (besides, all nine chart
  panels hold braille dots); the last start runs on and its process tree's
  CPU is taken over ``--seconds`` after ``--warmup`` (100 % = one core);
* in process, headless, in a child with ``--source`` on its path: the
  first round (live values and the history), then ``--rounds`` rounds,
  each the source's round and the screen's redraw after it, in CPU time.

Every figure is printed as min / median / max with the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIVE_PANELS = 0  # a live screen needs no chart panel with dots
ALL_PANELS = 9


# -- in a child: the source's rounds and the screen's redraws, with --source's leet ----------------


def inner_rounds(url: str, rounds: int, width: int, height: int) -> dict:
    import asyncio

    from leet.config import Config
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource
    from leet.sources.prometheus_api import PrometheusClient, endpoint
    from leet.ui.app import LeetApp
    from leet.ui.screens.cluster import ClusterScreen
    from leet.ui.views.cluster_layout import chart_cells

    source = ClusterSource(Store(), PrometheusClient(endpoint(url), timeout=60.0), interval=15.0)
    source.set_width(chart_cells(width))
    found: dict = {"round_cpu_ms": [], "round_wall_ms": [], "redraw_cpu_ms": [], "tick_cpu_ms": []}

    async def run() -> None:
        app = LeetApp(source, Config(), live=False, screen=lambda: ClusterScreen(source))
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause()
            screen = app.screen
            wall, cpu = time.perf_counter(), time.process_time()
            source.on_change(lambda: found.setdefault("first_told_s", time.perf_counter() - wall))
            source.step()
            found["first_round_wall_s"], found["first_round_cpu_s"] = time.perf_counter() - wall, time.process_time() - cpu
            cpu = time.process_time()
            screen.update_view()
            found["first_redraw_cpu_s"] = time.process_time() - cpu
            await pilot.pause()
            for _ in range(rounds):
                wall, cpu = time.perf_counter(), time.process_time()
                source.step()
                found["round_wall_ms"].append(1000 * (time.perf_counter() - wall))
                found["round_cpu_ms"].append(1000 * (time.process_time() - cpu))
                cpu = time.process_time()
                screen.update_view()
                await pilot.pause()
                found["redraw_cpu_ms"].append(1000 * (time.process_time() - cpu))
            for _ in range(5):
                cpu = time.process_time()
                screen._tick()
                await pilot.pause()
                found["tick_cpu_ms"].append(1000 * (time.process_time() - cpu))
            found["nodes"] = len(source.nodes())
            found["series"] = len(source.store.series())

    asyncio.run(run())
    return found


# -- here: the measurements ------------------------------------------------------------------------


def leet_env(source: Path, workdir: Path) -> dict[str, str]:
    from terminal import LEET_ENV

    return {**os.environ, **LEET_ENV, "XDG_CONFIG_HOME": str(workdir / "config"), "PYTHONPATH": str(source)}


def once_wall(url: str, source: Path, workdir: Path) -> tuple[float, int, str]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "leet", "cluster", url, "--once"], capture_output=True, text=True, timeout=300,
                          env=leet_env(source, workdir), cwd=str(workdir))
    return time.perf_counter() - began, done.returncode, done.stderr.strip()[-200:]


def one_start(url: str, nodes: int, args: argparse.Namespace, source: Path, workdir: Path, steady: bool) -> tuple[float, float, float]:
    """One start in tmux: seconds to the first live screen and to the first full one; with ``steady``, the CPU % after."""
    from cluster import full_screen
    from symon import CLK_TCK, cpu_ticks, process_tree
    from terminal import Terminal

    whole_live, whole = full_screen(nodes, LIVE_PANELS), full_screen(nodes, ALL_PANELS)
    terminal = Terminal([sys.executable, "-m", "leet", "cluster", url], width=args.width, height=args.height,
                        env=leet_env(source, workdir), cwd=str(workdir))
    seen: dict[str, float] = {}
    started = terminal.start()

    def check(screen: str) -> bool:
        now = time.perf_counter() - started
        if "live" not in seen and whole_live(screen):
            seen["live"] = now
        if whole(screen):
            seen["full"] = now
            return True
        return False

    cpu = float("nan")
    try:
        terminal.wait_for(check, timeout=180, poll=0.02, what="a full screen")
        if steady:
            time.sleep(args.warmup)
            ticks = {pid: cpu_ticks(pid) for pid in process_tree(terminal.pid)}
            began = time.perf_counter()
            time.sleep(args.seconds)
            after = {pid: cpu_ticks(pid) for pid in process_tree(terminal.pid)}
            used = sum((tick or 0) - (ticks.get(pid) or 0) for pid, tick in after.items())
            cpu = 100.0 * used / CLK_TCK / (time.perf_counter() - began)
    finally:
        terminal.close()
    return seen["live"], seen["full"], cpu


def screens(url: str, nodes: int, args: argparse.Namespace, source: Path, workdir: Path) -> dict:
    live, full, cpu = [], [], float("nan")
    for trial in range(args.trials):
        shown_live, shown_full, cpu = one_start(url, nodes, args, source, workdir, steady=trial == args.trials - 1)
        live.append(shown_live)
        full.append(shown_full)
        time.sleep(1.0)
    return {"live_s": live, "full_s": full, "cpu_percent": cpu, "load": os.getloadavg()}


def rounds_in_child(url: str, args: argparse.Namespace, source: Path, workdir: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--inner-rounds", url, "--rounds", str(args.rounds), "--size", args.size],
        capture_output=True, text=True, timeout=900, env=leet_env(source, workdir), cwd=str(workdir),
    )
    if done.returncode != 0:
        raise RuntimeError(f"the in-process rounds failed: {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "-"
    return " / ".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))


def report(args: argparse.Namespace, nodes: int, onces: list[tuple[float, int, str]], shown: dict | None, rounds: dict | None) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nleet cluster · {nodes} nodes × {args.gpus} GPUs · source {args.source or ROOT} · {args.size} · "
          f"{os.cpu_count()} CPUs · load {load}")
    print("figure (min / median / max)")
    print(f"  --once, default settings: wall s            {spread([wall for wall, _, _ in onces])}   exit {sorted({rc for _, rc, _ in onces})}")
    for wall, rc, err in onces:
        if rc:
            print(f"    failed after {wall:.1f} s: {err}")
    if shown is not None:
        print(f"  first live screen s                        {spread(shown['live_s'])}")
        print(f"  first full screen s                        {spread(shown['full_s'])}")
        print(f"  steady CPU, % of one core ({args.seconds:g} s)        {shown['cpu_percent']:.2f}   (load {' '.join(f'{x:.2f}' for x in shown['load'])})")
    if rounds is not None:
        print(f"  in process: first values told s            {rounds.get('first_told_s', rounds['first_round_wall_s']):.2f}")
        print(f"  history in (first round), wall / CPU s     {rounds['first_round_wall_s']:.2f} / {rounds['first_round_cpu_s']:.2f}")
        print(f"  first redraw CPU s                         {rounds['first_redraw_cpu_s']:.2f}")
        print(f"  a round, CPU ms                            {spread(rounds['round_cpu_ms'], 0)}")
        print(f"  a round, wall ms                           {spread(rounds['round_wall_ms'], 0)}")
        print(f"  a redraw after it, CPU ms                  {spread(rounds['redraw_cpu_ms'], 0)}")
        print(f"  the once-a-second tick, CPU ms             {spread(rounds['tick_cpu_ms'], 1)}")
        per_node = (statistics.median(rounds["round_cpu_ms"]) + statistics.median(rounds["redraw_cpu_ms"])) / max(1, rounds["nodes"])
        print(f"  round + redraw per node per interval, CPU ms   {per_node:.2f}")
        print(f"  nodes / series in the store                {rounds['nodes']} / {rounds['series']}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time leet cluster on a big fleet through a real Prometheus.")
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--hours", type=float, default=3.0, help="hours of data in the TSDB (default 3: the hour leet loads, and more)")
    parser.add_argument("--data", metavar="DIR", help="keep the TSDB here and reuse it while it still reaches past now")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0, help="steady window (default 60, four intervals)")
    parser.add_argument("--warmup", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=6, help="headless rounds timed in process (0 leaves them out)")
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--source", metavar="DIR", help="the tree whose leet is measured (default: this one)")
    parser.add_argument("--no-terminal", dest="terminal", action="store_false", help="leave out the starts in tmux")
    parser.add_argument("--inner-rounds", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.width, args.height = (int(part) for part in args.size.lower().split("x"))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.inner_rounds:
        print(json.dumps(inner_rounds(args.inner_rounds, args.rounds, args.width, args.height)))
        return 0
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]
    from cluster import COMPACTION_S, Prometheus, Shape, build_tsdb

    source = Path(args.source).resolve() if args.source else ROOT
    shape = Shape(nodes=args.nodes, gpus=args.gpus, scrape=15, hours=args.hours)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        folder = Path(args.data) if args.data else workdir
        folder.mkdir(parents=True, exist_ok=True)
        print(f"building the TSDB in {folder} …", flush=True)
        data = build_tsdb(folder, shape, 3600.0)
        retention = int((time.time() - data.start) / 86400) + 30
        if not data.reused:
            with Prometheus(data.path, workdir, retention) as prometheus:
                print(f"prometheus compacted the blocks in {prometheus.settle(least=COMPACTION_S):.0f} s", flush=True)
        with Prometheus(data.path, workdir, retention) as prometheus:
            print(f"prometheus on {prometheus.url}, idle after {prometheus.settle():.0f} s", flush=True)
            onces = [once_wall(prometheus.url, source, workdir) for _ in range(args.trials)]
            shown = screens(prometheus.url, args.nodes, args, source, workdir) if args.terminal else None
            rounds = rounds_in_child(prometheus.url, args, source, workdir) if args.rounds > 0 else None
    report(args, args.nodes, onces, shown, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
