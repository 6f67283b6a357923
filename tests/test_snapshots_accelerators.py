"""The monitor on accelerator boxes: the sidebar's device lines, and whole-screen snapshots.

The SVGs live in ``tests/__snapshots__/test_snapshots_accelerators/``. After a
deliberate change to what these screens look like, regenerate them with
``python3 -m pytest tests/test_snapshots_accelerators.py --snapshot-update``
and read the SVG text before keeping them (see tests/test_snapshots.py for
the environment they assume).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from stored_series import stored

from collectors.base import CollectorStatus, Health
from collectors.gpu import AcceleratorInfo, GpuInfo
from leet.model.catalog import describe
from leet.model.store import SeriesKey
from leet.testing.demo import ACCELERATOR_BOXES, accelerator_collectors, make_accelerator_demo
from leet.ui.views.gpu import (
    Readings,
    accelerator_groups,
    device_sections,
    fit_accelerators,
    gpu_vendors,
)
from leet.ui.views.health import ACCELERATOR_BACKENDS, absent_gpu_reasons, health_notes
from widgets.vitals import VitalsModel, vitals_line_count, vitals_rows

LARGE = (160, 48)
FILTER_OPENMETRICS = ("backslash", *"openmetrics", "enter")
GIB = 2**30


def as_stored(latest: dict[str, float]) -> dict[SeriesKey, float]:
    """Values by W&B key as the store holds them: by series, each key's node label split off."""
    return dict(zip(stored(latest), latest.values()))


def text_rows(model: VitalsModel, width: int = 40) -> list[str]:
    rows = vitals_rows(model, width, vitals_line_count(model))
    return ["".join(text for text, _ in row).rstrip() for row in rows]


def tpu(index: int, reason: str = "") -> AcceleratorInfo:
    return AcceleratorInfo("Google", index, "TPU v6e", f"tpu.{index}.dutyCycle", f"tpu.{index}.hbmMemoryUsage",
                           memory_total=32 * GIB, reason=reason)


def amd(index: int) -> AcceleratorInfo:
    return AcceleratorInfo("AMD", index, "AMD Instinct MI300X", f"gpu.{index}.gpu", f"gpu.{index}.memoryAllocated",
                           f"gpu.{index}.temp", f"gpu.{index}.powerWatts", 192 * GIB, 750.0)


# -- the accelerator lines ------------------------------------------------------


def test_one_line_per_device_vendor_meter_memory_temperature_power():
    latest = {"gpu.0.gpu": 97.0, "gpu.0.memoryAllocated": 50.0, "gpu.0.temp": 71.0, "gpu.0.powerWatts": 612.0}
    (group,) = accelerator_groups(as_stored(latest), [amd(0)])
    assert group.heading == "AMD Instinct MI300X"
    rows = text_rows(VitalsModel(accelerators=(group,)), 46)
    assert rows[0] == "AMD Instinct MI300X"
    assert rows[1].startswith("AMD0 ") and "█" in rows[1]
    assert rows[1].endswith("97% 96.0/192 GiB 71°C 612/750W")
    # Narrower, details give way from the end and the meter keeps some room.
    narrow = text_rows(VitalsModel(accelerators=(group,)), 30)[1]
    assert narrow.startswith("AMD0 ") and "97%" in narrow and "W" not in narrow and len(narrow) <= 30


def test_headings_name_the_vendor_and_count():
    latest = {f"tpu.{i}.dutyCycle": 90.0 for i in range(4)}
    (group,) = accelerator_groups(as_stored(latest), [tpu(i) for i in range(4)])
    assert group.heading == "4 × Google TPU v6e"
    assert [row.label for row in group.rows] == ["TPU0", "TPU1", "TPU2", "TPU3"]
    assert group.rows[0].details == ()  # no HBM figure yet: nothing made up


def test_values_are_read_with_a_node_label_after_the_key():
    latest = {"tpu.0.dutyCycle/l:node3": 42.0, "tpu.0.hbmMemoryUsage/l:node3": 25.0}
    (group,) = accelerator_groups(as_stored(latest), [tpu(0)])
    assert (group.rows[0].reading, group.rows[0].details) == ("42%", (("8.00/32.0 GiB", "value"),))
    # DCGM names its node in the key; a --label after it is found too.
    assert Readings(as_stored({"gpu.0.temp/l:l1337/l:rank0": 61.0})).get("gpu.0.temp/l:l1337") == 61.0


