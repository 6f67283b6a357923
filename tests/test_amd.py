"""The AMD collector against made-up boxes: a fake /sys, stand-in rocm-smi and amd-smi on PATH, a stand-in amdsmi module.

The stand-in tools (``tests/fakebin/amd``) replay the real outputs kept in
``tests/fixtures/hardware`` or misbehave on request, so everything from
finding the executable to parsing its JSON is the collector's real code.
"""

from __future__ import annotations

import enum
import importlib
import importlib.abc
import os
import shutil
import sys
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import collectors.amd
from collectors import Health, Hub
from collectors.amd import OLD_MEMORY_USE_NOTE, AmdCollector, AmdSourceError
from collectors.amd.amd_smi import parse_amd_smi_process
from collectors.amd.collector import CLI_CADENCE
from collectors.amd.library import RETRY_FAILED_CALL
from collectors.amd.source import Listed
from collectors.gpu import AcceleratorInfo, GpuInfo, GpuProcess

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "hardware"
FAKEBIN = HERE / "fakebin" / "amd"
MIB = 2**20

ROCM_4_3 = "rocm_smi/rocm-smi_a_json_rocm4.3.0_RX6700XT.json"
ROCM_5_7_MI100 = "rocm_smi/rocm-smi_a_json_rocm5.7.1_6xMI100.json"
ROCM_5_MI210 = "rocm_smi/rocm-smi_a_json_rocm5.x_MI210_wandb-test.json"
ROCM_6_0_MI100 = "rocm_smi/rocm-smi_a_json_rocm6.0.2_4xMI100.json"
ROCM_6_1 = "rocm_smi/rocm-smi_a_json_rocm6.1.2_RX6700XT.json"
ROCM_MI300X = "rocm_smi/rocm-smi_a_json_rocm6.x_2xMI300X_COMPOSED.json"
ROCM_RX6600 = "rocm_smi/rocm-smi_showallinfo_json_RX6600_no-power-no-temp.json"
AMD_SMI_RX6600 = "amd_smi/amd-smi_metric_json_RX6600_list-format.json"
AMD_SMI_RX6600_STATIC = "amd_smi/amd-smi_static_json_RX6600_list-format.json"
AMD_SMI_MI300X = "amd_smi/amd-smi_metric_json_2xMI300X_gpu_data-wrapper_COMPOSED.json"
AMD_SMI_PROCESS = "amd_smi/amd-smi_process_json_COMPOSED.json"


# -- the made-up box ---------------------------------------------------------


@dataclass
class Box:
    """A fake filesystem root, a PATH with only what a test puts there, and a log of tool runs."""

    root: Path
    bin: Path
    log: Path
    monkeypatch: pytest.MonkeyPatch

    def amdgpu(self, initstate: str | None = "live\n") -> None:
        module = self.root / "sys/module/amdgpu"
        module.mkdir(parents=True, exist_ok=True)
        if initstate is not None:
            (module / "initstate").write_text(initstate)

    def rocm_smi(self, behaviour: str, where: Path | None = None) -> None:
        self._install("rocm-smi", where)
        self.monkeypatch.setenv("FAKE_ROCM_SMI", _behaviour(behaviour))

    def amd_smi(self, metric: str, static: str = "die", process: str = AMD_SMI_PROCESS) -> None:
        self._install("amd-smi")
        self.monkeypatch.setenv("FAKE_AMD_SMI_METRIC", _behaviour(metric))
        self.monkeypatch.setenv("FAKE_AMD_SMI_STATIC", _behaviour(static))
        self.monkeypatch.setenv("FAKE_AMD_SMI_PROCESS", _behaviour(process))

    def process(self, pid: int, argv: list[str], uid: int = 0) -> None:
        """A process in the fake /proc."""
        folder = self.root / "proc" / str(pid)
        folder.mkdir(parents=True)
        (folder / "status").write_text(f"Name:\t{Path(argv[0]).name[:15]}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nNSpid:\t{pid}\n")
        (folder / "cmdline").write_bytes(b"\0".join(arg.encode() for arg in argv) + b"\0")

    def runs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def collector(self, **options: Any) -> AmdCollector:
        options.setdefault("timeout", 3.0)
        return AmdCollector(sys_root=str(self.root), **options)

    def _install(self, tool: str, where: Path | None = None) -> None:
        where = where or self.bin
        where.mkdir(parents=True, exist_ok=True)
        for name in (tool, "_replay.py"):
            shutil.copy(FAKEBIN / name, where / name)
        (where / tool).chmod(0o755)


def _behaviour(name: str) -> str:
    return str(FIXTURES / name) if name.endswith(".json") else name


