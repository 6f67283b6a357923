"""TPU runtime metrics, as libtpu's SDK and its gRPC service give them, turned into W&B's ``tpu.*`` keys.

The key names are wandb 0.26+'s. Two sources serve the same metrics in two
shapes: the SDK (``libtpu.sdk.tpumonitoring``) returns a list of strings per
metric (one number per device or chip, ``"label, mean, p50, …"`` rows for
latency distributions, ``"tensor_core-0: 5"`` for queue sizes); the gRPC
service returns ``TPUMetric`` messages (gauges keyed by device id,
distributions and summaries keyed by a label).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

PER_DEVICE = "device"  # one value per device: tpu.{i}.<key>
PER_CHIP = "chip"  # one value per chip, written to each of its devices
LABELED = "labeled"  # distributions by label: <key>.<label>.<stat><unit>
FLAT = "flat"  # one unlabeled distribution: <key>.<stat><unit>
QUEUE = "queue"  # one gauge per label: <key>.<label>


@dataclass(frozen=True)
class Wanted:
    """One metric: its key, its shape, and its names in the SDK and on the gRPC service."""

    key: str  # the key's last part for per-device shapes, the whole prefix otherwise
    shape: str
    sdk_names: tuple[str, ...] = ()  # aliases, tried in order: SDK releases renamed some
    grpc_name: str = ""
    unit: str = ""


def _latency(key: str, sdk_name: str, grpc_name: str) -> Wanted:
    return Wanted(key, LABELED, (sdk_name,), f"megascale.{grpc_name}.microsecond.cumulative.distribution", "Us")


WANTED: tuple[Wanted, ...] = (
    Wanted("tensorcoreUtilization", PER_DEVICE, ("tensorcore_utilization", "tensorcore_util")),
    Wanted("dutyCycle", PER_CHIP, ("duty_cycle_pct",), "tpu.runtime.tensorcore.dutycycle.percent"),
    Wanted("hbmCapacityTotal", PER_DEVICE, ("hbm_capacity_total",), "tpu.runtime.hbm.memory.total.bytes"),
    Wanted("hbmCapacityUsage", PER_DEVICE, ("hbm_capacity_usage",), "tpu.runtime.hbm.memory.usage.bytes"),
    Wanted("runtimeHbmUtilization", PER_DEVICE, (), "tpu.runtime.hbm.utilization.percent"),
    Wanted("tensorcoreIdleDuration", PER_DEVICE, (), "tpu.runtime.tensorcore.idle_duration.seconds"),
    Wanted("iciLinkHealth", PER_DEVICE, ("ici_link_health",)),
    Wanted("throttleScore", PER_DEVICE, ("tpu_throttle_score",)),
    _latency("tpu.bufferTransferLatency", "buffer_transfer_latency", "dcn_transfer_latencies"),
    _latency("tpu.inboundBufferTransferLatency", "inbound_buffer_transfer_latency", "dcn_inbound_transfer_latencies"),
    _latency("tpu.hostToDeviceTransferLatency", "host_to_device_transfer_latency", "host_to_device_transfer_latencies"),
    _latency("tpu.deviceToHostTransferLatency", "device_to_host_transfer_latency", "device_to_host_transfer_latencies"),
    _latency("tpu.collectiveE2ELatency", "collective_e2e_latency", "collective_end_to_end_latencies"),
    _latency("tpu.hostComputeLatency", "host_compute_latency", "mxla_compute_latencies"),
    Wanted(
        "tpu.grpcTcpMinRtt",
        FLAT,
        ("tcp_min_rtt", "grpc_tcp_min_rtt", "grpc_tcp_min_round_trip_times"),
        "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution",
        "Us",
    ),
    Wanted(
        "tpu.grpcTcpDeliveryRate",
        FLAT,
        ("tcp_delivery_rate", "grpc_tcp_delivery_rate", "grpc_tcp_delivery_rates"),
        "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution",
        "Mbps",
    ),
    Wanted("tpu.hloExecTiming", LABELED, ("hlo_execution_timing", "hlo_exec_timing"), "hlo.execution.timing.distribution.microseconds", "Us"),
    Wanted("tpu.hloQueueSize", QUEUE, ("hlo_queue_size",), "hlo.queue.size.gauge"),
)

PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p999", 0.999))
_QUANTILE_NAMES = {0.5: "p50", 0.9: "p90", 0.95: "p95", 0.99: "p99", 0.999: "p999"}


# -- labels and numbers ------------------------------------------------------


def sanitize(label: str) -> str:
    """A label as a key part: lower case, ``+`` as ``_plus_``, ``%`` as ``pct``, other runs of symbols as one ``_``."""
    text = label.strip().lower().replace("+", "_plus_").replace("%", "pct")
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    return text or "unknown"


def number(raw: Any) -> float | None:
    """A finite float from an SDK string or a number; None otherwise."""
    try:
        value = float(str(raw).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def split_row(raw: str) -> list[str]:
    """``"8MB+, 1.0, 2.0"`` (or ``"[1.0, 2.0]"``) as its non-empty fields."""
    text = str(raw).strip().strip("[]")
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip().strip("'\"")]


def stat_names(description: str, count: int) -> tuple[str, ...]:
    """What the numbers of a distribution row are, from the metric's description and their count."""
    lowered = description.lower()
    if count == 5:
        if "p99" in lowered and "p95" not in lowered:
            return ("mean", "p50", "p90", "p99", "p999")
        return ("mean", "p50", "p90", "p95", "p999")
    if count == 4:
        return ("p50", "p90", "p95", "p999")
    return tuple(f"stat{i}" for i in range(count))


