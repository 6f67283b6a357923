"""A made-up cluster as ``leet cluster`` sees it through Prometheus: deterministic, on a fake clock, no thread.

``DemoClusterSource`` has the surface of ``leet.sources.cluster.ClusterSource``
(``store``, ``nodes()``, ``status()``, ``labels()``, ``interval``, ``range_s``,
``set_width``, ``start``, ``close``, change notices) and is fed by the
caller: ``load_history`` fills the store the way the source's first range
query does, ``feed`` adds one scrape interval at a time, and ``set_down``,
``add_node``, ``lose`` and ``reach`` change the cluster under the screen.

``make_cluster_demo(nodes=64, gpus=8)`` builds the app the tests, snapshots
and screenshots use: nodes busy to a different degree, one idle, one whose
GPUs run hot, and some nodes down (one for three minutes, one for forty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from collectors.fake import DEFAULT_START, FakeClock
from leet.config import Config
from leet.model.cluster import CLUSTER_RUN, DCGM_EXPORTER, NODE_EXPORTER, NodeState, PrometheusStatus
from leet.model.keys import KeyLabel, natural_key
from leet.model.store import Store
from leet.sources.base import Listeners
from leet.testing.demo import DEMO_THEME
from leet.ui.app import LeetApp

# Credentials in the URL, as people write them: the screen must never show them.
DEMO_URL = "http://monitor:s3cret@prometheus.internal:9090"
DEMO_QUERY_MS = 38.0
# GPU utilisation per node, by its index modulo 8: busy, some less so.
UTIL_LEVELS = (93.0, 88.0, 97.0, 71.0, 91.0, 84.0, 96.0, 78.0)
IDLE_UTIL = 8.0  # the one idle node's GPUs
HOT_EXTRA_C = 30.0  # the hot node's GPUs run this much warmer


def node_name(index: int, count: int) -> str:
    """``node01``…``node64`` (at least two digits, as many as the count needs)."""
    return f"node{index + 1:0{max(2, len(str(count)))}d}"


def node_values(index: int, gpus: int, t: float, hot: bool = False, idle: bool = False) -> dict[str, float]:
    """One scrape of node ``index`` at unix time ``t``: W&B system-metric keys to values."""
    base = IDLE_UTIL if idle else UTIL_LEVELS[index % len(UTIL_LEVELS)]
    values: dict[str, float] = {}
    for gpu in range(gpus):
        phase = 0.7 * index + 1.3 * gpu
        util = min(100.0, max(0.0, base + 5.0 * math.sin(t / 240.0 + phase) + 2.0 * math.sin(t / 37.0 + 2.0 * phase)))
        values[f"gpu.{gpu}.gpu"] = util
        values[f"gpu.{gpu}.temp"] = 38.0 + 0.3 * util + 2.0 * math.sin(t / 300.0 + phase) + (HOT_EXTRA_C if hot else 0.0)
        values[f"gpu.{gpu}.memoryAllocated"] = min(100.0, 55.0 + 0.3 * base + 4.0 * math.sin(t / 500.0 + phase))
        values[f"gpu.{gpu}.powerWatts"] = 90.0 + 5.8 * util + 25.0 * math.sin(t / 90.0 + phase) + (60.0 if hot else 0.0)
    values["cpu.percent"] = 20.0 + 0.5 * base + 8.0 * math.sin(t / 200.0 + index)
    values["memory_percent"] = 35.0 + 7.0 * (index % 6) + 3.0 * math.sin(t / 600.0 + index)
    values["disk./.usagePercent"] = 40.0 + 3.0 * (index % 11)
    values["network.recvBps"] = 2e8 * base / 100.0 * (1.0 + 0.3 * math.sin(t / 120.0 + index))
    values["network.sentBps"] = 1.5e8 * base / 100.0 * (1.0 + 0.3 * math.sin(t / 150.0 + index))
    return values


@dataclass
class DemoNode:
    name: str
    index: int
    gpus: int
    hot: bool = False
    idle: bool = False
    up: bool = True
    since: float | None = None
    last_scrape: float | None = None
    latest: dict[str, float] = field(default_factory=dict)

    def state(self) -> NodeState:
        utils = [self.latest[f"gpu.{g}.gpu"] for g in range(self.gpus) if f"gpu.{g}.gpu" in self.latest]
        temps = [(self.latest[f"gpu.{g}.temp"], g) for g in range(self.gpus) if f"gpu.{g}.temp" in self.latest]
        hottest = max(temps) if temps else None
        return NodeState(
            node=self.name,
            up=self.up,
            since=self.since,
            last_scrape=self.last_scrape,
            gpus=self.gpus,
            gpu_util_mean=sum(utils) / len(utils) if utils else None,
            memory_percent=self.latest.get("memory_percent"),
            hottest_gpu_temp=hottest[0] if hottest else None,
            hottest_gpu=str(hottest[1]) if hottest else None,
            targets=(NODE_EXPORTER, DCGM_EXPORTER) if self.gpus else (NODE_EXPORTER,),
        )


class DemoClusterSource(Listeners):
    """A cluster of made-up nodes behind a made-up Prometheus, fed by the caller on a fake clock."""

    activity = "asking Prometheus"

    def __init__(self, store: Store, clock: FakeClock, *, url: str = DEMO_URL, interval: float = 15.0, range_s: float = 3600.0) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.url = url
        self.interval = interval
        self.range_s = range_s
        self.width = 0  # what the screen last asked for: the widest chart, in cells
        self._nodes: dict[str, DemoNode] = {}
        self._reachable: bool | None = None
        self._message = ""
        self._last_ok: float | None = None
        self._retry_at: float | None = None
        self._queries = 0

    # -- the surface the screen reads -------------------------------------------------------
    def nodes(self) -> tuple[NodeState, ...]:
        return tuple(self._nodes[name].state() for name in self.labels())

    def labels(self) -> tuple[str, ...]:
        return tuple(sorted(self._nodes, key=natural_key))

    def status(self) -> PrometheusStatus:
        retry = max(0.0, self._retry_at - self.clock()) if self._retry_at is not None else None
        return PrometheusStatus(
            url=self.url,
            reachable=self._reachable,
            message=self._message,
            last_query_ms=DEMO_QUERY_MS if self._reachable else None,
            last_ok=self._last_ok,
            queries=self._queries,
            retry_in=retry,
        )

    def set_width(self, cells: int) -> None:
        self.width = cells

    def start(self) -> None:
        """Nothing runs: the caller feeds."""

    def stop(self) -> None:
        """Nothing to stop."""

    # -- changing the cluster -------------------------------------------------------------------
    def add_node(self, name: str, gpus: int = 8, *, hot: bool = False, idle: bool = False, index: int | None = None) -> DemoNode:
        """A node Prometheus starts to know (it has no series until the next ``feed``)."""
        node = DemoNode(name, len(self._nodes) if index is None else index, gpus, hot, idle, since=self.clock())
        self._nodes[name] = node
        self._notify()
        return node

    def set_down(self, name: str, down: bool = True) -> None:
        """``name`` stops answering (``down``) or answers again, from now."""
        node = self._nodes[name]
        if node.up == (not down):
            return
        node.up = not down
        node.since = self.clock()
        self._notify()

    def lose(self, message: str = "connection refused", retry_in: float = 30.0) -> None:
        """Prometheus stops answering: the header says why and counts down to the next try."""
        self._reachable = False
        self._message = message
        self._retry_at = self.clock() + retry_in
        self._notify()

    def reach(self) -> None:
        """Prometheus answers again."""
        self._answered(self.clock())
        self._notify()

    def _answered(self, t: float) -> None:
        self._reachable = True
        self._message = ""
        self._retry_at = None
        self._last_ok = t
        self._queries += 1

    def load_history(self, samples: int, down_for: Mapping[str, float] | None = None) -> None:
        """``samples`` scrapes ending now, in one batch as a range query brings them.

        ``down_for`` names nodes that went down that many seconds ago: their
        series end there and they are down now.
        """
        end = self.clock()
        down_for = down_for or {}
        batch: dict[KeyLabel, tuple[list[float], list[float]]] = {}
        first = end - (samples - 1) * self.interval
        for node in self._nodes.values():
            went_down = end - down_for[node.name] if node.name in down_for else math.inf
            node.since = went_down if node.name in down_for else first
            node.up = node.name not in down_for
            for k in range(samples):
                t = first + k * self.interval
                if t >= went_down:
                    break
                node.latest = node_values(node.index, node.gpus, t, node.hot, node.idle)
                node.last_scrape = t
                for key, value in node.latest.items():
                    times, values = batch.setdefault((key, node.name), ([], []))
                    times.append(t)
                    values.append(value)
        self.store.extend_many(CLUSTER_RUN, batch)
        self._answered(end)
        self._notify()

    def feed(self, count: int = 1) -> None:
        """``count`` more scrapes, one interval apart: every node that is up reports."""
        for _ in range(count):
            t = self.clock.advance(self.interval)
            for node in self._nodes.values():
                if not node.up:
                    continue
                node.latest = node_values(node.index, node.gpus, t, node.hot, node.idle)
                node.last_scrape = t
                self.store.append_many(CLUSTER_RUN, t, {(key, node.name): value for key, value in node.latest.items()})
            if self._reachable is not False:
                self._answered(t)
        self._notify()


def demo_down_nodes(count: int) -> dict[int, float]:
    """Which nodes of a demo of ``count`` are down, by index, and for how many seconds."""
    if count >= 8:
        return {count * 5 // 8: 180.0, count * 7 // 8: 2400.0}
    if count >= 3:
        return {count - 1: 180.0}
    return {}


@dataclass
class ClusterDemo:
    """The cluster screen on a made-up cluster, and its source and clock (to change it under the screen)."""

    app: LeetApp
    source: DemoClusterSource
    clock: FakeClock

    def node(self, index: int) -> str:
        return self.source.labels()[index]


def make_cluster_demo(
    nodes: int = 64,
    gpus: int = 8,
    *,
    interval: float = 15.0,
    range_s: float = 3600.0,
    down: Mapping[int, float] | None = None,
    hot: int | None = None,
    idle: int | None = None,
    gpu_counts: Sequence[int] | None = None,
    labels: str | None = None,
    grid: tuple[int, int] = (3, 3),
    heat_metric: str = "util",
    theme: str = DEMO_THEME,
    ascii: bool = False,
    color: bool = True,
    start: float = DEFAULT_START,
    sidebar: bool = True,
    heatmap: bool = True,
) -> ClusterDemo:
    """A cluster of ``nodes`` nodes with ``gpus`` GPUs each (``gpu_counts`` per node, if given), ``range_s`` of history ending at ``start``.

    ``down`` maps node indices to how long they have been down (default:
    ``demo_down_nodes``); ``hot`` is the index of the node whose GPUs run hot
    (default: a third of the way in), ``idle`` of the one whose GPUs idle
    (three quarters in); ``labels`` is the ``--label`` filter.
    """
    from leet.ui.screens.cluster import ClusterScreen

    clock = FakeClock(start)
    source = DemoClusterSource(Store(), clock, interval=interval, range_s=range_s)
    hot = nodes // 3 if hot is None else hot
    idle = nodes * 3 // 4 if idle is None else idle
    for index in range(nodes):
        count = gpu_counts[index] if gpu_counts is not None and index < len(gpu_counts) else gpus
        source.add_node(node_name(index, nodes), count, hot=index == hot, idle=index == idle and index != hot, index=index)
    down = demo_down_nodes(nodes) if down is None else down
    samples = max(1, int(range_s // interval))
    source.load_history(samples, {node_name(index, nodes): seconds for index, seconds in down.items() if index < nodes})
    config = Config(theme=theme, ascii=ascii, color=color)
    app = LeetApp(
        source,
        config,
        clock=clock,
        live=False,
        screen=lambda: ClusterScreen(source, clock=clock, labels=labels, grid=grid, heat_metric=heat_metric, sidebar=sidebar, heatmap=heatmap),
    )
    return ClusterDemo(app, source, clock)
