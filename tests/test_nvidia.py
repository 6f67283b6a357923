"""The NVIDIA collector against a made-up driver: the real pynvml above a stand-in C library."""

from __future__ import annotations

import threading
from pathlib import Path

import nvml_standin
import pynvml
import pytest
from nvml_standin import (
    CONTAINER_NAMESPACE,
    GIB,
    HOST_NAMESPACE,
    MIB,
    FakeGpu,
    FakeMig,
    FakeNvml,
    FakeProcess,
    FakeUtilizationSample,
    add_process,
    container_proc,
    host_proc,
    installed,
    set_pid_namespace,
)

from collectors import Health, Hub
from collectors.accelerators import accelerator_collectors
from collectors.gpu import GpuProcess
from collectors.nvidia import CONTAINER_NOTE, NvidiaCollector, mig_profile

W_AND_B_KEYS = {
    "gpu",
    "memory",
    "memoryAllocated",
    "memoryAllocatedBytes",
    "temp",
    "powerWatts",
    "powerPercent",
    "enforcedPowerLimitWatts",
    "smClock",
    "memoryClock",
    "graphicsClock",
    "correctedMemoryErrors",
    "uncorrectedMemoryErrors",
    "encoderUtilization",
    "fanSpeed",
}
EXTRA_KEYS = {"pcieLinkGen", "pcieLinkWidth", "maxPcieLinkGen", "maxPcieLinkWidth", "energyJoules"}


fake_nvml = nvml_standin.fake_nvml  # the fixture: a one-GPU box, installed for the test


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def proc(tmp_path: Path) -> Path:
    return host_proc(tmp_path / "proc")


def collector(proc: Path, clock: Clock, **kwargs) -> NvidiaCollector:
    made = NvidiaCollector(proc_root=str(proc), nvml=pynvml, clock=clock, **kwargs)
    probe = made.probe()
    assert probe.available, probe.reason
    return made


def fields(values, index: int) -> dict[str, float]:
    prefix = f"gpu.{index}."
    return {key[len(prefix):]: value for key, value in values.items() if key.startswith(prefix)}


# --- metric values ---------------------------------------------------------------


def test_every_gpu_reports_wandb_keys_in_wandb_units(fake_nvml, proc, clock):
    fake_nvml.gpus = [
        FakeGpu(memory_total=80 * GIB, memory_used=20 * GIB, power_mw=350_500, power_limit_mw=700_000),
        FakeGpu(utilization=97, temperature=71, sm_clock=1755, energy_mj=5_000_000, corrected_errors=3),
    ]
    values = collector(proc, clock).sample()

    first, second = fields(values, 0), fields(values, 1)
    assert set(first) == W_AND_B_KEYS | EXTRA_KEYS
    assert first["memoryAllocatedBytes"] == 20 * GIB
    assert first["memoryAllocated"] == 25.0
    assert first["powerWatts"] == 350.5
    assert first["enforcedPowerLimitWatts"] == 700.0
    assert first["powerPercent"] == pytest.approx(50.07, abs=0.01)
    assert (second["gpu"], second["temp"], second["smClock"]) == (97.0, 71.0, 1755.0)
    assert second["energyJoules"] == 5000.0
    assert second["correctedMemoryErrors"] == 3.0
    assert not any(key.startswith("gpu.process.") for key in values)


def test_pcie_throughput_is_there_only_when_asked_for(fake_nvml, proc, clock):
    fake_nvml.gpus = [FakeGpu(pcie_tx_kb=1500, pcie_rx_kb=250)]
    assert "gpu.0.pcieTxKBps" not in collector(proc, clock).sample()
    values = collector(proc, clock, pcie_throughput=True).sample()
    assert (values["gpu.0.pcieTxKBps"], values["gpu.0.pcieRxKBps"]) == (1500.0, 250.0)