# -- the SDK's strings -------------------------------------------------------


def from_sdk(wanted: Wanted, description: str, rows: Sequence[Any], devices_per_chip: int) -> dict[str, float]:
    """Keys from one SDK metric: its description and its list of values."""
    texts = [str(row) for row in rows]
    if wanted.shape == PER_DEVICE:
        return _indexed(wanted.key, texts, 1)
    if wanted.shape == PER_CHIP:
        return _indexed(wanted.key, texts, devices_per_chip)
    if wanted.shape == LABELED:
        return _labeled_rows(wanted, description, texts)
    if wanted.shape == FLAT:
        return _flat_rows(wanted, description, texts)
    return _queue_rows(wanted.key, texts)


def _indexed(key: str, texts: Sequence[str], fan_out: int) -> dict[str, float]:
    values = {}
    for position, text in enumerate(texts):
        value = number(text)
        if value is None:
            continue
        for device in range(position * fan_out, (position + 1) * fan_out):
            values[f"tpu.{device}.{key}"] = value
    return values


def _labeled_rows(wanted: Wanted, description: str, texts: Sequence[str]) -> dict[str, float]:
    values = {}
    for text in texts:
        fields = split_row(text)
        if len(fields) < 2:
            continue
        prefix = f"{wanted.key}.{sanitize(fields[0])}"
        values.update(_stats(prefix, wanted.unit, stat_names(description, len(fields) - 1), fields[1:]))
    return values


def _flat_rows(wanted: Wanted, description: str, texts: Sequence[str]) -> dict[str, float]:
    if not texts:
        return {}
    # Either one row holding every statistic, or one statistic per row.
    fields = split_row(texts[0]) if len(texts) == 1 else list(texts)
    if len(fields) <= 1:
        fields = list(texts)
    return _stats(wanted.key, wanted.unit, stat_names(description, len(fields)), fields)


def _stats(prefix: str, unit: str, names: Sequence[str], fields: Sequence[str]) -> dict[str, float]:
    values = {}
    for name, field in zip(names, fields):
        value = number(field)
        if value is not None:
            values[f"{prefix}.{name}{unit}"] = value
    return values


def _queue_rows(key: str, texts: Sequence[str]) -> dict[str, float]:
    values = {}
    for position, text in enumerate(texts):
        label, colon, raw = text.partition(":")
        if not colon:
            label, raw = f"item_{position}", text
        value = number(raw)
        if value is not None:
            values[f"{key}.{sanitize(label)}"] = value
    return values


