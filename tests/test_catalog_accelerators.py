"""Accelerator keys (AMD, TPU, Trainium, IPU, Apple, OpenMetrics) land in the right charts, live or from a run file."""

from __future__ import annotations

import pytest
from stored_series import stored

from leet.model.catalog import FAMILIES, describe, group, name_gpu_vendors
from leet.ui.views.charts import default_mode

# key, family, chart id, title, unit, scale, series
CASES = [
    # AMD: W&B's gpu.N keys, plus the fields only AMD sources give
    ("gpu.3.gpu", "GPU", "gpu.gpu", "GPU Utilization", "%", 1, "GPU 3"),
    ("gpu.0.memoryAllocated", "GPU", "gpu.memoryAllocated", "GPU Memory Allocated", "%", 1, "GPU 0"),
    ("gpu.0.memoryReadWriteActivity", "GPU", "gpu.memoryReadWriteActivity", "GPU Memory Read/Write Activity", "%", 1, "GPU 0"),
    ("gpu.0.memoryOverDrive", "GPU", "gpu.memoryOverDrive", "GPU Memory OverDrive", "%", 1, "GPU 0"),
    ("gpu.0.energyJoules", "GPU", "gpu.energy", "GPU Energy", "J", 1, "GPU 0"),
    ("gpu.0.graphicsClock", "GPU", "gpu.graphicsClock", "GPU Graphics Clock", "Hz", 1e6, "GPU 0"),
    ("gpu.0.memoryClock", "GPU", "gpu.memoryClock", "GPU Memory Clock", "Hz", 1e6, "GPU 0"),
    ("gpu.0.fanSpeed", "GPU", "gpu.fanSpeed", "GPU Fan Speed", "%", 1, "GPU 0"),
    ("gpu.0.correctedMemoryErrors", "GPU", "gpu.correctedMemoryErrors", "GPU Corrected Memory Errors", "", 1, "GPU 0"),
    # TPU
    ("tpu.0.dutyCycle", "Accelerators", "tpu.dutyCycle", "TPU Duty Cycle", "%", 1, "TPU 0"),
    ("tpu.1.tensorcoreUtilization", "Accelerators", "tpu.tensorcoreUtilization", "TPU TensorCore Utilization", "%", 1, "TPU 1"),
    ("tpu.2.hbmMemoryUsage", "Accelerators", "tpu.hbm_used_percent", "TPU HBM Used", "%", 1, "TPU 2"),
    ("tpu.2.hbmCapacityUsage", "Accelerators", "tpu.hbm_used", "TPU HBM Used", "B", 1, "TPU 2"),
    ("tpu.2.hbmCapacityTotal", "Accelerators", "tpu.hbmCapacityTotal", "TPU HBM Total", "B", 1, "TPU 2"),
    ("tpu.0.tensorcoreIdleDuration", "Accelerators", "tpu.tensorcoreIdleDuration", "TPU TensorCore Idle Duration", "s", 1, "TPU 0"),
    ("tpu.collectiveE2ELatency.all_reduce.p999Us", "Accelerators", "tpu.collectiveE2ELatency",
     "TPU Collective E2E Latency", "s", 1e-6, "all_reduce p999"),
    ("tpu.hostToDeviceTransferLatency.1mb.meanUs", "Accelerators", "tpu.hostToDeviceTransferLatency",
     "TPU Host-to-Device Transfer Latency", "s", 1e-6, "1mb mean"),
    ("tpu.grpcTcpMinRtt.p50Us", "Accelerators", "tpu.grpcTcpMinRtt", "TPU gRPC TCP Min RTT", "s", 1e-6, "p50"),
    # Trainium / Inferentia
    ("trn.17.neuroncore_utilization", "Accelerators", "trn.neuroncore_utilization", "NeuronCore Utilization", "%", 1,
     "NeuronCore 17"),
    ("trn.neuron_device_total_memory_usage", "Accelerators", "trn.device_memory", "Neuron Device Memory", "B", 1, "Total"),
    ("trn.host_memory_usage.tensors", "Accelerators", "trn.host_memory", "Neuron Host Memory", "B", 1, "Tensors"),
    ("trn.3.neuroncore_memory_usage.model_shared_scratchpad", "Accelerators", "trn.neuroncore_memory",
     "NeuronCore Memory", "B", 1, "NeuronCore 3 Shared scratchpad"),
    # Graphcore IPU: the unit is part of the key
    ("ipu.0.ipu power (W)", "Accelerators", "ipu.ipu power", "IPU Power", "W", 1, "IPU 0"),
    ("ipu.0.average die temp (C)", "Accelerators", "ipu.average die temp", "IPU Average Die Temp", "°C", 1, "IPU 0"),
    ("ipu.15.ipu utilisation (%)", "Accelerators", "ipu.ipu utilisation", "IPU Utilisation", "%", 1, "IPU 15"),
    ("ipu.0.clock (MHz)", "Accelerators", "ipu.clock", "IPU Clock", "Hz", 1e6, "IPU 0"),
    ("ipu.0.pcie link speed (GT/s)", "Accelerators", "ipu.pcie link speed", "IPU pcie link speed", "GT/s", 1, "IPU 0"),
    # Apple silicon
    ("cpu.ecpu_percent", "CPU", "cpu.cluster", "CPU E/P Cores", "%", 1, "E-cores"),
    ("cpu.pcpu_percent", "CPU", "cpu.cluster", "CPU E/P Cores", "%", 1, "P-cores"),
    ("cpu.pcpu_freq", "CPU", "cpu.cluster_freq", "CPU E/P Core Freq", "Hz", 1e6, "P-cores"),
    ("cpu.powerWatts", "CPU", "cpu.power", "CPU Power", "W", 1, "Default"),
    ("system.powerWatts", "CPU", "system.power", "System Power", "W", 1, "Default"),
    ("ane.power", "Accelerators", "ane.power", "Neural Engine Power", "W", 1, "Default"),
    ("gpu.0.freq", "GPU", "gpu.freq", "GPU Freq", "Hz", 1e6, "GPU 0"),
    ("memory.used_percent", "Memory", "memory.used_percent", "RAM Used", "%", 1, "Default"),
    # A run file's Apple stats record loses "system." with the prefix old writers put on every key.
    ("powerWatts", "CPU", "system.power", "System Power", "W", 1, "Default"),
]


