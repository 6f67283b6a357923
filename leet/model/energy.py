"""Energy from power: watts integrated over time, a run's GPU energy per node, and energy as people read it.

A run records no energy of its own, only power: each system-metrics sample
holds ``gpu.N.powerWatts`` (``gpu.N.powerWatts/l:NODE`` in a shared run).
``RunEnergy`` is fed those samples in file order and integrates each GPU's
watts over the samples' timestamps by the trapezoid rule, per node.

Gaps: a run that was paused and resumed, or a writer that stalled, leaves a
hole between two samples. Bridging it with a straight line would count time
nobody measured, so an interval longer than ``GAP_FACTOR`` times the median
interval of its series adds nothing. The median is taken over the intervals
binned in 1 % steps (a count and the energy per bin), so a series of any
length is integrated in a few hundred bytes, and the rule is applied when
the total is asked for: an early gap is judged by the whole series.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import isfinite, log
from typing import Iterable, Mapping

from leet.model.keys import split_label

GAP_FACTOR = 3.0  # intervals longer than this many median intervals are gaps
_BIN_RATIO = 1.01  # interval bins are this much wider, one to the next
_BINS_PER_LOG = 1 / log(_BIN_RATIO)
JOULES_PER_WH = 3600.0
MAX_SERIES = 4096  # GPUs integrated in one run: 512 nodes of 8
RESCAN_ROWS = 64  # samples after which a run's keys are looked through again for power keys
_GPU_POWER = re.compile(r"gpu\.(\d+)\.powerWatts")
NO_GPU_POWER = "no GPU power recorded"
INTEGRATED_MARK = "≈"  # before an energy worked out from power samples, not read from a counter


def _bin(seconds: float) -> int:
    return round(log(seconds) * _BINS_PER_LOG)


class PowerIntegral:
    """One series of (seconds, watts) samples in time order, integrated with gaps left out."""

    __slots__ = ("_last", "_bins", "samples")

    def __init__(self) -> None:
        self._last: tuple[float, float] | None = None
        self._bins: dict[int, list[float]] = {}  # bin of the interval → [intervals, joules]
        self.samples = 0

    def add(self, seconds: float, watts: float) -> None:
        """One sample; one that is not finite, or no later than the last, is skipped."""
        if not (isfinite(seconds) and isfinite(watts)):
            return
        last = self._last
        if last is not None and seconds <= last[0]:
            return
        self.samples += 1
        self._last = (seconds, watts)
        if last is None:
            return
        interval = seconds - last[0]
        joules = (watts + last[1]) * 0.5 * interval
        bin_ = _bin(interval)
        tally = self._bins.get(bin_)
        if tally is None:
            self._bins[bin_] = [1.0, joules]
        else:
            tally[0] += 1
            tally[1] += joules

    @property
    def joules(self) -> float:
        """The energy of every interval but the gaps."""
        if not self._bins:
            return 0.0
        longest = _bin(GAP_FACTOR * _median_interval(self._bins))
        return sum(joules for bin_, (_, joules) in self._bins.items() if bin_ <= longest)


def _median_interval(bins: Mapping[int, list[float]]) -> float:
    half = sum(count for count, _ in bins.values()) / 2
    seen = 0.0
    for bin_ in sorted(bins):
        seen += bins[bin_][0]
        if seen > half:  # the upper median: of two intervals, the longer
            return _BIN_RATIO**bin_
    return _BIN_RATIO ** max(bins)


def integrate_power(samples: Iterable[tuple[float, float]]) -> float:
    """Joules from (seconds, watts) samples in time order: trapezoids, gaps left out (see the module)."""
    integral = PowerIntegral()
    for seconds, watts in samples:
        integral.add(seconds, watts)
    return integral.joules


@dataclass(frozen=True)
class NodeEnergy:
    """The GPU energy one node of a run used, by its power samples."""

    node: str  # the node's label; "" in a run with one unlabelled writer
    joules: float
    gpus: int


class RunEnergy:
    """A run's GPU energy per node, fed one system-metrics sample at a time (``add``).

    A writer sends the same keys sample after sample, so the power keys
    found in one sample are read in the next ones, and the keys are looked
    through again only when their number changes, or every ``RESCAN_ROWS``
    samples (a GPU's key that came as another key went is found then).
    """

    def __init__(self) -> None:
        self._series: dict[tuple[str, int], PowerIntegral] = {}
        self._key_count = -1
        self._label: str | None = None  # the label the readers were made for
        self._unscanned = 0  # samples since the keys were last looked through
        self._readers: tuple[tuple[str, PowerIntegral], ...] = ()  # (raw key, its GPU's series)

    def add(self, timestamp: float, values: Mapping[str, float], label: str | None = None) -> None:
        """One stats row: its ``gpu.N.powerWatts`` values; ``label`` names the node of keys that name none."""
        self._unscanned += 1
        if len(values) != self._key_count or label != self._label or self._unscanned >= RESCAN_ROWS:
            self._key_count, self._label, self._unscanned = len(values), label, 0
            self._readers = tuple(self._find_readers(values, label))
        for key, series in self._readers:
            watts = values.get(key)
            if watts is not None:
                series.add(timestamp, watts)

    def _find_readers(self, values: Iterable[str], label: str | None) -> Iterable[tuple[str, PowerIntegral]]:
        for key, own, gpu in _power_keys(values):
            node = own or label or ""
            series = self._series.get((node, gpu))
            if series is None:
                if len(self._series) >= MAX_SERIES:
                    continue  # past any real cluster's GPU count: a hostile file
                series = self._series[(node, gpu)] = PowerIntegral()
            yield key, series

    def nodes(self) -> tuple[NodeEnergy, ...]:
        """Each node with GPU power samples, by label."""
        totals: dict[str, list[float]] = {}
        for (node, _), series in self._series.items():
            if series.samples:
                tally = totals.setdefault(node, [0.0, 0])
                tally[0] += series.joules
                tally[1] += 1
        return tuple(NodeEnergy(node, joules, int(gpus)) for node, (joules, gpus) in sorted(totals.items()))


def merged_nodes(writers: Iterable[tuple[Iterable[NodeEnergy], str | None]]) -> tuple[NodeEnergy, ...]:
    """A shared run's nodes from (nodes, writer label) per writer: an unlabelled node takes its writer's label; nodes named alike add up."""
    totals: dict[str, tuple[float, int]] = {}
    for nodes, label in writers:
        for node in nodes:
            name = node.node or label or ""
            joules, gpus = totals.get(name, (0.0, 0))
            totals[name] = (joules + node.joules, gpus + node.gpus)
    return tuple(NodeEnergy(name, joules, gpus) for name, (joules, gpus) in sorted(totals.items()))


def _power_keys(values: Iterable[str]) -> Iterable[tuple[str, str | None, int]]:
    """(raw key, its own label, GPU) for each ``gpu.N.powerWatts`` key."""
    for raw in values:
        if "powerWatts" in raw:
            key, label = split_label(raw)
            found = _GPU_POWER.fullmatch(key)
            if found is not None:
                yield raw, label, int(found.group(1))


# -- as people read it -----------------------------------------------------------


def _number(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def energy_text(joules: float) -> str:
    """ "12.3 Wh", "2.40 kWh", "1.05 MWh"."""
    watt_hours = max(0.0, joules) / JOULES_PER_WH
    for unit in ("Wh", "kWh", "MWh"):
        if watt_hours < 999.5 or unit == "MWh":
            return f"{_number(watt_hours)} {unit}"
        watt_hours /= 1000
    raise AssertionError("unreachable")


def cost_text(joules: float, price_per_kwh: float, currency: str = "$") -> str:
    """What ``joules`` cost at ``price_per_kwh``: "$0.36"."""
    cost = max(0.0, joules) / JOULES_PER_WH / 1000 * price_per_kwh
    return f"{currency}{cost:,.2f}"


def node_energy_text(energy: NodeEnergy, price_per_kwh: float | None = None, currency: str = "$") -> str:
    """ "≈2.40 kWh over 8 GPUs · $0.36": integrated, so marked as such."""
    gpus = "1 GPU" if energy.gpus == 1 else f"{energy.gpus} GPUs"
    text = f"{INTEGRATED_MARK}{energy_text(energy.joules)} over {gpus}"
    if price_per_kwh is not None:
        text += f" · {cost_text(energy.joules, price_per_kwh, currency)}"
    return text


def run_energy_items(nodes: Iterable[NodeEnergy], price_per_kwh: float | None = None, currency: str = "$") -> list[tuple[str, str]]:
    """(name, text) per node ("GPU energy" for an unlabelled one), then all nodes together when there are several; one item saying so when no GPU power was recorded."""
    nodes = tuple(nodes)
    items = [(f"GPU energy {node.node}" if node.node else "GPU energy", node_energy_text(node, price_per_kwh, currency)) for node in nodes]
    if len(nodes) > 1:
        total = NodeEnergy("", sum(node.joules for node in nodes), sum(node.gpus for node in nodes))
        items.append(("GPU energy, all nodes", node_energy_text(total, price_per_kwh, currency)))
    return items or [("GPU energy", NO_GPU_POWER)]


def energy_report(nodes: Iterable[NodeEnergy]) -> dict[str, dict[str, float]]:
    """A run's GPU energy as plain data: joules, kWh and GPUs by node label ("" unlabelled); empty when no GPU power was recorded."""
    return {node.node: {"joules": node.joules, "kwh": node.joules / JOULES_PER_WH / 1000, "gpus": node.gpus} for node in nodes}


def energy_report_line(report: Mapping[str, Mapping[str, float]]) -> str:
    """``energy_report``'s data as one line of ``leet inspect --summary``."""
    nodes = [NodeEnergy(name, float(node["joules"]), int(node["gpus"])) for name, node in report.items()]
    parts = [f"{node.node} {node_energy_text(node)}" if node.node else node_energy_text(node) for node in nodes]
    return "gpu energy " + ("; ".join(parts) or NO_GPU_POWER)
