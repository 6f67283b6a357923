"""Measure how fast ``leet RUN_DIR`` opens a long W&B run, next to ``wandb leet RUN_DIR``.

    python3 benchmarks/runfile.py [--trials 3] [--cache DIR] [--steps 100000] [--metrics 20]
    python3 benchmarks/runfile.py --run PATH/TO/RUN_DIR [--no-wandb] [--leet-tree SOURCE_DIR]

Without ``--run`` it first writes a long offline run with the real wandb SDK
(100 000 steps × 20 metrics, about 140 MB, a minute or so) into the cache and
reuses it afterwards. Each trial starts the program in tmux and times, from
just before tmux runs it: the first non-blank screen, the first metric chart
with braille dots in it, and the moment the run is fully loaded (leet's header
says ``finished``/``failed`` and no longer ``loading``; wandb's overview says
``State: Finished``). Peak RSS (VmHWM), RSS once loaded and CPU seconds are
summed over the program's process tree. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from symon import CLK_TCK, cpu_ticks, memory_mib, process_name, process_tree  # noqa: E402
from terminal import Terminal, TmuxMissing, chart_panels, require_tmux  # noqa: E402

ENV = {"LEET_CONFIG": "", "TERM": "xterm-256color"}
# Offline, wandb-core runs with --no-observability: no telemetry calls from a machine that may have no network.
WANDB_ENV = {**ENV, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
STARTUP_POLL = 0.01
LOAD_POLL = 0.1  # ~10–20 s of loading; a faster poll would take CPU from the program measured
TREE_SCAN_S = 0.25
SETTLE_S = 1.0
DEFAULT_CACHE = Path.home() / ".cache" / "leet-bench"

# Targets. When wandb is not measured here, its figures for the same 100k × 20 run, measured
# earlier on a 2-core VM, stand in: fully loaded 11.3 s, wandb-core peak 223–229 MiB (wandb-core
# alone; its Python wrapper adds about 60 MiB, so this reference is the stricter one).
TARGET_FIRST_CHART_S = 1.0
TARGET_LOAD_RATIO = 0.5
TARGET_PEAK_RATIO = 0.5
REFERENCE_LOAD_S = 11.3
REFERENCE_PEAK_MIB = 226.0

LEET_DONE = re.compile(r"· (finished|failed|presumed crashed)\b")
WANDB_DONE = re.compile(r"State:\s*(Finished|Failed|Crashed)")

WRITER = """
import math, sys, wandb
steps, metrics, where = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
run = wandb.init(project="leet-bench", mode="offline", dir=where, config={"lr": 3e-4},
                 settings=wandb.Settings(x_stats_sampling_interval=0.5))
for step in range(steps):
    run.log({f"m{i:02d}": math.sin(step / 500 + i) + i for i in range(metrics)})