def test_unsupported_fields_are_absent_and_asked_again_only_rarely(fake_nvml, proc, clock):
    gpu = FakeGpu(unsupported={"nvmlDeviceGetFanSpeed_v2", "nvmlDeviceGetMemoryErrorCounter", "nvmlDeviceGetPowerUsage"})
    fake_nvml.gpus = [gpu]
    nvidia = collector(proc, clock)

    values = fields(nvidia.sample(), 0)
    assert {"fanSpeed", "correctedMemoryErrors", "uncorrectedMemoryErrors", "powerWatts", "powerPercent"}.isdisjoint(values)
    assert values["enforcedPowerLimitWatts"] == 700.0  # its own call still answers
    asked = fake_nvml.calls["nvmlDeviceGetFanSpeed_v2"]

    gpu.unsupported.clear()  # e.g. a driver update, or a field that comes up late
    for _ in range(5):
        clock.now += 10
        assert "fanSpeed" not in fields(nvidia.sample(), 0)
    assert fake_nvml.calls["nvmlDeviceGetFanSpeed_v2"] == asked

    clock.now += 15  # 65 s after the refusal
    assert fields(nvidia.sample(), 0)["fanSpeed"] == 30.0


def test_any_other_error_costs_that_field_for_one_sweep(fake_nvml, proc, clock):
    gpu = FakeGpu(errors={"nvmlDeviceGetTemperatureV": pynvml.NVML_ERROR_UNKNOWN})
    fake_nvml.gpus = [gpu]
    nvidia = collector(proc, clock)

    values = fields(nvidia.sample(), 0)
    assert "temp" not in values
    assert values["gpu"] == 50.0
    gpu.errors.clear()
    assert fields(nvidia.sample(), 0)["temp"] == 40.0


def test_a_lost_gpu_is_marked_while_the_others_go_on(fake_nvml, proc, clock):
    fake_nvml.gpus = [FakeGpu(), FakeGpu(), FakeGpu()]
    nvidia = collector(proc, clock)
    assert fields(nvidia.sample(), 1)

    fake_nvml.gpus[1].lost = True
    clock.now += 2
    values = nvidia.sample()
    assert fields(values, 0) and fields(values, 2)
    assert not fields(values, 1)
    extras = nvidia.extras()
    lost = extras["gpus"][1]
    assert lost.lost and "GPU is lost" in lost.reason
    assert not extras["gpus"][0].lost
    assert any(note.startswith("GPU 1 is lost") for note in extras["notes.nvidia"])

    asked = fake_nvml.calls["nvmlDeviceGetHandleByIndex_v2"]
    clock.now += 30
    nvidia.sample()
    assert fake_nvml.calls["nvmlDeviceGetHandleByIndex_v2"] == asked  # not retried every sweep

    fake_nvml.gpus[1].lost = False  # reset and back
    clock.now += 31
    assert fields(nvidia.sample(), 1)["gpu"] == 50.0
    assert not nvidia.extras()["gpus"][1].lost
    assert nvidia.extras()["notes.nvidia"] == ()


def test_a_gpu_lost_before_start_is_listed_as_lost(fake_nvml, proc, clock):
    fake_nvml.gpus = [FakeGpu(), FakeGpu(lost=True)]
    nvidia = collector(proc, clock)
    values = nvidia.sample()
    assert fields(values, 0) and not fields(values, 1)
    assert [gpu.lost for gpu in nvidia.extras()["gpus"]] == [False, True]


def test_slow_facts_are_read_again_only_every_half_minute(fake_nvml, proc, clock):
    gpu = FakeGpu(power_limit_mw=700_000)
    fake_nvml.gpus = [gpu]
    nvidia = collector(proc, clock)
    nvidia.sample()
    names = fake_nvml.calls["nvmlDeviceGetName"]

    gpu.power_limit_mw = 400_000  # nvidia-smi -pl 400
    clock.now += 10
    assert nvidia.sample()["gpu.0.enforcedPowerLimitWatts"] == 700.0
    clock.now += 25
    assert nvidia.sample()["gpu.0.enforcedPowerLimitWatts"] == 400.0
    assert fake_nvml.calls["nvmlDeviceGetName"] == names + 1


def test_nvml_is_initialised_once_and_shut_down_on_close(fake_nvml, proc, clock):
    fake_nvml.gpus = [FakeGpu(), FakeGpu()]
    nvidia = collector(proc, clock)
    for _ in range(50):
        clock.now += 1
        nvidia.sample()
    assert fake_nvml.calls["nvmlInitWithFlags"] == 1
    assert fake_nvml.calls["nvmlDeviceGetCount_v2"] == 1
    assert fake_nvml.calls["nvmlDeviceGetHandleByIndex_v2"] == 2
    nvidia.close()
    nvidia.close()
    assert fake_nvml.calls["nvmlShutdown"] == 1
    assert fake_nvml.initialized == 0


