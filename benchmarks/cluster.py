"""Measure ``leet cluster`` against a real Prometheus holding a day of a 64-node, 8-GPU cluster.

    python3 benchmarks/cluster.py [--nodes 64] [--gpus 8] [--hours 24] [--scrape 15] [--ahead 1h]
                                  [--interval 15] [--seconds 90] [--warmup 20] [--size 160x48]
                                  [--data DIR] [--starts 3] [--rounds 12] [--no-terminal] [--serve]

1. The data. For every node, node_exporter-like series (``node_cpu_seconds_total``
   per CPU and mode, ``node_memory_MemAvailable_bytes``/``MemTotal_bytes``,
   ``node_filesystem_{avail,free,size}_bytes`` of ``/``, network and disk
   counters, ``node_uname_info``) from ``NODE:9100`` (job ``node``), and
   DCGM-exporter's ``DCGM_FI_DEV_GPU_UTIL``/``GPU_TEMP``/``POWER_USAGE``/
   ``FB_USED``/``FB_FREE`` per GPU with its ``gpu``, ``UUID``, ``device``,
   ``modelName`` and ``Hostname`` labels from ``NODE:9400`` (job ``dcgm``),
   plus ``up`` for both targets, every ``--scrape`` seconds for ``--hours``,
   ending ``--ahead`` past now (so instant queries at the server's clock find
   fresh samples for the whole run). Fewer CPUs and modes than a real
   node_exporter: 70 series a node. One node idles, one runs hot, and two are
   down (for the last 3 and 40 minutes: ``up`` 0, their other series stop).
   It is written as OpenMetrics text one 2-hour block at a time, each turned
   into a TSDB block by ``promtool tsdb create-blocks-from openmetrics`` and
   deleted, so no more than one block's text (a few hundred MB) is on disk.
   ``--data DIR`` keeps the TSDB and reuses it while it still reaches 10
   minutes past now with the same shape.
2. Debian's ``prometheus`` serves it on a free loopback port (no scrape jobs;
   retention long enough for the oldest block). After a build it runs once
   until it has merged the fresh blocks (a minute and more), so that no
   measurement runs beside that compaction. The history query leet
   starts with is sent twice first and the second, warm answer timed: that
   is Prometheus's share of the start, and a server in use is warm.
3. ``leet cluster URL --interval I`` (this tree's ``leet``) runs in tmux at
   ``--size`` (the ``Terminal`` helper of ``tests/terminal.py``), ``--starts``
   times. First full screen: the time from just before tmux starts it until
   the header counts every node (as many as ``leet cluster --once`` finds:
   a node down for over an hour drops out) and says Prometheus answered, the
   node table lists them all, the heatmap is shaded and every chart panel of the 3×3
   grid holds braille dots. The last start runs on: after ``--warmup``, over
   ``--seconds``, the CPU of its process tree (utime+stime from /proc, 100 %
   = one core) and the queries Prometheus answered (its own
   ``prometheus_http_requests_total`` for ``/api/v1/query`` and
   ``/api/v1/query_range``, read from ``/metrics``, which is no query) per
   interval.
4. In process, headless (Textual's pilot), over the same Prometheus: the
   source's history load, then ``--rounds`` rounds of one instant query each
   followed by the cluster screen's redraw, then ten of the screen's
   once-a-second redraws of the ages, each with the CPU time (not wall time)
   it took, so the steady cost can be split.

``--serve`` also runs ``benchmarks/serve.py --no-symon`` (``leet serve``'s
``/metrics`` scrape) and prints its table. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from openmetrics import free_port  # noqa: E402
from symon import CLK_TCK, cpu_ticks, process_tree  # noqa: E402
from terminal import LEET_ENV, Terminal, TmuxMissing, chart_panels, require_tmux  # noqa: E402

# Targets, from the project's issue.
TARGET_FIRST_SCREEN_S = 2.0
TARGET_CPU_PERCENT = 3.0
TARGET_QUERIES_PER_INTERVAL = 2.0

BLOCK_S = 7200  # promtool's block length: one OpenMetrics file per block
COMPACTION_S = 75.0  # Prometheus first looks for blocks to compact a minute after it starts
STARTUP_LIMIT = 120.0
POLL = 0.02
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only: no proxy from the environment
QUERY_HANDLERS = ("/api/v1/query", "/api/v1/query_range")
DOWN_FOR = {5 / 8: 180.0, 7 / 8: 2400.0}  # share of the way into the node list → seconds down before "now"
CPU_MODES = ("idle", "iowait", "system", "user")
UTIL_LEVELS = (93.0, 88.0, 97.0, 71.0, 91.0, 84.0, 96.0, 78.0)
MEMORY_TOTAL = 2 << 40  # 2 TiB of host memory
ROOT_FS = 1_800_000_000_000
FB_TOTAL_MIB = 81559  # an 80 GB H100
MODEL = "NVIDIA H100 80GB HBM3"


# -- the cluster's data ----------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    nodes: int = 64
    gpus: int = 8
    cpus: int = 4
    scrape: int = 15
    hours: float = 24.0

    def key(self) -> dict:
        return {"nodes": self.nodes, "gpus": self.gpus, "cpus": self.cpus, "scrape": self.scrape, "hours": self.hours}


@dataclass(frozen=True)
class Node:
    index: int
    name: str
    busy: float  # mean GPU utilisation, percent
    hot: bool
    down_from: float  # unix time its targets stop answering (inf: never)
    offset: float  # its scrapes' offset into the interval, as real scrapes have

    @property
    def phase(self) -> float:
        return 0.7 * self.index


def cluster_nodes(shape: Shape, now: float) -> list[Node]:
    width = max(2, len(str(shape.nodes)))
    down = {int(shape.nodes * share): seconds for share, seconds in DOWN_FOR.items()} if shape.nodes >= 8 else {}
    hot, idle = shape.nodes // 3, shape.nodes * 3 // 4
    nodes = []
    for index in range(shape.nodes):
        busy = 8.0 if index == idle else UTIL_LEVELS[index % len(UTIL_LEVELS)]
        down_from = now - down[index] if index in down else math.inf
        nodes.append(Node(index, f"node{index + 1:0{width}d}", busy, index == hot, down_from, (index * 0.137) % 1.0))
    return nodes


Values = Callable[[float], float]


def _counter(rate: float, wobble: float, period: float, since: float) -> Values:
    """A counter growing at ``rate`` ± ``wobble`` per second (never falling, as long as |wobble| ≤ rate)."""
    return lambda t: rate * (t - since) + wobble * period * (1.0 - math.cos((t - since) / period))


def node_exporter_series(node: Node, shape: Shape, booted: float) -> Iterator[tuple[str, str, str, Values]]:
    """(family, type, sample line prefix, value at t) of one node's node_exporter target."""
    target = f'instance="{node.name}:9100",job="node"'
    busy = node.busy / 100.0
    user, system, iowait = 0.2 + 0.5 * busy, 0.05, 0.01
    for cpu in range(shape.cpus):
        wobble = 0.02 + 0.01 * cpu
        rates = {"idle": (1.0 - user - system - iowait, -wobble), "iowait": (iowait, 0.0), "system": (system, 0.0), "user": (user, wobble)}
        for mode in CPU_MODES:
            rate, swing = rates[mode]
            yield "node_cpu_seconds", "counter", f'node_cpu_seconds_total{{cpu="{cpu}",mode="{mode}",{target}}} ', _counter(rate, swing, 300.0, booted)
    share = 0.35 + 0.07 * (node.index % 6)
    yield "node_memory_MemAvailable_bytes", "gauge", f"node_memory_MemAvailable_bytes{{{target}}} ", (
        lambda t: MEMORY_TOTAL * (1.0 - share - 0.03 * math.sin(t / 600.0 + node.index))
    )
    yield "node_memory_MemTotal_bytes", "gauge", f"node_memory_MemTotal_bytes{{{target}}} ", lambda t: float(MEMORY_TOTAL)
    fs = f'device="/dev/nvme0n1p2",fstype="ext4",mountpoint="/",{target}'
    used = 0.40 + 0.03 * (node.index % 11)
    yield "node_filesystem_avail_bytes", "gauge", f"node_filesystem_avail_bytes{{{fs}}} ", lambda t: ROOT_FS * (0.95 - used) - (t % 86400.0) * 1e4
    yield "node_filesystem_free_bytes", "gauge", f"node_filesystem_free_bytes{{{fs}}} ", lambda t: ROOT_FS * (1.0 - used) - (t % 86400.0) * 1e4
    yield "node_filesystem_size_bytes", "gauge", f"node_filesystem_size_bytes{{{fs}}} ", lambda t: float(ROOT_FS)
    for family, rate in (("node_network_receive_bytes", 2e8), ("node_network_transmit_bytes", 1.5e8)):
        for device, scale in (("eth0", busy), ("lo", 1e-3)):
            yield family, "counter", f'{family}_total{{device="{device}",{target}}} ', _counter(rate * scale, 0.3 * rate * scale, 120.0, booted)
    for family, rate in (("node_disk_read_bytes", 5e7), ("node_disk_written_bytes", 3e7)):
        yield family, "counter", f'{family}_total{{device="nvme0n1",{target}}} ', _counter(rate * busy, 0.5 * rate * busy, 90.0, booted)
    uname = f'domainname="(none)",machine="x86_64",nodename="{node.name}",release="6.1.0-18-amd64",sysname="Linux",version="#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)",{target}'
    yield "node_uname_info", "gauge", f"node_uname_info{{{uname}}} ", lambda t: 1.0


