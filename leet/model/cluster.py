"""What `leet cluster` knows of each node a Prometheus watches, apart from the series.

The series themselves go to the `Store` like a shared run's system metrics:
run ``CLUSTER_RUN``, W&B key, and the node as the label (``gpu.0.gpu/l:node7``),
so the label picker, the node filter and spread mode work on them unchanged.
This module holds the rest: per-node state for the node table, and the state
of the connection to Prometheus for the header.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CLUSTER_RUN = "cluster"

# Kinds of scrape target a node's series came from.
LEET_SERVE = "leet"
NODE_EXPORTER = "node"
DCGM_EXPORTER = "dcgm"


@dataclass(frozen=True)
class NodeState:
    """One row of the node table.

    ``up`` comes from Prometheus's ``up`` series (every target of the node up);
    ``since`` is the unix time the node entered its present up/down state as
    far as leet has seen (the start of the range it loaded, if it never
    changed). ``last_scrape`` is the unix time of the newest sample from the
    node. Figures a node's targets do not give are None.
    """

    node: str
    up: bool
    since: float | None = None
    last_scrape: float | None = None
    gpus: int = 0
    gpu_util_mean: float | None = None  # percent, mean over the node's GPUs
    memory_percent: float | None = None  # host memory in use, percent
    hottest_gpu_temp: float | None = None  # degrees C
    hottest_gpu: str | None = None  # its index, as in gpu.N
    targets: tuple[str, ...] = ()  # LEET_SERVE, NODE_EXPORTER, DCGM_EXPORTER


@dataclass(frozen=True)
class PrometheusStatus:
    """The connection to Prometheus, as the header and status line show it."""

    url: str
    reachable: bool | None = None  # None: no answer yet
    message: str = ""  # why not reachable, or a warning Prometheus sent back
    last_query_ms: float | None = None
    last_ok: float | None = None  # unix time of the last good answer
    queries: int = 0  # queries sent since start
    retry_in: float | None = None  # seconds to the next try after a failure
    notes: tuple[str, ...] = field(default=())
