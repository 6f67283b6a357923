"""Which chart a W&B system-metric key belongs to, and how to label it.

One ordered table of rules (most specific first, in ``metric_rules``) maps
a key and its node label to a :class:`MetricInfo`: family, chart id, title,
display unit and scale, series name and axis bounds. Keys that no rule knows
still get a chart of their own in the "Other" family, so nothing a run or
host reports is ever hidden. ``group`` turns a run's stored series into
charts, each carrying the ``SeriesKey`` of every series it draws.

Titles and series names are plain text. Keys come from untrusted files and
endpoints, so unsafe characters are replaced (``leet.common.text.replaced``)
and nothing here is markup.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Collection, Generic, Hashable, Iterable, Mapping, Sequence, TypeVar

from leet.common.text import replaced
from leet.model.keys import LABEL_SEPARATOR, natural_key, split_label
from leet.model.metric_rules import meaning_of
from leet.model.store import SeriesKey

FAMILIES = ("CPU", "Memory", "Disk", "Network", "GPU", "Accelerators", "Process", "Other")


ORDERS = ("symon", "title")


@dataclass(frozen=True)
class MetricInfo:
    """What one key means on screen."""

    key: str
    label: str | None
    family: str
    chart: str
    title: str
    unit: str
    scale: float
    series: str
    percent: bool
    y_min: float | None
    y_max: float | None
    integer: bool = False  # a count (processes, threads, errors): whole numbers only

    @property
    def legend(self) -> str:
        """Series name with its node label, for legends and tooltips."""
        if self.label is None:
            return self.series
        node = replaced(self.label.replace(LABEL_SEPARATOR, " / "))
        return node if self.series == "Default" else f"{self.series} · {node}"


@dataclass(frozen=True)
class ChartSpec:
    """One chart: the series that share a chart id, in a stable order."""

    chart: str
    title: str
    unit: str
    family: str
    percent: bool
    y_min: float | None
    y_max: float | None
    series: tuple[MetricInfo, ...]
    keys: tuple[SeriesKey, ...]  # where each of ``series`` is in the store, in the same order
    x_axis: str = ""  # a run metric's define_metric axis; "" for the step (or time)
    integer: bool = False  # every series is a count: the y axis ticks whole numbers

    @property
    def full_title(self) -> str:
        return f"{self.title} ({self.unit})" if self.unit else self.title


@lru_cache(maxsize=8192)
def _describe(key: str, label: str | None) -> MetricInfo:
    meaning = meaning_of(key)
    unit = meaning.unit
    return MetricInfo(
        key=key,
        label=label,
        family=meaning.family,
        chart=meaning.chart,
        title=replaced(meaning.title),
        unit=unit.unit,
        scale=unit.scale,
        series=replaced(meaning.series),
        percent=unit.percent,
        y_min=unit.y_min,
        y_max=unit.y_max,
        integer=unit.integer,
    )


def describe(key: str) -> MetricInfo:
    """Describe one W&B system-metric key as W&B writes it (``/l:LABEL`` suffix allowed). Never raises."""
    if not isinstance(key, str):
        key = str(key)
    return _describe(*split_label(key))


# --- grouping ---------------------------------------------------------------

_FAMILY_RANK = {name: rank for rank, name in enumerate(FAMILIES)}
_FAMILY_RANK.update({"Network": 2, "Disk": 3})  # symon shows network before disk

# Well-known charts first within their family, in the order symon shows them.
_SYMON_CHARTS = (
    "cpu.core", "cpu.cluster", "cpu.cluster_freq", "cpu.temp", "cpu.power", "system.power",
    "memory.percent", "memory.used_percent", "memory.used", "memory.available",
    "swap.used_percent", "swap.used",
    "network.rx_rate", "network.tx_rate", "network.rx_total", "network.tx_total",
    "network.tcp_retransmits",
    "disk.io_rate", "disk.usage_percent", "disk.usage", "disk.io_total",
    "gpu.gpu", "gpu.memoryAllocated", "gpu.memoryAllocatedBytes", "gpu.memory", "gpu.temp",
    "gpu.powerWatts", "gpu.powerPercent", "gpu.smClock", "gpu.memoryClock",
    "gpu.memoryReadWriteActivity", "gpu.graphicsClock", "gpu.freq", "gpu.energy", "gpu.fanSpeed",
    "tpu.tensorcoreUtilization", "tpu.dutyCycle", "tpu.hbm_used_percent", "tpu.hbm_used",
    "tpu.runtimeHbmUtilization", "tpu.utilization",
    "trn.neuroncore_utilization", "trn.device_memory", "trn.neuroncore_memory", "trn.host_memory",
    "ipu.ipu utilisation", "ipu.ipu utilisation (session)", "ipu.average die temp", "ipu.average board temp",
    "ipu.ipu power", "ipu.clock", "ane.power",
    "proc.cpu", "proc.memory.rss", "proc.memory.percent", "proc.cpu.threads",
)
_CHART_RANK = {chart: rank for rank, chart in enumerate(_SYMON_CHARTS)}

# What a person on a training node looks at first: these lead the first page,
# whatever their family, so accelerators are never pushed behind host totals.
_SYMON_FIRST = (
    "cpu.core", "memory.percent",
    "gpu.gpu", "tpu.tensorcoreUtilization", "trn.neuroncore_utilization", "ipu.ipu utilisation",
    "gpu.memoryAllocated", "tpu.hbm_used_percent", "trn.device_memory",
    "gpu.temp", "ipu.average die temp", "gpu.powerWatts", "ipu.ipu power",
    "network.rx_rate", "network.tx_rate", "disk.io_rate",
)
_FIRST_RANK = {chart: rank for rank, chart in enumerate(_SYMON_FIRST)}

def _series_order(info: MetricInfo) -> tuple:
    label = () if info.label is None else (1, natural_key(info.label))
    return natural_key(info.series), label, info.key


def _chart_order(spec: ChartSpec, order: str) -> tuple:
    by_title = (natural_key(spec.title), natural_key(spec.full_title), spec.chart)
    if order == "title":
        return by_title
    return (
        _FIRST_RANK.get(spec.chart, len(_FIRST_RANK)),
        _FAMILY_RANK.get(spec.family, len(FAMILIES)),
        _CHART_RANK.get(spec.chart, len(_CHART_RANK)),
        _endpoint_order(spec),
        *by_title,
    )


_OPENMETRICS = "openmetrics."


def _endpoint_order(spec: ChartSpec) -> tuple:
    """OpenMetrics charts together by endpoint, ahead of keys no rule knows; a no-op elsewhere."""
    if not spec.chart.startswith(_OPENMETRICS):
        return (1,)
    endpoint = spec.series[0].key.split(".", 2)[1]
    return (0, natural_key(endpoint))


def group(series: Iterable[SeriesKey], order: str = "symon") -> list[ChartSpec]:
    """One :class:`ChartSpec` per chart id for ``series`` (a run's, as ``Store.series`` lists them), ordered for display.

    ``order="symon"``: the charts a person checks first (cores, memory,
    accelerator utilisation, memory, temperature and power, network and disk
    rates), then by family (CPU, Memory and swap, Network, Disk, GPU,
    Accelerators, Process, Other), well-known charts first, then by title;
    OpenMetrics charts (in Other) grouped by endpoint.
    ``order="title"``: alphabetically by title.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown chart order {order!r}; expected one of {', '.join(ORDERS)}")
    members: dict[str, dict[tuple[str, str | None], tuple[MetricInfo, SeriesKey]]] = {}
    for key in series:
        info = _describe(key.key, key.label)
        members.setdefault(info.chart, {}).setdefault((info.key, info.label), (info, key))
    specs = []
    for chart, named in members.items():
        ordered = sorted(named.values(), key=lambda member: _series_order(member[0]))
        infos = tuple(info for info, _ in ordered)
        first = next(iter(named.values()))[0]  # the chart's first series to arrive names it
        specs.append(
            ChartSpec(
                chart=chart,
                title=first.title,
                unit=first.unit,
                family=first.family,
                percent=first.percent,
                y_min=first.y_min,
                y_max=first.y_max,
                series=infos,
                keys=tuple(key for _, key in ordered),
                integer=all(info.integer for info in infos),
            )
        )
    specs.sort(key=lambda spec: _chart_order(spec, order))
    return specs


def name_gpu_vendors(specs: Sequence[ChartSpec], vendors: Sequence[str]) -> list[ChartSpec]:
    """GPU charts titled with their vendors ("NVIDIA + AMD GPU Temp") when GPUs of more than one write them.

    W&B gives every vendor's GPUs the same ``gpu.{i}.*`` keys, so a chart
    cannot tell whose GPU 0 it draws; the title at least says both are there.
    """
    if len(vendors) < 2:
        return list(specs)
    who = " + ".join(vendors)
    return [replace(spec, title=f"{who} {spec.title}") if spec.family == "GPU" else spec for spec in specs]


# --- capping -------------------------------------------------------------

# Metrics charted per run (history keys of one writer, system keys of one writer).
# A run file can name millions of keys; nobody pages through more than this.
MAX_METRICS = 10_000
# Names of keys past the cap remembered so each is counted once; past this the count is a lower bound.
_COUNTED = 100_000
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class KeyCap(Generic[_K]):
    """The first ``limit`` distinct keys, in the order they came; later keys are counted, not kept.

    First come rather than first by name: a key once shown never gives its
    place to a later one, and what the store holds for it stays drawn.
    ``shown`` is the set itself, for callers that test membership.
    """

    def __init__(self, limit: int = MAX_METRICS, shown: set[_K] | None = None) -> None:
        self.limit = limit
        self.shown: set[_K] = shown if shown is not None else set()
        self._over: set[_K] = set()
        self._lost = False  # some keys past the cap were never named, or not remembered
        self._widest = 0  # the most keys one row held, read or not

    def add(self, keys: Collection[_K]) -> None:
        shown = self.shown
        if len(shown) + len(keys) <= self.limit:
            shown.update(keys)
            return
        new = [key for key in keys if key not in shown]
        room = max(0, self.limit - len(shown))
        shown.update(new[:room])
        self._count(new[room:])

    def _count(self, keys: Iterable[_K]) -> None:
        over = self._over
        for key in keys:
            if len(over) < _COUNTED:
                over.add(key)
            elif key not in over:
                self._lost = True

    def saw_row(self, keys: int, unread: int) -> None:
        """A row of ``keys`` keys, ``unread`` of them never named (too wide to read whole)."""
        self._widest = max(self._widest, keys)
        if unread:
            self._lost = True

    def filter(self, values: Mapping[_K, _V]) -> Mapping[_K, _V]:
        """``values`` with only the shown keys."""
        if not self._over and not self._lost:
            return values
        shown = self.shown
        return {key: value for key, value in values.items() if key in shown}

    @property
    def hidden(self) -> int:
        """Keys past the cap: exact when ``exact``, else at least this many."""
        return max(len(self._over), self._widest - len(self.shown))

    @property
    def exact(self) -> bool:
        return not self._lost


__all__ = [
    "FAMILIES",
    "MAX_METRICS",
    "ORDERS",
    "ChartSpec",
    "KeyCap",
    "MetricInfo",
    "describe",
    "group",
    "name_gpu_vendors",
]