run.finish()
"""


# -- the run to open --------------------------------------------------------------
def cached_run(cache: Path, steps: int, metrics: int) -> Path:
    """The offline run dir for this size, written with the wandb SDK on first use."""
    home = cache / f"run-{steps}x{metrics}"
    found = sorted(home.glob("wandb/offline-run-*"))
    if found:
        return found[-1]
    if importlib.util.find_spec("wandb") is None:
        raise SystemExit("wandb is not installed, so no run can be written; pass --run DIR to use an existing one")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"writing a {steps:,}-step × {metrics}-metric offline run into {home} (about a minute) …", flush=True)
    started = time.perf_counter()
    scratch = tempfile.mkdtemp(dir=cache, prefix=".writing-")
    try:
        env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
        done = subprocess.run([sys.executable, "-c", WRITER, str(steps), str(metrics), scratch], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"writing the run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        if home.exists():
            shutil.rmtree(home)
        os.rename(scratch, home)  # only a finished run gets the final name
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    found = sorted(home.glob("wandb/offline-run-*"))
    if not found:
        raise SystemExit(f"the wandb SDK wrote no offline-run-* directory under {home}")
    print(f"  written in {time.perf_counter() - started:.0f} s", flush=True)
    return found[-1]


def run_file(run_dir: Path) -> Path:
    files = sorted(run_dir.glob("run-*.wandb")) if run_dir.is_dir() else [run_dir]
    if len(files) != 1 or not files[0].is_file():
        raise SystemExit(f"{run_dir}: expected a run directory with exactly one run-*.wandb file")
    return files[0]


def metric_names(path: Path, rows: int = 1000) -> frozenset[str]:
    """Metric keys in the first history rows: what the metrics grid titles its charts."""
    from leet.runfile.decode import iter_events
    from leet.runfile.events import HistoryRow

    names: set[str] = set()
    seen = 0
    for event in iter_events(path, skip={"summary"}):
        if isinstance(event, HistoryRow):
            names.update(event.values)
            seen += 1
            if seen >= rows:
                break
    return frozenset(names)


def warm_page_cache(path: Path) -> None:
    """Read the file once, so that no trial (the first, otherwise) pays for reading the disk."""
    with open(path, "rb") as handle:
        while handle.read(1 << 20):
            pass


# -- one program -------------------------------------------------------------------
@dataclass
class Tool:
    name: str
    command: list[str]
    env: dict[str, str]
    loaded: Callable[[str], bool]


def leet_loaded(screen: str) -> bool:
    header = screen.split("\n", 1)[0]
    return bool(LEET_DONE.search(header)) and "loading" not in header


def wandb_loaded(screen: str) -> bool:
    return bool(WANDB_DONE.search(screen))


def metric_chart_drawn(names: frozenset[str]) -> Callable[[str], bool]:
    """True once a chart titled with a metric key (not a system chart) holds a braille dot."""

    def is_metric(title: str) -> bool:
        stem = title.removesuffix("…").removesuffix("...")
        if not names:
            return True
        return title in names or (stem != title and any(name.startswith(stem) for name in names))

    return lambda screen: any(panel.has_data and panel.title and is_metric(panel.title) for panel in chart_panels(screen))


@dataclass
class ProcessCost:
    name: str
    cpu_s: float
    rss_mib: float
    hwm_mib: float


@dataclass
class Trial:
    load1: float
    first_frame_s: float = float("nan")
    first_chart_s: float = float("nan")
    loaded_s: float = float("nan")
    cpu_s: float = float("nan")
    hwm_mib: float = float("nan")
    peak_sum_rss_mib: float = float("nan")
    rss_mib: float = float("nan")
    processes: list[ProcessCost] = field(default_factory=list)


def own_and_reaped_ticks(pid: int) -> tuple[int, int] | None:
    """(utime+stime, cutime+cstime): a process's own CPU and that of the children it has reaped."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


class TreeWatch:
    """CPU and memory of a process tree whose children may come and go while it loads."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.pids: list[int] = [root]
        self.ticks: dict[int, int] = {}
        self.hwm: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.peak_sum_rss = 0.0  # the largest Σ VmRSS seen at one moment

    def sample(self, find_new: bool = True) -> None:
        if find_new:
            self.pids = process_tree(self.root)
        total = 0.0
        for pid in self.pids:
            ticks = cpu_ticks(pid)
            if ticks is None:
                continue
            self.names.setdefault(pid, process_name(pid))
            self.ticks[pid] = ticks
            rss, hwm = memory_mib(pid)
            total += rss
            if hwm:
                self.hwm[pid] = max(self.hwm.get(pid, 0.0), hwm)
        self.peak_sum_rss = max(self.peak_sum_rss, total)

    def cpu_seconds(self) -> float:
        """CPU used so far: every live process's own, plus what each has reaped (children gone by now)."""
        ticks = 0
        for pid in process_tree(self.root):
            counts = own_and_reaped_ticks(pid)
            if counts is not None:
                ticks += sum(counts)
        return ticks / CLK_TCK

    def costs(self) -> list[ProcessCost]:
        return [
            ProcessCost(self.names[pid], self.ticks[pid] / CLK_TCK, memory_mib(pid)[0], self.hwm.get(pid, 0.0))
            for pid in self.ticks
        ]