@pytest.fixture
def box(tmp_path, monkeypatch) -> Box:
    """amdgpu live, nothing on PATH but python3, and no amdsmi module (each test adds what it needs)."""
    made = Box(tmp_path / "root", tmp_path / "bin", tmp_path / "runs.log", monkeypatch)
    made.bin.mkdir()
    (made.bin / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(made.bin))
    monkeypatch.setenv("FAKE_AMD_LOG", str(made.log))
    for name in ("FAKE_ROCM_SMI", "FAKE_AMD_SMI_METRIC", "FAKE_AMD_SMI_STATIC", "FAKE_AMD_SMI_PROCESS", "FAKE_AMD_WARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # "import amdsmi" raises ImportError
    made.amdgpu()
    return made


def probed(collector: AmdCollector) -> AmdCollector:
    probe = collector.probe()
    assert probe.available, probe.reason
    return collector


def one_sweep(collector: AmdCollector) -> tuple[dict[str, float], dict[str, Any]]:
    values = dict(probed(collector).sample())
    return values, dict(collector.extras())


def gpu_keys(values: dict[str, float], index: int) -> dict[str, float]:
    prefix = f"gpu.{index}."
    return {key[len(prefix) :]: value for key, value in values.items() if key.startswith(prefix)}


def mi100(temp: float, power: float, used: float) -> dict[str, Any]:
    return {
        "gpu": 0.0,
        "memoryAllocated": 0.0,
        "memoryOverDrive": 0.0,
        "temp": temp,
        "powerWatts": power,
        "memoryAllocatedBytes": used,
        "graphicsClock": 300.0,
        "memoryClock": 1200.0,
        "enforcedPowerLimitWatts": 290.0,
        "powerPercent": pytest.approx(power / 290 * 100),
    }


# -- rocm-smi: every field-name variant ---------------------------------------------


def test_six_mi100_on_rocm_5_7_give_gpu_0_to_5_with_the_json_values(box):
    box.rocm_smi(ROCM_5_7_MI100)
    values, extras = one_sweep(box.collector())
    temps = [30.0, 38.0, 31.0, 36.0, 38.0, 38.0]
    powers = [39.0, 37.0, 35.0, 39.0, 39.0, 40.0]
    for index in range(6):
        assert gpu_keys(values, index) == mi100(temps[index], powers[index], 6782976.0)
    assert len(values) == 6 * 10
    assert [gpu.index for gpu in extras["gpus"]] == [0, 1, 2, 3, 4, 5]
    assert extras["gpus"][0] == GpuInfo(index=0, name="Arcturus GL-XL [Instinct MI100]", memory_total=34342961152, power_limit_watts=290.0)


def test_four_mi100_on_rocm_6_0_use_device_id_and_the_same_fields(box):
    box.rocm_smi(ROCM_6_0_MI100)
    values, extras = one_sweep(box.collector())
    for index, (temp, power) in enumerate([(53.0, 36.0), (54.0, 44.0), (55.0, 43.0), (50.0, 39.0)]):
        assert gpu_keys(values, index) == mi100(temp, power, 6750208.0)
    assert [gpu.uuid for gpu in extras["gpus"]] == [
        "0x79ccd55167a2124a",
        "0x4edfb117a17a07d",
        "0xd4a9ec48d03d261d",
        "0x1b9dd972253c3736",
    ]


def test_rocm_6_1_reads_vram_percent_and_read_write_activity_after_a_leading_blank_line(box):
    assert (FIXTURES / ROCM_6_1).read_text().startswith("\n")
    box.rocm_smi(ROCM_6_1)
    values, extras = one_sweep(box.collector())
    assert gpu_keys(values, 0) == {
        "gpu": 0.0,
        "memoryAllocated": 12.0,
        "memoryReadWriteActivity": 0.0,
        "memoryOverDrive": 0.0,
        "temp": 46.0,
        "powerWatts": 6.0,
        "memoryAllocatedBytes": 1572745216.0,
        "graphicsClock": 0.0,
        "memoryClock": 96.0,
        "enforcedPowerLimitWatts": 211.0,
        "powerPercent": pytest.approx(6 / 211 * 100),
    }
    assert extras["gpus"][0].name == "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"
    assert extras["notes.amd"] == ()


def test_rocm_4_3_keeps_w_and_bs_memory_quirk_and_says_so(box):
    box.rocm_smi(ROCM_4_3)
    values, extras = one_sweep(box.collector())
    # 'GPU memory use (%)' is memory activity: 0 here while 12.6 % of VRAM is in use.
    assert values["gpu.0.memoryAllocated"] == 0.0
    assert values["gpu.0.memoryAllocatedBytes"] == 1622728704.0
    assert "gpu.0.memoryReadWriteActivity" not in values  # "Memory Activity" is a counter, not a percent
    assert values["gpu.0.temp"] == 46.0  # the memory sensor, not edge (45) or junction (47)
    assert values["gpu.0.graphicsClock"] == 500.0
    assert extras["notes.amd"] == (OLD_MEMORY_USE_NOTE,)
    # Card series/model are bare PCI ids in this release: the name falls back to the device id.
    assert extras["gpus"][0].name == "AMD GPU 0x73df"


def test_mi210_gives_energy_from_the_accumulated_microjoules(box):
    box.rocm_smi(ROCM_5_MI210)
    values, extras = one_sweep(box.collector())
    assert values["gpu.0.energyJoules"] == pytest.approx(93668579.2586811)
    assert values["gpu.0.powerPercent"] == pytest.approx(41 / 300 * 100)
    assert "gpu.0.memoryAllocatedBytes" not in values
    assert extras["gpus"][0].uuid == "0x43cc8cc8af246708"
    assert extras["gpus"][0].memory_total == 0


def test_mi300x_reads_current_socket_power_and_has_no_edge_sensor(box):
    box.rocm_smi(ROCM_MI300X)
    values, extras = one_sweep(box.collector())
    assert gpu_keys(values, 0) == {
        "gpu": 97.0,
        "memoryAllocated": 88.0,
        "memoryReadWriteActivity": 14.0,
        "memoryOverDrive": 0.0,
        "temp": 44.0,
        "powerWatts": 612.0,
        "memoryAllocatedBytes": 181124317184.0,
        "memoryClock": 1300.0,
        "enforcedPowerLimitWatts": 750.0,
        "powerPercent": pytest.approx(81.6),
    }
    assert values["gpu.1.powerWatts"] == 159.0
    assert values["gpu.1.powerPercent"] == pytest.approx(21.2)
    assert extras["gpus"] == (
        GpuInfo(0, "AMD Instinct MI300X", 205822885888, 750.0, uuid="0x9246ee7e5a2c1f3b"),
        GpuInfo(1, "AMD Instinct MI300X", 205822885888, 750.0, uuid="0x4ad3c25a9b1e07d2"),
    )
    assert extras["accelerators.amd"][1] == AcceleratorInfo(
        vendor="AMD",
        index=1,
        name="AMD Instinct MI300X",
        utilization_key="gpu.1.gpu",
        memory_key="gpu.1.memoryAllocated",
        temp_key="gpu.1.temp",
        power_key="gpu.1.powerWatts",
        memory_total=205822885888,
        power_limit_watts=750.0,
    )


def test_a_card_without_power_and_temperature_fields_gets_no_such_keys(box):
    box.rocm_smi(ROCM_RX6600)
    values, extras = one_sweep(box.collector())
    assert values == {"gpu.0.gpu": 0.0, "gpu.0.memoryAllocated": 1.0}
    (accelerator,) = extras["accelerators.amd"]
    assert (accelerator.utilization_key, accelerator.memory_key, accelerator.temp_key, accelerator.power_key) == (
        "gpu.0.gpu",
        "gpu.0.memoryAllocated",
        "",
        "",
    )
    assert accelerator.reason == "reports no temperature and no power"
    assert extras["gpus"][0] == GpuInfo(0, "Navi 23 [Radeon RX 6600/6600 XT/6600M]", 0, None, reason="reports no temperature and no power")


def test_not_available_fields_are_absent_never_zero(box, tmp_path):
    fixture = tmp_path / "na.json"
    fixture.write_text(
        '{"card0": {"GPU use (%)": "N/A", "GPU Memory Allocated (VRAM%)": "7",'
        ' "Temperature (Sensor memory) (C)": "N/A", "Average Graphics Package Power (W)": "N/A (Secondary die)",'
        ' "Max Graphics Package Power (W)": "N/A (Secondary die)", "Fan speed (%)": "35"},'
        ' "system": {"Driver version": "6.3.6"}}'
    )
    box.rocm_smi(str(fixture))
    values, _ = one_sweep(box.collector())
    assert values == {"gpu.0.memoryAllocated": 7.0, "gpu.0.fanSpeed": 35.0}


def test_warnings_around_the_json_do_not_matter(box, monkeypatch):
    monkeypatch.setenv("FAKE_AMD_WARN", "1")
    box.rocm_smi(ROCM_MI300X)
    values, _ = one_sweep(box.collector())
    assert values["gpu.1.temp"] == 38.0


def test_rocm_smi_runs_once_per_sample_with_its_arguments(box):
    box.rocm_smi(ROCM_MI300X)
    collector = probed(box.collector())
    collector.sample()
    collector.sample()
    assert box.runs() == ["rocm-smi -a --json"] * 3  # the probe's look, then one run per sample
    assert collector.cadence == CLI_CADENCE


def test_rocm_smi_is_found_where_rocm_installs_it(box):
    box.rocm_smi(ROCM_MI300X, where=box.root / "opt/rocm/bin")
    values, _ = one_sweep(box.collector())
    assert values["gpu.0.gpu"] == 97.0


def test_a_card_that_disappears_is_kept_as_lost(box, tmp_path):
    box.rocm_smi(ROCM_MI300X)
    collector = probed(box.collector())
    collector.sample()
    one_card = tmp_path / "one.json"
    one_card.write_text((FIXTURES / ROCM_MI300X).read_text().replace('"card1"', '"gone"'))
    box.rocm_smi(str(one_card))
    values = collector.sample()
    assert not any(key.startswith("gpu.1.") for key in values)
    lost = collector.extras()["gpus"][1]
    assert (lost.lost, lost.reason) == (True, "no longer listed by rocm-smi")


def test_gpu_ids_pick_cards_and_name_the_missing(box):
    box.rocm_smi(ROCM_5_7_MI100)
    values, extras = one_sweep(box.collector(gpu_ids=[1, 7]))
    assert {key.split(".")[1] for key in values} == {"1"}
    assert extras["notes.amd"] == ("GPU 7 not found: rocm-smi lists GPUs 0, 1, 2, 3, 4, 5", OLD_MEMORY_USE_NOTE)
    probe = box.collector(gpu_ids=[9]).probe()
    assert not probe.available
    assert probe.reason.endswith("GPU 9 not found: rocm-smi lists GPUs 0, 1, 2, 3, 4, 5")


# -- rocm-smi misbehaving ------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        ("die", "rocm-smi -a --json: exit status 1: rocm-smi: ERROR: the device is busy"),
        ("garbage", "rocm-smi -a --json: printed no JSON: 'Traceback (most recent call last): something went { wrong'"),
        ("empty", "rocm-smi -a --json: printed nothing"),
    ],
)
def test_a_failing_run_raises_a_clear_error(box, behaviour, message):
    box.rocm_smi(ROCM_MI300X)
    collector = probed(box.collector())
    box.rocm_smi(behaviour)
    with pytest.raises(AmdSourceError) as raised:
        collector.sample()
    assert str(raised.value) == message


