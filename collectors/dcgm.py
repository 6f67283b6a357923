"""NVIDIA GPUs through DCGM-exporter series stored in Prometheus (W&B's ``x_stats_dcgm_exporter``).

The URL is a Prometheus HTTP API query URL, as W&B takes it:
``http://prometheus:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP{node="l1337"}``
(``query=`` may repeat). Each sweep sends every query as an instant query
(``/api/v1/query?query=…&time=<now>``) with the configured headers, within
one timeout for all of them. A URL without ``query=`` asks for every DCGM
field that has a W&B key; W&B itself refuses such a URL.

Each sample of a vector result becomes ``gpu.{index}.{name}``, plus
``/l:{node}`` from the series' ``node`` label, else its ``hostname`` label,
exactly as W&B writes them: ``index`` is the ``gpu`` label, else the
``device`` label without its leading ``nvidia``; a sample with neither, or
of a field W&B has no name for, is skipped. Values stay as DCGM gives them
(MiB for framebuffer memory, 0-1 ratios for ``DCGM_FI_PROF_*``, mJ for
energy), unlike NVML's keys of the same names (W&B's own inconsistency).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from collectors.base import Collector
from collectors.gpu import AcceleratorInfo, GpuInfo
from collectors.openmetrics import (
    BUDGET_SLACK,
    DEFAULT_TIMEOUT,
    HttpGetter,
    HttpStatusError,
    ScrapeError,
    checked_headers,
    checked_timeout,
    checked_url,
    display_url,
)

QUERY_PATH = "/api/v1/query"
MIB = 1 << 20

# DCGM field -> the name W&B gives it under gpu.{index}.
DCGM_FIELDS: Mapping[str, str] = {
    "DCGM_FI_DEV_GPU_TEMP": "temp",
    "DCGM_FI_DEV_POWER_USAGE": "powerWatts",
    "DCGM_FI_DEV_GPU_UTIL": "gpu",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "memory",
    "DCGM_FI_DEV_SM_CLOCK": "smClock",
    "DCGM_FI_DEV_FB_USED": "memoryUsed",
    "DCGM_FI_DEV_FB_TOTAL": "memoryTotal",
    "DCGM_FI_DEV_FB_FREE": "memoryFree",
    "DCGM_FI_DEV_MEMORY_TEMP": "memoryTemp",
    "DCGM_FI_DEV_GPU_MAX_OP_TEMP": "maxOpTemp",
    "DCGM_FI_DEV_MEM_MAX_OP_TEMP": "memoryMaxOpTemp",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "totalEnergyConsumption",
    "DCGM_FI_PROF_PCIE_TX_BYTES": "pcieTxBytes",
    "DCGM_FI_PROF_PCIE_RX_BYTES": "pcieRxBytes",
    "DCGM_FI_PROF_NVLINK_TX_BYTES": "nvlinkTxBytes",
    "DCGM_FI_PROF_NVLINK_RX_BYTES": "nvlinkRxBytes",
    "DCGM_FI_PROF_SM_ACTIVE": "smActive",
    "DCGM_FI_PROF_SM_OCCUPANCY": "smOccupancy",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "pipeTensorActive",
    "DCGM_FI_PROF_PIPE_FP64_ACTIVE": "pipeFp64Active",
    "DCGM_FI_PROF_PIPE_FP32_ACTIVE": "pipeFp32Active",
    "DCGM_FI_PROF_PIPE_FP16_ACTIVE": "pipeFp16Active",
}
DEFAULT_QUERY = '{__name__=~"' + "|".join(DCGM_FIELDS) + '"}'


@dataclass(frozen=True)
class DcgmTarget:
    """Where the instant queries go, and which ones."""

    query_url: str  # .../api/v1/query, without a query string
    queries: tuple[str, ...]


def parse_dcgm_url(url: str) -> DcgmTarget:
    """A ``--dcgm-exporter`` URL as its query endpoint and PromQL queries.

    The path may be a Prometheus behind a prefix (``http://host/prom``) with
    or without ``/api/v1/query``; without ``query=``, ``DEFAULT_QUERY``.
    Raises ValueError for a non-http URL, or for an exporter's own
    ``/metrics`` page, which is scraped with ``--openmetrics`` instead.
    """
    url = checked_url(url, "--dcgm-exporter")
    parts = urllib.parse.urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/metrics"):
        raise ValueError(
            f"--dcgm-exporter wants a Prometheus server's query URL (http://HOST:9090/api/v1/query?query=…), "
            f"not an exporter's page {display_url(url)!r}; scrape that with --openmetrics dcgm={display_url(url)}"
        )
    if path.endswith(QUERY_PATH):
        path = path[: -len(QUERY_PATH)]
    queries = tuple(query for query in urllib.parse.parse_qs(parts.query).get("query", []) if query.strip())
    query_url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path + QUERY_PATH, "", ""))
    return DcgmTarget(query_url, queries or (DEFAULT_QUERY,))


# -- responses to keys -----------------------------------------------------


@dataclass(frozen=True)
class DcgmGpu:
    """One GPU seen in the answers: its node, index and what the labels tell about it."""

    node: str  # the /l: label ("" when the series has neither node nor hostname)
    index: str
    model: str = ""
    uuid: str = ""


@dataclass
class QueryResult:
    """What answers to instant queries map to."""

    values: dict[str, float] = field(default_factory=dict)
    gpus: dict[tuple[str, str], DcgmGpu] = field(default_factory=dict)
    fields: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)  # (node, index) -> {W&B name: value}
    unknown: set[str] = field(default_factory=set)  # DCGM fields without a W&B name
    unplaced: int = 0  # samples with neither a gpu nor a device label
    not_vectors: list[str] = field(default_factory=list)  # queries whose answer was not an instant vector


def gpu_index(labels: Mapping[str, str]) -> str:
    """The GPU a series belongs to, as W&B reads it; "" when it cannot tell."""
    if "gpu" in labels:
        return str(labels["gpu"])
    device = labels.get("device")
    if device is not None:
        return str(device).removeprefix("nvidia")
    return ""


def node_label(labels: Mapping[str, str]) -> str:
    """The ``/l:`` label W&B adds: the ``node`` label, else ``hostname``."""
    return str(labels.get("node") or labels.get("hostname") or "")


def gpu_key(index: str, name: str, node: str) -> str:
    key = f"gpu.{index}.{name}"
    return f"{key}/l:{node}" if node else key


def add_response(result: QueryResult, payload: Any, what: str = "Prometheus", query: str = "") -> None:
    """Adds one ``/api/v1/query`` answer (parsed JSON) to ``result``.

    Raises ScrapeError for an error answer or one that is not Prometheus API
    JSON; a result that is not an instant vector is noted, not mapped.
    """
    if not isinstance(payload, Mapping):
        raise ScrapeError(f"{what} answered with JSON that is not a Prometheus API answer")
    if payload.get("status") != "success":
        raise ScrapeError(f"{what} refused the query: {_api_error(payload)}")
    data = payload.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("result"), list):
        raise ScrapeError(f"{what} answered without data.result")
    if data.get("resultType") != "vector":
        result.not_vectors.append(query or "?")
        return
    for entry in data["result"]:
        _add_sample(result, entry)


def _add_sample(result: QueryResult, entry: Any) -> None:
    if not isinstance(entry, Mapping):
        return
    labels = entry.get("metric")
    sample = entry.get("value")
    if not isinstance(labels, Mapping) or not isinstance(sample, list) or len(sample) != 2:
        return
    index = gpu_index(labels)
    if not index:
        result.unplaced += 1
        return
    field_name = str(labels.get("__name__", ""))
    name = DCGM_FIELDS.get(field_name)
    if name is None:
        result.unknown.add(field_name or "(an expression without a metric name)")
        return
    try:
        value = float(sample[1])
    except (TypeError, ValueError):
        return
    node = node_label(labels)
    result.values[gpu_key(index, name, node)] = value
    result.fields.setdefault((node, index), {})[name] = value
    if (node, index) not in result.gpus:
        result.gpus[(node, index)] = DcgmGpu(node, index, str(labels.get("modelName", "")), str(labels.get("UUID", labels.get("uuid", ""))))


def map_query_response(payload: Any) -> dict[str, float]:
    """The ``gpu.{i}.*`` keys of one ``/api/v1/query`` answer (parsed JSON)."""
    result = QueryResult()
    add_response(result, payload)
    return result.values


def _api_error(payload: Mapping[str, Any]) -> str:
    kind = payload.get("errorType") or "error"
    message = payload.get("error") or "no reason given"
    return f"{kind}: {message}"


# -- what the screen gets --------------------------------------------------


def _memory_total(fields: Mapping[str, float]) -> int | None:
    """Bytes, from DCGM's MiB: the total field, else used + free (+ reserved, which DCGM reports apart)."""
    if "memoryTotal" in fields:
        return int(fields["memoryTotal"] * MIB)
    if "memoryUsed" in fields and "memoryFree" in fields:
        return int((fields["memoryUsed"] + fields["memoryFree"]) * MIB)
    return None


def gpu_infos(result: QueryResult) -> tuple[GpuInfo, ...]:
    """``GpuInfo`` records when the answers cover one node: indices repeat across nodes."""
    if len({node for node, _ in result.gpus}) != 1:
        return ()
    infos = []
    for (node, index), gpu in result.gpus.items():
        if not index.isdigit():
            continue
        total = _memory_total(result.fields.get((node, index), {}))
        infos.append(GpuInfo(int(index), gpu.model or "NVIDIA GPU", total or 0, None, uuid=gpu.uuid))
    return tuple(sorted(infos, key=lambda info: info.index))


def accelerator_infos(result: QueryResult) -> tuple[AcceleratorInfo, ...]:
    """One line of facts per (node, GPU), naming the keys (with their ``/l:`` label) to read."""
    infos = []
    for position, ((node, index), gpu) in enumerate(sorted(result.gpus.items(), key=_gpu_order)):
        fields = result.fields.get((node, index), {})
        model = gpu.model or "NVIDIA GPU"
        infos.append(
            AcceleratorInfo(
                vendor="NVIDIA",
                index=int(index) if index.isdigit() else position,
                name=f"{model} on {node}" if node else model,
                utilization_key=_key_if_seen(fields, index, "gpu", node),
                temp_key=_key_if_seen(fields, index, "temp", node),
                power_key=_key_if_seen(fields, index, "powerWatts", node),
                memory_total=_memory_total(fields),
            )
        )
    return tuple(infos)


def _key_if_seen(fields: Mapping[str, float], index: str, name: str, node: str) -> str:
    return gpu_key(index, name, node) if name in fields else ""


def _gpu_order(item: tuple[tuple[str, str], DcgmGpu]) -> tuple[str, int, str]:
    (node, index), _ = item
    return (node, int(index) if index.isdigit() else 1 << 30, index)


def result_notes(result: QueryResult) -> tuple[str, ...]:
    notes = []
    if result.unknown:
        names = ", ".join(sorted(result.unknown))
        notes.append(f"no W&B key for {names}; scrape the exporter with --openmetrics to see every field")
    if result.unplaced:
        notes.append(f"{result.unplaced} series without a gpu or device label were skipped")
    if result.not_vectors:
        notes.append("not an instant vector, so not read: " + "; ".join(result.not_vectors))
    return tuple(notes)


# -- the collector ---------------------------------------------------------


class DcgmPrometheusCollector(Collector):
    """``gpu.{i}.*/l:{node}`` keys from DCGM-exporter series, asked of a Prometheus server.

    ``headers`` go with every request (W&B sends its OpenMetrics headers here
    too); ``timeout`` bounds one sweep, all queries included.
    """

    name = "dcgm"
    cadence = 0.0

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.target = parse_dcgm_url(url)
        self.timeout = checked_timeout(timeout)
        self.budget = self.timeout + BUDGET_SLACK
        self._clock = clock
        self._getter = HttpGetter(self.target.query_url, checked_headers(headers), "Prometheus for dcgm", accept="application/json")
        self._result = QueryResult()

    def sample(self) -> dict[str, float]:
        deadline = time.monotonic() + self.timeout
        result = QueryResult()
        for query in self.target.queries:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ScrapeError(f"{self._getter.what}: the queries took longer than {self.timeout:.3g} s")
            add_response(result, self._ask(query, left), self._getter.what, query)
        self._result = result
        if not result.values:
            raise ScrapeError(f"{self._getter.what} has no DCGM GPU series for {' ; '.join(self.target.queries)}")
        return result.values

    def extras(self) -> Mapping[str, Any]:
        return {
            "gpus": gpu_infos(self._result),
            "accelerators.dcgm": accelerator_infos(self._result),
            "notes.dcgm": result_notes(self._result),
        }

    def _ask(self, query: str, timeout: float) -> Any:
        params = urllib.parse.urlencode({"query": query, "time": f"{self._clock():.3f}"})
        try:
            page = self._getter.get(timeout, f"{self.target.query_url}?{params}")
        except HttpStatusError as exc:
            raise ScrapeError(f"{exc}{_reason_in(exc.body)}") from None
        try:
            return json.loads(page.body)
        except ValueError:
            raise ScrapeError(f"{self._getter.what} answered with something that is not JSON") from None


def _reason_in(body: bytes) -> str:
    """Prometheus explains a refused query in its JSON answer; that reason, if there is one."""
    try:
        payload = json.loads(body)
    except ValueError:
        return ""
    if isinstance(payload, Mapping) and payload.get("error"):
        return f": {_api_error(payload)}"
    return ""
