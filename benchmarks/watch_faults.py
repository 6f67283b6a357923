"""Measure what ``leet watch`` delivers when its webhook is down or the process is killed.

    python3 benchmarks/watch_faults.py [--outages 10,60] [--kills 50] [--seed N] [--runs 3]

Runs written by the real SDK (``tests/wandb_runs.py``): ``--runs`` that call
``run.alert()`` (two alerts told, and their finish) and ``--runs`` that fail:
``4 × --runs`` alerts. A webhook on loopback answers 500 while it is down,
holds each POST unanswered while it hangs, and 200 once up; it counts every
POST and which ``ident`` it acknowledged.

1. Outage. The webhook is down; ``leet watch FOLDER --webhook URL`` starts
   (this tree's ``leet``, its own ledger) and the runs join its folder.
   After the outage (10 s, 60 s) the webhook comes up; the figure is how many
   of the alerts printed were acknowledged, how many POSTs repeated an
   acknowledged ident, and how long after the webhook came up the last one
   arrived.
2. Kill -9 at random moments. Runs keep joining the folder (a copy of one
   of the runs every ``JOIN_EVERY`` seconds, each its own run directory)
   while the webhook answers 200, a share of its POSTs (``SLOW_SHARE``)
   only after ``SLOW_SECONDS``; ``--kills`` times, after a random delay
   (``KILL_AFTER``, seeded by ``--seed``; the delays are printed), the watch
   is SIGKILLed and started again with the same ``--state``. Then the runs
   stop joining and the last watch sends what is owed. The figure: alerts
   the joined runs hold (3 per run that calls ``run.alert()``, 1 per run
   that fails), how many distinct ones the webhook acknowledged, how many
   were lost, and how many POSTs repeated an acknowledged ident (at most one
   per kill: the send in flight when the process died).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
ON = "finished,failed,alert"
JOIN_EVERY = 0.5  # seconds between runs joining the folder, while the kills go on
KILL_AFTER = (0.2, 4.0)  # seconds from a (re)start to its kill -9, uniform
SLOW_SHARE = 0.25  # of the webhook's POSTs, answered only after a while
SLOW_SECONDS = (0.5, 3.0)  # how long a slow answer takes, uniform; within the sink's 10 s timeout
ALERTS_OF = {"alerts": 3, "failed": 1}  # alerts a joined copy of each kind of run holds


class Webhook:
    """A loopback webhook that is ``down`` (500), ``hung`` (no answer) or ``up`` (200)."""

    def __init__(self, mode: str, slow: random.Random | None = None) -> None:
        self.mode = mode
        self.slow = slow  # with a generator: ``up`` answers a SLOW_SHARE of POSTs only after SLOW_SECONDS
        self.posts = 0
        self.acknowledged: dict[str, int] = {}  # ident → POSTs answered 200
        self.last_ack = 0.0
        self.changed = threading.Condition()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                ident = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))).get("ident", "")
                with hook.changed:
                    hook.posts += 1
                    hook.changed.wait_for(lambda: hook.mode != "hung")
                    status = 200 if hook.mode == "up" else 500
                    delay = hook.slow.uniform(*SLOW_SECONDS) if hook.slow is not None and hook.slow.random() < SLOW_SHARE else 0.0
                time.sleep(delay)  # a slow receiver
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    return
                if status == 200:
                    with hook.changed:
                        hook.acknowledged[ident] = hook.acknowledged.get(ident, 0) + 1
                        hook.last_ack = time.monotonic()
                        hook.changed.notify_all()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def set(self, mode: str) -> None:
        with self.changed:
            self.mode = mode
            self.changed.notify_all()

    def wait(self, condition, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(condition, timeout)

    def close(self) -> None:
        self.set("up")
        self.server.shutdown()
        self.server.server_close()


def make_sources(root: Path, runs: int) -> list[Path]:
    from wandb_runs import make_alert_run, make_failed_run

    made = [make_alert_run(root / f"alerts{i}") for i in range(runs)] + [make_failed_run(root / f"failed{i}") for i in range(runs)]
    return [run.run_dir for run in made]


def watcher(folder: Path, work: Path, url: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "leet", "watch", str(folder), "--webhook", url, "--on", ON, "--json", "--state", str(work / "ledger.json")]
    out = (work / "out.jsonl").open("ab")
    env = {**os.environ, "LEET_CONFIG": ""}
    return subprocess.Popen(command, stdout=out, stderr=(work / "err.txt").open("ab"), cwd=ROOT, env=env)


def printed(work: Path) -> set[str]:
    return {json.loads(line)["ident"] for line in (work / "out.jsonl").read_text().splitlines() if line.startswith("{")}


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def setup(root: Path, name: str, sources: list[Path], hook: Webhook) -> tuple[Path, Path, subprocess.Popen]:
    """A folder with one settled run, a watch over it (started once its ledger is written), then the runs joining."""
    work = root / name
    folder = work / "wandb"
    folder.mkdir(parents=True)
    join(sources[-1], folder / "settled")
    process = watcher(folder, work, hook.url)
    until(lambda: (work / "ledger.json").exists(), 60)
    for index, source in enumerate(sources):
        join(source, folder / f"run{index}")
    return work, folder, process


def join(run_dir: Path, target: Path) -> None:
    """The run's file appears in the watched folder, as a run that starts there."""
    target.mkdir()
    for file in run_dir.glob("run-*.wandb"):
        shutil.copy2(file, target / file.name)


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def outage(root: Path, sources: list[Path], seconds: float) -> tuple[str, int, int, int, float]:
    hook = Webhook("down")
    work, _, process = setup(root, f"outage{seconds:g}", sources, hook)
    until(lambda: len(printed(work)) >= 2 * len(sources), 60)
    time.sleep(seconds)  # the outage itself
    up = time.monotonic()
    hook.set("up")
    told = printed(work)
    hook.wait(lambda: set(hook.acknowledged) >= told, seconds + 180)
    stop(process)
    hook.close()
    repeats = sum(count - 1 for count in hook.acknowledged.values())
    return f"{seconds:g} s outage", len(told), len(told & set(hook.acknowledged)), repeats, hook.last_ack - up