def test_a_hung_tool_is_killed_at_its_timeout(box):
    box.rocm_smi(ROCM_MI300X)
    collector = probed(box.collector(timeout=0.4))
    box.rocm_smi("hang")
    started = time.monotonic()
    with pytest.raises(AmdSourceError, match=r"^rocm-smi -a --json: no answer in 0.4 s \(killed\)$"):
        collector.sample()
    assert time.monotonic() - started < 0.4 + 1.0
    assert collector.budget > 2 * 0.4


def test_what_a_hung_tool_started_is_killed_with_it(box, tmp_path, monkeypatch):
    box.rocm_smi(ROCM_MI300X)
    collector = probed(box.collector(timeout=0.4))
    told = tmp_path / "child.pid"
    monkeypatch.setenv("FAKE_AMD_CHILD_PID", str(told))
    box.rocm_smi("hang-with-child")
    started = time.monotonic()
    with pytest.raises(AmdSourceError, match="no answer in 0.4 s"):
        collector.sample()
    assert time.monotonic() - started < 0.4 + 1.0  # the child held stdout open: nothing waited for it
    assert _ends_soon(int(told.read_text()))


def _ends_soon(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z":
            return True  # killed, waiting for its new parent to reap it
        time.sleep(0.02)
    return False


def test_a_hung_tool_at_probe_makes_the_collector_absent_in_time(box):
    box.rocm_smi("hang")
    started = time.monotonic()
    probe = box.collector(timeout=0.4).probe()
    assert time.monotonic() - started < 0.4 + 1.5
    assert not probe.available
    assert probe.reason.endswith("rocm-smi failed: rocm-smi -a --json: no answer in 0.4 s (killed)")


def test_a_listing_without_cards_is_no_gpu(box, tmp_path):
    fixture = tmp_path / "system-only.json"
    fixture.write_text('{"system": {"Driver version": "6.3.6"}}')
    box.rocm_smi(str(fixture))
    probe = box.collector().probe()
    assert not probe.available
    assert probe.reason == ("amdgpu is loaded, but the amdsmi Python package is not installed; amd-smi not found; rocm-smi lists no AMD GPU")


def test_the_hub_shows_a_failing_tool_and_keeps_the_others_going(box):
    box.rocm_smi(ROCM_MI300X)
    collector = box.collector(timeout=1.0)
    hub = Hub([collector], interval=1.0, warmup=0.0)
    try:
        first = hub.sweep()
        collector.cadence = 0.0  # rather than wait out the tool's cadence
        box.rocm_smi("die")
        second = hub.sweep()
    finally:
        hub.stop()
    assert first.values["gpu.0.powerWatts"] == 612.0
    assert first.status[0].health is Health.OK
    (status,) = second.status
    assert status.health is Health.FAILING
    assert "exit status 1: rocm-smi: ERROR: the device is busy" in status.reason


# -- detection ---------------------------------------------------------------


def test_a_box_without_amdgpu_is_absent_and_runs_nothing(box):
    shutil.rmtree(box.root / "sys/module/amdgpu")
    box.rocm_smi(ROCM_MI300X)
    probe = box.collector().probe()
    assert (probe.available, probe.reason) == (False, "no AMD GPU driver: the amdgpu kernel module is not loaded")
    assert box.runs() == []


def test_a_driver_still_loading_is_absent(box):
    box.amdgpu("coming\n")
    box.rocm_smi(ROCM_MI300X)
    probe = box.collector().probe()
    assert probe.reason == "the amdgpu kernel driver is not ready (initstate: coming)"


def test_a_driver_built_into_the_kernel_counts(box):
    (box.root / "sys/module/amdgpu/initstate").unlink()
    box.rocm_smi(ROCM_MI300X)
    assert box.collector().probe().available


def test_a_drm_card_bound_to_amdgpu_counts_without_a_module_directory(box):
    shutil.rmtree(box.root / "sys/module/amdgpu")
    driver = box.root / "sys/bus/pci/drivers/amdgpu"
    driver.mkdir(parents=True)
    device = box.root / "sys/class/drm/card0/device"
    device.mkdir(parents=True)
    (device / "driver").symlink_to(driver)
    box.rocm_smi(ROCM_MI300X)
    assert box.collector().probe().available


def test_amdgpu_without_any_source_says_what_is_missing(box):
    probe = box.collector().probe()
    assert probe.reason == ("amdgpu is loaded, but the amdsmi Python package is not installed; amd-smi not found; rocm-smi not found")


# -- amd-smi -----------------------------------------------------------------


def test_amd_smi_list_layout_with_static_gives_every_key(box):
    box.amd_smi(AMD_SMI_RX6600, static=AMD_SMI_RX6600_STATIC)
    box.rocm_smi(ROCM_RX6600)
    values, extras = one_sweep(box.collector())
    assert gpu_keys(values, 0) == {
        "gpu": 1.0,
        "memoryReadWriteActivity": 0.0,
        "temp": 32.0,
        "powerWatts": 6.0,
        "memoryAllocatedBytes": 202.0 * MIB,
        "memoryAllocated": pytest.approx(202 / 8176 * 100),
        "graphicsClock": 800.0,
        "memoryClock": 541.0,
        "energyJoules": 0.0,
        "correctedMemoryErrors": 0.0,
        "uncorrectedMemoryErrors": 0.0,
        "fanSpeed": 0.0,
        "enforcedPowerLimitWatts": 100.0,
        "powerPercent": pytest.approx(6.0),
    }
    assert extras["gpus"] == (GpuInfo(0, "Navi 23 [Radeon RX 6600/6600 XT", 8176 * MIB, 100.0),)
    assert extras["notes.amd"] == ()
    assert "rocm-smi -a --json" not in box.runs()


def test_amd_smi_gpu_data_layout_without_static_still_gives_the_gauges(box):
    box.amd_smi(AMD_SMI_MI300X, static="die")
    values, extras = one_sweep(box.collector())
    assert gpu_keys(values, 0) == {
        "gpu": 97.0,
        "memoryReadWriteActivity": 41.0,
        "temp": 44.0,
        "powerWatts": 612.0,
        "memoryAllocatedBytes": 172740.0 * MIB,
        "memoryAllocated": pytest.approx(172740 / 196592 * 100),
        "graphicsClock": 800.0,
        "memoryClock": 541.0,
        "energyJoules": 48213377.9,
        "correctedMemoryErrors": 0.0,
        "uncorrectedMemoryErrors": 0.0,
    }
    assert values["gpu.1.memoryAllocatedBytes"] == 286.0 * MIB
    assert "gpu.1.fanSpeed" not in values  # "N/A"
    assert extras["gpus"][1] == GpuInfo(1, "AMD GPU", 196592 * MIB, None)
    assert extras["notes.amd"] == ("amd-smi static --json: exit status 1: amd-smi: ERROR: the device is busy; GPU names and power caps may be missing",)


def test_one_bad_gpu_entry_costs_only_that_gpu(box, tmp_path):
    fixture = tmp_path / "metric.json"
    fixture.write_text(
        '[{"gpu": 0, "usage": "N/A", "temperature": "N/A", "power": "N/A", "mem_usage": "N/A"},'
        ' "amd-smi: GPU 1 could not be read",'
        ' {"gpu": 2, "usage": {"gfx_activity": {"value": 5, "unit": "%"}}, "power": {"socket_power": "42 W"},'
        ' "mem_usage": {"total_vram": 1024, "used_vram": 256}}]'
    )
    box.amd_smi(str(fixture))
    values, extras = one_sweep(box.collector())
    assert values == {
        "gpu.2.gpu": 5.0,
        "gpu.2.powerWatts": 42.0,
        "gpu.2.memoryAllocatedBytes": 256.0 * MIB,
        "gpu.2.memoryAllocated": 25.0,
    }
    assert [(gpu.index, gpu.reason) for gpu in extras["gpus"]] == [
        (0, "reports no temperature and no power"),
        (2, "reports no temperature"),
    ]


def test_amd_smi_static_is_read_rarely(box):
    box.amd_smi(AMD_SMI_RX6600, static=AMD_SMI_RX6600_STATIC)
    now = [100.0]
    collector = probed(box.collector(clock=lambda: now[0]))
    for _ in range(3):
        collector.sample()
        now[0] += 10.0
    assert box.runs().count("amd-smi static --json") == 1
    now[0] += 10.0  # 40 s after the first read
    collector.sample()
    assert box.runs().count("amd-smi static --json") == 2
    assert box.runs().count("amd-smi metric --json") == 5  # the probe's look, then once per sample


def test_a_broken_amd_smi_falls_back_to_rocm_smi_and_says_so(box):
    box.amd_smi("garbage")
    box.rocm_smi(ROCM_MI300X)
    values, extras = one_sweep(box.collector())
    assert values["gpu.0.gpu"] == 97.0
    assert extras["notes.amd"] == ("amd-smi failed: amd-smi metric --json: printed no JSON: 'Traceback (most recent call last): something went { wrong'; using rocm-smi",)


def test_a_hung_amd_smi_metric_raises_within_its_timeout(box):
    box.amd_smi(AMD_SMI_RX6600, static=AMD_SMI_RX6600_STATIC)
    collector = probed(box.collector(timeout=0.4))
    box.amd_smi("hang", static=AMD_SMI_RX6600_STATIC)
    started = time.monotonic()
    with pytest.raises(AmdSourceError, match="amd-smi metric --json: no answer in 0.4 s"):
        collector.sample()
    assert time.monotonic() - started < 2 * 0.4 + 1.5


def test_amd_smi_lists_the_processes_with_their_command_and_memory(box):
    box.amd_smi(AMD_SMI_MI300X)
    box.process(4242, ["python3", "train.py", "--epochs", "3"])
    _, extras = one_sweep(box.collector())
    assert extras["gpu_processes"] == (
        GpuProcess(gpu=0, pid=777, host_pid=777, user="", command="", used_memory=256 * MIB),  # gone from /proc, no name
        GpuProcess(gpu=0, pid=4242, host_pid=4242, user="root", command="python3 train.py --epochs 3", used_memory=163840 * MIB),
    )
    assert extras["notes.amd"] == ("amd-smi static --json: exit status 1: amd-smi: ERROR: the device is busy; GPU names and power caps may be missing",)


def test_amd_smi_older_process_layouts_are_read_too():
    merged = [{"gpu": 0, "process_info": {"name": "rvs", "pid": 9, "mem_usage": 1048576, "usage": {"gfx": 5, "enc": 0}}}]
    listed = [{"gpu": 1, "values": [{"process_info": {"name": "a", "pid": 1, "mem": 2048}}, {"process_info": "N/A"}]}]
    assert parse_amd_smi_process(merged) == [Listed(0, 9, "rvs", MIB, 5.0)]
    assert parse_amd_smi_process(listed) == [Listed(1, 1, "a", 2048, None)]


def test_a_failing_process_listing_keeps_the_metrics_and_says_so(box):
    box.amd_smi(AMD_SMI_MI300X, process="die")
    values, extras = one_sweep(box.collector())
    assert values["gpu.0.gpu"] == 97.0
    assert extras["gpu_processes"] == ()
    assert extras["notes.amd"][-1] == "amd-smi process --json: exit status 1: amd-smi: ERROR: the device is busy; GPU processes are not listed"


def test_amd_smi_process_is_run_every_few_seconds_only_after_a_good_metric_run(box):
    box.amd_smi(AMD_SMI_MI300X)
    now = [100.0]
    collector = probed(box.collector(clock=lambda: now[0]))
    for _ in range(4):  # at 100, 102, 104 and 106 s
        collector.sample()
        now[0] += 2.0
    assert box.runs().count("amd-smi process --json") == 2  # at 100 and 106 s
    assert len(collector.extras()["gpu_processes"]) == 2  # kept between listings
    box.amd_smi("die")
    now[0] += 10.0
    with pytest.raises(AmdSourceError):
        collector.sample()
    assert box.runs().count("amd-smi process --json") == 2


# -- the amdsmi library --------------------------------------------------------


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int) -> None:
        super().__init__(f"Error code:\n\t{err_code} | AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported")
        self.err_code = err_code