def test_an_older_driver_is_read_through_the_older_entry_points(fake_nvml, proc, clock):
    fake_nvml.missing_functions = {
        "nvmlDeviceGetTemperatureV",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetFanSpeed_v2",
    }
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(300)])]
    nvidia = collector(proc, clock)
    values = fields(nvidia.sample(), 0)
    assert (values["temp"], values["fanSpeed"]) == (40.0, 30.0)
    assert [row.host_pid for row in nvidia.extras()["gpu_processes"]] == [300]
    assert fake_nvml.calls["nvmlDeviceGetComputeRunningProcesses_v2"] == 2


def test_a_driver_that_stops_answering_fails_the_sweep_with_a_reason(fake_nvml, proc, clock):
    nvidia = collector(proc, clock)
    fake_nvml.device_error = pynvml.NVML_ERROR_DRIVER_NOT_LOADED
    with pytest.raises(RuntimeError, match="NVIDIA driver stopped answering: Driver Not Loaded"):
        nvidia.sample()


# --- which GPUs, and why none ----------------------------------------------------


def test_gpu_ids_pick_gpus_by_nvml_index_and_unknown_ones_are_noted(fake_nvml, proc, clock):
    fake_nvml.gpus = [FakeGpu(), FakeGpu(), FakeGpu()]
    nvidia = collector(proc, clock, gpu_ids=[2, 5, 2])
    values = nvidia.sample()
    assert {key.split(".")[1] for key in values} == {"2"}
    assert [gpu.index for gpu in nvidia.extras()["gpus"]] == [2]
    assert nvidia.extras()["notes.nvidia"] == ("GPU 5 not found: this machine has GPUs 0–2",)


def test_gpu_ids_that_name_no_gpu_leave_the_collector_absent(fake_nvml, proc):
    fake_nvml.gpus = [FakeGpu()]
    probe = NvidiaCollector(gpu_ids=[3, 4], proc_root=str(proc), nvml=pynvml).probe()
    assert not probe.available
    assert probe.reason == "GPUs 3, 4 not found: this machine has GPU 0"
    assert fake_nvml.initialized == 0


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda box: setattr(box, "library_missing", True), "no NVIDIA driver: libnvidia-ml.so.1 not found"),
        (
            lambda box: setattr(box, "init_error", pynvml.NVML_ERROR_DRIVER_NOT_LOADED),
            "no NVIDIA driver: the NVIDIA kernel module is not loaded",
        ),
        (lambda box: setattr(box, "gpus", []), "no NVIDIA GPU found"),
    ],
)
def test_without_nvidia_gpus_the_probe_says_why(proc, setup, reason):
    box = FakeNvml()
    setup(box)
    with installed(box):
        probe = NvidiaCollector(proc_root=str(proc), nvml=pynvml).probe()
    assert (probe.available, probe.reason) == (False, reason)
    assert box.initialized == 0


def test_the_probe_imports_pynvml_itself_when_none_is_given(fake_nvml, proc):
    nvidia = NvidiaCollector(proc_root=str(proc))
    assert nvidia.probe().available
    nvidia.close()


# --- processes -------------------------------------------------------------------


