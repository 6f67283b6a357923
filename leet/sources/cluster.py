"""``leet cluster``'s source: every node a Prometheus knows, as a shared run's labelled system metrics.

A worker thread (``leet-cluster``) asks Prometheus, through
``prometheus_api``, for what ``cluster_queries`` says:

* every ``interval`` seconds: ONE instant query holding every expression,
  ``up`` included, whatever the number of nodes;
* once, right after the first live answer has been told to the screen: the
  last ``range_s`` seconds as a few range queries (``QueryPlan.ranged_batches``),
  their step from the chart width (``set_width``, before ``start``). The
  history goes into the store before the live points, so every series stays
  in time order, and the node book is made again from the range and the
  newest live answer, so "up since" reaches back into the range;
* after Prometheus was away, the gap, read as one range query after the live one.

``--once`` (``last_values``) asks the same live batch, then, only when
targets are down, one look back over the range narrowed to those targets'
instances: their last values and since when they are down.

Series go to the store under run ``CLUSTER_RUN``, W&B key, node as the
label (``SeriesKey("cluster", "gpu.0.gpu", "node7")``). When two targets of
one node give the same key (leet serve's and node_exporter's
``memory_percent`` on one host), one is kept: leet serve's, else
DCGM-exporter's, else node_exporter's.

``NodeBook`` keeps the rest: per node, up (every target of the node up)
and since when, the time of its newest good scrape, and its latest values,
for ``NodeState``. A node whose targets stop answering stays, down; one
that appears joins. Prometheus failing (unreachable, slow, an error answer,
a proxy's HTML) is a one-line ``PrometheusStatus.message`` and a retry after
1, 2, 4… up to 30 seconds; the store and the node states keep what they had,
and the gap is read back as a range when Prometheus answers again.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping

from leet.common.gc_pause import collection_paused
from leet.common.retry import backoff
from leet.model.cluster import CLUSTER_RUN, DCGM_EXPORTER, LEET_SERVE, NODE_EXPORTER, NodeState, PrometheusStatus
from leet.model.keys import KeyLabel, natural_key
from leet.model.store import Store
from leet.sources.base import ThreadedSource
from leet.sources.cluster_queries import (
    DOWN_SINCE,
    MARKER,
    SCRAPED,
    UP,
    VALUE,
    Naming,
    QueryPlan,
    Reading,
    Target,
    decode,
    history_step,
    marker_window,
    rate_window,
)
from leet.sources.prometheus_api import PrometheusClient, PrometheusError

DEFAULT_INTERVAL = 15.0
DEFAULT_RANGE = 3600.0
DEFAULT_WIDTH = 120  # chart cells, until set_width says otherwise
HISTORY_TIMEOUT_FACTOR = 3.0  # a range query may take this many times the instant timeout
# A range query that fails so is given up (live queries go on); others are retried.
HISTORY_SKIPPED = frozenset({"refused", "too_big", "timeout"})
# Which target's value wins when two of one node give a key.
KIND_RANK = {LEET_SERVE: 0, DCGM_EXPORTER: 1, NODE_EXPORTER: 2}
KIND_ORDER = (LEET_SERVE, NODE_EXPORTER, DCGM_EXPORTER)

Batch = dict[KeyLabel, tuple[list[float], list[float]]]  # (W&B key, node) -> (times, values)


@dataclass
class _NodeUp:
    up: bool | None = None
    since: float | None = None


class NodeBook:
    """Targets, nodes and their latest values, fed decoded answers; no I/O, no threads."""

    def __init__(self, naming: Naming) -> None:
        self.naming = naming
        self._up: dict[Target, bool] = {}
        self._scraped: dict[Target, float] = {}  # the target's newest good scrape
        self._values: dict[Target, dict[str, dict[str, float]]] = {}  # target -> node -> key -> value
        self._nodes: dict[str, _NodeUp] = {}

    def apply(self, readings: list[Reading], now: float | None = None) -> Batch:
        """One answer's readings; returns what goes to the store, ``{(key, node): (times, values)}``.

        ``now`` marks an instant answer evaluated then: a known target that
        has no ``up`` in it is gone from Prometheus, so down. A range answer
        (``now`` None) replays every ``up`` point in time order.
        """
        self.naming.learn(readings)
        self.naming.adopt({reading.target: reading.values[-1] >= 1 for reading in readings if reading.role == UP})
        batch = self._values_of(reading for reading in readings if reading.role == VALUE)
        for reading in readings:
            if reading.role == SCRAPED and reading.values:
                self._scraped[reading.target] = max(self._scraped.get(reading.target, -math.inf), reading.values[-1])
        # A target first seen down in an instant answer went down when its own up series says, where the answer says it.
        since = {r.target: r.values[-1] for r in readings if r.role == DOWN_SINCE and r.target not in self._up}
        events = [
            (since.get(r.target, t) if v < 1 else t, r.target, v >= 1)
            for r in readings if r.role == UP and self.naming.known(r.target) for t, v in zip(r.times, r.values)
        ]
        if now is not None:
            answered = {target for _, target, _ in events}
            events += [(now, target, False) for target in self.naming.targets() if target not in answered]
        self._replay(events)
        return batch

    def _values_of(self, readings: Iterable[Reading]) -> Batch:
        chosen: dict[KeyLabel, tuple[int, Reading]] = {}
        fresh: dict[Target, dict[str, dict[str, float]]] = {}
        for reading in readings:
            node = self.naming.node_of(reading)
            fresh.setdefault(reading.target, {}).setdefault(node, {})[reading.key] = reading.values[-1]
            name = (reading.key, node or None)  # an empty node name is no label, as split_label reads one
            rank = KIND_RANK.get(reading.kind, len(KIND_RANK))
            if name not in chosen or rank < chosen[name][0]:
                chosen[name] = (rank, reading)
        self._values.update(fresh)  # a target that answered: its values now; one that did not keeps its last
        return {name: (list(reading.times), list(reading.values)) for name, (_, reading) in chosen.items()}

    def _members(self) -> dict[str, list[Target]]:
        members: dict[str, list[Target]] = {}
        for target in self.naming.targets():
            nodes = self._values.get(target) or {self.naming.node_of_target(target): {}}
            for node in nodes:
                members.setdefault(node, []).append(target)
        return members

    def _replay(self, events: list[tuple[float, Target, bool]]) -> None:
        members = self._members()
        of_target: dict[Target, list[str]] = {}
        for node, targets in members.items():
            for target in targets:
                of_target.setdefault(target, []).append(node)
        events.sort(key=lambda event: event[0])
        i = 0
        while i < len(events):
            t = events[i][0]
            touched: set[str] = set()
            while i < len(events) and events[i][0] == t:
                _, target, up = events[i]
                self._up[target] = up
                touched.update(of_target.get(target, ()))
                i += 1
            for node in touched:
                known = [self._up[target] for target in members[node] if target in self._up]
                state = self._nodes.setdefault(node, _NodeUp())
                up = all(known)
                if state.up is not up:
                    state.up, state.since = up, t

    # -- what the screen reads ----------------------------------------------------------

    def values(self, node: str, targets: Iterable[Target] | None = None) -> dict[str, float]:
        """The node's latest value of every key, the preferred kind's where two targets give one."""
        chosen = self._members().get(node, []) if targets is None else list(targets)
        merged: dict[str, float] = {}
        for target in sorted(chosen, key=self._rank, reverse=True):  # the preferred last: its values win
            merged.update(self._values.get(target, {}).get(node, {}))
        return merged

    def _rank(self, target: Target) -> int:
        return min((KIND_RANK.get(kind, len(KIND_RANK)) for kind in self.naming.kinds.get(target, ())), default=len(KIND_RANK))

    def names(self) -> tuple[str, ...]:
        """Every node's name, in the order ``states`` gives the nodes."""
        return tuple(sorted(self._members(), key=natural_key))

    def states(self) -> tuple[NodeState, ...]:
        found = []
        for node, targets in self._members().items():
            state = self._nodes.get(node, _NodeUp())
            scraped = [self._scraped[target] for target in targets if target in self._scraped]
            kinds = {kind for target in targets for kind in self.naming.kinds.get(target, ())}
            found.append(
                figures(
                    NodeState(
                        node=node,
                        up=bool(state.up),
                        since=state.since,
                        last_scrape=max(scraped) if scraped else None,
                        targets=tuple(kind for kind in KIND_ORDER if kind in kinds),
                    ),
                    self.values(node, targets),
                )
            )
        return tuple(sorted(found, key=lambda state: natural_key(state.node)))