NOT_SUPPORTED = 2


class AmdSmiTemperatureType(enum.IntEnum):
    EDGE = 0
    HOTSPOT = 1
    VRAM = 2
    HBM_0 = 3


class AmdSmiTemperatureMetric(enum.IntEnum):
    CURRENT = 0
    MAX = 1


class AmdSmiClkType(enum.IntEnum):
    SYS = 0
    GFX = 0
    DF = 1
    DCEF = 2
    SOC = 3
    MEM = 4


@dataclass
class FakeAmdGpu:
    """What one GPU answers; a query named in ``unsupported`` raises, as the library does."""

    asic: dict[str, Any] = field(default_factory=dict)
    uuid: str = ""
    activity: dict[str, Any] = field(default_factory=dict)
    vram: dict[str, Any] = field(default_factory=dict)  # MiB
    temps: dict[int, Any] = field(default_factory=dict)
    power: dict[str, Any] = field(default_factory=dict)
    power_cap: dict[str, Any] = field(default_factory=dict)  # µW
    energy: dict[str, Any] = field(default_factory=dict)
    clocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    ecc: dict[str, Any] = field(default_factory=dict)
    processes: list[Any] = field(default_factory=list)  # dictionaries (newer releases) or handles (older)
    process_info: dict[Any, dict[str, Any]] = field(default_factory=dict)  # handle -> what an older release says
    unsupported: set[str] = field(default_factory=set)


