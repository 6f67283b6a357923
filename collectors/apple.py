"""Apple silicon: W&B's Apple keys (wandb 0.18.4+ names) from macmon-lib, or from ioreg and psutil.

Only on macOS on arm64. Two sources, the first one that works:

* ``macmon`` (PyPI ``macmon-lib``, imported lazily): IOReport and SMC through
  a bundled native library, with neither root nor a helper process. It gives
  what wandb's sidecar reads from the same places: the CPU clusters' and the
  GPU's usage and frequency, CPU/GPU/ANE/system power, temperatures, RAM and
  swap. Its sampler reports the interval since its previous call, so the
  probe makes a first call to start that interval.
* Without it, ``ioreg -r -d 1 -w 0 -c IOAccelerator``: the GPU driver's
  ``PerformanceStatistics`` (busy %, memory the GPU holds), and psutil for
  RAM and swap. ioreg runs with a timeout; one that hangs or fails makes the
  sample raise. wandb 0.18.4+ has no keys for the GPU's memory; these carry
  the names wandb's Go monitor gave them before (``gpu.0.memoryUsed``,
  ``gpu.0.memoryAllocatedBytes``) and the percentage of its Python monitor
  (``gpu.0.memoryAllocated``, in use over allocated).

Like wandb, values that are not finite and counts that are zero are left out;
unlike it, so are temperatures of 0 °C, which mean "no sensor found".
"""

from __future__ import annotations

import importlib
import math
import platform as platform_module
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo

IOREG_ARGS = ("-r", "-d", "1", "-w", "0", "-c", "IOAccelerator")
NOT_APPLE_SILICON = "not macOS on Apple silicon"
MACMON_HINT = "pip install macmon-lib"


def is_apple_silicon(system: str, machine: str) -> bool:
    return system == "darwin" and machine == "arm64"