@pytest.mark.parametrize(("key", "family", "chart", "title", "unit", "scale", "series"), CASES, ids=[c[0] for c in CASES])
def test_accelerator_keys_get_their_chart(key, family, chart, title, unit, scale, series):
    info = describe(key)
    assert (info.family, info.chart, info.title, info.unit, info.series) == (family, chart, title, unit, series)
    assert info.scale == pytest.approx(scale)
    assert info.family in FAMILIES


@pytest.mark.parametrize("key", [case[0] for case in CASES])
def test_a_node_label_changes_neither_chart_nor_unit(key):
    plain, labelled = describe(key), describe(f"{key}/l:node-3")
    assert (labelled.chart, labelled.title, labelled.unit, labelled.series) == (plain.chart, plain.title, plain.unit, plain.series)
    assert labelled.label == "node-3" and labelled.legend == f"{plain.series} · node-3".replace("Default · ", "")
    # A DCGM node under an x_label: both parts of the label, one chart.
    assert describe(f"{key}/l:l1337/l:rank0").chart == plain.chart


def test_counts_are_whole_numbers_and_measures_are_not():
    assert describe("gpu.0.correctedMemoryErrors").integer
    assert describe("tpu.hloQueueSize.tensor_core-0").integer
    assert describe("tpu.0.iciLinkHealth").integer
    for key in ("gpu.0.energyJoules", "tpu.0.dutyCycle", "trn.0.neuroncore_utilization", "ipu.0.ipu power (W)"):
        assert not describe(key).integer, key