def test_devices_without_figures_say_why_dimly_once():
    idle = "no TPU workload is running: nothing answers at localhost:8431"
    (group,) = accelerator_groups({}, [tpu(i, idle) for i in range(4)])
    assert group.rows == () and group.note == idle
    rows = vitals_rows(VitalsModel(accelerators=(group,)), 46, 2)
    assert "".join(text for text, _ in rows[1]).startswith("TPU no TPU workload")
    assert {style for text, style in rows[1] if "workload" in text} == {"muted"}


def test_idle_devices_beside_busy_ones_share_one_line():
    infos = [AcceleratorInfo("AWS", core, "trn1.32xlarge NeuronCore", f"trn.{core}.neuroncore_utilization") for core in range(2)]
    infos += [AcceleratorInfo("AWS", core, "trn1.32xlarge NeuronCore", reason="not in use by the watched Neuron runtime") for core in range(2, 5)]
    latest = {"trn.0.neuroncore_utilization": 80.0, "trn.1.neuroncore_utilization": 60.0}
    (group,) = accelerator_groups(as_stored(latest), infos)
    assert [row.label for row in group.rows] == ["NC0", "NC1", "NC"]
    assert group.rows[-1].reading == "3 more: not in use by the watched Neuron runtime"
    assert group.strip == ((0, 0.8), (1, 0.6), (2, None), (3, None), (4, None))


def test_many_devices_collapse_to_a_mean_and_a_strip():
    infos = [AcceleratorInfo("AWS", core, "trn1.32xlarge NeuronCore", f"trn.{core}.neuroncore_utilization") for core in range(32)]
    latest = {f"trn.{core}.neuroncore_utilization": float(50 + core) for core in range(32)}
    model = VitalsModel(accelerators=accelerator_groups(as_stored(latest), infos))
    fitted = fit_accelerators(model, 200, 10)  # room to spare, but 32 meters in a column compare badly
    assert fitted.accelerators[0].collapsed and vitals_line_count(fitted) == 4
    rows = text_rows(fitted, 40)
    assert rows[1].startswith("NC   ") and "66% avg of 32 50%–81%" in rows[1]
    assert rows[2].startswith("NC0  ") and len(rows[2].split()[1]) == 16
    assert rows[3].startswith("NC16 ") and rows[3].endswith("▇")  # 81%: the seventh of eight levels


def test_short_of_room_the_biggest_group_collapses_first():
    latest = {f"tpu.{i}.dutyCycle": 90.0 for i in range(8)}
    groups = accelerator_groups(as_stored(latest), [tpu(i) for i in range(8)])
    model = VitalsModel(meters=(), accelerators=groups)
    assert vitals_line_count(model) == 9
    assert fit_accelerators(model, 30, 10) is model
    short = fit_accelerators(model, 15, 10)
    assert short.accelerators[0].collapsed and vitals_line_count(short) == 3


def test_amd_gpus_without_nvidia_ones_are_the_gpu_section():
    gpus = (GpuInfo(0, "AMD Instinct MI300X", 192 * GIB, 750.0),)
    latest = {"gpu.0.gpu": 90.0, "gpu.0.memoryAllocatedBytes": 96.0 * GIB, "gpu.0.temp": 70.0}
    extras = {"gpus": gpus, "accelerators.amd": (amd(0),)}
    gpu, others = device_sections(latest, as_stored(latest), extras)
    assert gpu.heading == "AMD Instinct MI300X" and [row.label for row in gpu.rows] == ["GPU0"]
    assert others == ()
    assert gpu_vendors(extras) == ["AMD"]


def test_amd_gpus_beside_nvidia_ones_get_lines_naming_the_vendor():
    gpus = (GpuInfo(0, "NVIDIA H100 80GB HBM3", 80 * GIB, 700.0),)
    extras = {"gpus": gpus, "accelerators.amd": (amd(0),)}
    gpu, (group,) = device_sections({"gpu.0.gpu": 90.0}, as_stored({"gpu.0.gpu": 90.0}), extras)
    assert gpu.heading == "NVIDIA H100 80GB HBM3" and group.heading == "AMD Instinct MI300X"
    assert group.rows[0].label == "AMD0"
    assert gpu_vendors(extras) == ["NVIDIA", "AMD"]
    # A model name without its vendor gets it, so the two sections cannot be mistaken.
    tesla = {"gpus": (GpuInfo(0, "Tesla V100-SXM2-16GB", 16 * GIB, 300.0), GpuInfo(1, "Tesla V100-SXM2-16GB", 16 * GIB, 300.0)),
             "accelerators.amd": (amd(0),)}
    gpu, _ = device_sections({"gpu.0.gpu": 1.0, "gpu.1.gpu": 2.0}, {}, tesla)
    assert gpu.heading == "NVIDIA · 2 × Tesla V100-SXM2-16GB"


