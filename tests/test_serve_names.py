"""``leet serve`` names: every W&B key becomes one valid, unique Prometheus series, in base units."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from test_catalog import ACCELERATOR_RUN_KEYS, HOST_KEYS_NODE0
from test_catalog import CASES as HOST_CASES
from test_catalog_accelerators import CASES as ACCELERATOR_CASES

import collectors.fake_accel as fake_accel
from collectors.fake import FakeClock, make_fake_collectors, replay
from leet.export.names import COUNTER, GAUGE, GENERIC, series, wandb_value
from leet.model import metric_rules
from leet.model.keys import split_label

RECORDS = Path(__file__).parent / "fixtures" / "hardware" / "wandb_records"
MIB, GIB = 2.0**20, 2.0**30

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
UNIT_SUFFIXES = ("_percent", "_bytes", "_bytes_per_second", "_celsius", "_watts", "_joules", "_hertz", "_seconds")


def fake_keys() -> set[str]:
    """Every key the fake host, NVIDIA GPUs, MI300X, TPU, Trainium and OpenMetrics collectors write."""
    clock = FakeClock(1_000.0)
    collectors = make_fake_collectors(clock, gpus=2) + [
        fake_accel.FakeAMDCollector(clock, 2),
        fake_accel.FakeTPUCollector(clock, 2),
        fake_accel.FakeTrainiumCollector(clock, 2, 2),
        fake_accel.FakeOpenMetricsCollector(clock),
    ]
    keys: set[str] = set()
    for sample in replay(collectors, clock, 1_000.0, 2.0, 3):
        keys.update(sample.values)
    return keys


def recorded_keys() -> set[str]:
    """Every system key wandb 0.31.0 wrote in the recorded runs."""
    keys: set[str] = set()
    for path in RECORDS.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "stats":
                keys.update(record["stats"]["item"])
    return keys


def catalog_field_keys() -> set[str]:
    """One key for every field the catalog's field tables know."""
    keys = {f"gpu.0.{field}" for field in metric_rules._GPU_FIELDS}
    keys |= {f"gpu.process.1.{field}" for field in metric_rules._GPU_FIELDS}
    keys |= {f"tpu.2.{field}" for field in metric_rules._TPU_FIELDS}
    keys |= {f"tpu.{name}.all_reduce.p99Us" for name in metric_rules._TPU_DISTRIBUTIONS}
    keys |= {f"ipu.3.{field}" for field in metric_rules._IPU_FIELDS}
    keys |= {f"trn.4.neuroncore_memory_usage.{part}" for part in metric_rules._NEURON_MEMORY_PARTS}
    return keys


def every_key() -> set[str]:
    keys = fake_keys() | recorded_keys() | catalog_field_keys() | set(HOST_KEYS_NODE0) | set(ACCELERATOR_RUN_KEYS)
    keys |= {case[0] for case in HOST_CASES} | {case[0] for case in ACCELERATOR_CASES}
    return keys


EVERY_KEY = sorted(every_key())


