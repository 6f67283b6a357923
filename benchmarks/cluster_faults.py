"""Measure ``leet cluster``'s poller under two faults: one undecodable answer, and a slow history after a recovery.

    python3 benchmarks/cluster_faults.py [--seconds 4] [--slow-range 2] [--source DIR]

- garbage: a loopback server answers the first instant query with JSON
  nested 10,000 deep, then good answers; the ``leet-cluster`` thread runs for
  ``--seconds`` and the queries that reached the server after the bad one are
  counted, with whether the thread still runs;
- recovery: a stand-in client whose range queries take ``--slow-range``
  seconds; after 10 minutes away, the time from the round's start to the
  first live value told to the screen.

``--source DIR`` imports the ``leet`` of another source tree (say ``git
archive`` of an older commit): the same figures before a change.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GOOD = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode()
DEEP = b"[" * 10_000 + b"]" * 10_000


def garbage(seconds: float) -> tuple[int, bool, str]:
    """Queries after the bad answer, whether the poller still runs, what it said."""
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource
    from leet.sources.prometheus_api import PrometheusClient, endpoint

    asked: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            asked.append(time.monotonic())
            body = DEEP if len(asked) == 1 else GOOD
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    source = ClusterSource(Store(), PrometheusClient(endpoint(f"http://127.0.0.1:{httpd.server_address[1]}")), interval=0.2, load_history=False)
    source.start()
    time.sleep(seconds)
    running, said = source.running, source.error or source.status().message
    source.close()
    httpd.shutdown()
    return len(asked) - 1, running, said


class SlowRanges:
    """Instant queries at once; range queries after ``slow`` seconds; all fail while ``away``."""

    def __init__(self, slow: float) -> None:
        self.slow, self.away, self.timeout, self.requests, self.display_url = slow, False, 5.0, 0, "http://stand-in"

    def query(self, expr: str, at: float | None = None, timeout: float | None = None) -> Any:
        return self._answer()

    def query_range(self, expr: str, start: float, end: float, step: float, timeout: float | None = None) -> Any:
        time.sleep(self.slow)
        return self._answer()

    def _answer(self) -> Any:
        from leet.sources.prometheus_api import Answer, PrometheusError

        self.requests += 1
        if self.away:
            raise PrometheusError("Prometheus at http://stand-in: connection refused", "unreachable")
        return Answer("vector", [], (), 1.0)


def recovery(slow: float) -> float:
    """Seconds from the first round after a recovery to the first live value told."""
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource

    client = SlowRanges(slow)
    now = [1000.0]
    source = ClusterSource(Store(), client, interval=1.0, load_history=False, clock=lambda: now[0])  # type: ignore[arg-type]
    source.step()
    client.away = True
    source.step()
    now[0] += 600
    client.away = False
    told: list[float] = []
    source.on_change(lambda: told.append(time.monotonic()))
    started = time.monotonic()
    source.step()
    ended = time.monotonic()  # the thread tells after each round: a round that told nothing before counts at its end
    return (told[0] if told else ended) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--slow-range", type=float, default=2.0)
    parser.add_argument("--source", help="a source tree whose leet to measure")
    args = parser.parse_args()
    if args.source:
        sys.path.insert(0, args.source)
    queries, running, said = garbage(args.seconds)
    first_live = recovery(args.slow_range)
    print(f"{'measure':<52} {'value':>10}")
    print(f"{'queries after a 10,000-deep answer (' + format(args.seconds, 'g') + ' s)':<52} {queries:>10}")
    print(f"{'poller still running':<52} {str(running):>10}")
    print(f"{'first live value after recovery (range ' + format(args.slow_range, 'g') + ' s)':<52} {first_live:>9.2f}s")
    print(f"said: {said[:120]}")


if __name__ == "__main__":
    main()
