"""Key → chart mapping: every W&B system-metric family lands in a named chart."""

from __future__ import annotations

import pytest
from stored_series import stored

from leet.model.catalog import FAMILIES, describe, group
from leet.model.keys import join_label, natural_key, split_label

# Keys wandb 0.31.0 wrote on a Linux host with x_label="node0" (fixture
# wandb_records/wandb-0.31.0_stats_linux_host-only_1s_x_label-node0.jsonl).
HOST_KEYS_NODE0 = [
    "disk./.usageGB/l:node0",
    "disk./.usagePercent/l:node0",
    "disk./tmp.usageGB/l:node0",
    "disk./tmp.usagePercent/l:node0",
    "disk.vda.in/l:node0",
    "disk.vda.out/l:node0",
    "memory_percent/l:node0",
    "network.recv/l:node0",
    "network.sent/l:node0",
    "network.tcpRetransmits/l:node0",
    "proc.cpu.threads/l:node0",
    "proc.memory.availableMB/l:node0",
    "proc.memory.percent/l:node0",
    "proc.memory.rssMB/l:node0",
    "wandb.memory.rssMB/l:node0",
    "cpu/l:node0",
    "wandb.cpu/l:node0",
]

# From the OpenMetrics + DCGM PromQL + neuron-monitor replay run of the same fixtures.
ACCELERATOR_RUN_KEYS = [
    "gpu.0.temp/l:l1337",
    "gpu.0.temp/l:l1338",
    "gpu.1.temp/l:l1337",
    "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0",
    "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1",
    "openmetrics.node.node_load1.0",
    "openmetrics.node.node_load15.0",
    "openmetrics.node.node_load5.0",
    "openmetrics.node.node_cpu_seconds_total.10",
    "openmetrics.node.node_cpu_seconds_total.2",
    "trn.0.neuroncore_memory_usage.constants",
    "trn.0.neuroncore_memory_usage.model_code",
    "trn.0.neuroncore_utilization",
    "trn.host_memory_usage.application_memory",
    "trn.host_memory_usage.dma_buffers",
    "trn.host_total_memory_usage",
    "trn.neuron_device_total_memory_usage",
]

MIB, GIB = 2.0**20, 2.0**30