def measure(tool: Tool, names: frozenset[str], args: argparse.Namespace, workdir: str) -> Trial:
    trial = Trial(load1=os.getloadavg()[0])
    chart_drawn = metric_chart_drawn(names)
    terminal = Terminal(tool.command, width=args.width, height=args.height, env=tool.env, cwd=workdir)
    try:
        started = terminal.start()
        watch = TreeWatch(terminal.pid)
        next_tree_scan = 0.0

        def sample(now: float) -> None:
            nonlocal next_tree_scan
            new_children = now >= next_tree_scan  # a whole /proc walk on every 10 ms poll would cost too much
            watch.sample(find_new=new_children)
            if new_children:
                next_tree_scan = now + TREE_SCAN_S

        def first_chart(screen: str) -> bool:
            now = time.perf_counter()
            sample(now)
            if trial.first_frame_s != trial.first_frame_s and screen.strip():
                trial.first_frame_s = now - started
            if chart_drawn(screen):
                trial.first_chart_s = now - started
                return True
            return False

        def fully_loaded(screen: str) -> bool:
            now = time.perf_counter()
            sample(now)
            if tool.loaded(screen):
                trial.loaded_s = now - started
                return True
            return False

        try:
            terminal.wait_for(first_chart, timeout=args.timeout, poll=STARTUP_POLL, what="a metric chart with data")
            terminal.wait_for(fully_loaded, timeout=args.timeout, poll=LOAD_POLL, what="the fully loaded marker")
        except AssertionError as error:
            raise SystemExit(f"{tool.name}: {error}") from None
        trial.cpu_s = watch.cpu_seconds()
        time.sleep(SETTLE_S)
        watch.sample()
        trial.processes = watch.costs()
        trial.rss_mib = sum(p.rss_mib for p in trial.processes)
        trial.hwm_mib = sum(p.hwm_mib for p in trial.processes)
        trial.peak_sum_rss_mib = watch.peak_sum_rss
    finally:
        terminal.close()
    return trial


# -- reporting ---------------------------------------------------------------------
FIGURES = (
    ("first frame (s)", "first_frame_s", 2),
    ("first metric chart (s)", "first_chart_s", 2),
    ("fully loaded (s)", "loaded_s", 2),
    ("CPU to load (s)", "cpu_s", 1),
    ("peak RSS, Σ VmHWM (MiB)", "hwm_mib", 0),
    ("peak Σ RSS sampled (MiB)", "peak_sum_rss_mib", 0),
    ("RSS after load (MiB)", "rss_mib", 0),
)


def median(trials: list[Trial], attr: str) -> float:
    return statistics.median(getattr(t, attr) for t in trials)


def spread(trials: list[Trial], attr: str, digits: int) -> str:
    values = [getattr(t, attr) for t in trials]
    text = f"{statistics.median(values):.{digits}f}"
    if len(values) > 1:
        text += f" ({min(values):.{digits}f}–{max(values):.{digits}f})"
    return text


def targets(leet: list[Trial], wandb: list[Trial] | None) -> dict[str, str]:
    load_ref = median(wandb, "loaded_s") if wandb else REFERENCE_LOAD_S
    peak_ref = median(wandb, "hwm_mib") if wandb else REFERENCE_PEAK_MIB
    load_source = "wandb here" if wandb else "wandb earlier"
    peak_source = "wandb here" if wandb else "wandb-core earlier"
    checks = {
        "first_chart_s": (median(leet, "first_chart_s") <= TARGET_FIRST_CHART_S, f"≤ {TARGET_FIRST_CHART_S:g} s"),
        "loaded_s": (median(leet, "loaded_s") <= TARGET_LOAD_RATIO * load_ref, f"≤ {TARGET_LOAD_RATIO:g}× {load_source} = {TARGET_LOAD_RATIO * load_ref:.2f} s"),
        "hwm_mib": (median(leet, "hwm_mib") <= TARGET_PEAK_RATIO * peak_ref, f"≤ {TARGET_PEAK_RATIO:g}× {peak_source} = {TARGET_PEAK_RATIO * peak_ref:.0f} MiB"),
    }
    return {attr: f"{text} {'ok' if ok else 'MISSED'}" for attr, (ok, text) in checks.items()}