def test_percent_accelerator_charts_are_bounded():
    for key in ("tpu.0.dutyCycle", "tpu.0.hbmMemoryUsage", "trn.0.neuroncore_utilization", "ipu.0.ipu utilisation (%)",
                "gpu.0.memoryReadWriteActivity"):
        info = describe(key)
        assert info.percent and (info.y_min, info.y_max) == (0.0, 100.0), key
    assert describe("ipu.0.average die temp (C)").y_min is None  # temperatures may go below zero


def _charts(keys):
    return {spec.chart: spec for spec in group(stored(keys))}


def test_devices_of_one_kind_share_a_chart_in_index_order():
    keys = [f"tpu.{i}.dutyCycle" for i in (3, 1, 0, 2)] + [f"trn.{i}.neuroncore_utilization" for i in range(12)]
    charts = _charts(keys)
    assert [s.series for s in charts["tpu.dutyCycle"].series] == ["TPU 0", "TPU 1", "TPU 2", "TPU 3"]
    assert [s.series for s in charts["trn.neuroncore_utilization"].series][:3] == ["NeuronCore 0", "NeuronCore 1", "NeuronCore 2"]
    assert [s.series for s in charts["trn.neuroncore_utilization"].series][-1] == "NeuronCore 11"


def test_from_four_devices_utilisation_charts_are_heatmaps_as_for_nvidia():
    for make in (
        lambda i: f"gpu.{i}.gpu",
        lambda i: f"tpu.{i}.tensorcoreUtilization",
        lambda i: f"tpu.{i}.dutyCycle",
        lambda i: f"trn.{i}.neuroncore_utilization",
        lambda i: f"ipu.{i}.ipu utilisation (%)",
    ):
        (three,) = group(stored([make(i) for i in range(3)]))
        (four,) = group(stored([make(i) for i in range(4)]))
        assert (default_mode(three), default_mode(four)) == ("line", "heatmap"), make(0)
    # Watts are not a heatmap: their scale has no top.
    (power,) = group(stored([f"ipu.{i}.ipu power (W)" for i in range(8)]))
    assert default_mode(power) == "line"


def test_ipu_keys_with_and_without_their_unit_suffix_share_a_chart():
    charts = _charts(["ipu.0.ipu utilisation (%)", "ipu.1.ipu utilisation", "ipu.0.ipu utilisation (session) (%)"])
    assert [s.series for s in charts["ipu.ipu utilisation"].series] == ["IPU 0", "IPU 1"]
    assert charts["ipu.ipu utilisation (session)"].full_title == "IPU Utilisation (session) (%)"


def test_apple_cluster_keys_are_one_chart_per_measure():
    charts = _charts(["cpu.ecpu_percent", "cpu.pcpu_percent", "cpu.ecpu_freq", "cpu.pcpu_freq", "system.powerWatts", "ane.power"])
    assert [s.series for s in charts["cpu.cluster"].series] == ["E-cores", "P-cores"]
    assert charts["cpu.cluster_freq"].full_title == "CPU E/P Core Freq (Hz)"
    assert charts["system.power"].family == "CPU" and charts["ane.power"].family == "Accelerators"


OPENMETRICS = [
    "openmetrics.node.node_load1.0",
    "openmetrics.node.node_load15.0",
    "openmetrics.node.node_cpu_seconds_total.10",
    "openmetrics.node.node_cpu_seconds_total.2",
    "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1",
    "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0",
    "openmetrics.app.requests_total.0",
    "zzz.custom",
]


def test_openmetrics_one_chart_per_metric_a_series_per_index_grouped_by_endpoint():
    specs = [spec for spec in group(stored(OPENMETRICS)) if spec.chart.startswith("openmetrics.")]
    assert [spec.title for spec in specs] == [
        "requests_total",  # endpoint "app"
        "DCGM_FI_DEV_GPU_TEMP",  # "dcgm"
        "node_cpu_seconds_total",  # "node", then by metric
        "node_load1",
        "node_load15",
    ]
    temp = next(spec for spec in specs if spec.title == "DCGM_FI_DEV_GPU_TEMP")
    assert [s.series for s in temp.series] == ["dcgm 0", "dcgm 1"]
    assert all(spec.family == "Other" for spec in specs)
    # Unknown keys of no endpoint come after the endpoints'.
    assert group(stored(OPENMETRICS))[-1].title == "zzz.custom"