# key, family, chart title, unit, scale, series
CASES = [
    # host, as W&B writes it
    ("cpu", "Process", "Process CPU", "%", 1, "Default"),
    ("cpu.0.cpu_percent", "CPU", "CPU Core", "%", 1, "Core 0"),
    ("cpu.13.cpu_percent", "CPU", "CPU Core", "%", 1, "Core 13"),
    ("cpu.avg_temp", "CPU", "CPU Temp", "°C", 1, "Default"),
    ("cpu.powerWatts", "CPU", "CPU Power", "W", 1, "Default"),
    ("cpu.ecpu_percent", "CPU", "CPU E/P Cores", "%", 1, "E-cores"),
    ("cpu.pcpu_freq", "CPU", "CPU E/P Core Freq", "Hz", 1e6, "P-cores"),
    ("system.powerWatts", "CPU", "System Power", "W", 1, "Default"),
    ("memory_percent", "Memory", "System Memory", "%", 1, "Default"),
    ("memory", "Memory", "System Memory", "%", 1, "Default"),
    ("memory.used", "Memory", "RAM Used", "B", 1, "Default"),
    ("memory.used_percent", "Memory", "RAM Used", "%", 1, "Default"),
    ("swap.used", "Memory", "Swap Used", "B", 1, "Default"),
    ("swap.used_percent", "Memory", "Swap Used", "%", 1, "Default"),
    ("proc.memory.availableMB", "Memory", "Memory Available", "B", MIB, "Default"),
    ("network.sentBps", "Network", "Network Tx", "B/s", 1, "Default"),
    ("network.recvBps", "Network", "Network Rx", "B/s", 1, "Default"),
    ("network.recv", "Network", "Network Rx Total", "B", 1, "Default"),
    ("network.tcpRetransmits", "Network", "Network TCP Retransmits", "", 1, "Default"),
    ("disk.nvme0n1.readBps", "Disk", "Disk I/O", "B/s", 1, "nvme0n1 read"),
    ("disk.nvme0n1.writeBps", "Disk", "Disk I/O", "B/s", 1, "nvme0n1 write"),
    ("disk.vda.in", "Disk", "Disk I/O Total", "B", MIB, "vda read"),
    ("disk.vda.out", "Disk", "Disk I/O Total", "B", MIB, "vda write"),
    ("disk.in", "Disk", "Disk I/O Total", "B", MIB, "read"),
    ("disk./.usagePercent", "Disk", "Disk Usage", "%", 1, "/"),
    ("disk./tmp.usageGB", "Disk", "Disk Usage", "B", GIB, "/tmp"),
    ("disk./mnt/data.v2.usageGB", "Disk", "Disk Usage", "B", GIB, "/mnt/data.v2"),
    ("disk./mnt/data.v2.usagePercent", "Disk", "Disk Usage", "%", 1, "/mnt/data.v2"),
    # The Python monitor (legacy, and macOS runs) spelled "/" as "\\" in the path
    ("disk.\\.usagePercent", "Disk", "Disk Usage", "%", 1, "/"),
    ("disk.\\System\\Volumes\\Data.usagePercent", "Disk", "Disk Usage", "%", 1, "/System/Volumes/Data"),
    ("disk.\\System\\Volumes\\Data.usageGB", "Disk", "Disk Usage", "B", GIB, "/System/Volumes/Data"),
    ("proc.memory.rssMB", "Process", "Process Memory", "B", MIB, "Default"),
    ("proc.memory.percent", "Process", "Process Memory", "%", 1, "Default"),
    ("proc.cpu.threads", "Process", "Process CPU Threads", "", 1, "Default"),
    ("proc.cpu.throttledPercent", "Process", "Process CPU Throttled", "%", 1, "Default"),
    ("proc.memory.oomKills", "Process", "Process OOM Kills", "", 1, "Default"),
    ("wandb.cpu", "Process", "W&B CPU", "%", 1, "Default"),
    ("wandb.memory.rssMB", "Process", "W&B Memory", "B", MIB, "Default"),
    # NVIDIA
    ("gpu.0.gpu", "GPU", "GPU Utilization", "%", 1, "GPU 0"),
    ("gpu.1.memory", "GPU", "GPU Memory Access", "%", 1, "GPU 1"),
    ("gpu.0.memoryAllocated", "GPU", "GPU Memory Allocated", "%", 1, "GPU 0"),
    ("gpu.0.memoryAllocatedBytes", "GPU", "GPU Memory Allocated", "B", 1, "GPU 0"),
    ("gpu.0.temp", "GPU", "GPU Temp", "°C", 1, "GPU 0"),
    ("gpu.0.powerWatts", "GPU", "GPU Power", "W", 1, "GPU 0"),
    ("gpu.0.powerPercent", "GPU", "GPU Power", "%", 1, "GPU 0"),
    ("gpu.0.enforcedPowerLimitWatts", "GPU", "GPU Power Limit", "W", 1, "GPU 0"),
    ("gpu.0.smClock", "GPU", "GPU SM Clock", "Hz", 1e6, "GPU 0"),
    ("gpu.0.memoryClock", "GPU", "GPU Memory Clock", "Hz", 1e6, "GPU 0"),
    ("gpu.0.fanSpeed", "GPU", "GPU Fan Speed", "%", 1, "GPU 0"),
    ("gpu.0.uncorrectedMemoryErrors", "GPU", "GPU Uncorrected Memory Errors", "", 1, "GPU 0"),
    ("gpu.0.pcieLinkGen", "GPU", "GPU PCIe Link Gen", "", 1, "GPU 0"),
    ("gpu.0.pcieLinkWidth", "GPU", "GPU PCIe Link Width", "", 1, "GPU 0"),
    ("gpu.0.pcieTxBytes", "GPU", "GPU PCIe Tx", "B/s", MIB, "GPU 0"),
    ("gpu.0.nvlinkRxBytes", "GPU", "GPU NVLink Rx", "B/s", MIB, "GPU 0"),
    ("gpu.0.smActive", "GPU", "GPU SM Active", "%", 1, "GPU 0"),
    ("gpu.0.energyJoules", "GPU", "GPU Energy", "J", 1, "GPU 0"),
    ("gpu.process.2.gpu", "GPU", "Process GPU Utilization", "%", 1, "GPU 2"),
    ("gpu.process.0.memoryAllocatedBytes", "GPU", "Process GPU Memory Allocated", "B", 1, "GPU 0"),
    # DCGM-exporter via PromQL
    ("gpu.0.memoryUsed", "GPU", "GPU Memory Used", "B", MIB, "GPU 0"),
    ("gpu.0.totalEnergyConsumption", "GPU", "GPU Energy", "J", 1e-3, "GPU 0"),
    # AMD
    ("gpu.3.memoryReadWriteActivity", "GPU", "GPU Memory Read/Write Activity", "%", 1, "GPU 3"),
    ("gpu.3.memoryOverDrive", "GPU", "GPU Memory OverDrive", "%", 1, "GPU 3"),
    # Apple
    ("gpu.0.freq", "GPU", "GPU Freq", "Hz", 1e6, "GPU 0"),
    ("ane.power", "Accelerators", "Neural Engine Power", "W", 1, "Default"),
    # TPU
    ("tpu.0.dutyCycle", "Accelerators", "TPU Duty Cycle", "%", 1, "TPU 0"),
    ("tpu.3.tensorcoreUtilization", "Accelerators", "TPU TensorCore Utilization", "%", 1, "TPU 3"),
    ("tpu.0.hbmCapacityUsage", "Accelerators", "TPU HBM Used", "B", 1, "TPU 0"),
    ("tpu.0.memoryUsageBytes", "Accelerators", "TPU HBM Used", "B", 1, "TPU 0"),
    ("tpu.0.hbmMemoryUsage", "Accelerators", "TPU HBM Used", "%", 1, "TPU 0"),
    ("tpu.bufferTransferLatency.8mb_plus_.p90Us", "Accelerators", "TPU Buffer Transfer Latency", "s", 1e-6,
     "8mb_plus_ p90"),
    ("tpu.hloExecTiming.tensor_core_0.meanUs", "Accelerators", "TPU HLO Execution Time", "s", 1e-6,
     "tensor_core_0 mean"),
    ("tpu.grpcTcpDeliveryRate.p50Mbps", "Accelerators", "TPU gRPC TCP Delivery Rate", "bit/s", 1e6, "p50"),
    ("tpu.hloQueueSize.tensor_core-0", "Accelerators", "TPU HLO Queue Size", "", 1, "tensor_core-0"),
    # Trainium
    ("trn.0.neuroncore_utilization", "Accelerators", "NeuronCore Utilization", "%", 1, "NeuronCore 0"),
    ("trn.host_total_memory_usage", "Accelerators", "Neuron Host Memory", "B", 1, "Total"),
    ("trn.host_memory_usage.dma_buffers", "Accelerators", "Neuron Host Memory", "B", 1, "DMA buffers"),
    ("trn.neuron_device_total_memory_usage", "Accelerators", "Neuron Device Memory", "B", 1, "Total"),
    ("trn.1.neuroncore_memory_usage.tensors", "Accelerators", "NeuronCore Memory", "B", 1, "NeuronCore 1 Tensors"),
    # IPU, as legacy-py wrote the keys (unit suffix) and without it
    ("ipu.1.average board temp (C)", "Accelerators", "IPU Average Board Temp", "°C", 1, "IPU 1"),
    ("ipu.1.clock (MHz)", "Accelerators", "IPU Clock", "Hz", 1e6, "IPU 1"),
    ("ipu.1.ipu power (W)", "Accelerators", "IPU Power", "W", 1, "IPU 1"),
    ("ipu.1.ipu utilisation (%)", "Accelerators", "IPU Utilisation", "%", 1, "IPU 1"),
    ("ipu.1.ipu utilisation (session) (%)", "Accelerators", "IPU Utilisation (session)", "%", 1, "IPU 1"),
    ("ipu.0.ipu utilisation", "Accelerators", "IPU Utilisation", "%", 1, "IPU 0"),
    # OpenMetrics
    ("openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1", "Other", "DCGM_FI_DEV_GPU_TEMP", "", 1, "dcgm 1"),
    ("openmetrics.node.node_cpu_seconds_total.12", "Other", "node_cpu_seconds_total", "", 1, "node 12"),
]