def dcgm_series(node: Node, shape: Shape) -> Iterator[tuple[str, str, str, Values]]:
    """(family, type, sample line prefix, value at t) of one node's DCGM-exporter target."""
    hot = 30.0 if node.hot else 0.0

    def util(gpu: int) -> Values:
        phase = node.phase + 1.3 * gpu
        return lambda t: float(int(min(100.0, max(0.0, node.busy + 5.0 * math.sin(t / 240.0 + phase) + 2.0 * math.sin(t / 37.0 + 2.0 * phase)))))

    for field_name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
        for gpu in range(shape.gpus):
            labels = (
                f'gpu="{gpu}",UUID="GPU-{node.index:08x}-{gpu:04x}-4f6a-9d1b-5e3c7a2f1b0d",device="nvidia{gpu}",'
                f'modelName="{MODEL}",Hostname="{node.name}",instance="{node.name}:9400",job="dcgm"'
            )
            level, phase = util(gpu), node.phase + 1.3 * gpu
            values: Values
            if field_name == "DCGM_FI_DEV_GPU_UTIL":
                values = level
            elif field_name == "DCGM_FI_DEV_GPU_TEMP":
                values = (lambda u, p: lambda t: float(int(38.0 + 0.3 * u(t) + 2.0 * math.sin(t / 300.0 + p) + hot)))(level, phase)
            elif field_name == "DCGM_FI_DEV_POWER_USAGE":
                values = (lambda u, p: lambda t: round(90.0 + 5.8 * u(t) + 25.0 * math.sin(t / 90.0 + p) + 2.0 * hot, 3))(level, phase)
            elif field_name == "DCGM_FI_DEV_FB_USED":
                values = (lambda p: lambda t: float(int(40000 + 300 * node.busy + 2000 * math.sin(t / 500.0 + p))))(phase)
            else:
                values = (lambda p: lambda t: float(FB_TOTAL_MIB - int(40000 + 300 * node.busy + 2000 * math.sin(t / 500.0 + p))))(phase)
            yield field_name, "gauge", f"{field_name}{{{labels}}} ", values


