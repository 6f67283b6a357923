"""What registering every accelerator backend costs a sweep on a machine that has none of them.

    python3 benchmarks/backends.py [--sweeps 200]

Two hubs sweep the host's collectors through ``Hub.sweep()``: one with the
host collectors only, one with every accelerator backend added (NVIDIA, AMD,
TPU, Trainium, IPU, Apple). After the first sweep (which probes) an absent
backend is never sampled, so the second hub should cost what the first does:
the target is at most 1 ms more per sweep, median against median. The two
hubs take turns, sweep by sweep, so that the machine's drift lands on both.

Probing is timed apart (the first sweep of each hub): it is paid once, at
start. A backend that is present here is named, since it is then sampled and
the comparison is no longer about absent ones.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collectors.accelerators import accelerator_collectors  # noqa: E402
from collectors.base import Health  # noqa: E402
from collectors.host import host_collectors  # noqa: E402
from collectors.hub import Hub  # noqa: E402

TARGET_MS = 1.0


def _hub(with_accelerators: bool) -> Hub:
    collectors = host_collectors(use_cgroup=False)
    if with_accelerators:
        collectors += accelerator_collectors()
    # No warmup: only the sweep itself is timed. A long interval: nothing sweeps on its own.
    return Hub(collectors, interval=3600.0, warmup=0.0)


def _timed_sweep(hub: Hub) -> float:
    began = time.perf_counter()
    hub.sweep()
    return (time.perf_counter() - began) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=200)
    args = parser.parse_args()

    host, every = _hub(False), _hub(True)
    try:
        first = {"host only": _timed_sweep(host), "host + every accelerator": _timed_sweep(every)}
        present = [s.name for s in every.status()[len(host.status()):] if s.health is not Health.ABSENT]
        times: dict[str, list[float]] = {name: [] for name in first}
        for _ in range(args.sweeps):
            times["host only"].append(_timed_sweep(host))
            times["host + every accelerator"].append(_timed_sweep(every))
    finally:
        host.stop()
        every.stop()

    print(f"{'hub':<26} {'first sweep (probe)':>20} {'median':>10} {'p90':>10} {'min':>10}   ({args.sweeps} sweeps each)")
    for name, samples in times.items():
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{name:<26} {first[name]:>17.2f} ms {statistics.median(samples):>7.3f} ms {p90:>7.3f} ms {min(samples):>7.3f} ms")
    extra = statistics.median(times["host + every accelerator"]) - statistics.median(times["host only"])
    verdict = "meets" if extra <= TARGET_MS else "misses"
    print(f"\nabsent backends add {extra:+.3f} ms to the median sweep: {verdict} the target of at most {TARGET_MS:g} ms")
    if present:
        print(f"present here, so sampled and not only absent: {', '.join(present)}")
    return 0 if extra <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