@pytest.mark.parametrize(("key", "family", "title", "unit", "scale", "series"), CASES, ids=[c[0] for c in CASES])
def test_known_keys_get_their_chart(key, family, title, unit, scale, series):
    info = describe(key)
    assert (info.family, info.title, info.unit, info.series) == (family, title, unit, series)
    assert info.scale == pytest.approx(scale)
    assert info.key == key and info.label is None
    assert info.family in FAMILIES


def test_escaped_disk_paths_read_as_paths_in_titles_and_legends():
    # As the key is stored (one backslash per "/"), and escaped once more (two).
    keys = ["disk.\\System\\Volumes\\Data.usagePercent/l:mac", "disk.\\\\System\\\\Volumes\\\\Data.usageGB"]
    infos = [describe(key) for key in keys]
    assert [info.series for info in infos] == ["/System/Volumes/Data", "/System/Volumes/Data"]
    assert infos[0].legend == "/System/Volumes/Data · mac"
    assert join_label(infos[0].key, infos[0].label) == keys[0]  # the key itself stays as written
    assert all("\\" not in spec.full_title + "".join(i.legend for i in spec.series) for spec in group(stored(keys)))
    # A Windows drive is not a Unix path spelled with backslashes.
    assert describe("disk.C:\\.usagePercent").series == "C:\\"


