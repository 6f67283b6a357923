"""The page a Prometheus scrape reads, made from the hub's latest sweep.

``Exposition.update`` takes each ``Sample`` the hub delivers (on the hub's
thread); ``Exposition.render`` answers a scrape. A scrape never samples: it
reads the last sweep. The page is encoded at most once per sweep and
format (Prometheus text, OpenMetrics, each gzipped or not), on the first
scrape that asks for it, and every later scrape of that sweep gets the same
bytes; so a host nobody scrapes encodes nothing, and many scrapers cost one
encoding between them.

Besides one series per W&B key (``names``), the page has:

- ``leet_host_info{hostname, node, version} 1``: who this is;
- ``leet_collector_up{collector}``: 1 while the collector's health is OK, and
  ``leet_collector_present{collector}``: 0 for a backend whose hardware is absent;
- ``leet_collector_duration_seconds{collector}``: its last call's wall time;
- ``leet_sweep_duration_seconds``, ``leet_sweep_timestamp_seconds``: the last sweep;
- ``leet_gpu_process_memory_bytes{gpu, pid, command}``: GPU memory each process
  holds, the largest ``MAX_PROCESS_SERIES`` only;
- ``leet_host_cpu_energy_joules_total{package}``: energy each CPU package used
  since leet started, from RAPL where its counters can be read;
- ``process_*``: this process's own CPU, memory and file descriptors (prometheus_client's).
"""

from __future__ import annotations

import gzip
import os
import threading
from typing import Any, Callable, Iterable, Iterator, Mapping

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.registry import CollectorRegistry

from collectors.base import Health, Sample
from leet.export.names import NODE, PREFIX, MetricName, series

# A box with many small jobs can hold hundreds of GPU contexts; a scrape need not carry them all.
MAX_PROCESS_SERIES = 64
# How much of a process's command line goes into its label: the program and its first argument.
COMMAND_WORDS = 2
COMMAND_CHARS = 64

_PROCESS_MEMORY = f"{PREFIX}gpu_process_memory_bytes"
_CPU_ENERGY = f"{PREFIX}host_cpu_energy_joules"


def short_command(command: str) -> str:
    """A process's command as a label: the program's name and its first argument, cut short.

    Arguments after the first often hold paths, hosts or secrets, which
    have no place on a page other machines read.
    """
    words = command.split()[:COMMAND_WORDS]
    if words:
        words[0] = os.path.basename(words[0]) or words[0]
    return " ".join(words)[:COMMAND_CHARS]