class AppleCollector(Collector):
    """CPU, GPU, power and memory keys of an Apple silicon Mac, plus one ``AcceleratorInfo`` for its GPU.

    ``platform`` is ``(sys.platform, platform.machine())`` (None: this
    machine's). ``use_macmon`` lets the collector import macmon-lib;
    ``ioreg`` is the command of the fallback and ``command_timeout`` how long
    it may take.
    """

    name = "apple"
    budget = 2.0

    def __init__(
        self,
        platform: tuple[str, str] | None = None,
        use_macmon: bool = True,
        ioreg: str = "ioreg",
        command_timeout: float = 1.5,
    ) -> None:
        self.platform = platform if platform is not None else (sys.platform, platform_module.machine())
        self.use_macmon = use_macmon
        self.ioreg = ioreg
        self.command_timeout = command_timeout
        self._sampler: Any = None  # a macmon.Sampler
        self._ioreg_path = ""
        self._gpu_name = "Apple GPU"
        self._memory_total: int | None = None
        self._notes: tuple[str, ...] = ()
        self._reason = ""
        self._extras: dict[str, Any] = {"accelerators.apple": (), "notes.apple": ()}

    # -- the contract --------------------------------------------------------

    def probe(self) -> Probe:
        self.close()
        if not is_apple_silicon(*self.platform):
            return Probe.absent(NOT_APPLE_SILICON)
        note = self._open_macmon() if self.use_macmon else ""
        if self._sampler is None:
            self._ioreg_path = shutil.which(self.ioreg) or ""
            if not self._ioreg_path:
                return Probe.absent(_nothing_to_read(note))
            self._describe_from_ioreg()
        self._notes = (note,) if note else ()
        self._extras = self._make_extras()
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        values = self._from_macmon() if self._sampler is not None else self._from_ioreg()
        self._extras = self._make_extras()
        return values

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def close(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            try:
                sampler.close()
            except Exception:  # noqa: BLE001 - close must not raise
                pass

    # -- macmon ------------------------------------------------------------------

    def _open_macmon(self) -> str:
        """Start a macmon sampler; a note when macmon-lib is missing or refuses."""
        try:
            macmon = importlib.import_module("macmon")
        except ImportError:
            return f"macmon-lib is not installed ({MACMON_HINT}): no power, temperature or CPU cluster figures"
        sampler = None
        try:
            info = macmon.soc_info()
            sampler = macmon.Sampler()
            sampler.metrics()
        except Exception as error:  # noqa: BLE001 - MacmonError and whatever its native side raises
            self._sampler = sampler
            self.close()
            return f"macmon-lib could not start ({error}); reading ioreg instead"
        self._sampler = sampler
        self._gpu_name = _gpu_name(getattr(info, "chip_name", ""), getattr(info, "gpu_cores", 0))
        return ""

    def _from_macmon(self) -> dict[str, float]:
        metrics = self._sampler.metrics()
        values: dict[str, float] = {}
        values.update(_cluster_values(metrics.cpu_usage))
        values.update(_gpu_values(metrics.gpu_usage))
        values.update(_power_values(metrics.power))
        _put(values, "cpu.avg_temp", metrics.temperature.cpu_average, positive=True)
        _put(values, "gpu.0.temp", metrics.temperature.gpu_average, positive=True)
        memory = metrics.memory
        self._memory_total = int(memory.ram_total) or None
        values.update(_memory_values(memory.ram_usage, memory.ram_total, memory.swap_usage, memory.swap_total))
        return values

    # -- ioreg and psutil ---------------------------------------------------------------

    def _describe_from_ioreg(self) -> None:
        """The GPU's name for the sidebar; a failure here shows again, as an error, in the first sample."""
        try:
            gpu = parse_ioreg(self._run_ioreg())
        except (OSError, RuntimeError, subprocess.SubprocessError):
            return
        self._gpu_name = _gpu_name(gpu.model, gpu.cores)

    def _from_ioreg(self) -> dict[str, float]:
        gpu = parse_ioreg(self._run_ioreg())
        self._reason = "" if gpu.statistics else "ioreg shows no PerformanceStatistics for the GPU"
        values = _statistics_values(gpu.statistics)
        values.update(self._psutil_memory())
        return values

    def _run_ioreg(self) -> str:
        try:
            done = subprocess.run(
                [self._ioreg_path or self.ioreg, *IOREG_ARGS],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.command_timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"ioreg gave no answer in {self.command_timeout:g} s") from None
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise RuntimeError(f"ioreg failed: {detail[0]}")
        return done.stdout

    def _psutil_memory(self) -> dict[str, float]:
        import psutil

        ram, swap = psutil.virtual_memory(), psutil.swap_memory()
        self._memory_total = int(ram.total) or None
        return _memory_values(ram.total - ram.available, ram.total, swap.used, swap.total)

    # -- extras -----------------------------------------------------------------------

    def _make_extras(self) -> dict[str, Any]:
        rich = self._sampler is not None
        info = AcceleratorInfo(
            vendor="Apple",
            index=0,
            name=self._gpu_name,
            utilization_key="gpu.0.gpu",
            memory_key="memory.used_percent",  # unified memory: the GPU's memory is the system's
            temp_key="gpu.0.temp" if rich else "",
            power_key="gpu.0.powerWatts" if rich else "",
            memory_total=self._memory_total,
            reason=self._reason,
        )
        return {"accelerators.apple": (info,), "notes.apple": self._notes}


# -- macmon's figures as keys -------------------------------------------------------


def _cluster_values(clusters: Any) -> dict[str, float]:
    """``cpu.{e,p}cpu_percent`` and ``_freq`` from macmon's CPU domains (``ECPU``, ``PCPU``…), weighted by core count."""
    values: dict[str, float] = {}
    for kind in ("ecpu", "pcpu"):
        members = [cluster for cluster in clusters if _cluster_kind(cluster.name) == kind]
        units = sum(max(int(cluster.units), 1) for cluster in members)
        if not members:
            continue
        usage = sum(float(c.usage) * max(int(c.units), 1) for c in members) / units
        frequency = sum(float(c.frequency_mhz) * max(int(c.units), 1) for c in members) / units
        _put(values, f"cpu.{kind}_percent", usage * 100)
        _put(values, f"cpu.{kind}_freq", frequency, positive=True)
    return values


def _cluster_kind(name: str) -> str:
    upper = str(name).upper()
    if "ECPU" in upper or upper.startswith("E"):
        return "ecpu"
    if "PCPU" in upper or upper.startswith("P"):
        return "pcpu"
    return ""


def _gpu_values(gpus: Any) -> dict[str, float]:
    values: dict[str, float] = {}
    if gpus:
        gpu = gpus[0]
        _put(values, "gpu.0.gpu", float(gpu.usage) * 100)
        _put(values, "gpu.0.freq", gpu.frequency_mhz, positive=True)
    return values


def _power_values(power: Any) -> dict[str, float]:
    values: dict[str, float] = {}
    _put(values, "cpu.powerWatts", power.cpu)
    _put(values, "gpu.0.powerWatts", power.gpu)
    _put(values, "ane.power", power.ane)
    parts = float(power.cpu) + float(power.gpu) + float(power.ane)
    # The SMC's system total (PSTR) where there is one; never less than its parts.
    _put(values, "system.powerWatts", max(float(power.board), parts))
    return values


def _memory_values(ram_used: float, ram_total: float, swap_used: float, swap_total: float) -> dict[str, float]:
    values: dict[str, float] = {}
    _put(values, "memory.used", ram_used, positive=True)
    if ram_total > 0:
        _put(values, "memory.used_percent", ram_used / ram_total * 100)
    _put(values, "swap.used", swap_used, positive=True)
    if swap_total > 0:
        _put(values, "swap.used_percent", swap_used / swap_total * 100)
    return values


def _put(values: dict[str, float], key: str, raw: Any, positive: bool = False) -> None:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return
    if math.isfinite(value) and (value > 0 or not positive):
        values[key] = value


def _nothing_to_read(macmon_note: str) -> str:
    if macmon_note.startswith("macmon-lib could not start"):
        return macmon_note.split(";")[0] + " and ioreg is not on PATH"
    return f"neither macmon-lib ({MACMON_HINT}) nor ioreg is available"


def _gpu_name(chip: str, cores: Any) -> str:
    chip = str(chip or "").strip() or "Apple GPU"
    try:
        count = int(cores)
    except (TypeError, ValueError):
        count = 0
    return f"{chip} ({count}-core GPU)" if count > 0 else chip


# -- ioreg's text ------------------------------------------------------------------


@dataclass(frozen=True)
class IoregGpu:
    """What ``ioreg -c IOAccelerator`` tells of the GPU."""

    model: str = ""
    cores: int = 0
    statistics: tuple[tuple[str, float], ...] = ()


_STATISTICS = re.compile(r'"PerformanceStatistics"\s*=\s*\{(.*)\}\s*$', re.MULTILINE)
_NUMBER_PAIR = re.compile(r'"([^"]+)"\s*=\s*(-?\d+(?:\.\d+)?)')
_MODEL = re.compile(r'^\s*"model"\s*=\s*<?"([^"]*)"', re.MULTILINE)
_CORES = re.compile(r'^\s*"gpu-core-count"\s*=\s*(\d+)', re.MULTILINE)


def parse_ioreg(text: str) -> IoregGpu:
    """The first accelerator in the output that has performance statistics (else the first one)."""
    blocks = [block for block in re.split(r"^\s*\+-o ", text, flags=re.MULTILINE) if block.strip()]
    chosen = next((block for block in blocks if _STATISTICS.search(block)), blocks[0] if blocks else "")
    statistics = _STATISTICS.search(chosen)
    model = _MODEL.search(chosen)
    cores = _CORES.search(chosen)
    return IoregGpu(
        model=model.group(1) if model else "",
        cores=int(cores.group(1)) if cores else 0,
        statistics=tuple((name, float(value)) for name, value in _NUMBER_PAIR.findall(statistics.group(1))) if statistics else (),
    )


def _statistics_values(statistics: tuple[tuple[str, float], ...]) -> dict[str, float]:
    stats = dict(statistics)
    values: dict[str, float] = {}
    _put(values, "gpu.0.gpu", stats.get("Device Utilization %"))
    in_use, allocated = stats.get("In use system memory"), stats.get("Alloc system memory")
    _put(values, "gpu.0.memoryUsed", in_use, positive=True)
    _put(values, "gpu.0.memoryAllocatedBytes", allocated, positive=True)
    if in_use is not None and allocated:
        _put(values, "gpu.0.memoryAllocated", in_use / allocated * 100)
    _put(values, "gpu.0.recoveryCount", stats.get("recoveryCount"))
    return values
