"""Measure ``leet serve`` under load and abuse: many scrapers at once, then slow clients that hold connections.

    python3 benchmarks/serve_faults.py [--scrapers 50] [--seconds 30] [--slow 200] [--slow-seconds 20]
                                       [--max-connections 64] [--processes 5] [--source DIR]

``leet serve`` runs on a loopback port against two stand-in NVIDIA GPUs
(``benchmarks/fake_gpus.py``), as ``benchmarks/serve.py`` runs it. Then:

- load: ``--scrapers`` clients (threads spread over ``--processes`` processes,
  so the clients' own GIL is not what is timed) scrape /metrics back to back
  for ``--seconds``, each scrape on a new connection; errors are refused or
  reset connections, timeouts and any status but 200; latency is timed at the
  client, connect to last byte;
- slow clients: ``--slow`` connections each send one byte of a request a
  second (and reconnect when dropped) for ``--slow-seconds``, while one
  normal scrape every 0.5 s reports its status and time; the server's threads
  (``/proc/PID/status``) are sampled all along.

Prints a table per phase. ``--source DIR`` runs the ``leet`` of another
source tree (say ``git archive`` of an older commit), without
``--max-connections`` when given ``--max-connections 0``: the same
measurements before a change.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_GPUS = HERE / "fake_gpus.py"
ENV = {**os.environ, "LEET_CONFIG": ""}
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
STARTUP_LIMIT = 60.0
# Targets from the brief.
TARGET_ERRORS = 0
TARGET_P99 = 0.2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scrape(port: int, timeout: float = 10.0) -> tuple[int, float]:
    """(HTTP status, or 0 for a failed connection; seconds from connect to the last byte)."""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(REQUEST)
            answer = bytearray()
            while chunk := sock.recv(65536):
                answer += chunk
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    except (OSError, ValueError, IndexError):
        status = 0
    return status, time.perf_counter() - started


def scrape_for(port: int, threads: int, seconds: float) -> list[tuple[int, float]]:
    """Every scrape ``threads`` back-to-back scrapers made in ``seconds`` (one process's share of the load)."""
    results: list[tuple[int, float]] = []
    lock = threading.Lock()
    until = time.monotonic() + seconds

    def loop() -> None:
        mine = []
        while time.monotonic() < until:
            mine.append(scrape(port))
        with lock:
            results.extend(mine)

    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def start_server(port: int, max_connections: int, log: Path, source: str | None) -> subprocess.Popen:
    command = [sys.executable, str(FAKE_GPUS), "--gpus", "2", "-m", "leet", "serve", "--port", str(port)]
    command += ["--max-connections", str(max_connections)] if max_connections else []
    env = {**ENV, "PYTHONPATH": os.pathsep.join(filter(None, [source, ENV.get("PYTHONPATH")]))} if source else ENV
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    deadline = time.monotonic() + STARTUP_LIMIT
    while scrape(port)[0] != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"leet serve did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    return process


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def load_phase(port: int, args: argparse.Namespace) -> list[tuple[int, float]]:
    shares = [args.scrapers // args.processes + (1 if index < args.scrapers % args.processes else 0) for index in range(args.processes)]
    with ProcessPoolExecutor(args.processes) as pool:
        parts = pool.map(scrape_for, [port] * len(shares), shares, [args.seconds] * len(shares))
        return [result for part in parts for result in part]


class SlowClients:
    """``count`` connections each sending a byte of a request a second, reconnecting when dropped."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.reconnects = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SlowClients:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _connect(self) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.setblocking(False)
            return sock
        except OSError:
            return None

    def _run(self) -> None:
        socks: list[socket.socket | None] = [self._connect() for _ in range(self.count)]
        sent = 0
        while not self._stop.wait(1.0):
            byte = REQUEST[sent % (len(REQUEST) - 4):][:1]  # never the blank line that ends the request
            sent += 1
            for index, sock in enumerate(socks):
                try:
                    if sock is None:
                        raise OSError
                    sock.send(byte)
                except OSError:
                    if sock is not None:
                        sock.close()
                    socks[index] = self._connect()
                    self.reconnects += 1
        for sock in socks:
            if sock is not None:
                sock.close()


def slow_phase(port: int, pid: int, args: argparse.Namespace) -> tuple[list[tuple[int, float]], int, int]:
    """(the normal scrapes' results, the server's most threads, the slow clients' reconnects)."""
    scrapes: list[tuple[int, float]] = []
    most = threads_of(pid)
    with SlowClients(port, args.slow) as slow:
        until = time.monotonic() + args.slow_seconds
        while time.monotonic() < until:
            most = max(most, threads_of(pid))
            scrapes.append(scrape(port))
            most = max(most, threads_of(pid))
            time.sleep(0.5)
        reconnects = slow.reconnects
    return scrapes, most, reconnects


def print_load(results: list[tuple[int, float]], args: argparse.Namespace) -> None:
    seconds = [took for status, took in results if status == 200]
    errors = sum(1 for status, _ in results if status != 200)
    print(f"\nLoad: {args.scrapers} scrapers back to back for {args.seconds:g} s, --max-connections {args.max_connections}")
    print("| scrapes | errors | scrapes/s | p50 s | p99 s | max s | target |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    verdict = "met" if errors <= TARGET_ERRORS and percentile(seconds, 0.99) <= TARGET_P99 else "MISSED"
    print(
        f"| {len(results)} | {errors} | {len(results) / args.seconds:.0f} | {statistics.median(seconds):.3f} | {percentile(seconds, 0.99):.3f} "
        f"| {max(seconds):.3f} | {TARGET_ERRORS} errors, p99 ≤ {TARGET_P99} s: {verdict} |"
    )


def print_slow(scrapes: list[tuple[int, float]], idle_threads: int, most: int, reconnects: int, args: argparse.Namespace) -> None:
    ok = [took for status, took in scrapes if status == 200]
    busy = sum(1 for status, _ in scrapes if status == 503)
    failed = len(scrapes) - len(ok) - busy
    print(f"\nSlow clients: {args.slow} connections sending a byte a second for {args.slow_seconds:g} s, one scrape every 0.5 s")
    print("| server threads idle | most | cap | scrapes | 200 | 503 | failed | 200 p50 s | 200 max s | slow reconnects |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {idle_threads} | {most} | {args.max_connections} | {len(scrapes)} | {len(ok)} | {busy} | {failed} "
        f"| {statistics.median(ok) if ok else float('nan'):.3f} | {max(ok) if ok else float('nan'):.3f} | {reconnects} |"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scrapers", type=int, default=50, help="concurrent scrapers (default 50)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of load (default 30)")
    parser.add_argument("--processes", type=int, default=5, help="client processes the scrapers are spread over (default 5)")
    parser.add_argument("--slow", type=int, default=200, help="slow connections (default 200)")
    parser.add_argument("--slow-seconds", type=float, default=20.0, help="seconds of slow clients (default 20)")
    parser.add_argument("--max-connections", type=int, default=64, help="leet serve's --max-connections (default 64; 0: not given)")
    parser.add_argument("--source", metavar="DIR", help="run the leet of this source tree instead of the installed one")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        log = Path(workdir) / "serve.log"
        process = start_server(port, args.max_connections, log, args.source)
        try:
            idle_threads = threads_of(process.pid)
            print_load(load_phase(port, args), args)
            scrapes, most, reconnects = slow_phase(port, process.pid, args)
            print_slow(scrapes, idle_threads, most, reconnects, args)
        finally:
            process.terminate()
            process.wait(10)
        said = log.read_text(errors="replace").splitlines()
        print(f"\nleet serve's stderr: {len(said)} lines")
        for line in said[-5:]:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
