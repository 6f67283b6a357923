"""What energy costs: a run's stats rows folded into its GPU energy, a RAPL read per sweep, and the sidebar's energy lines.

    python3 benchmarks/energy.py [--rows 20000] [--repeats 5]

"stats row": ``RunModel.apply`` of one system-metrics row as the SDK writes
it on an 8-GPU host (~140 keys: 8 cores, 17 fields per GPU, ``gpu.process``
copies), with and without the energy fold (``RunEnergy.add``) measured
alone. "RAPL read": ``RaplReader.read`` of a two-package tree on disk (the
real files are as small, in sysfs). "sidebar": ``device_sections`` and
``host_energy_line`` on 8 GPUs with energy extras, per redraw.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collectors.energy import DeviceEnergy  # noqa: E402
from collectors.rapl import RaplReader  # noqa: E402
from leet.model.energy import RunEnergy  # noqa: E402
from leet.model.run import RunModel  # noqa: E402
from leet.runfile.events import StatsRow  # noqa: E402
from leet.ui.views.energy import host_energy_line  # noqa: E402
from leet.ui.views.gpu import device_sections  # noqa: E402

GPU_FIELDS = ("gpu", "memory", "memoryAllocated", "memoryAllocatedBytes", "temp", "powerWatts", "powerPercent",
              "enforcedPowerLimitWatts", "smClock", "memoryClock", "graphicsClock", "correctedMemoryErrors",
              "uncorrectedMemoryErrors", "encoderUtilization", "fanSpeed", "energyJoules", "pcieLinkGen")


def stats_rows(count: int) -> list[StatsRow]:
    rows = []
    for n in range(count):
        values = {f"cpu.{core}.cpu_percent": 40.0 + core for core in range(8)}
        values.update({f"gpu.{gpu}.{name}": 300.0 + gpu for gpu in range(8) for name in GPU_FIELDS})
        values.update({f"gpu.process.{gpu}.powerWatts": 300.0 for gpu in range(8)})
        values.update({"memory_percent": 40.0, "network.sent": 1e6 * n, "network.recv": 1e6 * n, "disk./.usagePercent": 60.0})
        rows.append(StatsRow(1.7e9 + 2.0 * n, values))
    return rows


def per_item_us(run, items: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times) / items * 1e6


def rapl_tree(root: Path) -> None:
    for zone in (0, 1):
        where = root / "sys" / "class" / "powercap" / f"intel-rapl:{zone}"
        where.mkdir(parents=True)
        (where / "name").write_text(f"package-{zone}\n")
        (where / "energy_uj").write_text("123456789\n")
        (where / "max_energy_range_uj").write_text("262143328850\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = stats_rows(args.rows)

    def apply_all() -> None:
        model = RunModel()
        for row in rows:
            model.apply(row)

    def fold_all() -> None:
        energy = RunEnergy()
        for row in rows:
            energy.add(row.timestamp, row.values)

    with tempfile.TemporaryDirectory() as where:
        rapl_tree(Path(where))
        reader = RaplReader(where)
        reader.probe()
        reads = 2000
        rapl = per_item_us(lambda: [reader.read() for _ in range(reads)], reads, args.repeats)

    extras = {"energy.nvidia": tuple(DeviceEnergy("gpu", gpu, 1e6 * gpu) for gpu in range(8)),
              "energy.rapl": (DeviceEnergy("cpu", 0, 5e5, label="0"), DeviceEnergy("cpu", 1, 5e5, label="1"))}
    latest = dict(rows[-1].values)
    draws = 2000
    sidebar = per_item_us(lambda: [(device_sections(latest, {}, extras), host_energy_line(extras, 0.3)) for _ in range(draws)], draws, args.repeats)
    plain = per_item_us(lambda: [device_sections(latest, {}, {}) for _ in range(draws)], draws, args.repeats)

    print(f"| what | µs each (median of {args.repeats}) |")
    print("|---|---:|")
    print(f"| stats row, `RunModel.apply` (energy fold included) | {per_item_us(apply_all, len(rows), args.repeats):.2f} |")
    print(f"| stats row, `RunEnergy.add` alone | {per_item_us(fold_all, len(rows), args.repeats):.2f} |")
    print(f"| RAPL read, 2 packages | {rapl:.2f} |")
    print(f"| sidebar GPU section + energy line, 8 GPUs | {sidebar:.1f} |")
    print(f"| sidebar GPU section without energy extras, 8 GPUs | {plain:.1f} |")


if __name__ == "__main__":
    main()