# -- the gRPC service's messages -----------------------------------------------


def from_grpc(wanted: Wanted, metric: Any, devices_per_chip: int) -> dict[str, float]:
    """Keys from one ``TPUMetric`` message."""
    if wanted.shape in (PER_DEVICE, PER_CHIP):
        fan_out = devices_per_chip if wanted.shape == PER_CHIP else 1
        return _gauges_by_device(wanted.key, metric.metrics, fan_out)
    if wanted.shape == QUEUE:
        return _gauges_by_label(wanted.key, metric.metrics)
    return _distributions(wanted, metric.metrics)


def _gauges_by_device(key: str, metrics: Iterable[Any], fan_out: int) -> dict[str, float]:
    values = {}
    for metric in metrics:
        value = gauge_value(metric)
        device = device_id(metric)
        if value is None or device is None:
            continue
        for index in range(device * fan_out, (device + 1) * fan_out):
            values[f"tpu.{index}.{key}"] = value
    return values


def _gauges_by_label(key: str, metrics: Iterable[Any]) -> dict[str, float]:
    values = {}
    for position, metric in enumerate(metrics):
        value = gauge_value(metric)
        if value is not None:
            values[f"{key}.{sanitize(label_of(metric) or f'item_{position}')}"] = value
    return values


def _distributions(wanted: Wanted, metrics: Iterable[Any]) -> dict[str, float]:
    merged = _merge_by_label(metrics)
    values = {}
    for label, stats in merged.items():
        prefix = wanted.key if wanted.shape == FLAT else f"{wanted.key}.{sanitize(label)}"
        for name, value in stats.items():
            values[f"{prefix}.{name}{wanted.unit}"] = value
    return values


def gauge_value(metric: Any) -> float | None:
    if metric.WhichOneof("measure") != "gauge":
        return None
    kind = metric.gauge.WhichOneof("value")
    if kind in ("as_double", "as_int"):
        return number(getattr(metric.gauge, kind))
    return None


def device_id(metric: Any) -> int | None:
    """The device a per-device metric is about: its attribute's integer (or its ``device_ordinal``)."""
    value = metric.attribute.value
    kind = value.WhichOneof("attr")
    if kind == "int_attr":
        return int(value.int_attr)
    if kind == "kvlist_attr":
        ordinal = _kvlist(value).get("device_ordinal")
        if ordinal is not None and ordinal.isdigit():
            return int(ordinal)
    return None


def label_of(metric: Any) -> str:
    """What tells a labelled metric's series apart: a string attribute, a buffer size, a device."""
    value = metric.attribute.value
    kind = value.WhichOneof("attr")
    if kind == "string_attr":
        return value.string_attr
    if kind == "kvlist_attr":
        pairs = _kvlist(value)
        for name in ("buffer-size", "buffer_size"):
            if pairs.get(name):
                return pairs[name]
        if pairs.get("device_ordinal"):
            return f"tensor_core-{pairs['device_ordinal']}"
        return next((text for text in pairs.values() if text), "")
    return ""


def _kvlist(value: Any) -> dict[str, str]:
    pairs = {}
    for attribute in value.kvlist_attr.attributes:
        inner = attribute.value
        kind = inner.WhichOneof("attr")
        if kind in ("string_attr", "int_attr", "double_attr", "bool_attr"):
            pairs[attribute.key] = str(getattr(inner, kind))
    return pairs


# -- distributions and summaries ---------------------------------------------------


@dataclass
class _Pooled:
    """Distributions of one label, added up (the service may send one per device)."""

    count: int
    weighted_mean: float
    buckets: list[int]
    options: Any