def _number(value: float) -> str:
    """Whole numbers and byte counts as integers, the rest to two decimals (as small as a real page's)."""
    return str(int(value)) if value == int(value) or abs(value) >= 1e6 else f"{value:.2f}"


def write_block(path: Path, shape: Shape, nodes: list[Node], start: int, stop: int, booted: float) -> int:
    """One block's samples, ``start`` ≤ t < ``stop``, as OpenMetrics text; the number of samples."""
    scrapes = range(start - start % shape.scrape - shape.scrape, stop, shape.scrape)  # each node's offset added below
    families: dict[str, tuple[str, list[tuple[str, Values, Node, bool]]]] = {}
    for node in nodes:
        for family, kind, prefix, values in node_exporter_series(node, shape, booted):
            families.setdefault(family, (kind, []))[1].append((prefix, values, node, False))
        for family, kind, prefix, values in dcgm_series(node, shape):
            families.setdefault(family, (kind, []))[1].append((prefix, values, node, False))
        for job, port in (("node", 9100), ("dcgm", 9400)):
            families.setdefault("up", ("gauge", []))[1].append((f'up{{instance="{node.name}:{port}",job="{job}"}} ', _up(node), node, True))
    count = 0
    with path.open("w") as out:
        for family, (kind, series) in families.items():
            out.write(f"# TYPE {family} {kind}\n")
            for prefix, values, node, always in series:
                stamps = [t + node.offset for t in scrapes if start <= t + node.offset < stop and (always or t + node.offset < node.down_from)]
                out.write("".join([f"{prefix}{_number(values(t))} {t:.3f}\n" for t in stamps]))
                count += len(stamps)
        out.write("# EOF\n")
    return count


