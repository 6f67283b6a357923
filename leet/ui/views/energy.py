"""Energy since leet started, from the collectors' ``energy.*`` extras, as the live monitor's sidebar writes it.

Pure: ``DeviceEnergy`` records in, short text out. Each GPU's line gets its
energy ("1.23 Wh", "≈1.23 Wh" where it was integrated from power samples, the
GPU having no energy counter); the host gets one line: its CPU packages' (RAPL)
and GPUs' energy together, with a price per kWh set what that cost, and the
CPU packages' share.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from collectors.energy import ENERGY_PREFIX, DeviceEnergy
from leet.model.energy import INTEGRATED_MARK, cost_text, energy_text

ENERGY_LABEL = "Energy"


def device_energies(extras: Mapping[str, Any], kind: str) -> dict[int, DeviceEnergy]:
    """Every ``kind`` device ("gpu", "cpu") any collector reports energy for, by index."""
    found: dict[int, DeviceEnergy] = {}
    for key, readings in extras.items():
        if key.startswith(ENERGY_PREFIX):
            found.update((reading.index, reading) for reading in readings or () if reading.kind == kind)
    return found


def energy_detail(readings: Iterable[DeviceEnergy]) -> str:
    """The energy of ``readings`` together, marked ``≈`` when any of it was integrated from power."""
    readings = tuple(readings)
    mark = INTEGRATED_MARK if any(reading.integrated for reading in readings) else ""
    return mark + energy_text(sum(reading.joules for reading in readings))


def host_energy_line(extras: Mapping[str, Any], price_per_kwh: float | None = None, currency: str = "$") -> tuple[str, str] | None:
    """ "≈2.45 kWh  $0.74  CPU 51.0 Wh": the host's energy since leet started, its cost, its CPU packages' share; None when nothing reports any.

    The total comes first and the CPU packages' share last, so a narrow
    sidebar cuts the part it can best spare (each GPU's share is on its line).
    """
    cpus = tuple(device_energies(extras, "cpu").values())
    gpus = tuple(device_energies(extras, "gpu").values())
    if not cpus and not gpus:
        return None
    parts = [energy_detail(cpus + gpus)]
    if price_per_kwh is not None:
        parts.append(cost_text(sum(reading.joules for reading in cpus + gpus), price_per_kwh, currency))
    if cpus and gpus:
        parts.append(f"CPU {energy_detail(cpus)}")
    return ENERGY_LABEL, "  ".join(parts)
