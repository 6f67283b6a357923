"""The GPU part of the vitals sidebar: what a person reads for each GPU, and when there are none."""

from __future__ import annotations

from collectors.base import CollectorStatus, Health
from collectors.fake import (
    FAKE_LOST_AFTER,
    FakeClock,
    FakeGPUCollector,
    MissingCollector,
    replay,
)
from collectors.gpu import GpuInfo, MigInstance
from leet.ui.views.gpu import (
    absent_note,
    fit_gpu_section,
    gpu_indices,
    gpu_row,
    gpu_section,
)
from leet.ui.views.health import (
    absent_gpu_reasons,
    extra_notes,
    gpu_notes,
    health_notes,
)
from leet.ui.views.symon import vitals_model
from widgets.vitals import VitalsModel, vitals_line_count, vitals_rows

GIB = 2**30
H100 = 80 * GIB


def h100(index: int, **fields) -> GpuInfo:
    return GpuInfo(index, "NVIDIA H100 80GB HBM3", H100, 700.0, **fields)


def busy(index: int, util: float = 87.0, used_gib: float = 61.2, temp: float = 64.0, watts: float = 512.0) -> dict[str, float]:
    return {
        f"gpu.{index}.gpu": util,
        f"gpu.{index}.memoryAllocated": used_gib * GIB / H100 * 100,
        f"gpu.{index}.memoryAllocatedBytes": used_gib * GIB,
        f"gpu.{index}.temp": temp,
        f"gpu.{index}.powerWatts": watts,
        f"gpu.{index}.enforcedPowerLimitWatts": 700.0,
    }


def texts(row) -> list[str]:
    return [text for text, _ in row.details]


def drawn(model: VitalsModel, width: int = 36) -> list[str]:
    return ["".join(text for text, _ in row).rstrip() for row in vitals_rows(model, width, vitals_line_count(model))]


# -- one GPU ---------------------------------------------------------------------


def test_a_busy_gpu_reads_utilisation_memory_heat_and_power():
    row = gpu_row(busy(0), 0, h100(0))
    assert (row.label, row.reading, row.meter) == ("GPU0", "87%", True)
    assert abs(row.fraction - 0.87) < 1e-9
    assert texts(row) == ["61.2/80.0 GiB", "64°C", "512/700W"]


def test_a_hot_gpu_is_flagged_and_a_missing_limit_leaves_plain_watts():
    latest = busy(0, temp=88.0)
    del latest["gpu.0.enforcedPowerLimitWatts"]
    row = gpu_row(latest, 0, GpuInfo(0, "GPU", H100, None))
    assert ("88°C", "warn") in row.details
    assert "512W" in texts(row)


def test_a_lost_gpu_says_lost_and_hides_its_stale_numbers():
    info = h100(3, lost=True, reason="fell off the bus (NVML: GPU is lost)")
    row = gpu_row(busy(3), 3, info)
    assert not row.meter and row.reading == "lost" and row.reading_style == "warn"
    assert texts(row) == ["fell off the bus (NVML: GPU is lost)"]
    lines = drawn(VitalsModel(gpu=gpu_section(busy(3), [info])), 34)
    assert lines[1:] == ["GPU3 lost", "     fell off the bus (NVML: GPU …"]
    assert "87%" not in " ".join(lines) and "61.2" not in " ".join(lines)


def test_a_mig_gpu_says_why_there_is_no_meter_and_lists_its_slices():
    slices = (
        MigInstance(1, 0, profile="1g.10gb", memory_used=int(3.2 * GIB), memory_total=int(9.8 * GIB)),
        MigInstance(1, 1, profile="3g.40gb", memory_used=None, memory_total=int(39.5 * GIB)),
    )
    latest = busy(1)
    del latest["gpu.1.gpu"]
    row = gpu_row(latest, 1, h100(1, mig=slices, utilization_supported=False))
    assert not row.meter and row.reading == "MIG · no utilisation from NVML"
    assert [(s.label, s.text) for s in row.slices] == [("1g.10gb", "3.20/9.80 GiB"), ("3g.40gb", "N/A")]
    assert abs(row.slices[0].fraction - 3.2 / 9.8) < 1e-3 and row.slices[1].fraction is None
    lines = drawn(VitalsModel(gpu=gpu_section(latest, [h100(1, mig=slices, utilization_supported=False)])), 44)
    assert lines[1].startswith("GPU1 MIG · no utilisation from NVML")
    assert lines[2].split() == ["61.2/80.0", "GiB", "64°C", "512/700W"]
    assert lines[3].split()[0] == "1g.10gb" and lines[3].endswith("3.20/9.80 GiB")
    assert "0%" not in " ".join(lines)


def test_mig_mode_without_slices_still_explains_the_missing_meter():
    info = h100(0, utilization_supported=False, reason="MIG mode: NVML gives no utilisation for the whole GPU")
    assert gpu_row({}, 0, info).reading == "MIG · no utilisation from NVML"


def test_unknown_utilisation_reads_na_not_zero():
    latest = busy(0)
    del latest["gpu.0.gpu"]
    row = gpu_row(latest, 0, h100(0))
    assert row.reading == "N/A" and row.fraction is None


# -- the section -------------------------------------------------------------------


def test_gpus_known_only_by_their_keys_still_get_rows():
    latest = {**busy(0), **busy(1, util=40.0), "gpu.process.0.gpu": 87.0}
    assert gpu_indices(latest, ()) == [0, 1]
    section = gpu_section(latest)
    assert section.heading == "2 GPUs"
    assert texts(section.rows[1])[0] == "61.2/80.0 GiB", "the total comes from the allocated percentage"


