"""Measure ``leet symon`` in a real terminal, next to wandb, htop, btop, glances and nvitop when installed.

    python3 benchmarks/symon.py [--seconds 30] [--warmup 10] [--interval 2] [--size 160x48] [--no-wandb]
                                [--tools leet,wandb,htop,btop,glances,nvitop] [--peer-venv DIR] [--fake-gpus N]
    python3 benchmarks/symon.py --memory-soak [MINUTES]

Each program runs alone in its own tmux server, one after the other, at the
same size and refresh interval (each through its own option; see peers.py).
Startup is timed from just before tmux starts the program: first frame is the
first non-blank screen; for leet and wandb, first data is the first chart panel
with braille dots. Then, after a warm-up, over a fixed window: CPU of the whole
process tree (utime+stime from /proc, 100 % = one core), RSS and peak RSS
(VmRSS, VmHWM), and the bytes the program writes to its terminal (tmux pipe-pane).
See benchmarks/README.md for the targets and recorded results.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import ALL_TOOLS, PEER_ENV_VAR, Tool, build_tools, leet_command  # noqa: E402
from terminal import Terminal, TmuxMissing, chart_panels, require_tmux  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
ENV = {"LEET_CONFIG": "", "TERM": "xterm-256color"}
POLL = 0.01
STARTUP_LIMIT = 60.0

# Targets, from wandb leet symon 0.31.0 measured the same way (2-core VM, 160×48, 2 s interval).
TARGET_FIRST_DATA_S = 0.6
TARGET_CPU_PERCENT = 1.2
TARGET_BYTES_PER_S = 2 * 1900
TARGET_RSS_MIB = 60


# -- /proc ----------------------------------------------------------------------
def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from 3 (state) on; comm may hold spaces


def cpu_ticks(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[11]) + int(fields[12])  # utime, stime


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants that are alive now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def memory_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MiB; zeros once the process is gone."""
    values = {"VmRSS:": 0.0, "VmHWM:": 0.0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            parts = line.split()
            if parts and parts[0] in values:
                values[parts[0]] = int(parts[1]) / 1024
    except OSError:
        pass
    return values["VmRSS:"], values["VmHWM:"]


# -- one measured program -------------------------------------------------------
@dataclass
class ProcessCost:
    name: str
    cpu_percent: float
    rss_mib: float
    hwm_mib: float


@dataclass
class Result:
    name: str
    first_frame_s: float = float("nan")
    first_data_s: float = float("nan")
    cpu_percent: float = float("nan")
    rss_mib: float = float("nan")
    hwm_mib: float = float("nan")
    bytes_per_s: float = float("nan")
    load: float = float("nan")  # 1-minute load average at the end of the window
    processes: list[ProcessCost] = field(default_factory=list)
    note: str = ""
    error: str = ""


def time_startup(terminal: Terminal, result: Result, waits_for_data: bool) -> None:
    """First frame for every program; first data too for those that draw charts of their own samples."""
    started = terminal.start()

    def seen(screen: str) -> bool:
        now = time.perf_counter() - started
        if result.first_frame_s != result.first_frame_s and screen.strip():
            result.first_frame_s = now
            if not waits_for_data:
                return True
        if waits_for_data and any(panel.has_data for panel in chart_panels(screen)):
            result.first_data_s = now
            return True
        return False

    terminal.wait_for(seen, timeout=STARTUP_LIMIT, poll=POLL, what="a chart with data" if waits_for_data else "a first frame")


def measure_window(terminal: Terminal, result: Result, seconds: float, output_file: str) -> None:
    root = terminal.pid
    before = {pid: cpu_ticks(pid) for pid in process_tree(root)}
    terminal.record_output(output_file)
    start = time.perf_counter()
    time.sleep(seconds)
    after = {pid: cpu_ticks(pid) for pid in process_tree(root)}
    elapsed = time.perf_counter() - start
    terminal.record_output(None)
    time.sleep(0.2)  # let the pipe drain into the file
    result.bytes_per_s = Path(output_file).stat().st_size / elapsed
    for pid, ticks in after.items():
        if ticks is None:
            continue
        used = ticks - (before.get(pid) or 0)
        rss, hwm = memory_mib(pid)
        result.processes.append(ProcessCost(process_name(pid), 100.0 * used / CLK_TCK / elapsed, rss, hwm))
    result.cpu_percent = sum(p.cpu_percent for p in result.processes)
    result.rss_mib = sum(p.rss_mib for p in result.processes)
    result.hwm_mib = sum(p.hwm_mib for p in result.processes)
    result.load = os.getloadavg()[0]


def run_one(tool: Tool, args: argparse.Namespace, workdir: str) -> Result:
    """Measure one program; a program that fails is reported, not fatal to the others."""
    result = Result(tool.name, note=tool.note)
    terminal = Terminal(tool.command, width=args.width, height=args.height, env={**ENV, **tool.env}, cwd=workdir)
    try:
        time_startup(terminal, result, tool.waits_for_data)
        time.sleep(args.warmup)
        if terminal.exited():
            raise RuntimeError(f"exited during the warm-up:\n{terminal.screen()}")
        measure_window(terminal, result, args.seconds, os.path.join(workdir, f"{tool.name}.out"))
        if terminal.exited():
            raise RuntimeError(f"exited during the window:\n{terminal.screen()}")
    except (AssertionError, RuntimeError) as error:
        result.error = str(error)
        print(f"  {tool.name} failed: {error}", file=sys.stderr, flush=True)
    finally:
        terminal.close()
    return result


# -- reporting ------------------------------------------------------------------
def _fmt(value: float, digits: int = 2) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def _ratio(a: float, b: float) -> str:
    return "-" if not (a == a and b == b) or b == 0 else f"{a / b:.2f}"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


ROWS = (  # label, attribute, digits
    ("first frame (s)", "first_frame_s", 2),
    ("first chart with data (s)", "first_data_s", 2),
    ("CPU (% of one core)", "cpu_percent", 2),
    ("RSS (MiB)", "rss_mib", 1),
    ("peak RSS (MiB)", "hwm_mib", 1),
    ("terminal bytes/s", "bytes_per_s", 0),
)
RATIO_ATTRS = ("first_frame_s", "cpu_percent", "rss_mib", "bytes_per_s")
TARGETS = {
    "first_data_s": (TARGET_FIRST_DATA_S, f"≤ {TARGET_FIRST_DATA_S} s"),
    "cpu_percent": (TARGET_CPU_PERCENT, f"≤ {TARGET_CPU_PERCENT} %"),
    "rss_mib": (TARGET_RSS_MIB, f"≤ {TARGET_RSS_MIB} MiB"),
    "bytes_per_s": (TARGET_BYTES_PER_S, f"≤ {TARGET_BYTES_PER_S} B/s"),
}
LABEL = 27
COLUMN = 10


def print_table(results: list[Result], args: argparse.Namespace, skipped: list[str]) -> None:
    """One column per program, one row per figure; leet's targets; then leet/peer ratios and notes."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nsymon · {args.width}×{args.height} · every {args.interval:g} s · {args.seconds:g} s window after {args.warmup:g} s warm-up · {os.cpu_count()} CPUs · load {load}\n")
    measured = [r for r in results if not r.error]
    leet = next((r for r in measured if r.name == "leet"), None)
    width = max([COLUMN] + [len(r.name) + 2 for r in measured])
    if not measured:
        _print_not_measured(results, skipped)
        return
    print(f"{'':{LABEL}}" + "".join(f"{r.name:>{width}}" for r in measured) + ("  leet target" if leet else ""))
    for label, attr, digits in ROWS:
        line = f"{label:{LABEL}}" + "".join(f"{_fmt(getattr(r, attr), digits):>{width}}" for r in measured)
        if leet and attr in TARGETS:
            limit, text = TARGETS[attr]
            line += f"  {text} {_verdict(getattr(leet, attr) <= limit)}"
        print(line)
    print(f"{'processes':{LABEL}}" + "".join(f"{len(r.processes):>{width}}" for r in measured))
    print(f"{'load at window end (1 min)':{LABEL}}" + "".join(f"{_fmt(r.load):>{width}}" for r in measured))

    peers = [r for r in measured if r is not leet]
    if leet and peers:
        print("\nleet/peer (below 1: leet uses less)\n")
        print(f"{'':{LABEL}}" + "".join(f"{r.name:>{width}}" for r in peers))
        for label, attr, _ in ROWS:
            if attr in RATIO_ATTRS:
                print(f"{label:{LABEL}}" + "".join(f"{_ratio(getattr(leet, attr), getattr(r, attr)):>{width}}" for r in peers))

    for result in measured:
        note = f" ({result.note})" if result.note else ""
        print(f"\n{result.name} by process{note}:")
        for cost in result.processes:
            print(f"  {cost.name:16} CPU {cost.cpu_percent:6.2f} %   RSS {cost.rss_mib:6.1f} MiB   peak {cost.hwm_mib:6.1f} MiB")
    _print_not_measured(results, skipped)


def _print_not_measured(results: list[Result], skipped: list[str]) -> None:
    failed = [r for r in results if r.error]
    if skipped or failed:
        print("\nnot measured:")
        for line in skipped:
            print(f"  {line}")
        for result in failed:
            print(f"  {result.name}: {result.error.splitlines()[0]}")


# -- memory soak ----------------------------------------------------------------
def memory_soak(args: argparse.Namespace) -> int:
    minutes = args.memory_soak
    command = leet_command("0.1", args.fake_gpus)
    gpus = f" · {args.fake_gpus} stand-in GPUs" if args.fake_gpus else ""
    print(f"memory soak: leet symon --interval 0.1 · {args.width}×{args.height}{gpus} · {minutes:g} min · RSS every 10 s")
    series: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as workdir, Terminal(command, width=args.width, height=args.height, env=ENV, cwd=workdir) as terminal:
        started = terminal.started_at or time.perf_counter()
        terminal.wait_for(lambda s: any(p.has_data for p in chart_panels(s)), timeout=STARTUP_LIMIT, what="a chart with data")
        end = started + minutes * 60
        next_sample = started + 10
        while next_sample <= end + 0.5:
            time.sleep(max(0.0, next_sample - time.perf_counter()))
            if terminal.exited():
                print(f"leet exited after {time.perf_counter() - started:.0f} s:\n{terminal.screen()}")
                return 1
            rss, _ = memory_mib(terminal.pid)
            series.append((next_sample - started, rss))
            print(f"  {next_sample - started:6.0f} s  {rss:7.2f} MiB", flush=True)
            next_sample += 10
        _, hwm = memory_mib(terminal.pid)
        ticks = cpu_ticks(terminal.pid) or 0
    values = [rss for _, rss in series]
    half = values[len(values) // 2 :]
    print(f"\nRSS first {values[0]:.1f} MiB · last {values[-1]:.1f} MiB · min {min(values):.1f} · max {max(values):.1f} · peak (VmHWM) {hwm:.1f} MiB")
    print(f"growth: {values[-1] - values[0]:+.2f} MiB over the run, {half[-1] - half[0]:+.2f} MiB over the second half")
    print(f"CPU over the whole run: {100.0 * ticks / CLK_TCK / (minutes * 60):.1f} % of one core · load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


# -- command line ---------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time leet symon next to wandb, htop, btop, glances and nvitop, each in its own tmux.")
    parser.add_argument("--seconds", type=float, default=30.0, help="measurement window (default 30)")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds after first data (first frame for peers) before the window (default 10)")
    parser.add_argument("--interval", type=float, default=2.0, help="refresh interval given to every program (default 2)")
    parser.add_argument("--size", default="160x48", help="terminal COLSxROWS (default 160x48)")
    parser.add_argument("--tools", default=",".join(ALL_TOOLS), help=f"comma-separated, in this order (default {','.join(ALL_TOOLS)}; missing ones are skipped)")
    parser.add_argument("--no-wandb", dest="wandb", action="store_false", help="leave wandb out")
    parser.add_argument("--peer-venv", action="append", default=[], metavar="DIR", help=f"virtual environment (or bin folder) holding glances/nvitop; repeatable; also ${PEER_ENV_VAR}, then PATH")
    parser.add_argument("--fake-gpus", type=int, default=0, metavar="N", help="run leet and nvitop against N stand-in NVIDIA GPUs (tests/nvml_standin.py); nvitop gets 2 anyway when no driver is here")
    parser.add_argument("--memory-soak", type=float, nargs="?", const=10.0, metavar="MINUTES", help="instead: run at 0.1 s for MINUTES (default 10), RSS every 10 s")
    args = parser.parse_args(argv)
    try:
        args.width, args.height = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must look like 160x48, got {args.size!r}")
    args.tool_names = [name.strip() for name in args.tools.split(",") if name.strip()]
    if not args.wandb:
        args.tool_names = [name for name in args.tool_names if name != "wandb"]
    unknown = [name for name in args.tool_names if name not in ALL_TOOLS]
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(ALL_TOOLS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        require_tmux()
    except TmuxMissing as error:
        print(f"benchmarks/symon.py: {error}", file=sys.stderr)
        return 2
    if args.memory_soak is not None:
        return memory_soak(args)
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        tools, skipped = build_tools(args.tool_names, args.interval, args.fake_gpus, args.peer_venv, Path(workdir) / "config")
        for line in skipped:
            print(f"skipping {line}", flush=True)
        for tool in tools:
            note = f"  [{tool.note}]" if tool.note else ""
            print(f"measuring {tool.name}: {' '.join(tool.command)}{note} …", flush=True)
            results.append(run_one(tool, args, workdir))
    if not results:
        print("nothing measured", file=sys.stderr)
        return 1
    print_table(results, args, skipped)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