def _up(node: Node) -> Values:
    return lambda t: 1.0 if t < node.down_from else 0.0


@dataclass
class Data:
    path: Path
    start: float
    end: float
    samples: int = 0
    text_bytes: int = 0  # OpenMetrics text written, over every block
    seconds: float = 0.0
    reused: bool = False


def build_tsdb(folder: Path, shape: Shape, ahead: float, quiet: bool = False) -> Data:
    """A TSDB of ``shape.hours`` of the cluster ending ``ahead`` seconds from now, or the one in ``folder`` if it still fits."""
    meta_file = folder / "leet-benchmark.json"
    now = time.time()
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("shape") == shape.key() and meta.get("end", 0) >= now + 600:
            return Data(folder / "tsdb", meta["start"], meta["end"], meta["samples"], meta["text_bytes"], 0.0, reused=True)
    promtool = _binary("promtool")
    shutil.rmtree(folder / "tsdb", ignore_errors=True)
    (folder / "tsdb").mkdir(parents=True)
    end = int(now + ahead)
    start = end - int(shape.hours * 3600)
    nodes = cluster_nodes(shape, now)
    booted = start - 3 * 86400.0
    data = Data(folder / "tsdb", float(start), float(end))
    began = time.perf_counter()
    block_start = start
    while block_start < end:
        block_stop = min(end, (block_start // BLOCK_S + 1) * BLOCK_S)  # promtool cuts blocks at multiples of 2 h
        text = folder / "block.om"
        data.samples += write_block(text, shape, nodes, block_start, block_stop, booted)
        data.text_bytes += text.stat().st_size
        done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(text), str(data.path)], capture_output=True, text=True)
        text.unlink()
        if done.returncode != 0:
            raise RuntimeError(f"promtool failed on {block_start}..{block_stop}: {done.stderr.strip()[-2000:]}")
        if not quiet:
            print(f"  block {time.strftime('%H:%M', time.localtime(block_start))}–{time.strftime('%H:%M', time.localtime(block_stop))} written", flush=True)
        block_start = block_stop
    data.seconds = time.perf_counter() - began
    meta_file.write_text(json.dumps({"shape": shape.key(), "start": data.start, "end": data.end, "samples": data.samples, "text_bytes": data.text_bytes}))
    return data


def _binary(name: str) -> str:
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
    if path is None:
        raise RuntimeError(f"{name} is not installed (Debian: apt-get install prometheus)")
    return path