class Exposition:
    """The latest sweep as Prometheus metric families; a prometheus_client collector."""

    def __init__(self, node: str, hostname: str, version: str, process_metrics: bool = True) -> None:
        self.node = node
        self.hostname = hostname
        self.version = version
        self._lock = threading.Lock()
        self._sample: Sample | None = None
        self._sweep_seconds = 0.0
        self._pages: dict[tuple[str, bool], bytes] = {}  # (content type, gzipped) → the page for this sweep
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        if process_metrics:
            from prometheus_client.process_collector import ProcessCollector

            ProcessCollector(registry=self.registry)

    # -- the hub's side -----------------------------------------------------

    def update(self, sample: Sample, sweep_seconds: float = 0.0) -> None:
        """A new sweep: later scrapes read it."""
        with self._lock:
            self._sample = sample
            self._sweep_seconds = sweep_seconds
            self._pages = {}

    # -- the scrape's side --------------------------------------------------

    def render(self, accept: str = "", accept_encoding: str = "") -> tuple[bytes, str, bool]:
        """(page, content type, gzipped) for a scrape's ``Accept`` and ``Accept-Encoding`` headers."""
        encoder, content_type = choose_encoder(accept)
        zipped = gzip_accepted(accept_encoding)
        with self._lock:
            page = self._pages.get((content_type, zipped))
            if page is None:
                page = self._encode(encoder, content_type, zipped)
        return page, content_type, zipped

    def _encode(self, encoder: Callable[[Any], bytes], content_type: str, zipped: bool) -> bytes:
        plain = self._pages.get((content_type, False))
        if plain is None:
            plain = self._pages[(content_type, False)] = encoder(self.registry)
        if not zipped:
            return plain
        page = self._pages[(content_type, True)] = gzip.compress(plain, compresslevel=6)
        return page

    def collect(self) -> Iterator[Metric]:
        """Every family of the last sweep (called by the encoder, under the lock)."""
        yield self._host_info()
        sample = self._sample
        if sample is None:
            return
        yield from self._metric_families(sample.values)
        yield from self._collector_families(sample)
        processes = sample.extras.get("gpu_processes")
        if processes:
            yield self._process_memory(processes)
        packages = sample.extras.get("energy.rapl")
        if packages:
            yield self._cpu_energy(packages)

    def _host_info(self) -> Metric:
        info = InfoMetricFamily(f"{PREFIX}host", "This leet: the host it runs on, the node name its series carry, and its version")
        info.add_metric([], {"hostname": self.hostname, "node": self.node, "version": self.version})
        return info

    def _metric_families(self, values: Mapping[str, float]) -> Iterable[Metric]:
        families: dict[str, Metric] = {}
        seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        for key, value in values.items():
            found = series(key, self.node)
            metric = found.metric
            # gpu.0.temp from NVML and gpu.0.temp/l:<this node> from DCGM would be one series twice,
            # which Prometheus refuses whole: the first collector's (NVML's) is kept.
            if (metric.name, found.labels) in seen:
                continue
            seen.add((metric.name, found.labels))
            family = families.get(metric.name)
            if family is None:
                family = families[metric.name] = _family(metric)
            family.add_sample(metric.sample_name, dict(found.labels), value * found.scale)
        return families.values()

    def _collector_families(self, sample: Sample) -> Iterable[Metric]:
        node = self.node
        up = GaugeMetricFamily(f"{PREFIX}collector_up", "1 while the collector answers (health OK), 0 while it is absent, failing or hung", labels=(NODE, "collector"))
        present = GaugeMetricFamily(
            f"{PREFIX}collector_present", "1 when the collector's hardware or tool is here, 0 when it is absent (so up == 0 is only news where present == 1)", labels=(NODE, "collector")
        )
        took = GaugeMetricFamily(
            f"{PREFIX}collector_duration_seconds", "Wall time of the collector's last completed call, in seconds", labels=(NODE, "collector"), unit="seconds"
        )
        for status in sample.status:
            up.add_metric((node, status.name), 1.0 if status.health is Health.OK else 0.0)
            present.add_metric((node, status.name), 0.0 if status.health is Health.ABSENT else 1.0)
            took.add_metric((node, status.name), status.last_ms / 1000.0)
        sweep = GaugeMetricFamily(
            f"{PREFIX}sweep_duration_seconds", "Wall time of the last sweep of every collector, in seconds", labels=(NODE,), unit="seconds"
        )
        sweep.add_metric((node,), self._sweep_seconds)
        when = GaugeMetricFamily(
            f"{PREFIX}sweep_timestamp_seconds", "When the last sweep started, in Unix seconds; a scrape reads that sweep", labels=(NODE,), unit="seconds"
        )
        when.add_metric((node,), sample.timestamp)
        return up, present, took, sweep, when

    def _process_memory(self, processes: Iterable[Any]) -> Metric:
        family = GaugeMetricFamily(
            _PROCESS_MEMORY,
            f"GPU memory each process holds, in bytes (the {MAX_PROCESS_SERIES} largest)",
            labels=(NODE, "gpu", "pid", "command"),
            unit="bytes",
        )
        known = [row for row in processes if getattr(row, "used_memory", None) is not None]
        known.sort(key=lambda row: row.used_memory, reverse=True)
        for row in known[:MAX_PROCESS_SERIES]:
            family.add_metric((self.node, str(row.gpu), str(row.pid), short_command(row.command)), float(row.used_memory))
        return family

    def _cpu_energy(self, packages: Iterable[Any]) -> Metric:
        family = CounterMetricFamily(
            _CPU_ENERGY, "Energy the CPU package used since leet started (RAPL), in joules", labels=(NODE, "package"), unit="joules"
        )
        for package in packages:
            family.add_metric((self.node, package.label or str(package.index)), package.joules)
        return family


def _family(metric: MetricName) -> Metric:
    return Metric(metric.name, metric.help, metric.kind, metric.unit)


__all__ = ["COMMAND_CHARS", "MAX_PROCESS_SERIES", "Exposition", "short_command"]