def test_the_heading_names_the_model_once_for_a_uniform_box():
    gpus = [h100(i) for i in range(8)]
    assert gpu_section({}, gpus).heading == "8 × NVIDIA H100 80GB HBM3"
    assert len(gpu_section({}, gpus).rows) == 8


def test_two_lines_per_gpu_with_details_dropped_from_the_end_when_narrow():
    model = VitalsModel(gpu=gpu_section(busy(0), [h100(0)]))
    lines = drawn(model, 40)
    assert lines[0] == "NVIDIA H100 80GB HBM3"
    assert lines[1].startswith("GPU0 ") and lines[1].endswith(" 87%") and "█" in lines[1]
    assert lines[2].split() == ["61.2/80.0", "GiB", "64°C", "512/700W"]
    assert drawn(model, 23)[2].split() == ["61.2/80.0", "GiB", "64°C"]


def test_a_short_sidebar_draws_one_line_per_gpu():
    gpus = [h100(i) for i in range(8)]
    latest = {k: v for i in range(8) for k, v in busy(i).items()}
    model = vitals_model({}, None, (), gpu=gpu_section(latest, gpus))
    assert vitals_line_count(model) == 1 + 16
    assert fit_gpu_section(model, 46, keep=16) is model
    compact = fit_gpu_section(model, 30, keep=16)
    assert compact.gpu.compact and vitals_line_count(compact) == 1 + 8
    line = drawn(compact, 34)[1]
    assert line.startswith("GPU0 ") and "87% 61.2/80.0 GiB" in line and "█" in line


# -- no GPU at all -------------------------------------------------------------------


def test_no_driver_is_one_calm_line_not_a_warning():
    statuses = (
        CollectorStatus("cpu", Health.OK),
        CollectorStatus("nvidia", Health.ABSENT, "no NVIDIA driver: libnvidia-ml.so.1 not found"),
    )
    section = gpu_section({}, (), absent_gpu_reasons(statuses))
    assert section.note == "no NVIDIA driver" and not section.rows
    lines = drawn(VitalsModel(gpu=section))
    assert lines == ["GPU no NVIDIA driver"]
    assert health_notes(statuses, calm_when_absent={"nvidia"}) == []


def test_a_failing_gpu_backend_still_warns():
    statuses = (CollectorStatus("nvidia", Health.FAILING, "NVMLError: Unknown Error"),)
    assert health_notes(statuses, calm_when_absent={"nvidia"}) == ["nvidia: NVMLError: Unknown Error"]
    assert absent_gpu_reasons(statuses) == []


def test_absent_note_keeps_the_gist_of_each_reason():
    assert absent_note(["no NVIDIA driver: libnvidia-ml.so.1 not found", "no AMD GPU", "no NVIDIA driver: x"]) == "no NVIDIA driver; no AMD GPU"
    assert gpu_section({}).note == "" and gpu_section({}).rows == ()


def test_gpu_notes_go_to_the_gpu_table_not_the_warnings():
    extras = {"notes.nvidia": ("GPU processes are reported by host PID",), "notes.disk": ("disk path /data does not exist",)}
    assert gpu_notes(extras) == ["GPU processes are reported by host PID"]
    assert extra_notes(extras, skip={"nvidia"}) == ["disk path /data does not exist"]
    assert len(extra_notes(extras)) == 2


# -- the fake GPU box the screens are drawn from ---------------------------------------


def test_fake_gpus_carry_uuids_and_processes_some_in_the_watched_tree():
    clock = FakeClock(1000.0)
    fake = FakeGPUCollector(clock, count=2, uuids=True, processes=True)
    fake.sample()
    extras = fake.extras()
    assert [g.uuid.startswith("GPU-") for g in extras["gpus"]] == [True, True]
    rows = extras["gpu_processes"]
    assert {row.gpu for row in rows if row.in_tree} == {0, 1}
    assert any(not row.in_tree and row.used_memory is None and row.sm_percent is None for row in rows)
    assert FakeGPUCollector(clock, count=2).extras().keys() == {"gpus"}, "the plain fake stays as it was"


def test_a_fake_gpu_falls_off_the_bus_and_a_mig_gpu_reports_no_utilisation():
    clock = FakeClock(1000.0)
    fake = FakeGPUCollector(clock, count=3, lost=(2,), mig=(1,), processes=True)
    history = replay([fake], clock, 1000.0, 10.0, int(FAKE_LOST_AFTER / 10) + 2)
    before, after = history[0], history[-1]
    assert "gpu.2.gpu" in before.values and "gpu.2.gpu" not in after.values
    lost = after.extras["gpus"][2]
    assert lost.lost and lost.reason
    assert "gpu.1.gpu" not in after.values and "gpu.1.memoryAllocatedBytes" in after.values
    mig = after.extras["gpus"][1]
    assert not mig.utilization_supported and len(mig.mig) == 4
    assert sum(s.memory_used for s in mig.mig) == after.values["gpu.1.memoryAllocatedBytes"]
    assert {row.mig for row in after.extras["gpu_processes"] if row.gpu == 1} >= {"3g.40gb", "1g.10gb"}
    assert all(row.gpu != 2 for row in after.extras["gpu_processes"])


def test_a_missing_driver_is_absent_with_its_reason():
    probe = MissingCollector().probe()
    assert not probe.available and probe.reason.startswith("no NVIDIA driver")
