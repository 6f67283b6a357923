"""Measure ``leet serve``: scrape time, page size, RSS and idle CPU, beside ``leet symon`` and nvitop-exporter.

    python3 benchmarks/serve.py [--gpus 2,8] [--scrapes 200] [--seconds 30] [--warmup 5] [--interval 2]
                                [--peer-venv DIR] [--no-symon]

Every program runs alone, one after the other, against N stand-in NVIDIA GPUs
(``benchmarks/fake_gpus.py``: the real ``pynvml`` over made-up NVML functions),
with the same sweep interval. For each:

- idle: CPU of the process (utime+stime from /proc, 100 % = one core) over
  ``--seconds`` with nobody scraping, then RSS and peak RSS (VmRSS, VmHWM);
- scrapes: ``--scrapes`` GETs of /metrics one after the other, each on a new
  connection as Prometheus' text scrape does, timed at the client (median and
  95th percentile), and the server's CPU per scrape;
- the page: bytes plain and gzipped, and its samples.

``leet symon`` is measured as ``benchmarks/symon.py`` measures it (in tmux, at
160×48; needs tmux), for the idle CPU and RSS of the same collectors with a
screen. nvitop-exporter is looked for in ``--peer-venv`` (then
``$LEET_BENCH_PEERS``), as ``benchmarks/symon.py`` looks for nvitop; it runs
under that environment's Python. The stand-in's module pulls in pytest when it
can; every program here runs with pytest hidden, so no RSS counts it.

Last, in process: what encoding the page costs against handing out the bytes
encoded once per sweep (what ``leet serve`` does), and the names both exporters
give the same quantities, with what ``promtool check metrics`` says of each page.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from peers import FAKE_GPUS, PEER_ENV_VAR, Tool, peer_dirs  # noqa: E402
from symon import cpu_ticks, memory_mib  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
ENV = {**os.environ, "LEET_CONFIG": ""}
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# Runs a script with pytest hidden: the NVML stand-in imports it when it can, and it would count in RSS.
WITHOUT_PYTEST = "import runpy, sys; sys.modules['pytest'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
STARTUP_LIMIT = 60.0

# Targets from the feature's brief.
TARGET_SCRAPE_MS = 10.0
TARGET_RSS_MIB = 40.0

# The same quantity in each exporter: leet's name, nvitop-exporter's.
SIDE_BY_SIDE = (
    ("GPU utilization", "leet_gpu_utilization_percent", "gpu_utilization_Percentage"),
    ("GPU memory used", "leet_gpu_memory_used_bytes", "gpu_memory_used_MiB"),
    ("GPU temperature", "leet_gpu_temperature_celsius", "gpu_temperature_C"),
    ("GPU power", "leet_gpu_power_watts", "gpu_power_usage_W"),
    ("GPU SM clock", "leet_gpu_sm_clock_hertz", "gpu_clock_sm_MHz"),
    ("host memory used", "leet_memory_used_percent", "host_virtual_memory_percent_Percentage"),
    ("CPU busy", "leet_cpu_utilization_percent", "host_cpu_percent_Percentage"),
    ("network received", "leet_network_received_bytes_total", "host_net_io_rx_data_MiB"),
    ("disk read", "leet_disk_read_bytes_total", "host_disk_io_read_data_MiB"),
    ("who this is", "leet_host_info", "nvitop_info"),
)


@dataclass
class Measured:
    name: str
    gpus: int
    idle_cpu: float = float("nan")  # % of one core
    rss_mib: float = float("nan")
    hwm_mib: float = float("nan")
    scrape_median_ms: float = float("nan")
    scrape_p95_ms: float = float("nan")
    cpu_per_scrape_ms: float = float("nan")
    page_bytes: int = 0
    gzip_bytes: int = 0
    samples: int = 0
    page: str = ""
    error: str = ""
    notes: list[str] = field(default_factory=list)


# -- one exporter ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> bytes:
    with DIRECT.open(url, timeout=10) as response:
        return response.read()


def wait_for(url: str, marker: str, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode} before serving")
        try:
            text = fetch(url).decode()
            if marker in text:
                return text
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{marker} did not appear at {url} within {STARTUP_LIMIT:g} s")


def measure(name: str, command: list[str], port: int, gpus: int, args: argparse.Namespace, marker: str, log: Path) -> Measured:
    result = Measured(name, gpus)
    url = f"http://127.0.0.1:{port}/metrics"
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=ENV, stdout=output, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_for(url, marker, process)
            time.sleep(args.warmup)
            result.idle_cpu = cpu_over(process.pid, args.seconds)
            result.rss_mib, result.hwm_mib = memory_mib(process.pid)
            scrape(url, process.pid, args.scrapes, result)
        except (OSError, RuntimeError) as error:
            result.error = f"{error}; log: {log}"
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return result


def cpu_over(pid: int, seconds: float) -> float:
    before, start = cpu_ticks(pid) or 0, time.perf_counter()
    time.sleep(seconds)
    after, elapsed = cpu_ticks(pid) or 0, time.perf_counter() - start
    return 100.0 * (after - before) / CLK_TCK / elapsed


def scrape(url: str, pid: int, count: int, result: Measured) -> None:
    times = []
    before = cpu_ticks(pid) or 0
    for _ in range(count):
        start = time.perf_counter()
        page = fetch(url)
        times.append(time.perf_counter() - start)
    used = (cpu_ticks(pid) or 0) - before
    times.sort()
    result.scrape_median_ms = 1000 * statistics.median(times)
    result.scrape_p95_ms = 1000 * times[min(len(times) - 1, int(0.95 * len(times)))]
    result.cpu_per_scrape_ms = 1000 * used / CLK_TCK / count
    result.page = page.decode()
    result.page_bytes = len(page)
    result.gzip_bytes = len(gzip.compress(page))
    result.samples = sum(1 for line in result.page.splitlines() if line and not line.startswith("#"))


def leet_serve_command(gpus: int, port: int, interval: float) -> list[str]:
    return [sys.executable, "-c", WITHOUT_PYTEST, str(FAKE_GPUS), "--gpus", str(gpus), "-m", "leet", "serve", "--port", str(port), "--interval", f"{interval:g}"]


def nvitop_exporter_python(peer_venvs: list[str]) -> str | None:
    """The interpreter of the first ``nvitop-exporter`` script found in the peer folders, then on PATH."""
    for directory in peer_dirs(peer_venvs):
        script = directory / "nvitop-exporter"
        if script.is_file():
            return _shebang_python(script)
    found = shutil.which("nvitop-exporter")
    return _shebang_python(Path(found)) if found else None


def _shebang_python(script: Path) -> str | None:
    first = script.read_text(errors="replace").splitlines()[0] if script.stat().st_size else ""
    return first[2:].strip().split()[0] if first.startswith("#!") else None


def nvitop_exporter_command(python: str, gpus: int, port: int, interval: float) -> list[str]:
    return [
        python, "-c", WITHOUT_PYTEST, str(FAKE_GPUS), "--gpus", str(gpus), "-m", "nvitop_exporter",
        "--bind-address", "127.0.0.1", "--port", str(port), "--interval", f"{interval:g}",
    ]


# -- leet symon, as benchmarks/symon.py measures it ------------------------------------------


def measure_symon(gpus: int, args: argparse.Namespace, workdir: str) -> Measured:
    from symon import run_one
    from terminal import TmuxMissing, require_tmux

    result = Measured("leet symon", gpus)
    try:
        require_tmux()
    except TmuxMissing as error:
        result.error = str(error)
        return result
    command = [sys.executable, "-c", WITHOUT_PYTEST, str(FAKE_GPUS), "--gpus", str(gpus), "-m", "leet", "symon", "--interval", f"{args.interval:g}s"]
    config = Path(workdir) / "symon-config"
    config.mkdir(exist_ok=True)
    tool = Tool("leet", command, env={"XDG_CONFIG_HOME": str(config)}, waits_for_data=True)
    window = argparse.Namespace(width=160, height=48, warmup=args.warmup, seconds=args.seconds)
    measured = run_one(tool, window, workdir)
    result.error = measured.error
    result.idle_cpu, result.rss_mib, result.hwm_mib = measured.cpu_percent, measured.rss_mib, measured.hwm_mib
    return result


# -- in process: encode per scrape, or once per sweep ---------------------------------------------


def encode_costs(gpus: int, repeats: int) -> tuple[float, float, int]:
    """(ms to encode the page, ms to hand out the page encoded once for the sweep, samples) for a fake host with ``gpus`` GPUs."""
    from prometheus_client.exposition import generate_latest

    from collectors.fake import FakeClock, make_fake_collectors, replay
    from leet.export.exposition import Exposition

    clock = FakeClock(1_000.0)
    sample = replay(make_fake_collectors(clock, gpus=gpus, cores=32), clock, 1_000.0, 2.0, 3)[-1]
    exposition = Exposition(node="bench", hostname="bench", version="0")
    exposition.update(sample)

    def timed(call) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return 1000 * statistics.median(times)

    encode = timed(lambda: generate_latest(exposition.registry))
    cached = timed(lambda: exposition.render(""))
    page = exposition.render("")[0].decode()
    return encode, cached, sum(1 for line in page.splitlines() if line and not line.startswith("#"))


# -- reporting ------------------------------------------------------------------------------------


def _fmt(value: float, digits: int = 2) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


ROWS = (
    ("scrape median (ms)", "scrape_median_ms", 2),
    ("scrape p95 (ms)", "scrape_p95_ms", 2),
    ("server CPU per scrape (ms)", "cpu_per_scrape_ms", 2),
    ("page (bytes)", "page_bytes", 0),
    ("page gzipped (bytes)", "gzip_bytes", 0),
    ("samples on the page", "samples", 0),
    ("idle CPU (% of one core)", "idle_cpu", 2),
    ("RSS (MiB)", "rss_mib", 1),
    ("peak RSS (MiB)", "hwm_mib", 1),
)
LABEL = 28


def print_table(results: list[Measured], args: argparse.Namespace) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nleet serve · every {args.interval:g} s · {args.scrapes} scrapes · idle window {args.seconds:g} s after {args.warmup:g} s · {os.cpu_count()} CPUs · load {load}\n")
    measured = [r for r in results if not r.error]
    columns = [f"{r.name} ({r.gpus} GPUs)" for r in measured]
    width = max([12] + [len(c) + 2 for c in columns])
    print(f"{'':{LABEL}}" + "".join(f"{c:>{width}}" for c in columns))
    for label, attr, digits in ROWS:
        cells = []
        for r in measured:
            value = getattr(r, attr)
            blank = r.name == "leet symon" and attr not in ("idle_cpu", "rss_mib", "hwm_mib")
            cells.append("" if blank else (_fmt(float(value), digits) if value == value else "-"))
        print(f"{label:{LABEL}}" + "".join(f"{c:>{width}}" for c in cells))
    serve = [r for r in measured if r.name == "leet serve"]
    if serve:
        worst = max(r.scrape_p95_ms for r in serve)
        rss = max(r.rss_mib for r in serve)
        print(f"\ntargets: scrape ≤ {TARGET_SCRAPE_MS:g} ms ({'ok' if worst <= TARGET_SCRAPE_MS else 'MISSED'}: p95 {worst:.2f} ms), "
              f"RSS ≤ {TARGET_RSS_MIB:g} MiB ({'ok' if rss <= TARGET_RSS_MIB else 'MISSED'}: {rss:.1f} MiB)")
    for result in results:
        if result.error:
            print(f"not measured: {result.name} ({result.gpus} GPUs): {result.error}")


def print_names(results: list[Measured]) -> None:
    ours = next((r for r in results if r.name == "leet serve" and r.page), None)
    theirs = next((r for r in results if r.name == "nvitop-exporter" and r.page), None)
    if ours is None:
        return
    print("\nthe same quantities, by name and labels (first series of each)\n")
    for what, leet_name, nvitop_name in SIDE_BY_SIDE:
        print(f"  {what}")
        print(f"    leet serve       {_first_series(ours.page, leet_name)}")
        if theirs is not None:
            print(f"    nvitop-exporter  {_first_series(theirs.page, nvitop_name)}")
    promtool = shutil.which("promtool")
    if promtool is None:
        return
    print("\npromtool check metrics")
    for result in (ours, theirs):
        if result is None:
            continue
        checked = subprocess.run([promtool, "check", "metrics"], input=result.page, capture_output=True, text=True)
        problems = [line for line in (checked.stdout + checked.stderr).splitlines() if line.strip()]
        print(f"  {result.name:16} {len(problems)} problem(s)" + (f", e.g. {problems[0]}" if problems else ""))


def _first_series(page: str, name: str) -> str:
    for line in page.splitlines():
        if line.startswith((name + "{", name + " ")):
            return line.rsplit(" ", 1)[0]
    return "-"


def print_encoding(args: argparse.Namespace) -> None:
    print(f"\nin process, fake host (32 cores): encode the page on every scrape, or once per sweep ({args.scrapes} times each, median)\n")
    print(f"{'GPUs':>6}{'samples':>10}{'encode (ms)':>14}{'cached (ms)':>14}")
    for gpus in args.gpu_counts:
        encode, cached, samples = encode_costs(gpus, args.scrapes)
        print(f"{gpus:>6}{samples:>10}{encode:>14.3f}{cached:>14.4f}")


# -- command line ---------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Measure leet serve next to leet symon and nvitop-exporter, on stand-in GPUs.")
    parser.add_argument("--gpus", default="2,8", help="stand-in GPU counts, comma-separated (default 2,8)")
    parser.add_argument("--scrapes", type=int, default=200, help="scrapes timed per program (default 200)")
    parser.add_argument("--seconds", type=float, default=30.0, help="idle window (default 30)")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds after the first GPU series before the window (default 5)")
    parser.add_argument("--interval", type=float, default=2.0, help="sweep interval of every program (default 2)")
    parser.add_argument("--peer-venv", action="append", default=[], metavar="DIR", help=f"virtual environment (or bin folder) holding nvitop-exporter; repeatable; also ${PEER_ENV_VAR}, then PATH")
    parser.add_argument("--no-symon", dest="symon", action="store_false", help="leave leet symon out")
    args = parser.parse_args(argv)
    args.gpu_counts = [int(part) for part in args.gpus.split(",") if part.strip()]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peer_python = nvitop_exporter_python(args.peer_venv)
    if peer_python is None:
        print("skipping nvitop-exporter: not found (pip install nvitop-exporter into a throw-away venv, then --peer-venv DIR)", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        for gpus in args.gpu_counts:
            port = free_port()
            print(f"measuring leet serve on {gpus} stand-in GPUs …", flush=True)
            results.append(measure("leet serve", leet_serve_command(gpus, port, args.interval), port, gpus, args, "\nleet_gpu_utilization_percent{", Path(workdir) / f"serve-{gpus}.log"))
            if peer_python:
                port = free_port()
                print(f"measuring nvitop-exporter on {gpus} stand-in GPUs …", flush=True)
                command = nvitop_exporter_command(peer_python, gpus, port, args.interval)
                results.append(measure("nvitop-exporter", command, port, gpus, args, "\ngpu_utilization_Percentage{", Path(workdir) / f"nvitop-{gpus}.log"))
            if args.symon:
                print(f"measuring leet symon on {gpus} stand-in GPUs …", flush=True)
                results.append(measure_symon(gpus, args, workdir))
        print_table(results, args)
        print_names(results)
    print_encoding(args)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