def test_the_watched_tree_gets_gpu_process_keys_only_for_its_gpus(fake_nvml, proc, clock):
    add_process(proc, 100, name="python", argv=("python", "train.py"), children=(101,))
    add_process(proc, 101, name="torchrun", children=(102,))
    add_process(proc, 102, name="worker", argv=("python", "-m", "worker"))
    add_process(proc, 200, name="other", uid=987654, argv=("other",))
    fake_nvml.gpus = [
        FakeGpu(compute=[FakeProcess(102, used_memory=3 * GIB), FakeProcess(200, used_memory=GIB)]),
        FakeGpu(compute=[FakeProcess(200, used_memory=5 * GIB)]),
    ]
    nvidia = collector(proc, clock, pid=100)
    values = nvidia.sample()

    mine = {key: value for key, value in values.items() if key.startswith("gpu.process.")}
    assert {key.split(".")[2] for key in mine} == {"0"}
    assert mine["gpu.process.0.memoryUsedBytes"] == 3 * GIB  # the tree's own share
    assert mine["gpu.process.0.memoryAllocatedBytes"] == values["gpu.0.memoryAllocatedBytes"]  # W&B's device mirror
    assert mine["gpu.process.0.gpu"] == values["gpu.0.gpu"]
    rows = nvidia.extras()["gpu_processes"]
    assert [(row.gpu, row.host_pid, row.in_tree) for row in rows] == [(0, 102, True), (0, 200, False), (1, 200, False)]
    assert rows[0].user == "root" and rows[0].command == "python -m worker"
    assert rows[1].user == "987654"  # no such user: the number stands in
    assert nvidia.extras()["notes.nvidia"] == ()


def test_without_tree_tracking_only_the_process_itself_counts(fake_nvml, proc, clock):
    add_process(proc, 100, children=(101,))
    add_process(proc, 101)
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(101)])]
    nvidia = collector(proc, clock, pid=100, track_tree=False)
    assert not any(key.startswith("gpu.process.") for key in nvidia.sample())
    fake_nvml.gpus[0].compute.append(FakeProcess(100, used_memory=2 * GIB))
    assert nvidia.sample()["gpu.process.0.memoryUsedBytes"] == 2 * GIB


def test_used_memory_the_driver_hides_is_none_and_left_out_of_the_sum(fake_nvml, proc, clock):
    add_process(proc, 100, children=(101,))
    add_process(proc, 101)
    fake_nvml.gpus = [
        FakeGpu(compute=[FakeProcess(100, used_memory=None)], graphics=[FakeProcess(101, used_memory=MIB)])
    ]
    nvidia = collector(proc, clock, pid=100)
    assert nvidia.sample()["gpu.process.0.memoryUsedBytes"] == MIB
    rows = nvidia.extras()["gpu_processes"]
    assert [(row.host_pid, row.kind, row.used_memory) for row in rows] == [
        (100, "compute", None),
        (101, "graphics", MIB),
    ]


def test_a_process_with_both_contexts_is_one_row(fake_nvml, proc, clock):
    add_process(proc, 100)
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(100, used_memory=GIB)], graphics=[FakeProcess(100, used_memory=GIB)])]
    nvidia = collector(proc, clock, pid=100)
    assert nvidia.sample()["gpu.process.0.memoryUsedBytes"] == GIB
    assert len(nvidia.extras()["gpu_processes"]) == 1


def test_sm_percent_comes_from_the_samples_since_the_last_sweep(fake_nvml, proc, clock):
    add_process(proc, 100)
    gpu = FakeGpu(
        compute=[FakeProcess(100), FakeProcess(101)],
        samples=[FakeUtilizationSample(100, 1_000, 40), FakeUtilizationSample(100, 2_000, 65)],
    )
    fake_nvml.gpus = [gpu]
    nvidia = collector(proc, clock)

    def sm() -> dict[int, float | None]:
        nvidia.sample()
        return {row.host_pid: row.sm_percent for row in nvidia.extras()["gpu_processes"]}

    assert sm() == {100: 65.0, 101: None}  # the newest sample; no sample, no number
    assert sm() == {100: None, 101: None}  # nothing new since
    gpu.samples.append(FakeUtilizationSample(101, 3_000, 12))
    assert sm() == {100: None, 101: 12.0}


def test_a_container_process_seen_from_the_host_shows_its_own_pid_too(fake_nvml, proc, clock):
    add_process(proc, 5000, nspids=(5000, 12), argv=("python", "serve.py"))
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(5000)])]
    nvidia = collector(proc, clock, pid=5000)
    values = nvidia.sample()
    (row,) = nvidia.extras()["gpu_processes"]
    assert (row.pid, row.host_pid, row.container_pid) == (5000, 5000, 12)
    assert (row.command, row.in_tree) == ("python serve.py", True)
    assert "gpu.process.0.gpu" in values