class FakeAmdSmi:
    """A stand-in ``amdsmi`` module with the library's function names and dictionaries."""

    def __init__(self, gpus: list[FakeAmdGpu]) -> None:
        self.gpus = gpus
        self.calls: Counter[str] = Counter()
        self.init_error: Exception | None = None
        module = types.ModuleType("amdsmi")
        module.AmdSmiException = AmdSmiException  # type: ignore[attr-defined]
        module.AmdSmiLibraryException = AmdSmiLibraryException  # type: ignore[attr-defined]
        module.AmdSmiTemperatureType = AmdSmiTemperatureType  # type: ignore[attr-defined]
        module.AmdSmiTemperatureMetric = AmdSmiTemperatureMetric  # type: ignore[attr-defined]
        module.AmdSmiClkType = AmdSmiClkType  # type: ignore[attr-defined]
        for name in dir(self):
            if name.startswith("amdsmi_"):
                setattr(module, name, getattr(self, name))
        self.module = module

    def amdsmi_init(self, flags: int = 2) -> None:
        self.calls["amdsmi_init"] += 1
        if self.init_error is not None:
            raise self.init_error

    def amdsmi_shut_down(self) -> None:
        self.calls["amdsmi_shut_down"] += 1

    def amdsmi_get_processor_handles(self) -> list[int]:
        return [1000 + i for i in range(len(self.gpus))]

    def _gpu(self, query: str, handle: int) -> FakeAmdGpu:
        self.calls[query] += 1
        gpu = self.gpus[handle - 1000]
        if query in gpu.unsupported:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        return gpu

    def amdsmi_get_gpu_asic_info(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_gpu_asic_info", handle).asic

    def amdsmi_get_gpu_device_uuid(self, handle: int) -> str:
        return self._gpu("amdsmi_get_gpu_device_uuid", handle).uuid

    def amdsmi_get_gpu_activity(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_gpu_activity", handle).activity

    def amdsmi_get_gpu_vram_usage(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_gpu_vram_usage", handle).vram

    def amdsmi_get_temp_metric(self, handle: int, sensor: AmdSmiTemperatureType, metric: AmdSmiTemperatureMetric) -> Any:
        gpu = self._gpu("amdsmi_get_temp_metric", handle)
        if metric is not AmdSmiTemperatureMetric.CURRENT or sensor not in gpu.temps:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        return gpu.temps[sensor]

    def amdsmi_get_power_info(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_power_info", handle).power

    def amdsmi_get_power_cap_info(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_power_cap_info", handle).power_cap

    def amdsmi_get_energy_count(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_energy_count", handle).energy

    def amdsmi_get_clock_info(self, handle: int, clock: AmdSmiClkType) -> dict[str, Any]:
        gpu = self._gpu("amdsmi_get_clock_info", handle)
        if clock not in gpu.clocks:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        return gpu.clocks[clock]

    def amdsmi_get_gpu_total_ecc_count(self, handle: int) -> dict[str, Any]:
        return self._gpu("amdsmi_get_gpu_total_ecc_count", handle).ecc

    def amdsmi_get_gpu_process_list(self, handle: int) -> list[Any]:
        return self._gpu("amdsmi_get_gpu_process_list", handle).processes

    def amdsmi_get_gpu_process_info(self, handle: int, process: Any) -> dict[str, Any]:
        gpu = self._gpu("amdsmi_get_gpu_process_info", handle)
        if process not in gpu.process_info:
            raise AmdSmiLibraryException(NOT_SUPPORTED)  # it ended between the two calls
        return gpu.process_info[process]


def mi300x() -> FakeAmdGpu:
    """A current release on an MI300X: ``clk``, ``energy_accumulator``, current socket power, caps in µW."""
    return FakeAmdGpu(
        asic={"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002", "device_id": "0x74a1", "asic_serial": "N/A"},
        uuid="9aff74a1-0000-1000-8039-2c1f3b9246ee",
        activity={"gfx_activity": 97, "umc_activity": 41, "mm_activity": "N/A"},
        vram={"vram_total": 196592, "vram_used": 172740},
        temps={AmdSmiTemperatureType.HOTSPOT: 58, AmdSmiTemperatureType.VRAM: 44},
        power={
            "current_socket_power": 612,
            "average_socket_power": "N/A",
            "gfx_voltage": "N/A",
            "soc_voltage": "N/A",
            "mem_voltage": "N/A",
            "power_limit": 750_000_000,
        },
        power_cap={"power_cap": 750_000_000, "default_power_cap": 750_000_000, "dpm_cap": 0, "min_power_cap": 0, "max_power_cap": 750_000_000},
        energy={"energy_accumulator": 3_141_592_653, "counter_resolution": 15.3, "timestamp": 1_700_000_000},
        clocks={
            AmdSmiClkType.GFX: {"clk": 2100, "min_clk": 500, "max_clk": 2100, "clk_locked": False, "clk_deep_sleep": False},
            AmdSmiClkType.MEM: {"clk": 1300, "min_clk": 900, "max_clk": 1300, "clk_locked": False, "clk_deep_sleep": False},
        },
        ecc={"correctable_count": 2, "uncorrectable_count": 0, "deferred_count": 0},
    )


def older_release_gpu() -> FakeAmdGpu:
    """An older release: ``cur_clk``, ``power`` for the energy ticks, average power, no cap query, N/A ECC, no VRAM sensor."""
    return FakeAmdGpu(
        asic={"market_name": "AMD Instinct MI210", "asic_serial": "0x43CC8CC8AF246708"},
        uuid="N/A",
        activity={"gfx_activity": 12, "umc_activity": "N/A", "mm_activity": "N/A"},
        vram={"vram_total": 65520, "vram_used": 1024},
        temps={AmdSmiTemperatureType.EDGE: 33},
        power={"average_socket_power": 41, "gfx_voltage": 793, "soc_voltage": "N/A", "mem_voltage": "N/A", "power_limit": 300},
        energy={"power": 1_000_000, "counter_resolution": 15.3, "timestamp": 1},
        clocks={AmdSmiClkType.GFX: {"cur_clk": 800, "min_clk": 500, "max_clk": 1700}},
        ecc={"correctable_count": "N/A", "uncorrectable_count": "N/A"},
        unsupported={"amdsmi_get_power_cap_info"},
    )


@pytest.fixture
def amdsmi(box, monkeypatch) -> FakeAmdSmi:
    lib = FakeAmdSmi([mi300x(), older_release_gpu()])
    monkeypatch.setitem(sys.modules, "amdsmi", lib.module)
    return lib


def test_the_library_gives_every_key_without_running_a_tool(box, amdsmi):
    box.rocm_smi(ROCM_RX6600)
    collector = box.collector()
    values, extras = one_sweep(collector)
    assert gpu_keys(values, 0) == {
        "gpu": 97.0,
        "memoryReadWriteActivity": 41.0,
        "memoryAllocatedBytes": 172740.0 * MIB,
        "memoryAllocated": pytest.approx(172740 / 196592 * 100),
        "powerWatts": 612.0,
        "enforcedPowerLimitWatts": 750.0,
        "powerPercent": pytest.approx(81.6),
        "energyJoules": pytest.approx(3_141_592_653 * 15.3 / 1e6),
        "temp": 44.0,
        "graphicsClock": 2100.0,
        "memoryClock": 1300.0,
        "correctedMemoryErrors": 2.0,
        "uncorrectedMemoryErrors": 0.0,
    }
    assert gpu_keys(values, 1) == {
        "gpu": 12.0,
        "memoryAllocatedBytes": 1024.0 * MIB,
        "memoryAllocated": pytest.approx(1024 / 65520 * 100),
        "powerWatts": 41.0,
        "enforcedPowerLimitWatts": 300.0,
        "powerPercent": pytest.approx(41 / 300 * 100),
        "energyJoules": pytest.approx(15.3),
        "graphicsClock": 800.0,
    }
    assert extras["gpus"] == (
        GpuInfo(0, "AMD Instinct MI300X", 196592 * MIB, 750.0, uuid="9aff74a1-0000-1000-8039-2c1f3b9246ee"),
        GpuInfo(1, "AMD Instinct MI210", 65520 * MIB, 300.0, reason="reports no temperature"),
    )
    assert extras["accelerators.amd"][1].temp_key == ""
    assert box.runs() == []
    assert collector.cadence == 0.0
    collector.close()
    assert amdsmi.calls["amdsmi_init"] == amdsmi.calls["amdsmi_shut_down"] == 1


def test_the_library_does_not_ask_again_soon_for_what_failed(box, amdsmi):
    now = [0.0]
    collector = probed(box.collector(clock=lambda: now[0]))
    collector.sample()
    collector.sample()
    # GPU 0 answers every sweep; GPU 1 has no VRAM sensor and is asked once.
    assert amdsmi.calls["amdsmi_get_temp_metric"] == 2 + 1
    now[0] += RETRY_FAILED_CALL + 1
    collector.sample()
    assert amdsmi.calls["amdsmi_get_temp_metric"] == 3 + 2


def test_a_library_that_answers_nothing_raises(box, amdsmi):
    collector = probed(box.collector())
    every_query = {name for name in dir(amdsmi) if name.startswith("amdsmi_get_")}
    for gpu in amdsmi.gpus:
        gpu.unsupported = every_query
    with pytest.raises(AmdSourceError, match="^amdsmi answered nothing: amdsmi_get_"):
        collector.sample()


def test_a_library_that_will_not_start_gives_way_to_the_tools(box, amdsmi):
    amdsmi.init_error = AmdSmiLibraryException(8)
    box.rocm_smi(ROCM_MI300X)
    values, extras = one_sweep(box.collector())
    assert values["gpu.0.gpu"] == 97.0
    (note,) = extras["notes.amd"]
    assert note.startswith("amdsmi could not start: Error code:") and note.endswith("; using rocm-smi")


def test_a_library_without_gpus_is_shut_down_and_passed_over(box, amdsmi):
    amdsmi.gpus = []
    probe = box.collector().probe()
    assert probe.reason == "amdgpu is loaded, but amdsmi lists no AMD GPU; amd-smi not found; rocm-smi not found"
    assert amdsmi.calls["amdsmi_shut_down"] == 1


def test_a_library_that_prints_and_fails_on_import_stays_off_the_terminal(box, tmp_path, monkeypatch, capsys):
    package = tmp_path / "site"
    package.mkdir()
    (package / "amdsmi.py").write_text('print("libamd_smi.so not found")\nraise OSError("libamd_smi.so: cannot open shared object file")\n')
    monkeypatch.delitem(sys.modules, "amdsmi")
    monkeypatch.syspath_prepend(str(package))
    box.rocm_smi(ROCM_MI300X)
    _, extras = one_sweep(box.collector())
    assert capsys.readouterr().out == ""
    assert extras["notes.amd"] == ("the amdsmi Python package could not load: libamd_smi.so: cannot open shared object file; using rocm-smi",)


def amd_modules() -> dict[str, types.ModuleType]:
    return {name: module for name, module in sys.modules.items() if name == "collectors.amd" or name.startswith("collectors.amd.")}


def test_importing_the_package_does_not_import_amdsmi(tmp_path, monkeypatch):
    asked: list[str] = []

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.partition(".")[0] == "amdsmi":
                asked.append(name)
            return None

    monkeypatch.setattr(sys, "meta_path", [Watch(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    # Every module of the package is run afresh; the loaded ones come back after the test.
    loaded = amd_modules()
    for name in loaded:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(collectors, "amd", collectors.amd)
    fresh = importlib.import_module("collectors.amd")
    assert asked == []
    # Nor does a probe on a box without the amdgpu driver.
    assert not fresh.AmdCollector(sys_root=str(tmp_path)).probe().available
    assert asked == []
    again = amd_modules()
    assert again.keys() == loaded.keys()
    assert all(again[name] is not module for name, module in loaded.items())
    assert os.path.samefile(fresh.__file__, loaded["collectors.amd"].__file__)


def library_process(pid: int, name: str, vram: int, gfx_ns: int) -> dict[str, Any]:
    """What newer releases return per process: memory in bytes, engine busy time in ns."""
    return {
        "name": name,
        "pid": pid,
        "mem": vram + 4096,
        "engine_usage": {"gfx": gfx_ns, "enc": 0},
        "memory_usage": {"gtt_mem": 4096, "cpu_mem": 0, "vram_mem": vram},
        "cu_occupancy": 96,
    }


def test_the_library_lists_processes_in_both_shapes_with_their_gfx_busy_share(box, amdsmi):
    box.process(4242, ["/usr/bin/python3", "train.py"], uid=0)
    amdsmi.gpus[0].processes = [library_process(4242, "python3", 160 * 2**30, 10_000_000_000), library_process(55, "N/A", MIB, 0)]
    amdsmi.gpus[1].processes = ["handle-a", "handle-gone"]  # an older release: handles to look up
    amdsmi.gpus[1].process_info = {"handle-a": {"name": "rvs", "pid": 4242, "mem": 512 * MIB, "engine_usage": {"gfx": 0, "enc": 0}}}
    now = [10.0]
    collector = probed(box.collector(clock=lambda: now[0]))
    collector.sample()
    first = collector.extras()["gpu_processes"]
    assert [(p.gpu, p.pid, p.command, p.used_memory, p.sm_percent) for p in first] == [
        (0, 55, "", MIB, None),
        (0, 4242, "/usr/bin/python3 train.py", 160 * 2**30, None),  # a busy share needs two readings
        (1, 4242, "rvs", 512 * MIB, None),  # /proc's 4242 is python3, not rvs: another PID namespace's number
    ]
    assert first[1].user == "root" and first[1].kind == "compute"
    now[0] += 2.0
    amdsmi.gpus[0].processes[0]["engine_usage"]["gfx"] += 1_500_000_000  # 1.5 s busy in 2 s
    collector.sample()
    assert collector.extras()["gpu_processes"][1].sm_percent == pytest.approx(75.0)


def test_a_failing_library_process_list_keeps_the_metrics(box, amdsmi):
    amdsmi.gpus[0].unsupported = {"amdsmi_get_gpu_process_list"}
    values, extras = one_sweep(box.collector())
    assert values["gpu.0.gpu"] == 97.0
    assert extras["gpu_processes"] == ()
    (note,) = extras["notes.amd"]
    assert note.startswith("amdsmi_get_gpu_process_list: Error code:") and note.endswith("; GPU processes are not listed")