# key, exported sample name, the key's own labels, factor
KNOWN = [
    ("gpu.0.gpu", "leet_gpu_utilization_percent", {"gpu": "0"}, 1),
    ("gpu.7.memoryAllocated", "leet_gpu_memory_used_percent", {"gpu": "7"}, 1),
    ("gpu.0.memoryAllocatedBytes", "leet_gpu_memory_used_bytes", {"gpu": "0"}, 1),
    ("gpu.1.memoryUsed", "leet_gpu_memory_used_bytes", {"gpu": "1"}, MIB),  # DCGM writes MiB
    ("gpu.0.temp", "leet_gpu_temperature_celsius", {"gpu": "0"}, 1),
    ("gpu.0.powerWatts", "leet_gpu_power_watts", {"gpu": "0"}, 1),
    ("gpu.0.powerPercent", "leet_gpu_power_percent", {"gpu": "0"}, 1),
    ("gpu.2.smClock", "leet_gpu_sm_clock_hertz", {"gpu": "2"}, 1e6),
    ("gpu.0.memoryClock", "leet_gpu_memory_clock_hertz", {"gpu": "0"}, 1e6),
    ("gpu.0.energyJoules", "leet_gpu_energy_joules_total", {"gpu": "0"}, 1),
    ("gpu.0.totalEnergyConsumption", "leet_gpu_energy_joules_total", {"gpu": "0"}, 1e-3),  # DCGM: mJ
    ("gpu.0.pcieTxBytes", "leet_gpu_pcie_transmit_bytes_per_second", {"gpu": "0"}, MIB),
    ("gpu.0.pcieTxKBps", "leet_gpu_pcie_transmit_bytes_per_second", {"gpu": "0"}, 1024),
    ("gpu.0.uncorrectedMemoryErrors", "leet_gpu_uncorrected_memory_errors_total", {"gpu": "0"}, 1),
    ("gpu.process.3.gpu", "leet_process_gpu_utilization_percent", {"gpu": "3"}, 1),
    ("cpu.3.cpu_percent", "leet_cpu_utilization_percent", {"core": "3"}, 1),
    ("cpu", "leet_process_cpu_utilization_percent", {}, 1),
    ("memory_percent", "leet_memory_used_percent", {}, 1),
    ("memory", "leet_memory_used_percent", {}, 1),  # what W&B's Python monitor called it
    ("proc.memory.availableMB", "leet_memory_available_bytes", {}, MIB),
    ("proc.memory.rssMB", "leet_process_resident_memory_bytes", {}, MIB),
    ("disk./.usagePercent", "leet_disk_usage_percent", {"path": "/"}, 1),
    ("disk.\\.usagePercent", "leet_disk_usage_percent", {"path": "/"}, 1),  # the Python monitor's spelling of /
    ("disk./mnt/data.v2.usageGB", "leet_disk_used_bytes", {"path": "/mnt/data.v2"}, GIB),
    ("disk.nvme0n1.in", "leet_disk_read_bytes_total", {"device": "nvme0n1"}, MIB),
    ("disk.vda.out", "leet_disk_written_bytes_total", {"device": "vda"}, MIB),
    ("disk.sda.readBps", "leet_disk_read_bytes_per_second", {"device": "sda"}, 1),
    ("network.recv", "leet_network_received_bytes_total", {}, 1),
    ("network.sent", "leet_network_sent_bytes_total", {}, 1),
    ("network.recvBps", "leet_network_received_bytes_per_second", {}, 1),
    ("network.tcpRetransmits", "leet_network_tcp_retransmits_total", {}, 1),
    ("tpu.1.tensorcoreUtilization", "leet_tpu_tensorcore_utilization_percent", {"tpu": "1"}, 1),
    ("tpu.hloExecTiming.tensor_core_0.p50Us", "leet_tpu_hlo_execution_time_seconds", {"category": "tensor_core_0", "stat": "p50"}, 1e-6),
    ("trn.5.neuroncore_utilization", "leet_neuroncore_utilization_percent", {"core": "5"}, 1),
    ("trn.2.neuroncore_memory_usage.tensors", "leet_neuroncore_memory_used_bytes", {"core": "2", "part": "tensors"}, 1),
    ("ipu.1.clock (MHz)", "leet_ipu_clock_hertz", {"ipu": "1"}, 1e6),
    ("cpu.pcpu_freq", "leet_cpu_cluster_frequency_hertz", {"cluster": "p"}, 1e6),
    ("gpu.0.pcieLinkSpeed", "leet_gpu_pcie_link_speed_bytes_per_second", {"gpu": "0"}, 1 / 8),
    ("tpu.grpcTcpDeliveryRate.p50Mbps", "leet_tpu_grpc_tcp_delivery_rate_bytes_per_second", {"stat": "p50"}, 1e6 / 8),
    ("openmetrics.node.node_load1.0", "leet_openmetrics", {"endpoint": "node", "metric": "node_load1", "index": "0"}, 1),
]


@pytest.mark.parametrize(("key", "name", "labels", "scale"), KNOWN)
def test_known_keys_get_their_prometheus_name_labels_and_base_unit(key, name, labels, scale):
    found = series(key, "box1")
    assert found.metric.sample_name == name
    assert dict(found.labels) == {"node": "box1", "wandb_key": key, **labels}
    assert found.scale == pytest.approx(scale)


