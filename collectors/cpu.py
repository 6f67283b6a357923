"""Per-core CPU utilisation from ``/proc/stat`` and CPU temperature from hwmon."""

from __future__ import annotations

import glob
import os
from typing import Mapping

from collectors.base import Collector, Probe
from collectors.procfs import read_text, under_root

# hwmon drivers whose temperatures are the CPU's (package, cores, dies).
CPU_SENSOR_DRIVERS = frozenset({"coretemp", "k10temp", "zenpower", "cpu_thermal", "cpu-thermal"})

# Below this a sensor reading is a missing or broken sensor, not a CPU.
MIN_PLAUSIBLE_CELSIUS = 1.0


def parse_per_core_times(text: str) -> dict[int, tuple[int, int]]:
    """``{core: (busy_ticks, total_ticks)}`` from the ``cpuN`` lines of /proc/stat.

    Total leaves out guest time (already inside user/nice); idle time
    includes iowait, as top and psutil count it.
    """
    cores = {}
    for line in text.splitlines():
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        parts = line.split()
        try:
            core = int(parts[0][3:])
            ticks = [int(v) for v in parts[1:9]]
        except ValueError:
            continue
        ticks += [0] * (8 - len(ticks))
        total = sum(ticks)
        idle = ticks[3] + ticks[4]
        cores[core] = (total - idle, total)
    return cores


def busy_percent(before: tuple[int, int], after: tuple[int, int]) -> float:
    busy = after[0] - before[0]
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    return min(max(busy / total * 100, 0.0), 100.0)


def cpu_temperature_files(root: str = "/") -> list[str]:
    """The ``temp*_input`` files of CPU hwmon drivers (package and cores)."""
    files = []
    for hwmon in sorted(glob.glob(under_root(root, "/sys/class/hwmon/hwmon*"))):
        driver = (read_text(os.path.join(hwmon, "name")) or "").strip()
        if driver not in CPU_SENSOR_DRIVERS:
            continue
        inputs = glob.glob(os.path.join(hwmon, "temp*_input"))
        inputs = inputs or glob.glob(os.path.join(hwmon, "device", "temp*_input"))
        files.extend(sorted(inputs))
    return files


def mean_celsius(files: list[str]) -> float | None:
    """Mean of the readable sensors in °C (hwmon reports millidegrees)."""
    readings = []
    for path in files:
        text = read_text(path)
        try:
            celsius = int(text) / 1000 if text else None
        except ValueError:
            celsius = None
        if celsius is not None and celsius >= MIN_PLAUSIBLE_CELSIUS:
            readings.append(celsius)
    return sum(readings) / len(readings) if readings else None


class CpuCollector(Collector):
    """``cpu.{i}.cpu_percent`` for each logical core, and ``cpu.avg_temp``.

    Sensors are found once in ``probe`` (the costly directory scan);
    afterwards each sample reads only their few small files.
    """

    name = "cpu"

    def __init__(self, root: str = "/") -> None:
        self.root = root
        self._previous: dict[int, tuple[int, int]] = {}
        self._sensor_files: list[str] = []

    def _read_times(self) -> dict[int, tuple[int, int]]:
        text = read_text(under_root(self.root, "/proc/stat"))
        return parse_per_core_times(text) if text else {}

    def probe(self) -> Probe:
        self._previous = self._read_times()
        if not self._previous:
            return Probe.absent("/proc/stat has no per-core CPU lines")
        self._sensor_files = cpu_temperature_files(self.root)
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        current = self._read_times()
        if not current:
            raise RuntimeError("/proc/stat has no per-core CPU lines")
        values: dict[str, float] = {}
        for core, times in current.items():
            before = self._previous.get(core)
            if before is not None:
                values[f"cpu.{core}.cpu_percent"] = busy_percent(before, times)
        self._previous = current
        temperature = mean_celsius(self._sensor_files) if self._sensor_files else None
        if temperature is not None:
            values["cpu.avg_temp"] = temperature
        return values