def test_through_a_host_procfs_mounted_in_a_container_pids_are_ours(fake_nvml, tmp_path, clock):
    proc = tmp_path / "host-proc"
    add_process(proc, "self", nspids=(9000, 7))  # we are pid 7 in our container
    set_pid_namespace(proc, "self", CONTAINER_NAMESPACE)
    set_pid_namespace(proc, 1, HOST_NAMESPACE)
    add_process(proc, 9100, nspids=(9100, 55))  # a sibling in our container
    add_process(proc, 9200, nspids=(9200, 3, 1))  # in a container inside ours
    add_process(proc, 4000)  # on the host, outside our namespace
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(4000), FakeProcess(9100), FakeProcess(9200)])]
    nvidia = collector(proc, clock)
    nvidia.sample()
    rows = nvidia.extras()["gpu_processes"]
    assert [(r.host_pid, r.pid, r.container_pid) for r in rows] == [(4000, 4000, None), (9100, 55, None), (9200, 3, 1)]
    assert nvidia.extras()["notes.nvidia"] == ()


def test_inside_a_container_host_pids_are_not_matched_and_the_note_says_why(fake_nvml, tmp_path, clock):
    proc = container_proc(tmp_path / "proc")
    # Our watched process happens to have the number the driver reports for
    # some host process: it is not that process.
    add_process(proc, 1, argv=("python", "train.py"))
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(1), FakeProcess(48213)])]
    nvidia = collector(proc, clock, pid=1)
    values = nvidia.sample()

    assert not any(key.startswith("gpu.process.") for key in values)
    rows = nvidia.extras()["gpu_processes"]
    assert rows == (
        GpuProcess(gpu=0, pid=1, host_pid=1, used_memory=GIB),
        GpuProcess(gpu=0, pid=48213, host_pid=48213, used_memory=GIB),
    )
    assert nvidia.extras()["notes.nvidia"] == (CONTAINER_NOTE,)


def test_when_the_namespace_cannot_be_told_invisible_pids_still_get_the_note(fake_nvml, tmp_path, clock):
    proc = tmp_path / "proc"
    add_process(proc, "self", nspids=(3,))  # no ns/pid link to read
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(48213)])]
    nvidia = collector(proc, clock)
    nvidia.sample()
    assert nvidia.extras()["notes.nvidia"] == (CONTAINER_NOTE,)


# --- MIG ---------------------------------------------------------------------------


def mig_gpu(**kwargs) -> FakeGpu:
    return FakeGpu(
        name="NVIDIA A100-SXM4-80GB",
        mig_enabled=True,
        mig=[
            FakeMig("1g.10gb", gpu_instance_id=3, memory_total=9984 * MIB, memory_used=12 * MIB),
            FakeMig("3g.40gb", gpu_instance_id=1, memory_total=39936 * MIB, memory_used=2 * GIB),
        ],
        compute=[FakeProcess(100, used_memory=GIB, gpu_instance_id=1, compute_instance_id=0)],
        **kwargs,
    )


def test_a_mig_gpu_lists_its_slices_and_says_it_has_no_utilisation(fake_nvml, proc, clock):
    add_process(proc, 100)
    fake_nvml.gpus = [mig_gpu(), FakeGpu()]
    nvidia = collector(proc, clock, pid=100)
    values = nvidia.sample()

    assert "gpu.0.gpu" not in values and "gpu.0.memory" not in values
    assert "gpu.0.memoryAllocatedBytes" in values and "gpu.1.gpu" in values
    info = nvidia.extras()["gpus"][0]
    assert info.utilization_supported is False
    assert "MIG" in info.reason
    assert [(s.index, s.profile, s.gpu_instance_id, s.memory_used, s.memory_total) for s in info.mig] == [
        (0, "1g.10gb", 3, 12 * MIB, 9984 * MIB),
        (1, "3g.40gb", 1, 2 * GIB, 39936 * MIB),
    ]
    assert all(s.uuid.startswith("MIG-") for s in info.mig)
    assert nvidia.extras()["gpus"][1].utilization_supported is True
    (row,) = nvidia.extras()["gpu_processes"]
    assert (row.mig, row.sm_percent) == ("3g.40gb GI 1 CI 0", None)
    assert values["gpu.process.0.memoryUsedBytes"] == GIB