def print_report(results: dict[str, list[Trial]], path: Path, metrics: int, args: argparse.Namespace) -> None:
    leet = results["leet"]
    wandb = results.get("wandb")
    print(f"\n{path} · {path.stat().st_size / 1e6:.0f} MB · {metrics} metrics · {args.width}×{args.height} · {len(leet)} trial(s) · {os.cpu_count()} CPUs")
    print("median (min–max); CPU, peak RSS and RSS summed over the process tree\n")
    header = f"{'':26}{'leet':>22}"
    if wandb:
        header += f"{'wandb':>22}{'leet/wandb':>12}"
    print(header + "  target")
    verdicts = targets(leet, wandb)
    for label, attr, digits in FIGURES:
        line = f"{label:26}{spread(leet, attr, digits):>22}"
        if wandb:
            ratio = median(leet, attr) / median(wandb, attr) if median(wandb, attr) else float("nan")
            line += f"{spread(wandb, attr, digits):>22}{ratio:>12.2f}"
        if attr in verdicts:
            line += f"  {verdicts[attr]}"
        print(line)
    print("\nper trial (1-minute load average when it started):")
    for name, trials in results.items():
        for number, trial in enumerate(trials, 1):
            print(
                f"  {name:6} {number}  load {trial.load1:5.2f}  first chart {trial.first_chart_s:5.2f} s  "
                f"loaded {trial.loaded_s:6.2f} s  CPU {trial.cpu_s:5.1f} s  peak {trial.hwm_mib:4.0f} MiB (Σ RSS {trial.peak_sum_rss_mib:4.0f})  RSS {trial.rss_mib:4.0f} MiB"
            )
    for name, trials in results.items():
        print(f"\n{name} by process (last trial):")
        for cost in trials[-1].processes:
            gone = "" if cost.rss_mib else "   (exited before the end)"
            print(f"  {cost.name:16} CPU {cost.cpu_s:6.1f} s   RSS {cost.rss_mib:6.1f} MiB   peak {cost.hwm_mib:6.1f} MiB{gone}")


# -- command line ------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time leet (and wandb leet) opening a long W&B run in tmux.")
    parser.add_argument("--run", type=Path, metavar="DIR", help="open this run directory instead of the cached long run")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, metavar="DIR", help=f"where the long run is written and kept (default {DEFAULT_CACHE})")
    parser.add_argument("--steps", type=int, default=100_000, help="steps in the generated run (default 100000)")
    parser.add_argument("--metrics", type=int, default=20, help="metrics per step in the generated run (default 20)")
    parser.add_argument("--trials", type=int, default=3, help="trials per program (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each marker (default 300)")
    parser.add_argument("--size", default="160x48", help="terminal COLSxROWS (default 160x48)")
    parser.add_argument("--no-wandb", dest="wandb", action="store_false", help="measure leet only")
    parser.add_argument("--leet-tree", type=Path, metavar="DIR", help="measure the leet in this source tree (e.g. an exported commit) instead of the installed one")
    args = parser.parse_args(argv)
    try:
        args.width, args.height = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must look like 160x48, got {args.size!r}")
    if args.trials < 1 or args.steps < 1 or args.metrics < 1:
        parser.error("--trials, --steps and --metrics must be at least 1")
    if args.leet_tree is not None and not (args.leet_tree / "leet" / "__main__.py").is_file():
        parser.error(f"--leet-tree {args.leet_tree}: no leet/__main__.py there")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        require_tmux()
    except TmuxMissing as error:
        print(f"benchmarks/runfile.py: {error}", file=sys.stderr)
        return 2
    run_dir = args.run.resolve() if args.run else cached_run(args.cache.expanduser(), args.steps, args.metrics)
    path = run_file(run_dir)
    if args.leet_tree:
        sys.path.insert(0, str(args.leet_tree.resolve()))  # read the metric keys with the leet being measured
    names = metric_names(path)
    warm_page_cache(path)
    leet_env = {**ENV, "PYTHONPATH": str(args.leet_tree.resolve())} if args.leet_tree else ENV
    tools = [Tool("leet", [sys.executable, "-m", "leet", str(run_dir)], leet_env, leet_loaded)]
    if args.wandb and importlib.util.find_spec("wandb") is not None:
        tools.append(Tool("wandb", [sys.executable, "-m", "wandb", "leet", str(run_dir)], WANDB_ENV, wandb_loaded))
    results: dict[str, list[Trial]] = {tool.name: [] for tool in tools}
    with tempfile.TemporaryDirectory() as workdir:
        for number in range(1, args.trials + 1):
            for tool in tools:  # interleaved, so both meet the same background load
                print(f"trial {number}/{args.trials}: {tool.name} {' '.join(tool.command[1:])} · load {os.getloadavg()[0]:.2f} …", flush=True)
                results[tool.name].append(measure(tool, names, args, workdir))
    if args.leet_tree:
        print(f"\nleet from {args.leet_tree.resolve()}")
    print_report(results, path, len(names), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
