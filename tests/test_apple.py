"""The Apple silicon collector, run on any OS: the platform check told "macOS on arm64", macmon-lib stood in, ioreg faked on PATH.

The stand-in ``macmon`` module has macmon-lib's Python API (``soc_info()``,
``Sampler().metrics()`` with its dataclasses) and reports an M1 Max whose GPU
figures are those of W&B's own Apple test fixture. The fake ``ioreg`` replays
a registry listing of the same machine.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from collectors import Health, Hub
from collectors.apple import NOT_APPLE_SILICON, AppleCollector, parse_ioreg
from collectors.base import Collector
from collectors.gpu import AcceleratorInfo

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "hardware" / "apple"
FAKEBIN = HERE / "fakebin" / "apple"
GPU_STATS = json.loads((FIXTURES / "apple_gpu_stats_json_M1-Max_wandb-test.json").read_text())
APPLE_SILICON = ("darwin", "arm64")

GIB = 2**30
RAM_TOTAL, RAM_USED = 32 * GIB, 21 * GIB
SWAP_TOTAL, SWAP_USED = 2 * GIB, GIB // 2
_SENSORS = [value for name, value in GPU_STATS.items() if name.startswith(("m1Gpu", "m2Gpu", "m3Gpu")) and value]
GPU_TEMP = sum(_SENSORS) / len(_SENSORS)  # what W&B's helper-era monitor made of them: the mean of the live sensors


# -- a stand-in macmon-lib ------------------------------------------------------------------


@dataclass(frozen=True)
class CoreUsage:
    frequency_mhz: int
    usage: float


@dataclass(frozen=True)
class CpuUsage:
    name: str
    units: int
    frequency_mhz: int
    usage: float
    cores: list[CoreUsage] = field(default_factory=list)


@dataclass(frozen=True)
class GpuUsage:
    name: str
    units: int
    frequency_mhz: int
    usage: float


@dataclass(frozen=True)
class PowerMetrics:
    package: float
    cpu: float
    gpu: float
    ram: float
    gpu_ram: float
    ane: float
    board: float
    battery: float
    dc_in: float


@dataclass(frozen=True)
class MemoryMetrics:
    ram_total: int
    ram_usage: int
    swap_total: int
    swap_usage: int


@dataclass(frozen=True)
class TemperatureMetrics:
    cpu_average: float
    gpu_average: float


@dataclass(frozen=True)
class Metrics:
    cpu_usage: list[CpuUsage]
    gpu_usage: list[GpuUsage]
    power: PowerMetrics
    memory: MemoryMetrics
    temperature: TemperatureMetrics


@dataclass(frozen=True)
class CpuDomain:
    name: str
    units: int
    frequencies_mhz: list[int]


@dataclass(frozen=True)
class SocInfo:
    mac_model: str
    chip_name: str
    memory_gb: int
    cpu_domains: list[CpuDomain]
    gpu_cores: int
    gpu_frequencies_mhz: list[int]


class MacmonError(RuntimeError):
    pass


class InitializationFailedError(MacmonError):
    pass


def m1_max_metrics() -> Metrics:
    return Metrics(
        cpu_usage=[
            CpuUsage("ECPU", 2, 2064, 0.42),
            # Two performance clusters: their figures are weighted by core count.
            CpuUsage("PCPU", 4, 3000, 0.5),
            CpuUsage("PCPU1", 4, 2000, 0.2),
        ],
        gpu_usage=[GpuUsage("GPUPH", GPU_STATS["cores"], 1296, GPU_STATS["utilization"] / 100)],
        power=PowerMetrics(
            package=12.0,
            cpu=3.25,
            gpu=GPU_STATS["gpuPowerPMVR"],
            ram=0.5,
            gpu_ram=0.125,
            ane=0.0,
            board=GPU_STATS["systemPower"],
            battery=0.0,
            dc_in=0.0,
        ),
        memory=MemoryMetrics(ram_total=RAM_TOTAL, ram_usage=RAM_USED, swap_total=SWAP_TOTAL, swap_usage=SWAP_USED),
        temperature=TemperatureMetrics(cpu_average=48.5, gpu_average=GPU_TEMP),
    )


class FakeMacmon(types.ModuleType):
    """``import macmon`` as macmon-lib 0.7 provides it, counting what is asked of it."""

    def __init__(self, fail_on_start: bool = False) -> None:
        super().__init__("macmon")
        self.fail_on_start = fail_on_start
        self.metrics_calls = 0
        self.closed = 0
        self.soc_info_calls = 0
        self.MacmonError = MacmonError
        self.InitializationFailedError = InitializationFailedError
        fake = self

        class Sampler:
            def __init__(self) -> None:
                if fake.fail_on_start:
                    raise InitializationFailedError("IOReport is not available")

            def metrics(self) -> Metrics:
                fake.metrics_calls += 1
                return m1_max_metrics()

            def close(self) -> None:
                fake.closed += 1

        self.Sampler = Sampler

    def soc_info(self) -> SocInfo:
        self.soc_info_calls += 1
        domains = [CpuDomain("ECPU", 2, [600, 972, 1332, 1704, 2064]), CpuDomain("PCPU", 8, [600, 1596, 2064, 3228])]
        return SocInfo("MacBookPro18,2", GPU_STATS["name"], 32, domains, GPU_STATS["cores"], [389, 486, 648, 778, 972, 1296])


@pytest.fixture
def macmon(monkeypatch):
    fake = FakeMacmon()
    monkeypatch.setitem(sys.modules, "macmon", fake)
    return fake


@pytest.fixture
def no_macmon(monkeypatch):
    monkeypatch.setitem(sys.modules, "macmon", None)


@pytest.fixture
def fake_ioreg(monkeypatch):
    """The stand-in ioreg first on PATH; returns a setter for its behaviour."""
    monkeypatch.setenv("PATH", f"{FAKEBIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_IOREG", "ok")
    return lambda mode: monkeypatch.setenv("FAKE_IOREG", mode)


@pytest.fixture
def psutil_memory(monkeypatch):
    monkeypatch.setattr(psutil, "virtual_memory", lambda: types.SimpleNamespace(total=RAM_TOTAL, available=RAM_TOTAL - RAM_USED))
    monkeypatch.setattr(psutil, "swap_memory", lambda: types.SimpleNamespace(total=SWAP_TOTAL, used=SWAP_USED))


def memory_values() -> dict[str, float]:
    return {
        "memory.used": RAM_USED,
        "memory.used_percent": RAM_USED / RAM_TOTAL * 100,
        "swap.used": SWAP_USED,
        "swap.used_percent": 25.0,
    }


# -- where it runs ------------------------------------------------------------------------------


@pytest.mark.parametrize("machine", [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "x86_64")])
def test_anything_but_macos_on_arm64_is_absent_without_touching_macmon(machine, macmon):
    probe = AppleCollector(platform=machine).probe()
    assert (probe.available, probe.reason) == (False, NOT_APPLE_SILICON)
    assert macmon.soc_info_calls == 0


def test_by_default_the_platform_is_this_machines():
    assert AppleCollector().platform == (sys.platform, platform.machine())


def test_without_macmon_or_ioreg_there_is_nothing_to_read(no_macmon, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    probe = AppleCollector(platform=APPLE_SILICON).probe()
    assert (probe.available, probe.reason) == (False, "neither macmon-lib (pip install macmon-lib) nor ioreg is available")


def test_a_macmon_that_cannot_start_without_ioreg_says_both(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "macmon", FakeMacmon(fail_on_start=True))
    monkeypatch.setenv("PATH", str(tmp_path))
    probe = AppleCollector(platform=APPLE_SILICON).probe()
    assert probe.reason == "macmon-lib could not start (IOReport is not available) and ioreg is not on PATH"


# -- macmon-lib ---------------------------------------------------------------------------------------


def test_macmon_gives_the_wandb_apple_keys(macmon, fake_ioreg):
    fake_ioreg("fail")  # never run: macmon is enough
    apple = AppleCollector(platform=APPLE_SILICON)
    assert isinstance(apple, Collector) and apple.name == "apple"
    assert apple.probe().available
    assert macmon.metrics_calls == 1  # the probe starts the sampler's first interval
    values = dict(apple.sample())
    expected = {
        "cpu.ecpu_percent": 42.0,
        "cpu.ecpu_freq": 2064.0,
        "cpu.pcpu_percent": 35.0,
        "cpu.pcpu_freq": 2500.0,
        "gpu.0.gpu": 29.0,
        "gpu.0.freq": 1296.0,
        "gpu.0.powerWatts": GPU_STATS["gpuPowerPMVR"],
        "gpu.0.temp": GPU_TEMP,
        "cpu.avg_temp": 48.5,
        "cpu.powerWatts": 3.25,
        "ane.power": 0.0,
        "system.powerWatts": GPU_STATS["systemPower"],
        **memory_values(),
    }
    assert values == pytest.approx(expected)
    assert set(values) == set(expected)
    assert apple.extras() == {
        "accelerators.apple": (
            AcceleratorInfo(
                vendor="Apple",
                index=0,
                name="Apple M1 Max (24-core GPU)",
                utilization_key="gpu.0.gpu",
                memory_key="memory.used_percent",
                temp_key="gpu.0.temp",
                power_key="gpu.0.powerWatts",
                memory_total=RAM_TOTAL,
            ),
        ),
        "notes.apple": (),
    }
    assert macmon.metrics_calls == 2
    apple.close()
    apple.close()
    assert macmon.closed == 1


def test_system_power_is_never_less_than_its_parts(macmon, monkeypatch):
    def no_smc_total() -> Metrics:
        metrics = m1_max_metrics()
        power = PowerMetrics(**{**metrics.power.__dict__, "board": 0.0})
        return Metrics(metrics.cpu_usage, metrics.gpu_usage, power, metrics.memory, TemperatureMetrics(0.0, float("nan")))

    apple = AppleCollector(platform=APPLE_SILICON)
    apple.probe()
    monkeypatch.setattr(apple._sampler, "metrics", no_smc_total)
    values = apple.sample()
    apple.close()
    assert values["system.powerWatts"] == pytest.approx(3.25 + GPU_STATS["gpuPowerPMVR"])
    assert "cpu.avg_temp" not in values and "gpu.0.temp" not in values


def test_a_macmon_that_cannot_start_gives_way_to_ioreg(monkeypatch, fake_ioreg, psutil_memory):
    monkeypatch.setitem(sys.modules, "macmon", FakeMacmon(fail_on_start=True))
    apple = AppleCollector(platform=APPLE_SILICON)
    assert apple.probe().available
    assert apple.extras()["notes.apple"] == ("macmon-lib could not start (IOReport is not available); reading ioreg instead",)
    assert apple.sample()["gpu.0.gpu"] == 29.0


# -- ioreg and psutil ----------------------------------------------------------------------------------


def test_without_macmon_ioreg_and_psutil_give_gpu_use_and_memory(no_macmon, fake_ioreg, psutil_memory):
    apple = AppleCollector(platform=APPLE_SILICON)
    assert apple.probe().available
    values = dict(apple.sample())
    in_use, allocated = GPU_STATS["inUseSystemMemory"], GPU_STATS["allocatedSystemMemory"]
    expected = {
        "gpu.0.gpu": 29.0,
        "gpu.0.memoryUsed": in_use,
        "gpu.0.memoryAllocatedBytes": allocated,
        "gpu.0.memoryAllocated": in_use / allocated * 100,
        "gpu.0.recoveryCount": 0.0,
        **memory_values(),
    }
    assert values == pytest.approx(expected)
    assert set(values) == set(expected)
    (info,) = apple.extras()["accelerators.apple"]
    assert info == AcceleratorInfo(
        vendor="Apple",
        index=0,
        name="Apple M1 Max (24-core GPU)",
        utilization_key="gpu.0.gpu",
        memory_key="memory.used_percent",
        memory_total=RAM_TOTAL,
    )
    assert apple.extras()["notes.apple"] == ("macmon-lib is not installed (pip install macmon-lib): no power, temperature or CPU cluster figures",)


def test_an_ioreg_that_hangs_makes_the_sample_raise_within_its_timeout(no_macmon, fake_ioreg, psutil_memory):
    fake_ioreg("hang")
    apple = AppleCollector(platform=APPLE_SILICON, command_timeout=0.3)
    assert apple.probe().available
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"ioreg gave no answer in 0\.3 s"):
        apple.sample()
    assert time.monotonic() - started < apple.budget
    assert apple.extras()["accelerators.apple"][0].name == "Apple GPU"


def test_an_ioreg_that_fails_makes_the_sample_raise_with_its_message(no_macmon, fake_ioreg, psutil_memory):
    fake_ioreg("fail")
    apple = AppleCollector(platform=APPLE_SILICON)
    apple.probe()
    with pytest.raises(RuntimeError, match="ioreg failed: ioreg: IOServiceGetMatchingServices failed"):
        apple.sample()


def test_garbage_from_ioreg_costs_the_gpu_figures_only(no_macmon, fake_ioreg, psutil_memory):
    fake_ioreg("garbage")
    apple = AppleCollector(platform=APPLE_SILICON)
    apple.probe()
    assert apple.sample() == pytest.approx(memory_values())
    assert apple.extras()["accelerators.apple"][0].reason == "ioreg shows no PerformanceStatistics for the GPU"


def test_the_ioreg_listing_parses_to_the_gpu_and_its_statistics():
    gpu = parse_ioreg((FIXTURES / "ioreg_r_d1_w0_c_IOAccelerator_M1-Max_COMPOSED.txt").read_text())
    statistics = dict(gpu.statistics)
    assert (gpu.model, gpu.cores) == ("Apple M1 Max", 24)
    assert statistics["Device Utilization %"] == GPU_STATS["utilization"]
    assert statistics["In use system memory"] == GPU_STATS["inUseSystemMemory"]
    assert statistics["Alloc system memory"] == GPU_STATS["allocatedSystemMemory"]
    assert statistics["Renderer Utilization %"] == GPU_STATS["renderUtilization"]
    assert statistics["Tiler Utilization %"] == GPU_STATS["tilerUtilization"]
    assert parse_ioreg("") == parse_ioreg("\x00 nothing here")


# -- under the hub ---------------------------------------------------------------------------------------


def test_under_the_hub_a_hanging_ioreg_marks_the_collector_failing_not_the_hub_stuck(no_macmon, fake_ioreg, psutil_memory):
    hub = Hub([AppleCollector(platform=APPLE_SILICON, command_timeout=0.3)], warmup=0.0)
    try:
        assert hub.sweep().values["gpu.0.gpu"] == 29.0
        fake_ioreg("hang")
        started = time.monotonic()
        (status,) = hub.sweep().status
    finally:
        hub.stop()
    assert time.monotonic() - started < 2.0
    assert status.health is Health.FAILING
    assert "ioreg gave no answer in 0.3 s" in status.reason


def test_under_the_hub_a_linux_box_shows_apple_as_absent():
    hub = Hub([AppleCollector(platform=("linux", "x86_64"))], warmup=0.0)
    try:
        (status,) = hub.sweep().status
    finally:
        hub.stop()
    assert (status.health, status.reason) == (Health.ABSENT, NOT_APPLE_SILICON)
