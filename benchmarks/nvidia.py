"""What one sweep of the NVIDIA collector costs, for 1, 2, 4 and 8 GPUs.

    python3 benchmarks/nvidia.py [--sweeps 200] [--real] [--real-only]

Against the NVML stand-in (tests/nvml_standin.py: the real pynvml above a
Python imitation of libnvidia-ml) every GPU runs two processes, one of them
in the watched tree, and has fresh per-process samples each sweep, so every
path of a sweep runs. That measures our own Python and pynvml's; the driver's
own time per call comes only with ``--real``, which samples every GPU of this
machine through the real driver (when NVML starts).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from collectors.nvidia import NvidiaCollector  # noqa: E402

GPU_COUNTS = (1, 2, 4, 8)
WARMUP_SWEEPS = 10
WATCHED_PID = 100


@dataclass
class Row:
    source: str
    gpus: int
    median_ms: float
    p95_ms: float
    calls: float | None = None  # NVML calls per sweep (stand-in only)

    @property
    def per_gpu_ms(self) -> float:
        return self.median_ms / self.gpus


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def time_sweeps(collector: NvidiaCollector, sweeps: int, before_each=None) -> list[float]:
    """Milliseconds per ``sample()`` + ``extras()``, after a warm-up."""
    costs = []
    for n in range(WARMUP_SWEEPS + sweeps):
        if before_each is not None:
            before_each(n)
        started = time.perf_counter()
        collector.sample()
        collector.extras()
        if n >= WARMUP_SWEEPS:
            costs.append((time.perf_counter() - started) * 1000)
    return costs


def standin_row(count: int, sweeps: int, proc_root: Path) -> Row:
    import pynvml
    from nvml_standin import (
        FakeGpu,
        FakeNvml,
        FakeProcess,
        FakeUtilizationSample,
        installed,
    )

    gpus = [
        FakeGpu(compute=[FakeProcess(WATCHED_PID + 1 + i), FakeProcess(900 + i)]) for i in range(count)
    ]
    box = FakeNvml(gpus)

    def fresh_samples(n: int) -> None:
        stamp = (n + 1) * 1_000_000
        for i, gpu in enumerate(gpus):
            gpu.samples = [FakeUtilizationSample(WATCHED_PID + 1 + i, stamp, 80), FakeUtilizationSample(900 + i, stamp, 5)]

    with installed(box):
        collector = NvidiaCollector(pid=WATCHED_PID, proc_root=str(proc_root), nvml=pynvml)
        probe = collector.probe()
        if not probe.available:
            raise SystemExit(f"stand-in did not start: {probe.reason}")
        before = sum(box.calls.values())
        costs = time_sweeps(collector, sweeps, fresh_samples)
        calls = (sum(box.calls.values()) - before) / (WARMUP_SWEEPS + sweeps)
        collector.close()
    return Row("stand-in", count, statistics.median(costs), percentile(costs, 0.95), calls)


def real_row(sweeps: int) -> Row | str:
    collector = NvidiaCollector(pid=None)
    probe = collector.probe()
    if not probe.available:
        return f"real driver: not measured ({probe.reason})"
    try:
        count = len(collector.extras()["gpus"])
        costs = time_sweeps(collector, sweeps)
    finally:
        collector.close()
    return Row("real driver", count, statistics.median(costs), percentile(costs, 0.95))


def fake_proc(root: Path) -> Path:
    """A /proc with the watched tree (100 → 101…108) and unrelated GPU processes."""
    from nvml_standin import add_process, host_proc

    host_proc(root)
    workers = tuple(WATCHED_PID + 1 + i for i in range(max(GPU_COUNTS)))
    add_process(root, WATCHED_PID, argv=("python", "train.py"), children=workers)
    for pid in workers:
        add_process(root, pid, argv=("python", "-m", "worker"))
    for i in range(max(GPU_COUNTS)):
        add_process(root, 900 + i, uid=1000, argv=("other-job",))
    return root


def print_table(rows: list[Row], notes: list[str], sweeps: int) -> None:
    print(f"\nnvidia collector · one sweep = sample() + extras() · median and p95 of {sweeps} sweeps after {WARMUP_SWEEPS} warm-up\n")
    print(f"{'source':14}{'GPUs':>6}{'median ms':>12}{'p95 ms':>10}{'per GPU ms':>12}{'NVML calls':>12}")
    for row in rows:
        calls = "-" if row.calls is None else f"{row.calls:.1f}"
        print(
            f"{row.source:14}{row.gpus:>6}{row.median_ms:>12.3f}{row.p95_ms:>10.3f}{row.per_gpu_ms:>12.3f}{calls:>12}"
        )
    for note in notes:
        print(note)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time the NVIDIA collector's sweeps.")
    parser.add_argument("--sweeps", type=int, default=200, help="timed sweeps per row (default 200)")
    parser.add_argument("--real", action="store_true", help="also time the real driver, all GPUs")
    parser.add_argument("--real-only", action="store_true", help="time only the real driver")
    args = parser.parse_args(argv)
    if args.sweeps < 1:
        parser.error("--sweeps must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows: list[Row] = []
    notes: list[str] = []
    if not args.real_only:
        with tempfile.TemporaryDirectory() as workdir:
            proc_root = fake_proc(Path(workdir) / "proc")
            for count in GPU_COUNTS:
                rows.append(standin_row(count, args.sweeps, proc_root))
    if args.real or args.real_only:
        real = real_row(args.sweeps)
        if isinstance(real, str):
            notes.append(real)
        else:
            rows.append(real)
    print_table(rows, notes, args.sweeps)
    return 0 if rows else 2


if __name__ == "__main__":
    sys.exit(main())