# -- Prometheus -------------------------------------------------------------------
class Prometheus:
    """Debian's prometheus over a TSDB, on a free loopback port, with no scrape jobs."""

    def __init__(self, tsdb: Path, workdir: Path, retention_days: int) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 15s\n")
        self.log = workdir / "prometheus.log"
        self._command = [
            _binary("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={tsdb}",
            f"--storage.tsdb.retention.time={retention_days}d", f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
        ]
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "Prometheus":
        with self.log.open("wb") as output:
            self._process = subprocess.Popen(self._command, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log.read_text(errors='replace')[-2000:]}")
            try:
                with DIRECT.open(self.url + "/-/ready", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"prometheus did not get ready on {self.url}")

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def settle(self, least: float = 0.0, limit: float = 600.0) -> float:
        """Waits at least ``least`` seconds and until Prometheus idles; the seconds waited."""
        began = time.perf_counter()
        quiet = 0
        while (quiet < 2 or time.perf_counter() - began < least) and time.perf_counter() - began < limit:
            before = cpu_ticks(self.pid) or 0
            time.sleep(2.0)
            busy = 100.0 * ((cpu_ticks(self.pid) or 0) - before) / CLK_TCK / 2.0
            quiet = quiet + 1 if busy < 10.0 else 0
        return time.perf_counter() - began

    def queries(self) -> int:
        """Queries answered so far: ``prometheus_http_requests_total`` of the query handlers, from its own page."""
        with DIRECT.open(self.url + "/metrics", timeout=10) as response:
            page = response.read().decode()
        total = 0.0
        for line in page.splitlines():
            if line.startswith("prometheus_http_requests_total{") and any(f'handler="{handler}"' in line for handler in QUERY_HANDLERS):
                total += float(line.rsplit(" ", 1)[1])
        return int(total)


# -- leet cluster in a terminal -------------------------------------------------
@dataclass
class Measured:
    first_screen_s: list[float] = field(default_factory=list)  # one per start
    first_frame_s: list[float] = field(default_factory=list)
    cpu_percent: float = float("nan")
    window_s: float = float("nan")
    queries: int = 0
    start_queries: int = 0  # queries from start to the first full screen (the last start)
    load: float = float("nan")
    error: str = ""


def full_screen(nodes: int, charts: int) -> Callable[[str], bool]:
    """Whether a screen is whole: Prometheus answered, every node counted and in the table, the heatmap shaded, every chart with data."""

    def whole(screen: str) -> bool:
        header = screen.split("\n", 1)[0]
        if f"{nodes} nodes" not in header or "answered" not in header or f" of {nodes}]" not in screen:
            return False
        if "GPU utilisation ·" not in screen or not any(shade in screen for shade in "░▒▓█"):
            return False
        return sum(1 for panel in chart_panels(screen) if panel.has_data) >= charts

    return whole


def known_nodes(url: str) -> tuple[int, int]:
    """(nodes, up) as ``leet cluster --once --json`` finds them now: a node down for long enough drops out of the range."""
    done = subprocess.run(
        [sys.executable, "-m", "leet", "cluster", url, "--once", "--json"], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "LEET_CONFIG": LEET_ENV["LEET_CONFIG"]},
    )
    if done.returncode != 0:
        raise RuntimeError(f"leet cluster --once failed: {done.stderr.strip()[-500:]}")
    nodes = json.loads(done.stdout)["nodes"]
    return len(nodes), sum(1 for node in nodes.values() if node["up"])


def start_leet(url: str, prometheus: Prometheus, nodes: int, args: argparse.Namespace, workdir: Path, result: Measured) -> Terminal:
    """``leet cluster`` in tmux, timed to its first frame and its first full screen; the terminal, still running."""
    command = [sys.executable, "-m", "leet", "cluster", url, "--interval", f"{args.interval:g}"]
    env = {**LEET_ENV, "XDG_CONFIG_HOME": str(workdir / "config"), "PYTHONPATH": str(ROOT)}  # this tree's leet
    before = prometheus.queries()
    terminal = Terminal(command, width=args.width, height=args.height, env=env, cwd=str(workdir))
    whole = full_screen(nodes, 9)
    frame = float("nan")
    started = terminal.start()

    def seen(screen: str) -> bool:
        nonlocal frame
        now = time.perf_counter() - started
        if frame != frame and screen.strip():
            frame = now
        if whole(screen):
            result.first_screen_s.append(now)
            return True
        return False

    try:
        terminal.wait_for(seen, timeout=STARTUP_LIMIT, poll=POLL, what="a full screen")
    except BaseException:
        terminal.close()
        raise
    result.first_frame_s.append(frame)
    result.start_queries = prometheus.queries() - before
    return terminal


