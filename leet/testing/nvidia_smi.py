"""``nvidia-smi -q -x`` (XML, schema v12 and v13) as the NVML collector's keys and records.

Values in the XML carry units (``"97 %"``, ``"22437 MiB"``, ``"6.41 W"``) or
say ``N/A`` / ``[N/A]`` / ``Requested functionality has been deprecated``; a
value that is not a number is left out, as NVML's "not supported" is. Keys,
units and meanings match :mod:`collectors.nvidia`, so the two can be
compared side by side. GPUs are numbered in document order, which is NVML's
order (both sort by PCI bus id).
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Iterable

from collectors.gpu import GpuInfo, GpuProcess, MigInstance
from collectors.nvidia import mig_label

_QUANTITY = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*([A-Za-z%/]*)\s*$")
_BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@dataclass(frozen=True)
class SmiReport:
    """One ``nvidia-smi -q -x`` run."""

    driver_version: str
    cuda_version: str
    values: dict[str, float]  # W&B keys, as the NVML collector writes them
    gpus: tuple[GpuInfo, ...]
    processes: tuple[GpuProcess, ...]


def quantity(text: str | None) -> tuple[float, str] | None:
    """``"22437 MiB"`` → ``(22437.0, "MiB")``; ``"16x"`` → ``(16.0, "x")``; N/A → None."""
    if text is None:
        return None
    found = _QUANTITY.match(text)
    return (float(found.group(1)), found.group(2)) if found else None


def number(text: str | None) -> float | None:
    parsed = quantity(text)
    return None if parsed is None else parsed[0]


def byte_count(text: str | None) -> int | None:
    """A memory size with its unit, in bytes."""
    parsed = quantity(text)
    if parsed is None or parsed[1] not in _BYTES:
        return None
    return int(parsed[0] * _BYTES[parsed[1]])


def parse_report(xml_text: str) -> SmiReport:
    """Parse ``nvidia-smi -q -x`` output; ValueError when it is not that."""
    try:
        root = ElementTree.fromstring(xml_text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"nvidia-smi output is not valid XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"not nvidia-smi -q -x output (root element <{root.tag}>)")
    values: dict[str, float] = {}
    gpus = []
    processes: list[GpuProcess] = []
    for index, gpu in enumerate(root.findall("gpu")):
        readings = gpu_values(gpu)
        values.update({f"gpu.{index}.{key}": value for key, value in readings.items()})
        gpus.append(gpu_info(index, gpu, readings))
        processes.extend(gpu_processes(index, gpu, gpus[-1].mig))
    return SmiReport(
        driver_version=_text(root, "driver_version"),
        cuda_version=_text(root, "cuda_version"),
        values=values,
        gpus=tuple(gpus),
        processes=tuple(processes),
    )


def gpu_values(gpu: ElementTree.Element) -> dict[str, float]:
    """One ``<gpu>`` element as ``{field: value}`` in the NVML collector's units."""
    values: dict[str, float] = {}

    def put(key: str, *paths: str) -> None:
        for path in paths:
            value = number(gpu.findtext(path))
            if value is not None:
                values[key] = value
                return

    put("gpu", "utilization/gpu_util")
    put("memory", "utilization/memory_util")
    put("encoderUtilization", "utilization/encoder_util")
    _memory(gpu, values)
    put("temp", "temperature/gpu_temp")
    # Which draw NVML's power reading matches depends on the GPU generation;
    # "power_draw" (older schemas) is that reading, else the 1 s average.
    put(
        "powerWatts",
        "gpu_power_readings/power_draw",
        "gpu_power_readings/average_power_draw",
        "gpu_power_readings/instant_power_draw",
        "power_readings/power_draw",
    )
    put(
        "enforcedPowerLimitWatts",
        "gpu_power_readings/current_power_limit",
        "power_readings/enforced_power_limit",
        "power_readings/power_limit",
    )
    if values.get("enforcedPowerLimitWatts") and "powerWatts" in values:
        values["powerPercent"] = values["powerWatts"] / values["enforcedPowerLimitWatts"] * 100
    put("smClock", "clocks/sm_clock")
    put("memoryClock", "clocks/mem_clock")
    put("graphicsClock", "clocks/graphics_clock")
    put("correctedMemoryErrors", "ecc_errors/volatile/dram_correctable", "ecc_errors/volatile/single_bit/device_memory")
    put(
        "uncorrectedMemoryErrors",
        "ecc_errors/volatile/dram_uncorrectable",
        "ecc_errors/volatile/double_bit/device_memory",
    )
    put("fanSpeed", "fan_speed")
    link = "pci/pci_gpu_link_info"
    put("pcieLinkGen", f"{link}/pcie_gen/current_link_gen")
    put("maxPcieLinkGen", f"{link}/pcie_gen/max_link_gen")
    put("pcieLinkWidth", f"{link}/link_widths/current_link_width")
    put("maxPcieLinkWidth", f"{link}/link_widths/max_link_width")
    put("pcieTxKBps", "pci/tx_util")
    put("pcieRxKBps", "pci/rx_util")
    return values