def test_percent_charts_have_a_fixed_range():
    for key in ("cpu.0.cpu_percent", "memory_percent", "gpu.0.gpu", "tpu.0.dutyCycle"):
        info = describe(key)
        assert info.percent and (info.y_min, info.y_max) == (0.0, 100.0)
    info = describe("gpu.0.powerWatts")
    assert not info.percent and info.y_min == 0.0 and info.y_max is None


def test_every_labelled_host_key_is_charted_with_its_node():
    for raw in HOST_KEYS_NODE0:
        info = describe(raw)
        assert info.label == "node0"
        assert info.family != "Other", raw
        assert join_label(info.key, info.label) == raw
        assert describe(info.key).chart == info.chart  # the label never changes the chart


def test_labels_split_and_join():
    assert split_label("gpu.0.gpu/l:rank3") == ("gpu.0.gpu", "rank3")
    assert split_label("gpu.0.gpu") == ("gpu.0.gpu", None)
    assert split_label("cpu/l:") == ("cpu", None)
    # x_label plus a DCGM-exporter node: both parts stay in the label.
    assert split_label("gpu.0.temp/l:node1/l:rank0") == ("gpu.0.temp", "node1/l:rank0")
    for raw in ("gpu.0.temp/l:node1/l:rank0", "disk./.usageGB/l:node0", "cpu"):
        assert join_label(*split_label(raw)) == raw


def test_same_gpu_on_two_nodes_are_two_series_in_one_chart():
    charts = {spec.chart: spec for spec in group(stored(ACCELERATOR_RUN_KEYS))}
    temp = charts["gpu.temp"]
    assert temp.full_title == "GPU Temp (°C)"
    assert [(s.series, s.label) for s in temp.series] == [
        ("GPU 0", "l1337"),
        ("GPU 0", "l1338"),
        ("GPU 1", "l1337"),
    ]
    assert [s.legend for s in temp.series] == ["GPU 0 · l1337", "GPU 0 · l1338", "GPU 1 · l1337"]
    assert describe("gpu.0.temp/l:node1/l:rank0").legend == "GPU 0 · node1 / rank0"
    assert describe("cpu/l:node0").legend == "node0"


def test_series_follow_natural_order():
    keys = [f"cpu.{i}.cpu_percent" for i in (10, 2, 1, 0, 11, 3)]
    (spec,) = group(stored(keys))
    assert [s.series for s in spec.series] == ["Core 0", "Core 1", "Core 2", "Core 3", "Core 10", "Core 11"]
    assert sorted(["node_load15", "node_load5", "node_load1"], key=natural_key) == [
        "node_load1",
        "node_load5",
        "node_load15",
    ]