def test_apple_gpu_keys_are_left_to_the_apple_line():
    apple = AcceleratorInfo("Apple", 0, "Apple M2 Max GPU", "gpu.0.gpu", "memory.used_percent", "gpu.0.temp", "gpu.0.powerWatts",
                            memory_total=32 * GIB)
    latest = {"gpu.0.gpu": 35.0, "gpu.0.temp": 48.0, "gpu.0.powerWatts": 6.2, "memory.used_percent": 50.0}
    absent = ["no NVIDIA driver: libnvidia-ml.so.1 not found"]
    gpu, (group,) = device_sections(latest, as_stored(latest), {"accelerators.apple": (apple,)}, absent)
    assert gpu.rows == () and gpu.note == ""  # no "no NVIDIA driver" on a Mac whose GPU is listed
    assert group.heading == "Apple M2 Max GPU"
    assert group.rows[0].label == "GPU0" and group.rows[0].details == (("16.0/32.0 GiB", "value"), ("48°C", "value"), ("6W", "value"))


def test_dcgm_gpus_on_several_nodes_get_a_group_each():
    infos = [
        AcceleratorInfo("NVIDIA", i, f"NVIDIA H100 80GB HBM3 on {node}", f"gpu.{i}.gpu/l:{node}")
        for node in ("l1337", "l1338") for i in range(2)
    ]
    raw = {f"gpu.{i}.gpu/l:{node}": 10.0 * i + (50 if node == "l1338" else 0) for node in ("l1337", "l1338") for i in range(2)}
    latest = {"gpu.0.gpu": 50.0, "gpu.1.gpu": 60.0}  # the store's keys, labels dropped: nodes mixed
    gpu, groups = device_sections(latest, as_stored(raw), {"accelerators.dcgm": tuple(infos)})
    assert gpu.rows == ()  # not the mixed-up keys
    assert [group.heading for group in groups] == ["2 × NVIDIA H100 80GB HBM3 on l1337", "2 × NVIDIA H100 80GB HBM3 on l1338"]
    assert [row.reading for row in groups[1].rows] == ["50%", "60%"]


def test_absent_accelerators_do_not_warn_on_a_laptop():
    statuses = [
        CollectorStatus(name, Health.ABSENT, reason)
        for name, reason in (("nvidia", "no NVIDIA driver"), ("amd", "no AMD GPU driver"), ("tpu", "no Google TPU on the PCI bus"),
                             ("trainium", "neuron-monitor is not installed"), ("ipu", "gcipuinfo is not installed"),
                             ("apple", "not macOS on Apple silicon"), ("dcgm", "x"))
    ]
    assert health_notes(statuses, calm_when_absent=ACCELERATOR_BACKENDS) == []
    failing = replace(statuses[2], health=Health.FAILING, reason="the runtime metrics service did not answer")
    assert health_notes([failing], calm_when_absent=ACCELERATOR_BACKENDS) == ["tpu: the runtime metrics service did not answer"]
    # The GPU section's calm note names GPU drivers only, not every accelerator looked for.
    assert absent_gpu_reasons(statuses) == ["no NVIDIA driver", "no AMD GPU driver"]


@pytest.mark.parametrize("box", ACCELERATOR_BOXES)
def test_every_box_is_deterministic(box):
    from collectors.fake import FakeClock

    def sweep() -> dict[str, float]:
        clock = FakeClock(1_700_000_000.0)
        values: dict[str, float] = {}
        for collector in accelerator_collectors(box, clock):
            if collector.probe().available:
                try:
                    values.update(collector.sample())
                except ConnectionRefusedError:
                    pass
        return values

    first, second = sweep(), sweep()
    assert first == second and len(first) > 50
    # Every key the fakes make is one the catalog knows, as the real collectors' are.
    assert [key for key in first if describe(key).chart.startswith("key:")] == []


# -- whole screens ------------------------------------------------------------------


def test_eight_mi300x(snap_compare):
    assert snap_compare(make_accelerator_demo("mi300x").app, terminal_size=LARGE)


def test_tpu_v6e_4(snap_compare):
    assert snap_compare(make_accelerator_demo("tpu-v6e-4").app, terminal_size=LARGE)


def test_trn1_32xlarge(snap_compare):
    assert snap_compare(make_accelerator_demo("trn1.32xlarge").app, terminal_size=LARGE)


def test_nvidia_with_an_openmetrics_endpoint(snap_compare):
    app = make_accelerator_demo("nvidia-openmetrics").app
    assert snap_compare(app, terminal_size=LARGE, press=FILTER_OPENMETRICS)