def _memory(gpu: ElementTree.Element, values: dict[str, float]) -> None:
    """Allocated memory as NVML's v1 query counts it: everything not free, reserved included."""
    total = byte_count(gpu.findtext("fb_memory_usage/total"))
    free = byte_count(gpu.findtext("fb_memory_usage/free"))
    used = byte_count(gpu.findtext("fb_memory_usage/used"))
    reserved = byte_count(gpu.findtext("fb_memory_usage/reserved")) or 0
    allocated = total - free if total is not None and free is not None else None
    if allocated is None and used is not None:
        allocated = used + reserved
    if allocated is None:
        return
    values["memoryAllocatedBytes"] = float(allocated)
    if total:
        values["memoryAllocated"] = allocated / total * 100


def gpu_info(index: int, gpu: ElementTree.Element, readings: dict[str, float]) -> GpuInfo:
    mig_enabled = _text(gpu, "mig_mode/current_mig") == "Enabled"
    utilization = "gpu" in readings
    reason = ""
    if not utilization:
        reason = "MIG mode: no utilisation for the whole GPU" if mig_enabled else "no utilisation reported"
    return GpuInfo(
        index=index,
        name=_text(gpu, "product_name"),
        memory_total=byte_count(gpu.findtext("fb_memory_usage/total")) or 0,
        power_limit_watts=readings.get("enforcedPowerLimitWatts"),
        uuid=_text(gpu, "uuid"),
        reason=reason,
        mig=tuple(mig_instances(index, gpu)) if mig_enabled else (),
        utilization_supported=utilization,
    )


def mig_instances(index: int, gpu: ElementTree.Element) -> Iterable[MigInstance]:
    for position, device in enumerate(gpu.findall("mig_devices/mig_device")):
        slot = number(device.findtext("index"))
        total = byte_count(device.findtext("fb_memory_usage/total"))
        free = byte_count(device.findtext("fb_memory_usage/free"))
        yield MigInstance(
            gpu=index,
            index=int(slot) if slot is not None else position,
            uuid=_text(device, "uuid"),
            gpu_instance_id=_integer(device.findtext("gpu_instance_id")),
            compute_instance_id=_integer(device.findtext("compute_instance_id")),
            memory_used=total - free if total is not None and free is not None else None,
            memory_total=total,
        )


def gpu_processes(index: int, gpu: ElementTree.Element, mig: tuple[MigInstance, ...]) -> Iterable[GpuProcess]:
    profiles = {(s.gpu_instance_id, s.compute_instance_id): s.profile for s in mig}
    for process in gpu.findall("processes/process_info"):
        pid = _integer(process.findtext("pid"))
        if pid is None:
            continue
        gi = _integer(process.findtext("gpu_instance_id"))
        ci = _integer(process.findtext("compute_instance_id"))
        yield GpuProcess(
            gpu=index,
            pid=pid,
            host_pid=pid,
            command=_text(process, "process_name"),
            used_memory=byte_count(process.findtext("used_memory")),
            kind="graphics" if _text(process, "type") == "G" else "compute",
            mig=mig_label(profiles.get((gi, ci), ""), gi, ci) if gi is not None else "",
        )


def run_nvidia_smi(executable: str = "nvidia-smi", timeout: float = 10.0) -> str:
    """The XML report of the local ``nvidia-smi``; OSError or TimeoutExpired when it cannot run."""
    done = subprocess.run(
        [executable, "-q", "-x"], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        message = (done.stdout or done.stderr).strip().splitlines()
        raise OSError(f"nvidia-smi failed: {message[0] if message else f'exit status {done.returncode}'}")
    return done.stdout


def _text(element: ElementTree.Element, path: str) -> str:
    return (element.findtext(path) or "").strip()


def _integer(text: str | None) -> int | None:
    value = number(text)
    return None if value is None else int(value)
