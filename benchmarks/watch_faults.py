"""Measure what ``leet watch`` delivers when its webhook is down or the process is killed.

    python3 benchmarks/watch_faults.py [--outages 10,60] [--kills 5] [--runs 3]

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
2. Kill -9. The webhook hangs; the runs join; once every alert is printed
   and a send hangs, the process is SIGKILLed, the webhook comes up and the
   watch starts again. Per trial: alerts acknowledged, and POSTs repeated.
"""

from __future__ import annotations

import argparse
import json
import os
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


class Webhook:
    """A loopback webhook that is ``down`` (500), ``hung`` (no answer) or ``up`` (200)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
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
    env = {**os.environ, "LEET_CONFIG": "/nonexistent/leet-config.toml"}
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


def kill_trial(root: Path, sources: list[Path], number: int) -> tuple[str, int, int, int, float]:
    hook = Webhook("hung")
    work, folder, process = setup(root, f"kill{number}", sources, hook)
    until(lambda: len(printed(work)) >= 2 * len(sources) and hook.posts > 0, 60)
    process.send_signal(signal.SIGKILL)
    process.wait()
    hook.set("up")
    up = time.monotonic()
    again = watcher(folder, work, hook.url)
    told = printed(work)
    hook.wait(lambda: set(hook.acknowledged) >= told, 120)
    stop(again)
    hook.close()
    repeats = sum(count - 1 for count in hook.acknowledged.values())
    return f"kill -9 #{number}", len(told), len(told & set(hook.acknowledged)), repeats, hook.last_ack - up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outages", default="10,60", help="outage lengths in seconds, comma-separated")
    parser.add_argument("--kills", type=int, default=5, help="kill -9 trials")
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind (4 alerts per pair)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="leet-watch-faults-") as temporary:
        root = Path(temporary)
        sources = make_sources(root / "sources", args.runs)
        rows = [outage(root, sources, float(seconds)) for seconds in args.outages.split(",") if seconds]
        rows += [kill_trial(root, sources, number) for number in range(1, args.kills + 1)]
    print(f"{'fault':<16} {'sent':>5} {'received':>9} {'duplicated':>11} {'last after up':>14}")
    for name, sent, received, repeats, last in rows:
        print(f"{name:<16} {sent:>5} {received:>9} {repeats:>11} {last:>12.1f} s")
    return 0 if all(sent == received for _, sent, received, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
