"""Check the NVIDIA collector against ``nvidia-smi`` on this machine, GPU by GPU.

    python3 benchmarks/nvidia_compare.py [--nvidia-smi PATH] [--loose 1.0]

Starts ``nvidia-smi -q -x`` and samples the collector at the same moment,
then prints, per GPU, every key with our value, nvidia-smi's, the difference
and a verdict. Facts that do not move (memory total, power limit, maximum
PCIe link, error counts) must agree exactly (up to nvidia-smi's rounding);
readings that move (utilisation, power, clocks, temperature) within a
tolerance. Exit status: 0 all agree, 1 something disagrees, 2 this machine
has no NVML or no nvidia-smi.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors.gpu import GpuInfo, GpuProcess  # noqa: E402
from collectors.nvidia import NvidiaCollector  # noqa: E402
from leet.testing.nvidia_smi import SmiReport, parse_report  # noqa: E402

MIB = 2**20


@dataclass(frozen=True)
class Tolerance:
    absolute: float = 0.0
    relative: float = 0.0  # share of the larger value
    moving: bool = False  # a reading that changes between two looks

    def allows(self, difference: float, scale: float, loose: float) -> bool:
        limit = max(self.absolute, self.relative * scale)
        return abs(difference) <= limit * (loose if self.moving else 1.0)


EXACT = Tolerance()
TOLERANCES: dict[str, Tolerance] = {
    "gpu": Tolerance(15, moving=True),
    "memory": Tolerance(15, moving=True),
    "encoderUtilization": Tolerance(15, moving=True),
    "memoryAllocatedBytes": Tolerance(64 * MIB, 0.01, moving=True),
    "memoryAllocated": Tolerance(0.5, moving=True),
    "temp": Tolerance(2, moving=True),
    "powerWatts": Tolerance(10, 0.10, moving=True),
    "powerPercent": Tolerance(3, moving=True),
    "enforcedPowerLimitWatts": Tolerance(0.01),  # nvidia-smi prints two decimals
    "smClock": Tolerance(15, 0.05, moving=True),
    "graphicsClock": Tolerance(15, 0.05, moving=True),
    "memoryClock": Tolerance(15, 0.05, moving=True),
    "fanSpeed": Tolerance(5, moving=True),
    "pcieLinkGen": Tolerance(1, moving=True),  # drops at idle to save power
    "pcieLinkWidth": Tolerance(0, moving=True),
    "pcieTxKBps": Tolerance(10_000, 0.5, moving=True),
    "pcieRxKBps": Tolerance(10_000, 0.5, moving=True),
}


@dataclass
class Line:
    key: str
    ours: float | str | None
    theirs: float | str | None
    verdict: str

    @property
    def failed(self) -> bool:
        return self.verdict == "MISMATCH"


def compare_value(key: str, ours: float | None, theirs: float | None, loose: float) -> Line:
    if ours is None and theirs is None:
        return Line(key, None, None, "-")
    if theirs is None:
        return Line(key, ours, None, "ours only")
    if ours is None:
        return Line(key, None, theirs, "MISMATCH")  # nvidia-smi has it, so NVML does
    if ours == theirs:
        return Line(key, ours, theirs, "same")
    tolerance = TOLERANCES.get(key, EXACT)
    scale = max(abs(ours), abs(theirs))
    close = tolerance.allows(ours - theirs, scale, loose)
    return Line(key, ours, theirs, ("moved" if tolerance.moving else "close") if close else "MISMATCH")


def compare_facts(ours: GpuInfo, theirs: GpuInfo) -> list[Line]:
    lines = [
        Line("name", ours.name, theirs.name, "same" if ours.name == theirs.name else "MISMATCH"),
        Line("uuid", ours.uuid, theirs.uuid, "same" if ours.uuid == theirs.uuid else "MISMATCH"),
    ]
    total_ok = abs(ours.memory_total - theirs.memory_total) < MIB  # nvidia-smi rounds to MiB
    lines.append(Line("memory total", ours.memory_total, theirs.memory_total, "same" if total_ok else "MISMATCH"))
    lines.append(
        Line(
            "utilisation reported",
            str(ours.utilization_supported),
            str(theirs.utilization_supported),
            "same" if ours.utilization_supported == theirs.utilization_supported else "MISMATCH",
        )
    )
    lines.append(
        Line("MIG slices", len(ours.mig), len(theirs.mig), "same" if len(ours.mig) == len(theirs.mig) else "MISMATCH")
    )
    return lines


def compare_processes(ours: list[GpuProcess], theirs: list[GpuProcess]) -> list[Line]:
    mine = {p.host_pid: p for p in ours}
    smi = {p.pid: p for p in theirs}
    lines = []
    for pid in sorted(set(mine) | set(smi)):
        a, b = mine.get(pid), smi.get(pid)
        if a is None or b is None:
            # A process may start or end between the two looks.
            lines.append(Line(f"process {pid}", "yes" if a else None, "yes" if b else None, "moved"))
            continue
        if a.used_memory == b.used_memory:
            verdict = "same"
        elif a.used_memory is None or b.used_memory is None:
            verdict = "MISMATCH"
        else:
            verdict = "close" if abs(a.used_memory - b.used_memory) <= 64 * MIB else "MISMATCH"
        lines.append(Line(f"process {pid} memory", a.used_memory, b.used_memory, verdict))
    return lines


def fields(values: Mapping[str, float], index: int) -> dict[str, float]:
    prefix = f"gpu.{index}."
    return {key[len(prefix):]: value for key, value in values.items() if key.startswith(prefix)}


def _show(value: float | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if value != int(value) else f"{int(value)}"
    return str(value)


def _difference(line: Line) -> str:
    if isinstance(line.ours, (int, float)) and isinstance(line.theirs, (int, float)):
        difference = line.ours - line.theirs
        return f"{difference:+.2f}" if difference != int(difference) else f"{int(difference):+d}"
    return ""


def print_gpu(index: int, lines: list[Line]) -> None:
    width = 2 + max(12, *(len(_show(v)) for line in lines for v in (line.ours, line.theirs)))
    print(f"\nGPU {index}")
    print(f"  {'key':26}{'ours':>{width}}{'nvidia-smi':>{width}}{'difference':>16}  verdict")
    for line in lines:
        print(
            f"  {line.key:26}{_show(line.ours):>{width}}{_show(line.theirs):>{width}}"
            f"{_difference(line):>16}  {line.verdict}"
        )


def sample_both(collector: NvidiaCollector, smi: str) -> tuple[dict[str, float], Mapping, SmiReport]:
    """One collector sample while nvidia-smi is reading too."""
    running = subprocess.Popen([smi, "-q", "-x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    values = dict(collector.sample())
    extras = collector.extras()
    out, err = running.communicate(timeout=60)
    if running.returncode != 0:
        raise SystemExit(f"nvidia-smi failed: {(err or out).strip()}")
    return values, extras, parse_report(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Compare the NVIDIA collector with nvidia-smi on this machine.")
    parser.add_argument("--nvidia-smi", default="nvidia-smi", help="the nvidia-smi to run (default: from PATH)")
    parser.add_argument(
        "--loose", type=float, default=1.0, help="multiply the tolerances of moving readings (default 1)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    smi = shutil.which(args.nvidia_smi)
    if smi is None:
        print(f"nvidia_compare: {args.nvidia_smi} not found: nothing to compare against")
        return 2
    collector = NvidiaCollector(pcie_throughput=True)
    probe = collector.probe()
    if not probe.available:
        print(f"nvidia_compare: NVML is not available: {probe.reason}")
        return 2
    try:
        values, extras, report = sample_both(collector, smi)
    finally:
        collector.close()
    print(f"driver {report.driver_version} · CUDA {report.cuda_version} · {len(report.gpus)} GPU(s) in nvidia-smi")
    failed = False
    ours_by_index = {gpu.index: gpu for gpu in extras["gpus"]}
    for theirs_info in report.gpus:
        index = theirs_info.index
        ours_info = ours_by_index.get(index)
        if ours_info is None:
            print(f"\nGPU {index}: nvidia-smi lists it, the collector does not")
            failed = True
            continue
        lines = compare_facts(ours_info, theirs_info)
        ours, theirs = fields(values, index), fields(report.values, index)
        lines += [compare_value(key, ours.get(key), theirs.get(key), args.loose) for key in sorted(set(ours) | set(theirs))]
        lines += compare_processes(
            [p for p in extras["gpu_processes"] if p.gpu == index], [p for p in report.processes if p.gpu == index]
        )
        print_gpu(index, lines)
        failed |= any(line.failed for line in lines)
    for note in extras["notes.nvidia"]:
        print(f"note: {note}")
    print("\nverdict: " + ("MISMATCH beyond tolerance" if failed else "all agree"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