def test_mig_slice_memory_is_fresh_every_sweep(fake_nvml, proc, clock):
    fake_nvml.gpus = [mig_gpu()]
    nvidia = collector(proc, clock)
    nvidia.sample()
    fake_nvml.gpus[0].mig[0].memory_used = 5 * GIB
    clock.now += 1
    nvidia.sample()
    assert nvidia.extras()["gpus"][0].mig[0].memory_used == 5 * GIB


def test_without_root_mig_processes_are_asked_slice_by_slice(fake_nvml, proc, clock):
    fake_nvml.gpus = [mig_gpu(mig_processes_need_root=True)]
    nvidia = collector(proc, clock)
    nvidia.sample()
    (row,) = nvidia.extras()["gpu_processes"]
    assert (row.host_pid, row.mig) == (100, "3g.40gb GI 1 CI 0")


def test_mig_profile_comes_from_the_slice_name():
    assert mig_profile("NVIDIA H100 80GB HBM3 MIG 1g.10gb") == "1g.10gb"
    assert mig_profile("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb") == "1c.3g.20gb"
    assert mig_profile("NVIDIA H100 80GB HBM3") == ""


# --- wiring ------------------------------------------------------------------------


def test_values_arrive_through_the_hub_with_their_keys(fake_nvml, proc):
    add_process(proc, 100)
    fake_nvml.gpus = [FakeGpu(compute=[FakeProcess(100)]), FakeGpu()]
    ticks = iter(range(1_700_000_000, 1_700_000_100))
    nvidia = NvidiaCollector(pid=100, proc_root=str(proc), nvml=pynvml)
    hub = Hub([nvidia], interval=1.0, clock=lambda: float(next(ticks)), warmup=0.0)
    try:
        samples = [hub.sweep() for _ in range(3)]
    finally:
        hub.stop()
    assert [s.timestamp for s in samples] == [1_700_000_000.0, 1_700_000_001.0, 1_700_000_002.0]
    for sample in samples:
        assert sample.values["gpu.0.gpu"] == 50.0
        assert sample.values["gpu.1.powerWatts"] == 300.0
        assert "gpu.process.0.memoryUsedBytes" in sample.values
        assert [gpu.index for gpu in sample.extras["gpus"]] == [0, 1]
        assert sample.extras["gpu_processes"][0].in_tree
        assert sample.status[0].health is Health.OK
    assert fake_nvml.calls["nvmlInitWithFlags"] == 1
    assert fake_nvml.calls["nvmlShutdown"] == 1


def test_the_running_hub_delivers_gpu_samples_on_its_own_thread(fake_nvml, proc):
    fake_nvml.gpus = [FakeGpu(), FakeGpu(utilization=7)]
    delivered = []
    three = threading.Event()

    def receive(sample):
        delivered.append(sample)
        if len(delivered) >= 3:
            three.set()

    hub = Hub([NvidiaCollector(proc_root=str(proc), nvml=pynvml)], interval=0.05, warmup=0.0)
    hub.subscribe(receive)
    hub.start()
    try:
        assert three.wait(10.0), "no three samples in 10 s"
    finally:
        hub.stop()
    assert all(s.values["gpu.1.gpu"] == 7.0 for s in delivered[:3])
    assert fake_nvml.calls["nvmlInitWithFlags"] == 1


def test_the_hub_shows_why_there_is_no_nvidia_collector(proc):
    box = FakeNvml()
    box.library_missing = True
    with installed(box):
        hub = Hub(accelerator_collectors(), interval=1.0, warmup=0.0)
        try:
            sample = hub.sweep()
        finally:
            hub.stop()
    status = next(status for status in sample.status if status.name == "nvidia")
    assert (status.name, status.health, status.reason) == (
        "nvidia", Health.ABSENT, "no NVIDIA driver: libnvidia-ml.so.1 not found"
    )
    assert not sample.values


def test_accelerator_collectors_pass_the_choices_on():
    nvidia = next(c for c in accelerator_collectors(gpu_ids=[1, 0], pid=42, track_tree=True) if isinstance(c, NvidiaCollector))
    assert (nvidia.gpu_ids, nvidia.pid, nvidia.track_tree) == ((1, 0), 42, True)