def measure_terminal(url: str, prometheus: Prometheus, nodes: int, args: argparse.Namespace, workdir: Path) -> Measured:
    """``--starts`` starts timed to the first full screen; the last one runs on for the steady window."""
    result = Measured()
    terminal: Terminal | None = None
    try:
        for attempt in range(args.starts):
            terminal = start_leet(url, prometheus, nodes, args, workdir, result)
            if attempt < args.starts - 1:
                terminal.close()
                time.sleep(1.0)
        assert terminal is not None
        time.sleep(args.warmup)
        if terminal.exited():
            raise RuntimeError(f"exited during the warm-up:\n{terminal.screen()}")
        root = terminal.pid
        ticks = {pid: cpu_ticks(pid) for pid in process_tree(root)}
        queries, began = prometheus.queries(), time.perf_counter()
        time.sleep(args.seconds)
        result.queries = prometheus.queries() - queries
        after = {pid: cpu_ticks(pid) for pid in process_tree(root)}
        result.window_s = time.perf_counter() - began
        used = sum((tick or 0) - (ticks.get(pid) or 0) for pid, tick in after.items())
        result.cpu_percent = 100.0 * used / CLK_TCK / result.window_s
        result.load = os.getloadavg()[0]
        if terminal.exited():
            raise RuntimeError(f"exited during the window:\n{terminal.screen()}")
    except (AssertionError, RuntimeError) as error:
        result.error = str(error)
    finally:
        if terminal is not None:
            terminal.close()
    return result


def history_query_s(url: str, args: argparse.Namespace) -> float:
    """Wall seconds Prometheus takes to answer the history queries ``leet cluster`` starts with (asked twice: the second, warm)."""
    from leet.sources.cluster import DEFAULT_RANGE
    from leet.sources.cluster_queries import QueryPlan, history_step
    from leet.sources.prometheus_api import PrometheusClient, endpoint
    from leet.ui.views.cluster_layout import chart_cells

    client = PrometheusClient(endpoint(url), timeout=60.0)
    step = history_step(DEFAULT_RANGE, chart_cells(args.width), args.interval)  # the width cli.run_cluster gives before the first draw
    batches = QueryPlan().ranged_batches(args.interval, step)
    took = float("nan")
    for _ in range(2):
        now = time.time()
        began = time.perf_counter()
        for expr, _ in batches:
            client.query_range(expr, now - DEFAULT_RANGE, now, step)
        took = time.perf_counter() - began
    return took


# -- in process: the source's rounds and the screen's redraws -----------------------
@dataclass
class Rounds:
    history_s: float = float("nan")  # wall time of the first round (range query + one instant query)
    history_cpu_s: float = float("nan")
    first_redraw_cpu_s: float = float("nan")
    round_cpu_ms: list[float] = field(default_factory=list)
    redraw_cpu_ms: list[float] = field(default_factory=list)
    round_wall_ms: list[float] = field(default_factory=list)
    tick_cpu_ms: list[float] = field(default_factory=list)  # the once-a-second redraw of ages, with its paint
    series: int = 0
    nodes: int = 0


def measure_rounds(url: str, args: argparse.Namespace) -> Rounds:
    """The source against Prometheus and the screen over it, headless, on this thread: CPU per round and per redraw."""
    from leet.config import Config
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource
    from leet.sources.prometheus_api import PrometheusClient, endpoint
    from leet.ui.app import LeetApp
    from leet.ui.screens.cluster import ClusterScreen
    from leet.ui.views.cluster_layout import chart_cells

    source = ClusterSource(Store(), PrometheusClient(endpoint(url), timeout=30.0), interval=args.interval)
    source.set_width(chart_cells(args.width))  # as cli.run_cluster does before the first draw
    rounds = Rounds()

    async def run() -> None:
        app = LeetApp(source, Config(), live=False, screen=lambda: ClusterScreen(source))
        async with app.run_test(size=(args.width, args.height)) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ClusterScreen)
            wall, cpu = time.perf_counter(), time.process_time()
            source.step()
            rounds.history_s, rounds.history_cpu_s = time.perf_counter() - wall, time.process_time() - cpu
            cpu = time.process_time()
            screen.update_view()
            rounds.first_redraw_cpu_s = time.process_time() - cpu
            await pilot.pause()
            for _ in range(args.rounds):
                wall, cpu = time.perf_counter(), time.process_time()
                source.step()
                rounds.round_wall_ms.append(1000 * (time.perf_counter() - wall))
                rounds.round_cpu_ms.append(1000 * (time.process_time() - cpu))
                cpu = time.process_time()
                screen.update_view()
                rounds.redraw_cpu_ms.append(1000 * (time.process_time() - cpu))
                await pilot.pause()
            for _ in range(10):
                cpu = time.process_time()
                screen._tick()
                await pilot.pause()
                rounds.tick_cpu_ms.append(1000 * (time.process_time() - cpu))
            rounds.series = len(source.store.series())
            rounds.nodes = len(source.nodes())

    asyncio.run(run())
    return rounds


