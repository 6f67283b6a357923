"""``leet inspect --summary`` beside wandb reading the same long run, and beside a full decode of its summaries.

    python3 benchmarks/inspect_summary.py [--steps 200000] [--metrics 20] [--trials 3] [--no-wandb]

The run is the one ``benchmarks/runfile.py`` writes with the wandb SDK and
caches under ~/.cache/leet-bench. Three programs, interleaved per trial so each
meets the same background load:

* ``leet inspect --summary``: wall time and CPU (the child's user + system) to print the report;
* ``full decode``: the same report with every summary record's values decoded
  (``read_state(lazy_summary=False)``), the way the command read before;
* ``wandb``: ``wandb leet RUN`` in a real terminal until its overview shows the
  run's final state (``benchmarks/runfile.py``'s "fully loaded"), CPU of its process tree.

Prints min / median / max of each and the median ratio to wandb measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runfile  # noqa: E402  (a sibling script, found through the line above)

FULL_DECODE = """
import sys
from pathlib import Path
from leet.commands import inspect_run
from leet.runfile.locate import find_run_file
path = find_run_file(Path(sys.argv[1]))
state, follower = inspect_run.read_state(path, follow=False, timeout=0.0, lazy_summary=False)
sys.stdout.write(inspect_run._summary_text(inspect_run._summary_report(path, state, follower)))
"""


def timed_child(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child run to its end; its output is discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=runfile.DEFAULT_CACHE, metavar="DIR")
    parser.add_argument("--steps", type=int, default=200_000, help="steps in the generated run (default 200000)")
    parser.add_argument("--metrics", type=int, default=20, help="metrics per step (default 20)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for wandb's fully loaded marker")
    parser.add_argument("--size", default="160x48", help="wandb's terminal COLSxROWS (default 160x48)")
    parser.add_argument("--no-wandb", dest="wandb", action="store_false", help="measure leet only")
    args = parser.parse_args(argv)
    args.width, args.height = (int(part) for part in args.size.split("x"))
    run_dir = runfile.cached_run(args.cache, args.steps, args.metrics)
    path = runfile.run_file(run_dir)
    runfile.warm_page_cache(path)
    programs = {
        "leet inspect --summary": [sys.executable, "-m", "leet", "inspect", "--summary", str(run_dir)],
        "full decode (before)": [sys.executable, "-c", FULL_DECODE, str(run_dir)],
    }
    walls: dict[str, list[float]] = {name: [] for name in programs}
    cpus: dict[str, list[float]] = {name: [] for name in programs}
    loads: list[float] = []
    wandb_tool = runfile.Tool("wandb", [sys.executable, "-m", "wandb", "leet", str(run_dir)], runfile.WANDB_ENV, runfile.wandb_loaded)
    names = runfile.metric_names(path)
    with tempfile.TemporaryDirectory() as workdir:
        for number in range(1, args.trials + 1):
            loads.append(os.getloadavg()[0])
            print(f"trial {number}/{args.trials} · load {loads[-1]:.2f} …", flush=True)
            for name, command in programs.items():
                wall, cpu = timed_child(command)
                walls[name].append(wall)
                cpus[name].append(cpu)
            if args.wandb:
                trial = runfile.measure(wandb_tool, names, args, workdir)
                walls.setdefault("wandb leet (fully loaded)", []).append(trial.loaded_s)
                cpus.setdefault("wandb leet (fully loaded)", []).append(trial.cpu_s)
    print(f"\n{path} · {path.stat().st_size / 1e6:.1f} MB · load average {min(loads):.2f}–{max(loads):.2f} on {os.cpu_count()} CPUs\n")
    peer = "wandb leet (fully loaded)"
    print("| program | wall s min / median / max | CPU s min / median / max | wall ÷ wandb | CPU ÷ wandb |")
    print("|---|---|---|---|---|")
    for name in walls:
        ratios = ("-", "-")
        if peer in walls:
            ratios = (
                f"{statistics.median(walls[name]) / statistics.median(walls[peer]):.2f}",
                f"{statistics.median(cpus[name]) / statistics.median(cpus[peer]):.2f}",
            )
        print(f"| {name} | {spread(walls[name])} | {spread(cpus[name])} | {ratios[0]} | {ratios[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