def test_a_key_with_a_node_label_is_that_nodes_series():
    dcgm = series("gpu.0.temp/l:node7", "box1")
    assert dict(dcgm.labels) == {"node": "node7", "wandb_key": "gpu.0.temp", "gpu": "0"}
    assert dcgm.metric == series("gpu.0.temp", "box1").metric


def test_keys_no_rule_names_are_kept_under_one_generic_metric():
    for key in ("gpu.0.someNewField", "tpu.9.madeUp", "brand.new.key", "ipu.0.pcie link speed (GT/s)", "", 'a"b\\c\nd'):
        found = series(key, "box1")
        assert found.metric == GENERIC, key
        assert dict(found.labels) == {"node": "box1", "wandb_key": key}
        assert found.scale == 1


def test_every_key_gets_a_valid_and_unique_series():
    seen: dict[tuple, str] = {}
    for raw_key in EVERY_KEY:
        found = series(raw_key, "box1")
        metric, labels = found.metric, dict(found.labels)
        assert METRIC_NAME.fullmatch(metric.sample_name), raw_key
        assert all(LABEL_NAME.fullmatch(name) and not name.startswith("__") for name in labels), raw_key
        assert len(labels) == len(found.labels), f"{raw_key}: a label twice"
        key, label = split_label(raw_key)
        assert labels["wandb_key"] == key and labels["node"] == (label or "box1")
        identity = (metric.sample_name, tuple(sorted(labels.items())))
        assert identity not in seen, f"{raw_key} and {seen[identity]} are one series"
        seen[identity] = raw_key
    assert len(seen) == len(EVERY_KEY) > 300


def test_names_follow_prometheus_conventions():
    for raw_key in EVERY_KEY:
        metric = series(raw_key, "box1").metric
        assert metric.name.startswith("leet_") and metric.help, raw_key
        assert metric.kind in (GAUGE, COUNTER)
        assert metric.name.endswith(f"_{metric.unit}") if metric.unit else not metric.name.endswith(UNIT_SUFFIXES), raw_key
        assert metric.sample_name.endswith("_total") == (metric.kind == COUNTER), raw_key
        assert not metric.name.endswith("_total"), raw_key  # the exposition adds it, once
        assert not re.search(r"(_mb|_gb|_mib|_mhz|_us|_ms|_kb|_bps|_bits)(_|$)", metric.name), f"{raw_key}: a scaled unit in {metric.name}"


def test_one_name_means_one_thing():
    """Keys that share a name share its type, unit and help, as one Prometheus family must."""
    by_name = defaultdict(set)
    for raw_key in EVERY_KEY:
        metric = series(raw_key, "box1").metric
        by_name[metric.name].add((metric.kind, metric.unit, metric.help))
    assert {name: meanings for name, meanings in by_name.items() if len(meanings) > 1} == {}


def test_every_field_the_catalog_knows_has_a_name_of_its_own():
    for key in sorted(catalog_field_keys()):
        unit = metric_rules.meaning_of(key).unit.unit
        if unit in ("GT/s",):  # a unit Prometheus has no base for
            continue
        assert series(key, "box1").metric != GENERIC, key


def test_units_are_the_catalogs():
    """A W&B key is measured on /metrics as symon draws it: the catalog's unit and factor."""
    from leet.model.catalog import describe

    for raw_key in EVERY_KEY:
        found = series(raw_key, "box1")
        if found.metric == GENERIC:
            continue
        info = describe(raw_key)
        bits = 1 / 8 if info.unit == "bit/s" else 1  # Prometheus counts data in bytes
        assert found.scale == info.scale * bits, raw_key


def test_wandb_value_undoes_the_factor():
    assert wandb_value("gpu.0.smClock", 1.98e9) == pytest.approx(1980)
    assert wandb_value("disk./.usageGB/l:node3", 2 * GIB) == pytest.approx(2)
    assert wandb_value("gpu.0.gpu", 97.0) == 97.0
    assert wandb_value("never.heard.of", 5.0) == 5.0