# -- reporting ------------------------------------------------------------------
def _fmt(value: float, digits: int = 2) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _both(values: list[float], digits: int = 0) -> str:
    """Median and least: on a shared machine the least is the cost, the median what it came to."""
    return f"{_fmt(_median(values), digits)} / {_fmt(min(values, default=float('nan')), digits)}"


def print_report(shape: Shape, data: Data, args: argparse.Namespace, history_s: float, measured: Measured | None, rounds: Rounds | None) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ncluster · {shape.nodes} nodes × {shape.gpus} GPUs · {shape.hours:g} h at {shape.scrape} s · leet --interval {args.interval:g} · "
          f"{args.width}×{args.height} · {os.cpu_count()} CPUs · load {load}")
    made = "reused" if data.reused else f"built in {data.seconds:.0f} s"
    print(f"TSDB: {data.samples / 1e6:.1f} M samples from {data.text_bytes / 2**30:.2f} GiB of OpenMetrics text (one 2-hour block at a time), {made}\n")
    rows: list[tuple[str, str, str]] = [("Prometheus alone: the history query (s, warm)", _fmt(history_s), "")]
    if measured is not None and measured.first_screen_s:
        intervals = measured.window_s / args.interval if measured.window_s == measured.window_s else float("nan")
        per_interval = measured.queries / intervals if intervals == intervals and intervals > 0 else float("nan")
        first = _median(measured.first_screen_s)
        every = " ".join(f"{value:.2f}" for value in measured.first_screen_s)
        rows += [
            ("first frame (s, median)", _fmt(_median(measured.first_frame_s)), ""),
            (f"first full screen (s, median of {len(measured.first_screen_s)})", _fmt(first), f"≤ {TARGET_FIRST_SCREEN_S:g} s {_verdict(first <= TARGET_FIRST_SCREEN_S)} ({every})"),
            ("queries until then", str(measured.start_queries), ""),
            (f"steady CPU (% of one core, {_fmt(measured.window_s, 0)} s)", _fmt(measured.cpu_percent), f"≤ {TARGET_CPU_PERCENT:g} % {_verdict(measured.cpu_percent <= TARGET_CPU_PERCENT)}"),
            ("queries per interval", _fmt(per_interval), f"≤ {TARGET_QUERIES_PER_INTERVAL:g} {_verdict(per_interval <= TARGET_QUERIES_PER_INTERVAL)}"),
            ("load at window end (1 min)", _fmt(measured.load), ""),
        ]
    if rounds is not None:
        per_interval_ms = _median(rounds.round_cpu_ms) + _median(rounds.redraw_cpu_ms) + args.interval * _median(rounds.tick_cpu_ms)
        rows += [
            ("in process: history + 1st round, wall (s)", _fmt(rounds.history_s), ""),
            ("history + 1st round, CPU (s)", _fmt(rounds.history_cpu_s), ""),
            ("first redraw, CPU (s)", _fmt(rounds.first_redraw_cpu_s), ""),
            ("round, CPU (ms, median / least)", _both(rounds.round_cpu_ms), ""),
            ("round, wall (ms, median)", _fmt(_median(rounds.round_wall_ms), 0), ""),
            ("redraw after a round, CPU (ms, median / least)", _both(rounds.redraw_cpu_ms), ""),
            ("once-a-second ages, CPU (ms, median / least)", _both(rounds.tick_cpu_ms, 1), ""),
            ("  together, % of one core", _fmt(per_interval_ms / 10 / args.interval), ""),
            ("series in the store / nodes", f"{rounds.series} / {rounds.nodes}", ""),
        ]
    label = max(len(row[0]) for row in rows) + 2
    for name, value, target in rows:
        print(f"{name:{label}}{value:>11}  {target}".rstrip())
    if measured is not None and measured.error:
        print(f"\nleet cluster in tmux failed: {measured.error}")