def test_openmetrics_keys_from_a_labelled_run_keep_their_node():
    (spec,) = group(stored(["openmetrics.node.node_load1.0/l:rank0", "openmetrics.node.node_load1.0/l:rank1"]))
    assert [s.legend for s in spec.series] == ["node 0 · rank0", "node 0 · rank1"]


def test_accelerator_charts_lead_the_first_page():
    keys = ["network.recvBps", "disk.vda.readBps", "cpu.avg_temp", "memory_percent", "cpu.0.cpu_percent",
            "tpu.0.dutyCycle", "tpu.0.tensorcoreUtilization", "tpu.0.hbmMemoryUsage", "tpu.0.hbmCapacityUsage"]
    assert [spec.chart for spec in group(stored(keys))][:5] == [
        "cpu.core", "memory.percent", "tpu.tensorcoreUtilization", "tpu.hbm_used_percent", "network.rx_rate",
    ]
    # Then by family: the TPU's other charts lead the Accelerators family.
    assert [spec.chart for spec in group(stored(keys))][-2:] == ["tpu.dutyCycle", "tpu.hbm_used"]
    trn = ["memory_percent", "cpu.0.cpu_percent", "trn.0.neuroncore_utilization", "trn.neuron_device_total_memory_usage",
           "trn.host_total_memory_usage", "network.recvBps"]
    assert [spec.chart for spec in group(stored(trn))][:5] == [
        "cpu.core", "memory.percent", "trn.neuroncore_utilization", "trn.device_memory", "network.rx_rate",
    ]
    ipu = ["cpu.0.cpu_percent", "ipu.0.ipu power (W)", "ipu.0.ipu utilisation (%)", "ipu.0.average die temp (C)", "network.recvBps"]
    assert [spec.chart for spec in group(stored(ipu))] == [
        "cpu.core", "ipu.ipu utilisation", "ipu.average die temp", "ipu.ipu power", "network.rx_rate",
    ]


def test_gpu_titles_name_the_vendors_only_when_two_write_gpu_keys():
    specs = group(stored(["gpu.0.gpu", "gpu.0.temp", "tpu.0.dutyCycle", "cpu.0.cpu_percent"]))
    assert name_gpu_vendors(specs, ["AMD"]) == specs
    named = {spec.chart: spec.full_title for spec in name_gpu_vendors(specs, ["NVIDIA", "AMD"])}
    assert named["gpu.gpu"] == "NVIDIA + AMD GPU Utilization (%)"
    assert named["gpu.temp"] == "NVIDIA + AMD GPU Temp (°C)"
    assert named["tpu.dutyCycle"] == "TPU Duty Cycle (%)" and named["cpu.core"] == "CPU Core (%)"


def _stats_keys(*keys: str) -> list[str]:
    """The keys a run file's stats record with ``keys`` reads back as."""
    from leet.runfile import wandb_records_pb2 as pb
    from leet.runfile.decode import decode

    stats = pb.StatsRecord()
    for key in keys:
        stats.item.add(key=key, value_json="1.5")
    return list(decode(pb.Record(num=1, stats=stats).SerializeToString()).values)


def test_the_same_keys_read_from_a_run_file_chart_alike():
    keys = ["tpu.0.dutyCycle/l:node0", "trn.3.neuroncore_utilization/l:node0", "ipu.1.ipu power (W)/l:node0",
            "openmetrics.node.node_load1.0/l:node0", "gpu.2.memoryReadWriteActivity/l:node0", "ane.power/l:node0"]
    read = _stats_keys(*keys)
    assert [describe(key).chart for key in read] == [describe(key).chart for key in keys]
    assert all(describe(key).label == "node0" for key in read)
    # An Apple run: "system.powerWatts" comes back without "system.", still the System Power chart.
    apple = _stats_keys("system.powerWatts", "cpu.ecpu_percent", "gpu.0.gpu")
    assert [describe(key).chart for key in apple] == ["system.power", "cpu.cluster", "gpu.gpu"]