def figures(state: NodeState, values: Mapping[str, float]) -> NodeState:
    """The node table's figures from a node's latest values: GPUs, their mean utilisation, the hottest one, memory."""
    gpus: set[str] = set()
    utils: list[float] = []
    hottest: tuple[float, str] | None = None
    for key, value in values.items():
        parts = key.split(".")
        if len(parts) != 3 or parts[0] != "gpu" or not parts[1].isdigit():
            continue
        gpus.add(parts[1])
        if not math.isfinite(value):
            continue
        if parts[2] == "gpu":
            utils.append(value)
        elif parts[2] == "temp" and (hottest is None or value > hottest[0]):
            hottest = (value, parts[1])
    memory = values.get("memory_percent")
    return replace(
        state,
        gpus=len(gpus),
        gpu_util_mean=sum(utils) / len(utils) if utils else None,
        memory_percent=memory if memory is not None and math.isfinite(memory) else None,
        hottest_gpu_temp=hottest[0] if hottest else None,
        hottest_gpu=hottest[1] if hottest else None,
    )


class ClusterSource(ThreadedSource):
    """Nodes and series from one Prometheus, read on the ``leet-cluster`` thread.

    ``step()`` is one round on the caller's thread (tests, ``--once``):
    one instant query, then the history if it is due; it returns the
    seconds to wait before the next round. ``range_s`` is how much history
    is loaded (none with ``load_history=False``) and how far back a target's
    kind and host name are looked for; with ``last_values`` (``--once``) also
    how far back a target that is down is looked for its last values.
    """

    activity = "watching Prometheus"
    thread_name = "leet-cluster"

    def __init__(
        self,
        store: Store,
        client: PrometheusClient,
        *,
        plan: QueryPlan | None = None,
        interval: float = DEFAULT_INTERVAL,
        range_s: float = DEFAULT_RANGE,
        load_history: bool = True,
        last_values: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.store = store
        self.run = CLUSTER_RUN
        self.client = client
        self.plan = plan or QueryPlan()
        self.interval = float(interval)
        self.range_s = float(range_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._book = NodeBook(Naming(self.plan.node_label))
        self._width = DEFAULT_WIDTH
        self._history_due = load_history and range_s > 0
        self._last_values = last_values  # a down target keeps its last values (one answer, no history)
        self._gap_from: float | None = None  # data time before Prometheus went away
        self._live_since: float | None = None  # the first live answer's time, while the history is still to come
        self._held: tuple[float, list[Reading]] | None = None  # the newest live answer then, replayed after the history
        self._last_data: float | None = None
        self._query_failures = 0
        self._notes: tuple[str, ...] = ()
        self._status = PrometheusStatus(url=client.display_url)

    # -- what the screen reads ------------------------------------------------------------

    def set_width(self, cells: int) -> None:
        """Chart width in cells: the history's step is chosen for it (used when the history loads)."""
        self._width = max(1, int(cells))

    def nodes(self) -> tuple[NodeState, ...]:
        with self._lock:
            return self._book.states()

    def labels(self) -> tuple[str, ...]:
        with self._lock:
            return self._book.names()  # the names alone: no figures worked out for every node again

    def values(self, node: str) -> dict[str, float]:
        """The latest value of each key of ``node`` (``--once``)."""
        with self._lock:
            return self._book.values(node)

    def status(self) -> PrometheusStatus:
        with self._lock:
            return self._status

    # -- the rounds ---------------------------------------------------------------------

    def step(self) -> float:
        started = time.monotonic()
        # From the answer's JSON to the store, a round makes and frees tens of thousands of containers:
        # paused throughout, the collector runs once after them instead of scanning the app dozens of times.
        with collection_paused():
            return self._round(started)

    def _round(self, started: float) -> float:
        try:
            answer = self.client.query(self.plan.instant(self.interval, self.range_s))
            readings = decode(answer.result, self.plan.parts(rate_window(self.interval), marker_window(self.range_s))).readings
            if self._last_values:
                readings += self._last_values_of_down(readings)
        except PrometheusError as error:
            return self._failed(error)
        now = max((t for reading in readings for t in reading.times), default=self._clock())
        with self._lock:
            batch = self._book.apply(readings, now)
        # One instant: one point a series, the store's cheap path.
        self.store.append_many(self.run, now, {name: values[-1] for name, (_, values) in batch.items()})
        self._last_data = now
        self._succeeded(answer.elapsed_ms, answer.warnings)
        if self._history_due:
            self._live_since = now if self._live_since is None else self._live_since
            self._held = (now, readings)
            self._notify()  # live values first: the history may take long to come
            self._load_history(now)
            self._succeeded(answer.elapsed_ms, answer.warnings)  # its query counted, a history given up noted
        elif self._gap_from is not None:
            self._notify()
            self._read_gap(self._gap_from, now)
        return max(0.0, self.interval - (time.monotonic() - started))

    def _last_values_of_down(self, readings: list[Reading]) -> list[Reading]:
        """A second look, over the range, at the targets the live answer has down: their last values and since when."""
        seen = {reading.target for reading in readings if reading.role in (UP, MARKER)}
        up = {reading.target for reading in readings if reading.role == UP and reading.values[-1] >= 1}
        down = sorted(seen - up)
        if not down:
            return []
        plan = self.plan.only_instances(instance for _, instance in down)
        try:
            answer = self.client.query(plan.latest(self.interval, self.range_s))
        except PrometheusError as error:
            self._notes += (f"the last values of nodes that are down not loaded: {error}",)
            return []
        return decode(answer.result, plan.latest_parts(self.interval, self.range_s)).readings

    def _load_history(self, end: float) -> None:
        """The range up to the live answer at ``end``, put before the live points; one that fails so is asked after the next live query."""
        try:
            readings = self._ask_range(end - self.range_s, end, apart=True)
        except PrometheusError as error:
            if error.kind in HISTORY_SKIPPED:  # the live query went through: this range is too big or too slow for the server
                self._history_due, self._live_since, self._held = False, None, None
                self._notes += (f"history not loaded: {error}",)
            return
        book = NodeBook(Naming(self.plan.node_label))
        batch = book.apply(readings)
        if self._held is not None:
            book.apply(self._held[1], self._held[0])  # the newest live answer replayed after the range
        merged = self._before_live(batch)
        with self._lock:
            self._book = book
        # The run held only the live points so far: written again after the range, every series stays in time order.
        self.store.drop_run(self.run)
        self.store.extend_many(self.run, merged)
        self._history_due, self._live_since, self._held = False, None, None

    def _before_live(self, batch: Batch) -> Batch:
        """The range's points older than the first live answer, then the live points the store holds."""
        cut_at = self._live_since if self._live_since is not None else math.inf
        merged: Batch = {}
        for name, (times, values) in batch.items():
            cut = bisect.bisect_left(times, cut_at)
            merged[name] = (times[:cut], values[:cut])
        for key, data in self.store.snapshot(self.store.series(self.run)).items():
            times, values = merged.setdefault((key.key, key.label), ([], []))
            times.extend(data.t)
            values.extend(data.mean)
        return merged

    def _read_gap(self, gap_from: float, now: float) -> None:
        """Reads back what was missed while Prometheus was away; a gap that fails now is tried after the next live query."""
        if now - gap_from <= 2 * self.interval:
            self._gap_from = None
            return
        try:
            skipped = self._read_range(gap_from, now, "the gap")
        except PrometheusError:
            return
        self._gap_from = None
        if skipped is not None:
            with self._lock:
                self._status = replace(self._status, notes=self._status.notes + (skipped,))

    def _ask_range(self, start: float, end: float, apart: bool) -> list[Reading]:
        """``start``..``end`` as one range query, or ``apart``, as a few (the big parts each alone: cheaper over a long range)."""
        step = history_step(end - start, self._width, self.interval)
        batches = self.plan.ranged_batches(self.interval, step) if apart else ((self.plan.ranged(self.interval, step), self.plan.parts(rate_window(self.interval, step), None)),)
        readings: list[Reading] = []
        for expr, parts in batches:
            answer = self.client.query_range(expr, start, end, step, timeout=self.client.timeout * HISTORY_TIMEOUT_FACTOR)
            readings += decode(answer.result, parts).readings
        return readings

    def _read_range(self, start: float, end: float, what: str) -> str | None:
        """Reads ``start``..``end`` into the store; what went wrong, when the server refused it or was too slow."""
        try:
            readings = self._ask_range(start, end, apart=False)
        except PrometheusError as error:
            if error.kind not in HISTORY_SKIPPED:
                raise
            return f"{what} not loaded: {error}"
        with self._lock:
            batch = self._book.apply(readings)
        if batch:
            self.store.extend_many(self.run, batch)
        return None

    def _succeeded(self, elapsed_ms: float, warnings: tuple[str, ...]) -> None:
        self._query_failures = 0
        with self._lock:
            found = bool(self._book.naming.targets())
            notes = self._notes + warnings
            if not found:
                where = f" matching {{{self.plan.selector}}}" if self.plan.selector else ""
                notes += (f"no leet serve, node_exporter or DCGM-exporter series{where} in the last {self.range_s / 60:g} min",)
            self._status = replace(
                self._status, reachable=True, message="", last_query_ms=elapsed_ms, last_ok=self._clock(),
                queries=self.client.requests, retry_in=None, notes=notes,
            )

    def _failed(self, error: PrometheusError) -> float:
        self._query_failures += 1
        if self._gap_from is None and self._last_data is not None and not self._history_due:
            self._gap_from = self._last_data
        delay = backoff(self._query_failures)
        with self._lock:
            self._status = replace(self._status, reachable=False, message=str(error), queries=self.client.requests, retry_in=delay)
        return delay

    # -- the thread -------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            delay = self.step()
            self.stepped()
            self._notify()
            self._stop.wait(delay)