def _merge_by_label(metrics: Iterable[Any]) -> dict[str, dict[str, float]]:
    pooled: dict[str, _Pooled] = {}
    summaries: dict[str, Any] = {}
    for metric in metrics:
        label = label_of(metric)
        kind = metric.WhichOneof("measure")
        if kind == "distribution" and metric.distribution.count > 0:
            _pool(pooled, label, metric.distribution)
        elif kind == "summary" and metric.summary.sample_count > 0:
            best = summaries.get(label)
            if best is None or metric.summary.sample_count > best.sample_count:
                summaries[label] = metric.summary
    stats = {label: summary_stats(summary) for label, summary in summaries.items()}
    for label, pool in pooled.items():
        stats[label] = _pooled_stats(pool)
    return stats


def _pool(pooled: dict[str, _Pooled], label: str, distribution: Any) -> None:
    counts = [int(count) for count in distribution.bucket_counts]
    pool = pooled.get(label)
    if pool is None:
        pooled[label] = _Pooled(int(distribution.count), distribution.mean * distribution.count, counts, distribution.bucket_options)
        return
    pool.count += int(distribution.count)
    pool.weighted_mean += distribution.mean * distribution.count
    if len(counts) > len(pool.buckets):
        pool.buckets.extend([0] * (len(counts) - len(pool.buckets)))
    for index, count in enumerate(counts):
        pool.buckets[index] += count


def _pooled_stats(pool: _Pooled) -> dict[str, float]:
    stats = {"mean": pool.weighted_mean / pool.count}
    edges = bucket_edges(pool.options)
    if edges and sum(pool.buckets) > 0:
        for name, quantile in PERCENTILES:
            stats[name] = percentile(pool.buckets, edges, quantile)
    return stats


def summary_stats(summary: Any) -> dict[str, float]:
    stats = {"mean": summary.sample_sum / summary.sample_count}
    for quantile in summary.quantile:
        name = next((name for q, name in _QUANTILE_NAMES.items() if abs(q - quantile.quantile) < 1e-9), None)
        if name and math.isfinite(quantile.value):
            stats[name] = quantile.value
    return stats


def bucket_edges(options: Any) -> list[float]:
    """The boundaries of a distribution's finite buckets (one more than there are buckets)."""
    kind = options.WhichOneof("options")
    if kind == "exponential_buckets":
        exponential = options.exponential_buckets
        return [exponential.scale * exponential.growth_factor**i for i in range(exponential.num_finite_buckets + 1)]
    if kind == "linear_buckets":
        linear = options.linear_buckets
        return [linear.offset + linear.width * i for i in range(linear.num_finite_buckets + 1)]
    if kind == "explicit_buckets":
        return list(options.explicit_buckets.bounds)
    return []


def percentile(counts: Sequence[int], edges: Sequence[float], quantile: float) -> float:
    """A quantile of bucketed samples, interpolated linearly inside its bucket.

    ``counts[0]`` is the underflow bucket (taken to start at 0), ``counts[i]``
    the finite bucket between ``edges[i-1]`` and ``edges[i]``, and anything
    after the last finite bucket overflows (its quantiles read as the last edge).
    """
    target = quantile * sum(counts)
    below = 0
    for index, count in enumerate(counts):
        if count <= 0 or below + count < target:
            below += max(count, 0)
            continue
        low, high = _bucket_range(edges, index)
        return low + (target - below) / count * (high - low)
    return edges[-1]


def _bucket_range(edges: Sequence[float], index: int) -> tuple[float, float]:
    if index == 0:
        return min(0.0, edges[0]), edges[0]
    if index < len(edges):
        return edges[index - 1], edges[index]
    return edges[-1], edges[-1]


def hbm_percentages(values: dict[str, float]) -> dict[str, float]:
    """``tpu.{i}.hbmMemoryUsage``: usage over total, in percent, where both are known."""
    percentages = {}
    for key, total in values.items():
        if not key.endswith(".hbmCapacityTotal") or total <= 0:
            continue
        prefix = key[: -len("hbmCapacityTotal")]
        usage = values.get(prefix + "hbmCapacityUsage")
        if usage is not None:
            percentages[prefix + "hbmMemoryUsage"] = usage / total * 100
    return percentages
