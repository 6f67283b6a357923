"""CPU package energy from RAPL (``/sys/class/powercap/intel-rapl:N``), since leet started.

Each package zone has ``name`` (``package-0``; ``package-0-die-1`` on
multi-die parts), ``energy_uj`` (microjoules, a counter that wraps at
``max_energy_range_uj``) and ``max_energy_range_uj``. Sub-zones
(``intel-rapl:0:0``, the cores or DRAM) are inside their package's figure
and ``psys`` (the whole platform) is not a CPU, so only packages are read;
AMD CPUs show their packages under the same names. ``energy_uj`` is often
readable by root only: a package whose counter cannot be read is left out.

Zones are found once (``probe``); afterwards each reading is one small file
per package. ``LEET_SYS_ROOT`` moves ``/sys`` as for the other sysfs readers.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from collectors.accelerators import sys_root
from collectors.energy import DeviceEnergy
from collectors.procfs import read_text, under_root

POWERCAP = "/sys/class/powercap"
_PACKAGE_ZONE = re.compile(r"intel-rapl:(\d+)")
_PACKAGE_NAME = "package-"


def _number(path: str) -> int | None:
    text = read_text(path)
    try:
        return int(text) if text else None
    except ValueError:
        return None


@dataclass
class _Package:
    zone: int
    label: str  # "0", "0-die-1"
    counter_path: str
    wrap: int  # max_energy_range_uj: where the counter starts again from 0
    last: int  # the counter's last reading
    joules: float = 0.0


class RaplReader:
    """Energy since the first reading of each readable CPU package; ``root`` None: ``$LEET_SYS_ROOT``, else ``/``."""

    def __init__(self, root: str | None = None) -> None:
        self.root = sys_root() if root is None else root
        self._packages: list[_Package] = []

    def probe(self) -> bool:
        """Find the packages; True when at least one counter can be read."""
        self._packages = []
        for zone_dir in sorted(glob.glob(under_root(self.root, f"{POWERCAP}/intel-rapl:*"))):
            package = _package(zone_dir)
            if package is not None:
                self._packages.append(package)
        self._packages.sort(key=lambda package: package.zone)
        return bool(self._packages)

    def read(self) -> tuple[DeviceEnergy, ...]:
        """Each package's joules since ``probe``; a counter that wrapped is unwrapped by its range."""
        for package in self._packages:
            now = _number(package.counter_path)
            if now is None:
                continue
            step = now - package.last
            if step < 0:
                step += package.wrap
            package.last = now
            package.joules += step / 1e6
        return tuple(DeviceEnergy("cpu", package.zone, package.joules, label=package.label) for package in self._packages)


def _package(zone_dir: str) -> _Package | None:
    found = _PACKAGE_ZONE.fullmatch(os.path.basename(zone_dir))
    name = (read_text(os.path.join(zone_dir, "name")) or "").strip()
    if found is None or not name.startswith(_PACKAGE_NAME):
        return None
    counter_path = os.path.join(zone_dir, "energy_uj")
    counter = _number(counter_path)
    wrap = _number(os.path.join(zone_dir, "max_energy_range_uj"))
    if counter is None or not wrap or wrap <= 0:
        return None
    return _Package(int(found.group(1)), name[len(_PACKAGE_NAME):] or found.group(1), counter_path, wrap, counter)