def test_disk_io_from_several_devices_is_one_chart():
    keys = ["disk.sdb.readBps", "disk.nvme0n1.writeBps", "disk.nvme0n1.readBps", "disk.sdb.writeBps"]
    (spec,) = group(stored(keys))
    assert spec.full_title == "Disk I/O (B/s)"
    assert [s.series for s in spec.series] == ["nvme0n1 read", "nvme0n1 write", "sdb read", "sdb write"]


def test_openmetrics_charts_by_metric_with_endpoint_and_index_series():
    charts = {spec.title: spec for spec in group(stored(ACCELERATOR_RUN_KEYS))}
    cpu_seconds = charts["node_cpu_seconds_total"]
    assert cpu_seconds.family == "Other"
    assert [s.series for s in cpu_seconds.series] == ["node 2", "node 10"]
    assert charts["Neuron Host Memory"].full_title == "Neuron Host Memory (B)"
    assert [s.series for s in charts["Neuron Host Memory"].series] == ["Application", "DMA buffers", "Total"]


def test_unknown_keys_are_kept_under_their_own_name():
    info = describe("my.custom.metric")
    assert (info.family, info.title, info.unit, info.series) == ("Other", "my.custom.metric", "", "Default")
    field = describe("gpu.0.someFutureField")
    assert (field.family, field.title, field.series) == ("GPU", "GPU someFutureField", "GPU 0")
    specs = group(stored(["my.custom.metric", "another/l:n1", "cpu"]))
    assert {spec.title for spec in specs} == {"my.custom.metric", "another", "Process CPU"}


def test_describe_never_raises_and_titles_stay_plain_text():
    hostile = "x\x1b[2J\x07.[bold red]boom[/]"
    info = describe(hostile)
    assert "\x1b" not in info.title and "\x07" not in info.title
    assert info.title.endswith("[bold red]boom[/]")  # brackets are left for the UI to escape
    assert describe("").title == "(empty key)"
    assert describe(123).key == "123"  # type: ignore[arg-type]
    assert "\n" not in describe("openmetrics.ep.bad\nname.0").title


def test_full_title_has_no_empty_parentheses():
    specs = {spec.chart: spec for spec in group(stored(["proc.cpu.threads", "network.recvBps"]))}
    assert specs["proc.cpu.threads"].full_title == "Process CPU Threads"
    assert specs["network.rx_rate"].full_title == "Network Rx (B/s)"


def test_symon_order_puts_what_people_check_first_then_families():
    keys = [
        "zzz.custom", "proc.cpu.threads", "cpu", "gpu.0.temp", "gpu.0.gpu", "tpu.0.dutyCycle",
        "disk.vda.readBps", "network.sentBps", "network.recvBps", "swap.used_percent",
        "memory_percent", "cpu.0.cpu_percent", "disk./.usagePercent",
    ]
    titles = [spec.full_title for spec in group(stored(keys))]
    assert titles == [
        "CPU Core (%)",
        "System Memory (%)",
        "GPU Utilization (%)",
        "GPU Temp (°C)",
        "Network Rx (B/s)",
        "Network Tx (B/s)",
        "Disk I/O (B/s)",
        "Swap Used (%)",
        "Disk Usage (%)",
        "TPU Duty Cycle (%)",
        "Process CPU (%)",
        "Process CPU Threads",
        "zzz.custom",
    ]


def test_title_order_is_alphabetical():
    keys = ["network.recvBps", "cpu.0.cpu_percent", "gpu.0.temp", "disk.vda.readBps", "cpu"]
    assert [spec.title for spec in group(stored(keys), order="title")] == [
        "CPU Core", "Disk I/O", "GPU Temp", "Network Rx", "Process CPU",
    ]
    with pytest.raises(ValueError, match="unknown chart order"):
        group(stored(keys), order="random")


def test_duplicate_keys_make_one_series():
    (spec,) = group(stored(["gpu.0.gpu", "gpu.0.gpu", "gpu.0.gpu/l:a"]))
    assert [(s.series, s.label) for s in spec.series] == [("GPU 0", None), ("GPU 0", "a")]
