"""Measure what a width bomb costs ``leet RUN``: a run file whose history rows hold 10^4 … 10^6 keys.

    python3 benchmarks/width_bomb.py [--keys 10000,100000,1000000] [--cache DIR] [--timeout 180]
    python3 benchmarks/width_bomb.py --leet-tree DIR      # the leet in another source tree (e.g. an exported commit)

Each file is ``tests/hostile.py``'s ``width_bomb``: two history rows of the same
``keys`` keys, then an exit record; written once into the cache. Each case
starts a fresh ``python -m leet FILE`` in its own tmux server at 160×48 (as
``runfile.py`` does) and times, from just before tmux runs it: the first
non-blank screen, the first metric chart with braille dots in it, and the
header saying ``finished``. Peak RSS is the largest ``VmHWM`` of the program's
process tree, read on every poll until one second after it finished.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from runfile import ENV, LEET_DONE, TreeWatch  # noqa: E402
from terminal import BRAILLE_DOTS, Terminal, TmuxMissing, require_tmux  # noqa: E402

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "leet-width-bomb"
POLL = 0.02
SETTLE_S = 1.0
SHOWN = re.compile(r"([\d,]+) of (≥?[\d,]+) metrics shown")
# Written in a child: building a million-item record costs the writer a gigabyte.
WRITER = "import sys; from pathlib import Path; from hostile import width_bomb; print(width_bomb(Path(sys.argv[1]), int(sys.argv[2])))"


@dataclass
class Case:
    keys: int
    size: int
    first_frame_s: float = float("nan")
    first_chart_s: float = float("nan")
    finished_s: float = float("nan")
    peak_mib: float = float("nan")
    shown: str = "–"


def bomb(cache: Path, keys: int) -> Path:
    path = cache / f"run-wide{keys}.wandb"
    if not path.exists():
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "tests"), str(ROOT)))}
        subprocess.run([sys.executable, "-c", WRITER, str(cache), str(keys)], env=env, check=True, capture_output=True)
    return path


def has_chart(screen: str) -> bool:
    return any(char in BRAILLE_DOTS for char in screen)


def measure(path: Path, keys: int, env: dict[str, str], timeout: float) -> Case:
    case = Case(keys, path.stat().st_size)
    # Not started here: ``python -m`` puts its working directory first on the path, before PYTHONPATH.
    terminal = Terminal([sys.executable, "-m", "leet", str(path)], env=env, cwd=tempfile.gettempdir())
    try:
        started = terminal.start()
        watch = TreeWatch(terminal.pid)

        def seen(screen: str) -> bool:
            now = time.perf_counter() - started
            watch.sample()
            if case.first_frame_s != case.first_frame_s and screen.strip():
                case.first_frame_s = now
            if case.first_chart_s != case.first_chart_s and has_chart(screen):
                case.first_chart_s = now
            if LEET_DONE.search(screen.splitlines()[0] if screen else ""):
                case.finished_s = now
                found = SHOWN.search(screen)
                case.shown = f"{found[1]} of {found[2]}" if found else "all"
                return True
            return False

        terminal.wait_for(seen, timeout=timeout, poll=POLL, what="the header saying finished")
        deadline = time.perf_counter() + SETTLE_S
        while time.perf_counter() < deadline:
            watch.sample(find_new=False)
            # The header can say finished a frame before the grid has drawn its first dots.
            if case.first_chart_s != case.first_chart_s and has_chart(terminal.screen()):
                case.first_chart_s = time.perf_counter() - started
            time.sleep(0.1)
        case.peak_mib = max(watch.hwm.values(), default=float("nan"))
    finally:
        terminal.close()
    return case


def print_table(cases: list[Case], tree: Path | None) -> None:
    print(f"\nleet from {tree.resolve() if tree else ROOT} · python {sys.version.split()[0]} · load {os.getloadavg()[0]:.2f}")
    print("| keys per row | file | first frame | first chart | finished | peak RSS | metrics shown |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for case in cases:
        print(
            f"| {case.keys:,} | {case.size / 1e6:.1f} MB | {case.first_frame_s:.2f} s | {case.first_chart_s:.2f} s "
            f"| {case.finished_s:.2f} s | {case.peak_mib:.0f} MiB | {case.shown} |"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", default="10000,100000,1000000", help="keys per row, comma-separated")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the crafted files are kept")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for one case")
    parser.add_argument("--leet-tree", type=Path, metavar="DIR", help="measure the leet in this source tree instead of the installed one")
    args = parser.parse_args(argv)
    args.sizes = [int(part) for part in args.keys.split(",") if part.strip()]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        require_tmux()
    except TmuxMissing as error:
        raise SystemExit(str(error)) from None
    args.cache.mkdir(parents=True, exist_ok=True)
    env = {**ENV, "PYTHONPATH": str(args.leet_tree.resolve())} if args.leet_tree else dict(ENV)
    cases = []
    for keys in args.sizes:
        path = bomb(args.cache, keys)
        path.read_bytes()  # into the page cache, so every case reads from memory
        cases.append(measure(path, keys, env, args.timeout))
        print(f"{keys:,} keys: {cases[-1]}", file=sys.stderr)
    print_table(cases, args.leet_tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
