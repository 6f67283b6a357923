"""How leet meets crafted run files: time to a first frame, exit on q, peak memory, inspect.

    python3 benchmarks/hostile_files.py [--case NAME ...]

Each crafted file of ``tests/hostile.py`` (valid framing, values a buggy or
hostile writer could log) is opened with ``leet FILE`` in tmux at 160×48.
Timed from just before tmux runs it: the first frame whose header says
``finished``, then ``q`` until the process is gone. Peak RSS is VmHWM summed
over the process tree just before ``q``. ``leet inspect FILE`` with no flag,
``--json``, ``--summary`` and ``--summary --json`` must exit 0; their slowest
time is shown. Targets: first frame ≤ 15 s, exit 0 everywhere.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from hostile import CASES  # noqa: E402
from symon import memory_mib, process_tree  # noqa: E402
from terminal import Terminal  # noqa: E402

ENV = {"LEET_CONFIG": "", "TERM": "xterm-256color"}
FIRST_FRAME = 15.0


def tui(path: Path) -> tuple[float | None, float | None, float, int | None]:
    """(first frame s, exit s, peak RSS MiB, exit status); None where it did not come."""
    terminal = Terminal([sys.executable, "-m", "leet", str(path)], width=160, height=48, env=ENV)
    with terminal:
        started = terminal.started_at or time.perf_counter()
        try:
            terminal.wait_for(lambda s: "finished" in s.splitlines()[0], timeout=FIRST_FRAME, poll=0.01)
            first = time.perf_counter() - started
        except AssertionError:
            first = None
        peak = sum(memory_mib(pid)[1] for pid in process_tree(terminal.pid))
        asked = time.perf_counter()
        terminal.press("q")
        status = terminal.wait_exit(10.0)
        gone = time.perf_counter() - asked if terminal.exited() else None
    return first, gone, peak, status


def inspect(path: Path) -> tuple[float, list[int]]:
    slowest, codes = 0.0, []
    for flags in ([], ["--json"], ["--summary"], ["--summary", "--json"]):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "leet", "inspect", str(path), *flags], capture_output=True, timeout=120)
        slowest = max(slowest, time.perf_counter() - started)
        codes.append(done.returncode)
    return slowest, codes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (default: all)")
    args = parser.parse_args()
    names = args.case or sorted(CASES)
    print(f"{'case':<22} {'first frame':>11} {'exit on q':>9} {'peak RSS':>9} {'status':>6} {'inspect':>8} {'inspect rc':>10}")
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            path = CASES[name](Path(scratch) / name)
            first, gone, peak, status = tui(path)
            slowest, codes = inspect(path)
            failed |= first is None or status != 0 or any(codes)
            frame = f"{first:.2f} s" if first is not None else "none"
            leave = f"{gone:.2f} s" if gone is not None else "hung"
            print(f"{name:<22} {frame:>11} {leave:>9} {peak:>5.0f} MiB {status!s:>6} {slowest:>6.2f} s {','.join(map(str, codes)):>10}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