def random_kills(root: Path, sources: list[Path], kills: int, seed: int) -> tuple[str, int, int, int, float]:
    """Runs join all along; the watch is SIGKILLed ``kills`` times at seeded random moments, and started again each time."""
    rng = random.Random(seed)
    hook = Webhook("up", slow=random.Random(seed + 1))
    work, folder, process = setup(root, "kills", sources[:1], hook)
    joined = [folder / "run0"]
    feeding = threading.Event()

    def feed() -> None:
        while not feeding.wait(JOIN_EVERY):
            target = folder / f"run{len(joined)}"
            join(sources[len(joined) % len(sources)], target)
            joined.append(target)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    delays = [round(rng.uniform(*KILL_AFTER), 2) for _ in range(kills)]
    print(f"kill -9 after (seed {seed}): {' '.join(f'{delay:g}' for delay in delays)} s", flush=True)
    for delay in delays:
        time.sleep(delay)  # the random moment itself
        process.send_signal(signal.SIGKILL)
        process.wait()
        process = watcher(folder, work, hook.url)
    feeding.set()
    feeder.join()
    expected = {str(run): ALERTS_OF[kind_of(sources, run)] for run in joined}
    print(f"{len(joined)} runs joined, {sum(expected.values())} alerts in them; waiting for the webhook to have them all", flush=True)
    up = time.monotonic()

    def received() -> dict[str, int]:
        found: dict[str, int] = {}
        for ident in list(hook.acknowledged):
            run = run_of(ident)
            found[run] = found.get(run, 0) + 1
        return found

    hook.wait(lambda: received() == expected, 300)
    stop(process)
    hook.close()
    got = received()
    for run, want in expected.items():
        if got.get(run, 0) < want:
            print(f"lost: {want - got.get(run, 0)} of {want} alerts of {run}", flush=True)
    repeats = sum(count - 1 for count in hook.acknowledged.values())
    sent = sum(expected.values())
    return f"kill -9 x{kills}", sent, sum(min(got.get(run, 0), want) for run, want in expected.items()), repeats, hook.last_ack - up


def kind_of(sources: list[Path], run: Path) -> str:
    """``make_sources`` lists the runs that call ``run.alert()`` first, then as many that fail."""
    index = int(run.name.removeprefix("run")) % len(sources)
    return "alerts" if index < len(sources) // 2 else "failed"


def run_of(ident: str) -> str:
    """The run directory an alert's ident names: ``alert:DIR:OFFSET``, ``finished:DIR``, ``failed:DIR``."""
    kind, _, rest = ident.partition(":")
    return rest.rpartition(":")[0] if kind == "alert" else rest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outages", default="10,60", help="outage lengths in seconds, comma-separated")
    parser.add_argument("--kills", type=int, default=50, help="kill -9s at random moments while runs join (0: none)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the kill moments and the slow answers (default: random, printed)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind (4 alerts per pair)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="leet-watch-faults-") as temporary:
        root = Path(temporary)
        sources = make_sources(root / "sources", args.runs)
        rows = [outage(root, sources, float(seconds)) for seconds in args.outages.split(",") if seconds]
        if args.kills:
            rows.append(random_kills(root, sources, args.kills, args.seed if args.seed is not None else random.randrange(1 << 30)))
    print(f"{'fault':<16} {'sent':>5} {'received':>9} {'duplicated':>11} {'last after up':>14}")
    for name, sent, received, repeats, last in rows:
        print(f"{name:<16} {sent:>5} {received:>9} {repeats:>11} {last:>12.1f} s")
    kept_promise = all(repeats <= args.kills for name, _, _, repeats, _ in rows if name.startswith("kill"))  # the send in flight, per kill
    return 0 if kept_promise and all(sent == received for _, sent, received, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