# -- command line ---------------------------------------------------------------
def _duration(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text and text[-1] in units else float(text)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time leet cluster against a real Prometheus holding a day of a big cluster.")
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--hours", type=float, default=24.0, help="hours of data in the TSDB (default 24)")
    parser.add_argument("--scrape", type=int, default=15, help="seconds between the made-up scrapes (default 15)")
    parser.add_argument("--ahead", type=_duration, default=3600.0, help="how far past now the data reaches (default 1h; the run must end before)")
    parser.add_argument("--interval", type=float, default=15.0, help="leet cluster's --interval (default 15)")
    parser.add_argument("--seconds", type=float, default=90.0, help="steady window (default 90, six intervals)")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds after the first full screen before the window (default 20)")
    parser.add_argument("--size", default="160x48", help="terminal COLSxROWS (default 160x48)")
    parser.add_argument("--starts", type=int, default=3, help="times leet is started and timed to its first full screen (default 3)")
    parser.add_argument("--rounds", type=int, default=12, help="headless rounds timed in process (default 12; 0 leaves them out)")
    parser.add_argument("--data", metavar="DIR", help="keep the TSDB here and reuse it while it fits (default: a temporary folder)")
    parser.add_argument("--no-terminal", dest="terminal", action="store_false", help="leave out the run in tmux")
    parser.add_argument("--serve", action="store_true", help="also run benchmarks/serve.py --no-symon (leet serve's /metrics scrape)")
    args = parser.parse_args(argv)
    try:
        args.width, args.height = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must look like 160x48, got {args.size!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    shape = Shape(nodes=args.nodes, gpus=args.gpus, scrape=args.scrape, hours=args.hours)
    if args.terminal:
        try:
            require_tmux()
        except TmuxMissing as error:
            print(f"benchmarks/cluster.py: {error}", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        folder = Path(args.data) if args.data else workdir
        folder.mkdir(parents=True, exist_ok=True)
        print(f"building the TSDB in {folder} …", flush=True)
        try:
            data = build_tsdb(folder, shape, args.ahead)
        except RuntimeError as error:
            print(f"benchmarks/cluster.py: {error}", file=sys.stderr)
            return 2
        retention = int((time.time() - data.start) / 86400) + 30
        if not data.reused:
            # Prometheus merges fresh 2-hour blocks into longer ones, starting a minute after it starts:
            # let it, once, so that no measurement runs beside the compaction.
            with Prometheus(data.path, workdir, retention) as prometheus:
                print(f"prometheus compacted the blocks in {prometheus.settle(least=COMPACTION_S):.0f} s", flush=True)
        with Prometheus(data.path, workdir, retention) as prometheus:
            print(f"prometheus on {prometheus.url}, idle after {prometheus.settle():.0f} s", flush=True)
            history_s = history_query_s(prometheus.url, args)  # also warms it, as a server in use is
            nodes, up = known_nodes(prometheus.url)
            print(f"leet cluster --once: {nodes} nodes, {up} up", flush=True)
            measured = measure_terminal(prometheus.url, prometheus, nodes, args, workdir) if args.terminal else None
            rounds = measure_rounds(prometheus.url, args) if args.rounds > 0 else None
        print_report(shape, data, args, history_s, measured, rounds)
    if args.serve:
        serve = ROOT / "benchmarks" / "serve.py"
        if serve.exists():
            print("\nleet serve (benchmarks/serve.py --no-symon):", flush=True)
            subprocess.run([sys.executable, str(serve), "--no-symon"], check=False)
        else:
            print("\nbenchmarks/serve.py is not here: leet serve's scrape not measured")
    return 1 if measured is not None and measured.error else 0


if __name__ == "__main__":
    sys.exit(main())
