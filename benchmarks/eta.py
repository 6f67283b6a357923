"""How far the ETA is off: a real offline SDK run read half-way, its predicted finish against its actual one.

    python3 benchmarks/eta.py [--steps 200] [--interval 0.05] [--pause 0]

The run logs one step every ``interval`` seconds with ``max_steps`` in its
config (``--pause`` sleeps that long at a quarter of the way, as a paused or
resumed run would). A copy of its file cut at half its bytes is read as a
live run; predicted finish = that copy's last row time + its ETA; actual
finish = the full run's last row time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leet.model.run import RunModel, RunSnapshot  # noqa: E402
from leet.model.state import RunState  # noqa: E402
from leet.runfile.decode import EventReader  # noqa: E402
from leet.ui.views.run import snapshot_progress  # noqa: E402

SCRIPT = """
import sys, time, wandb
steps, interval, pause = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
run = wandb.init(mode="offline", project="leet-eta", config={"max_steps": steps - 1})
for step in range(steps):
    run.log({"loss": 1.0 / (step + 1)})
    if pause and step == steps // 4:
        time.sleep(pause)
    time.sleep(interval)
run.finish()
"""


def write_run(root: Path, steps: int, interval: float, pause: float) -> Path:
    script = root / "steady.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(root), "WANDB_SILENT": "true"}
    subprocess.run([sys.executable, str(script), str(steps), str(interval), str(pause)], env=env, cwd=root, check=True, timeout=3600)
    (path,) = root.glob("wandb/offline-run-*/run-*.wandb")
    return path


def read(path: Path) -> RunModel:
    model = RunModel()
    with EventReader(path) as reader:
        while True:
            batch = reader.poll(10_000)
            for item in batch.items:
                model.apply(item.event)
            if batch.at_eof:
                return model


def last_row_time(model: RunModel) -> float:
    return model.trail.marks[-1].time


def measure(steps: int, interval: float, pause: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="leet-eta-") as scratch:
        full = write_run(Path(scratch), steps, interval, pause)
        half = Path(scratch) / "half.wandb"
        data = full.read_bytes()
        half.write_bytes(data[: len(data) // 2])
        whole, partial = read(full), read(half)
    snapshot = RunSnapshot.of(partial, run_key="half", state=RunState.RUNNING, file_size=len(data) // 2, run_id="half")
    progress = snapshot_progress(snapshot)
    assert progress.eta_seconds is not None and progress.steps_per_second
    predicted = last_row_time(partial) + progress.eta_seconds
    actual = last_row_time(whole)
    remaining = actual - last_row_time(partial)
    return {
        "read at step": float(partial.last_step or 0), "steps/s": progress.steps_per_second,
        "ETA s": progress.eta_seconds, "actual left s": remaining,
        "error s": predicted - actual, "error %": 100 * (predicted - actual) / remaining,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    result = measure(args.steps, args.interval, args.pause)
    print(f"steps {args.steps}, one per {args.interval}s (nominal {1 / args.interval:.3g} steps/s), pause {args.pause}s")
    print(f"| {'measure':<14} | {'value':>10} |")
    print(f"|{'-' * 16}|{'-' * 12}|")
    for name, value in result.items():
        print(f"| {name:<14} | {value:>10.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
