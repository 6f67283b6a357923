"""What one OpenMetrics sweep costs: parse + map of a node_exporter page, cold and warm.

    python3 benchmarks/openmetrics.py [--sweeps 100] [--no-live]

Pages: the node_exporter fixture (a subset of node_exporter's own test
page), that page grown to about 1,500 samples (160 CPUs), and, when
``prometheus-node-exporter`` is installed, live pages from a real one on a
free loopback port, with its default collectors and with extra ones (about
2,500 samples). "cold" is the first page a collector sees (every series is
new, so every label set is parsed); "warm" is every later page, which is
what a running monitor pays each sweep. The last column times
``prometheus_client``'s own parser alone on the same page, for scale. The
HTTP row is a whole ``sample()``: fetch over loopback, parse and map.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from collectors.openmetrics import OpenMetricsCollector, PageMapper  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "hardware" / "node_exporter" / "node_exporter_metrics_SUBSET_of_e2e-output.prom"
GROWN_CPUS = 160
TARGET_MS = 20.0
# Loopback servers only: a proxy from the environment must not get in the way.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
EXTRA_COLLECTORS = (
    "--collector.interrupts",
    "--collector.processes",
    "--collector.tcpstat",
    "--collector.cpu.info",
    "--collector.meminfo_numa",
    "--collector.slabinfo",
    "--collector.zoneinfo",
    "--collector.buddyinfo",
    "--collector.ksmd",
    "--collector.mountstats",
    "--collector.netstat.fields=.*",
    "--collector.vmstat.fields=.*",
)


@dataclass
class Row:
    page: str
    samples: int
    keys: int
    cold_ms: float | None
    warm_ms: float
    warm_p95_ms: float
    baseline_ms: float | None


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def sample_count(text: str) -> int:
    return sum(len(family.samples) for family in text_string_to_metric_families(text))


def grown_page(text: str, cpus: int) -> str:
    """The fixture with CPU 0's lines repeated for ``cpus`` CPUs instead of its eight."""
    lines = []
    for line in text.splitlines():
        if line.startswith('node_cpu_seconds_total{cpu="0"'):
            lines.extend(line.replace('cpu="0"', f'cpu="{cpu}"') for cpu in range(cpus))
        elif not line.startswith("node_cpu_seconds_total{"):
            lines.append(line)
    return "\n".join(lines) + "\n"


def measure_page(label: str, text: str, sweeps: int) -> Row:
    mapper = PageMapper("node")
    cold = timed(lambda: mapper.map(text))
    warm = [timed(lambda: mapper.map(text)) for _ in range(sweeps)]
    baseline = statistics.median(timed(lambda: sample_count(text)) for _ in range(max(3, sweeps // 10)))
    return Row(label, sample_count(text), len(mapper.map(text)), cold, statistics.median(warm), percentile(warm, 0.95), baseline)


def measure_http(label: str, url: str, sweeps: int) -> Row:
    collector = OpenMetricsCollector("node", url, timeout=5)
    keys = len(collector.sample())
    warm = [timed(collector.sample) for _ in range(sweeps)]
    with DIRECT.open(url, timeout=5) as response:
        samples = sample_count(response.read().decode())
    return Row(label, samples, keys, None, statistics.median(warm), percentile(warm, 0.95), None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NodeExporter:
    """A prometheus-node-exporter on a free loopback port, stopped on exit."""

    def __init__(self, binary: str, *flags: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self._command = [binary, f"--web.listen-address=127.0.0.1:{self.port}", *flags]
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "NodeExporter":
        self._process = subprocess.Popen(self._command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                with DIRECT.open(self.url, timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"node_exporter did not answer on {self.url}")

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(5)

    def page(self) -> str:
        with DIRECT.open(self.url, timeout=5) as response:
            return response.read().decode()


def live_rows(sweeps: int) -> Iterator[Row]:
    binary = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if binary is None:
        print("prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter): no live rows")
        return
    with NodeExporter(binary) as exporter:
        yield measure_page("live node_exporter, default collectors", exporter.page(), sweeps)
        yield measure_http("  same, whole sample(): HTTP + parse + map", exporter.url, sweeps)
    with NodeExporter(binary, *EXTRA_COLLECTORS) as exporter:
        yield measure_page("live node_exporter, extra collectors", exporter.page(), sweeps)


def show(rows: list[Row]) -> None:
    def ms(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    header = f"{'page':<44} {'samples':>8} {'keys':>6} {'cold ms':>8} {'warm ms':>8} {'p95 ms':>8} {'prom_client ms':>15}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.page:<44} {row.samples:>8} {row.keys:>6} {ms(row.cold_ms):>8} {ms(row.warm_ms):>8} {ms(row.warm_p95_ms):>8} {ms(row.baseline_ms):>15}"
        )
    worst = max(row.warm_p95_ms for row in rows)
    verdict = "met" if worst <= TARGET_MS else "NOT met"
    print(f"\ntarget: a warm sweep within {TARGET_MS:g} ms: {verdict} (worst p95 {worst:.2f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=100, help="warm sweeps per row (default 100)")
    parser.add_argument("--no-live", action="store_true", help="fixture pages only, no node_exporter")
    args = parser.parse_args()
    fixture = FIXTURE.read_text()
    rows = [
        measure_page("node_exporter fixture (subset)", fixture, args.sweeps),
        measure_page(f"fixture grown to {GROWN_CPUS} CPUs", grown_page(fixture, GROWN_CPUS), args.sweeps),
    ]
    if not args.no_live:
        rows.extend(live_rows(args.sweeps))
    show(rows)


if __name__ == "__main__":
    main()
