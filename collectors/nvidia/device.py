"""Asking NVML about one NVIDIA GPU: return codes, the field table, and calls that remember what a GPU does not answer.

A field a GPU does not support is left out and asked again only every
``RETRY_UNSUPPORTED`` seconds; any other NVML error costs that field for one
sweep. A GPU that answers GPU_IS_LOST raises ``GpuLost`` out of the call, for
the collector to mark it lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from collectors.gpu import GpuInfo, MigInstance

RETRY_UNSUPPORTED = 60.0

# NVML return codes (C ABI constants, the same in every driver).
UNINITIALIZED = 1
NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18
ARGUMENT_VERSION_MISMATCH = 25

# Answers that will not change by asking again soon.
LASTING = {NOT_SUPPORTED, NO_PERMISSION, FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH}
# Answers that mean the driver as a whole is gone, not one field.
DRIVER_GONE = {UNINITIALIZED, DRIVER_NOT_LOADED, LIB_RM_VERSION_MISMATCH}

MIG_ENABLED = 1
NO_INSTANCE = 0xFFFFFFFF  # gpuInstanceId / computeInstanceId outside MIG


def init_failure(exc: BaseException) -> str:
    """Why NVML would not start, in words a person can act on."""
    code = getattr(exc, "value", None)
    if code == LIBRARY_NOT_FOUND:
        return "no NVIDIA driver: libnvidia-ml.so.1 not found"
    if code == DRIVER_NOT_LOADED:
        return "no NVIDIA driver: the NVIDIA kernel module is not loaded"
    if code == LIB_RM_VERSION_MISMATCH:
        return "NVIDIA driver and libnvidia-ml versions differ (was the driver updated without a reboot?)"
    if code == NO_PERMISSION:
        return "NVML: no permission to open the NVIDIA devices (/dev/nvidia*)"
    return f"NVML could not start: {exc}"


class GpuLost(Exception):
    """A GPU answered GPU_IS_LOST."""


@dataclass
class MigSlot:
    handle: Any
    instance: MigInstance


@dataclass
class Gpu:
    """What the collector keeps for one physical GPU."""

    index: int
    handle: Any
    name: str = ""
    uuid: str = ""
    memory_total: int = 0
    power_limit_watts: float | None = None
    fixed: dict[str, float] = field(default_factory=dict)  # max PCIe link
    mig_enabled: bool = False
    mig: list[MigSlot] = field(default_factory=list)
    mig_now: tuple[MigInstance, ...] = ()
    mig_processes_by_slice: bool = False
    static_due: float = 0.0
    lost: str = ""  # why, when lost
    retry_at: float = 0.0
    unsupported: dict[str, float] = field(default_factory=dict)  # field group -> when to ask again
    utilization_supported: bool = True
    samples_since: int = 0  # µs timestamp of the newest process-utilisation sample seen

    def info(self) -> GpuInfo:
        return GpuInfo(
            index=self.index,
            name=self.name,
            memory_total=self.memory_total,
            power_limit_watts=self.power_limit_watts,
            uuid=self.uuid,
            lost=bool(self.lost),
            reason=self.lost or self._limits(),
            mig=self.mig_now,
            utilization_supported=self.utilization_supported,
        )

    def _limits(self) -> str:
        if self.utilization_supported:
            return ""
        if self.mig_enabled:
            return "MIG mode: NVML gives no utilisation for the whole GPU"
        return "NVML gives no utilisation for this GPU"


class NvmlCalls:
    """NVML calls for one field group of one GPU at a time, with what they answered kept on the GPU.

    Part of ``NvidiaCollector``, which sets the attributes below.
    """

    _nvml: Any
    _variant: dict[str, Callable[..., Any]]
    _driver_trouble: str
    _answered: bool

    def _call(self, gpu: Gpu, now: float, group: str, read: Callable[..., Any], *args: Any) -> Any:
        """One NVML call for one field group of one GPU; None when it gave nothing."""
        if gpu.unsupported.get(group, 0.0) > now:
            return None
        try:
            result = read(*args)
        except self._nvml.NVMLError as exc:
            self._failed(gpu, now, group, getattr(exc, "value", None), exc)
            return None
        gpu.unsupported.pop(group, None)
        self._answered = True
        return result

    def _call_variants(
        self, gpu: Gpu, now: float, group: str, variants: tuple, handle: Any, slot: Any = None
    ) -> Any:
        """Like ``_call``, for a field NVML offers under several versioned names."""
        key = group if slot is None else f"{group}:{slot.index}"
        if gpu.unsupported.get(key, 0.0) > now:
            return None
        try:
            result = self._first_variant(group, variants, handle)
        except self._nvml.NVMLError as exc:
            self._failed(gpu, now, key, getattr(exc, "value", None), exc)
            return None
        gpu.unsupported.pop(key, None)
        self._answered = True
        return result

    def _first_variant(self, group: str, variants: tuple, handle: Any) -> Any:
        """Call the newest variant this driver and pynvml have, and remember it."""
        chosen = self._variant.get(group)
        if chosen is not None:
            return chosen(self._nvml, handle)
        last: BaseException | None = None
        for variant in variants:
            try:
                result = variant(self._nvml, handle)
            except AttributeError:
                continue  # this pynvml predates the variant
            except self._nvml.NVMLError as exc:
                if getattr(exc, "value", None) in (FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH):
                    last = exc
                    continue
                raise
            self._variant[group] = variant
            return result
        raise last if last is not None else self._nvml.NVMLError(FUNCTION_NOT_FOUND)

    def _failed(self, gpu: Gpu, now: float, group: str, code: int | None, exc: BaseException) -> None:
        if code == GPU_IS_LOST:
            raise GpuLost(str(exc)) from None
        if code in LASTING:
            gpu.unsupported[group] = now + RETRY_UNSUPPORTED
        elif code in DRIVER_GONE:
            self._driver_trouble = str(exc)

    def _quiet(self, read: Callable[..., Any], *args: Any) -> Any:
        """A best-effort call (MIG slices): None on any NVML error but a lost GPU."""
        try:
            return read(*args)
        except self._nvml.NVMLError as exc:
            if getattr(exc, "value", None) == GPU_IS_LOST:
                raise GpuLost(str(exc)) from None
            return None


# Fields that are one NVML number each: (key, (nvml module, handle) -> value).
SCALARS: tuple[tuple[str, Callable[[Any, Any], Any]], ...] = (
    ("smClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)),
    ("memoryClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)),
    ("graphicsClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_GRAPHICS)),
    # Volatile counts (since the driver loaded): aggregate ones stay non-zero
    # after a row remap, and W&B reads these.
    (
        "correctedMemoryErrors",
        lambda nvml, h: nvml.nvmlDeviceGetMemoryErrorCounter(
            h, nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC, nvml.NVML_MEMORY_LOCATION_DEVICE_MEMORY
        ),
    ),
    (
        "uncorrectedMemoryErrors",
        lambda nvml, h: nvml.nvmlDeviceGetMemoryErrorCounter(
            h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC, nvml.NVML_MEMORY_LOCATION_DEVICE_MEMORY
        ),
    ),
    ("encoderUtilization", lambda nvml, h: nvml.nvmlDeviceGetEncoderUtilization(h)[0]),
    ("pcieLinkGen", lambda nvml, h: nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
    ("pcieLinkWidth", lambda nvml, h: nvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
    ("energyJoules", lambda nvml, h: nvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000),
)
# KiB/s, each measured by the driver over 20 ms inside the call.
PCIE_THROUGHPUT: tuple[tuple[str, Callable[[Any, Any], Any]], ...] = (
    ("pcieTxKBps", lambda nvml, h: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_TX_BYTES)),
    ("pcieRxKBps", lambda nvml, h: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_RX_BYTES)),
)

# Versioned entry points, newest first: (nvml module, handle) -> value.
TEMPERATURE = (
    lambda nvml, h: nvml.nvmlDeviceGetTemperatureV(h, nvml.NVML_TEMPERATURE_GPU),
    lambda nvml, h: nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU),
)
FAN_SPEED = (
    lambda nvml, h: nvml.nvmlDeviceGetFanSpeed_v2(h, 0),
    lambda nvml, h: nvml.nvmlDeviceGetFanSpeed(h),
)
COMPUTE_PROCESSES = (
    lambda nvml, h: nvml.nvmlDeviceGetComputeRunningProcesses_v3(h),
    lambda nvml, h: nvml.nvmlDeviceGetComputeRunningProcesses_v2(h),
)
GRAPHICS_PROCESSES = (
    lambda nvml, h: nvml.nvmlDeviceGetGraphicsRunningProcesses_v3(h),
    lambda nvml, h: nvml.nvmlDeviceGetGraphicsRunningProcesses_v2(h),
)
