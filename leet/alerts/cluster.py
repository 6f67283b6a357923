"""A cluster through its Prometheus, for alerts: ``ClusterAlerts``.

It reads what a ``ClusterSource`` (``leet cluster``'s source, run headless)
knows after each of its answers: a node that goes down is a lost node, and
each up node's latest values go through the threshold rules under the node's
label (``gpu.3.temp/l:node-7``), so ``gpu.*.temp/l:node-* > 85`` picks nodes
as it picks a shared run's writers. A node is lost once it has been down for
``lost_after`` (``--node-lost-after``), so a scrape or two missed on a busy
machine is not news. Nodes already down at the first answer are not news
either: they are settled in the ledger.
"""

from __future__ import annotations

from typing import Callable, Protocol

from leet.alerts.events import NODE_LOST, Alert, default_level
from leet.alerts.ledger import Ledger
from leet.alerts.thresholds import Scope, ThresholdWatch
from leet.model.cluster import NodeState
from leet.model.keys import join_label

UP, DOWN, TOLD = "up", "down", "told"


class ClusterView(Protocol):
    def nodes(self) -> tuple[NodeState, ...]: ...

    def values(self, node: str) -> dict[str, float]: ...

    def on_change(self, listener: Callable[[], None]) -> None: ...


class ClusterAlerts:
    """``poll(now)`` after the source answered: lost nodes and threshold alerts, each once."""

    def __init__(self, source: ClusterView, where: str, ledger: Ledger, thresholds: ThresholdWatch | None = None, lost_after: float = 120.0) -> None:
        self.source = source
        self.where = where  # the Prometheus URL, credentials masked: what every alert from here is about
        self.ledger = ledger
        self.thresholds = thresholds
        self.lost_after = lost_after  # seconds a node stays down before it is lost (one missed scrape is not)
        self._state: dict[str, str] = {}  # node → UP, DOWN (not told yet) or TOLD (down, and told or settled)
        self._changed = False
        self._answered = False  # the first answer is what was already so
        source.on_change(self._mark)

    def _mark(self) -> None:
        self._changed = True  # on the source's thread: a flag, read by the loop

    def poll(self, now: float) -> list[Alert]:
        if not self._changed:
            return []
        self._changed = False
        nodes = self.source.nodes()
        if not nodes:
            return []
        alerts: list[Alert] = []
        for state in nodes:
            before = self._state.get(state.node)
            if state.up:
                self._state[state.node] = UP
                if self.thresholds is not None and self.thresholds.rules:
                    values = {join_label(key, state.node): value for key, value in self.source.values(state.node).items()}
                    alerts += self.thresholds.observe(Scope(self.where), state.last_scrape or now, values)
            elif before is None and not self._answered:
                self.ledger.settle(self._lost(state, now).ident, now)  # down before anyone watched
                self._state[state.node] = TOLD
            elif before != TOLD:
                # Down long enough to be more than a missed scrape or two: a node lost.
                self._state[state.node] = DOWN
                if now - (state.since or now) >= self.lost_after:
                    alerts.append(self._lost(state, now))
                    self._state[state.node] = TOLD
        self._answered = True
        return alerts

    def _lost(self, state: NodeState, now: float) -> Alert:
        since = state.since or now
        targets = ", ".join(state.targets) or "no targets"
        return Alert(
            kind=NODE_LOST, title=f"node {state.node} down",
            text=f"every target of node {state.node} ({targets}) has been down for {max(0.0, now - since):.0f}s, as {self.where} sees it",
            level=default_level(NODE_LOST), time=since, source=self.where, label=state.node, ident=f"{NODE_LOST}:{self.where}:{state.node}:{since:.0f}",
        )
