"""Measure ``leet watch``: idle cost over a 300-run folder, and how soon an alert reaches a webhook.

    python3 benchmarks/watch.py [--runs 300] [--seconds 60] [--warmup 10] [--alerts 10] [--keep DIR]

1. The folder. Six runs are written by the real SDK (``tests/wandb_runs.py``):
   one that calls ``run.alert()``, one that fails, one SIGKILLed mid-write,
   and three that log 2,000 steps of 8 metrics. Each is copied into
   ``--runs / 6`` run directories of their own, so the folder holds
   ``--runs`` runs of six shapes, every one ended or crashed long ago.
2. Idle. ``leet watch FOLDER --webhook URL --rule 'loss > 100'`` (this tree's
   ``leet``, its own ledger) starts; after ``--warmup`` seconds, the CPU of
   its process (utime+stime from /proc, 100 % = one core) over ``--seconds``,
   then its RSS and peak RSS.
3. Record to webhook. A live SDK writer starts in the folder (a run that
   joins) and calls ``run.alert()`` with a new title every 2 s, ``--alerts``
   times, flushing its transaction log every 50 ms. This script watches the
   run file every 2 ms for each title's bytes (the record on disk); a
   webhook server on loopback notes when each alert arrives (leet's alert
   JSON, POSTed). The figure is arrival minus on-disk, per alert.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from symon import cpu_ticks, memory_mib  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")

LIVE_BODY = r'''
run = start()
for index in range(PARAMS["alerts"]):
    run.log({"loss": 1.0 / (index + 1)})
    time.sleep(PARAMS["every"])
    run.alert(title=f"bench-{PARAMS['token']}-{index:03d}", text="an alert to time", level="WARN", wait_duration=1)
time.sleep(1.0)
run.finish()
'''


def make_sources(root: Path) -> list[Path]:
    """Six run files of the real SDK, of different shapes."""
    from wandb_runs import make_alert_run, make_basic_run, make_failed_run, make_killed_run

    made = [make_alert_run(root / "alerts"), make_failed_run(root / "failed"), make_killed_run(root / "killed")]
    made += [make_basic_run(root / f"basic{i}", steps=2000, metrics=("loss", *(f"metric{j}" for j in range(7)))) for i in range(3)]
    return [run.wandb_path for run in made]


def fill_folder(folder: Path, sources: list[Path], runs: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    long_ago = time.time() - 86400
    for index in range(runs):
        source = sources[index % len(sources)]
        directory = folder / f"offline-run-20261101_{index // 60:02d}{index % 60:02d}00-bench{index:04d}"
        directory.mkdir()
        target = directory / source.name
        shutil.copyfile(source, target)
        os.utime(target, (long_ago, long_ago))


class Hook(BaseHTTPRequestHandler):
    arrivals: dict[str, float] = {}

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        now = time.time()
        try:
            title = json.loads(body).get("title", "")
        except ValueError:
            title = ""
        Hook.arrivals.setdefault(title, now)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def idle_cost(pid: int, warmup: float, seconds: float) -> tuple[float, float, float]:
    time.sleep(warmup)
    before, began = cpu_ticks(pid) or 0, time.monotonic()
    time.sleep(seconds)
    used = ((cpu_ticks(pid) or 0) - before) / TICKS
    rss, hwm = memory_mib(pid)
    return 100.0 * used / (time.monotonic() - began), rss, hwm


def time_alerts(folder: Path, count: int) -> list[float]:
    """Seconds from each alert record on disk to its webhook arrival."""
    from wandb_runs import _start_writer

    token = f"{os.getpid()}"
    scratch = Path(tempfile.mkdtemp(prefix="leet-watch-bench-"))
    params = {"run_id": f"live{token}", "alerts": count, "every": 2.0, "token": token, "settings": {"x_transaction_log_flush_interval": 0.05}}
    writer = _start_writer(LIVE_BODY, params, folder.parent, scratch, new_session=True)
    where = writer.wait_for_report()
    path = Path(where["wandb_path"])
    titles = [f"bench-{token}-{index:03d}".encode() for index in range(count)]
    on_disk: dict[str, float] = {}
    deadline = time.monotonic() + 30 + 3 * count
    while len(on_disk) < count and time.monotonic() < deadline:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        now = time.time()
        for title in titles:
            if title.decode() not in on_disk and title in data:
                on_disk[title.decode()] = now
        time.sleep(0.002)
    writer.wait()
    time.sleep(2.0)
    return [Hook.arrivals[title] - seen for title, seen in sorted(on_disk.items()) if title in Hook.arrivals]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--alerts", type=int, default=10)
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it (default: a temporary folder, removed)")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="leet-watch-bench-"))
    folder = work / "wandb"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        if not folder.exists():
            print(f"writing six runs with the SDK and filling {folder} with {args.runs} …", file=sys.stderr)
            fill_folder(folder, make_sources(work / "sources"), args.runs)
        state = work / "ledger.json"
        state.unlink(missing_ok=True)
        command = [sys.executable, "-m", "leet", "watch", str(folder), "--webhook", hook, "--rule", "loss > 100", "--state", str(state)]
        env = {**os.environ, "LEET_CONFIG": ""}
        with open(work / "watch.out", "wb") as out:
            watch = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
            try:
                cpu, rss, hwm = idle_cost(watch.pid, args.warmup, args.seconds)
                latencies = time_alerts(folder, args.alerts)
            finally:
                watch.terminate()
                watch.wait(10)
        print(f"leet watch over {args.runs} runs (every one ended), {args.seconds:.0f} s after {args.warmup:.0f} s:")
        print(f"{'idle CPU':<28}{cpu:>8.2f} % of one core   (target ≤ 1 %)")
        print(f"{'RSS / peak RSS':<28}{rss:>8.1f} / {hwm:.1f} MiB   (target ≤ 60 MiB)")
        if latencies:
            print(f"{'record on disk → webhook':<28}{statistics.median(latencies) * 1000:>8.0f} ms median, {max(latencies) * 1000:.0f} ms max "
                  f"over {len(latencies)} of {args.alerts} alerts   (target ≤ 1 s)")
        else:
            print("record on disk → webhook: no alert arrived; see", work / "watch.out")
    finally:
        server.shutdown()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
