"""A small cluster on loopback for ``leet cluster``'s end-to-end tests.

Real parts only: Debian's ``prometheus`` scraping every second, a real
``prometheus-node-exporter``, the DCGM-exporter fixture page, and real
``leet serve`` processes on made-up NVIDIA GPUs (the NVML stand-in, through
``benchmarks/fake_gpus.py``), each with its own ``--label``. Targets come
from ``file_sd`` files that Prometheus reads again every second, so a node
joins by a rewrite of ``leet.json``, with no restart.

Node names follow ``--node-label node``: a leet serve target is its
``node`` label; node_exporter and DCGM-exporter have none, so each is named
by the ``instance`` label its file_sd group gives it, less the port. The
one node_exporter is scraped twice: as ``storage-1:9100``, a host of its
own, and as ``nodeA:9100``, beside nodeA's leet serve.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from prometheus_client.parser import text_string_to_metric_families
from test_openmetrics import DCGM_PAGE, DIRECT, FixtureServer, free_port, require_server, running, stop_process

ROOT = Path(__file__).resolve().parent.parent
FAKE_GPUS = ROOT / "benchmarks" / "fake_gpus.py"
NO_CONFIG = {"LEET_CONFIG": ""}  # no personal config
STORAGE = "storage-1"  # node_exporter alone
DGX = "dgx-7"  # DCGM-exporter alone: the fixture page's two H100s
# node_exporter's collectors the cluster queries read; the others only cost a loaded machine time.
EXPORTER_COLLECTORS = ("cpu", "meminfo", "filesystem", "diskstats", "netdev", "uname")


class Unmet(AssertionError):
    """A condition did not hold in time."""


def wait_until(ready: Callable[[], bool], seconds: float, what: str, poll: float = 0.1) -> None:
    """Poll ``ready`` until it holds; ``Unmet`` naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise Unmet(f"waited {seconds:g} s for {what}")
        time.sleep(poll)


def fetch_text(url: str, timeout: float = 5.0) -> str:
    with DIRECT.open(url, timeout=timeout) as response:
        return response.read().decode()


@dataclass(frozen=True)
class Page:
    """One sweep of a leet serve page: its W&B keys, in the page's (base) units."""

    sweep: float  # leet_sweep_timestamp_seconds
    text: str = field(repr=False)
    values: dict[str, float] = field(repr=False)  # wandb_key -> the value on the page


def read_page(text: str) -> Page:
    values: dict[str, float] = {}
    sweep = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "leet_sweep_timestamp_seconds":
                sweep = sample.value
            elif sample.labels.get("wandb_key"):
                values[sample.labels["wandb_key"]] = sample.value
    return Page(sweep, text, values)


@dataclass
class Serve:
    """One ``leet serve`` process and every distinct page it was seen to serve."""

    label: str
    port: int
    process: subprocess.Popen
    pages: list[Page] = field(default_factory=list)
    _last: str = field(default="", repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def look(self) -> None:
        """Fetch the page; keep it when it is a new sweep's."""
        try:
            text = fetch_text(self.url, timeout=2.0)
        except (OSError, http.client.HTTPException):  # not listening yet, or stopped mid-answer
            return
        if text != self._last and "leet_gpu_utilization_percent" in text:
            self._last = text
            self.pages.append(read_page(text))
            del self.pages[:-120]



def serve_command(label: str, port: int, gpus: int) -> list[str]:
    return [
        sys.executable, str(FAKE_GPUS), "--gpus", str(gpus), "-m", "leet", "serve",
        "--port", str(port), "--label", label, "--interval", "1",
    ]


class Fleet:
    """Prometheus, its exporters and the leet serve nodes; ``close()`` stops every process it started."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.serves: dict[str, Serve] = {}
        self.prometheus_url = ""
        self._stack = ExitStack()
        self._watching = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- starting ---------------------------------------------------------------------
    def start(self, nodes: dict[str, int]) -> "Fleet":
        """Every part, then leet serve on ``{label: GPUs}``; returns once Prometheus has scraped them all."""
        prometheus = require_server("prometheus")
        exporter = require_server("prometheus-node-exporter")
        try:
            dcgm = FixtureServer().start()
            self._stack.callback(dcgm.stop)
            dcgm.serve("/metrics", DCGM_PAGE)
            node_port = free_port()
            collectors = [f"--collector.{name}" for name in EXPORTER_COLLECTORS]
            node_url = f"http://127.0.0.1:{node_port}/metrics"
            self._stack.enter_context(
                running([exporter, f"--web.listen-address=127.0.0.1:{node_port}", "--collector.disable-defaults", *collectors], node_url, self.home / "node_exporter.log")
            )
            self._write_targets("node", [(f"{STORAGE}:9100", f"127.0.0.1:{node_port}"), ("nodeA:9100", f"127.0.0.1:{node_port}")])
            self._write_targets("dcgm", [(f"{DGX}:9400", urllib.parse.urlsplit(dcgm.url("/")).netloc)])
            self._write_targets("leet", [])
            self._start_prometheus(prometheus)
            for serve in [self._launch(label, gpus) for label, gpus in nodes.items()]:
                self._await(serve)
            self._write_leet_targets()
            self._watch()
            # Every target up, and scraped three times: node_exporter's rates need two scrapes, the charts some history.
            targets = len(nodes) + 3
            self.wait_for_query(f"count(up == 1) >= {targets} and min(count_over_time(up[1m])) >= 3", f"{targets} targets up, scraped three times")
        except BaseException:
            self.close()
            raise
        return self

    def _start_prometheus(self, binary: str) -> None:
        jobs = "".join(
            f"  - job_name: {job}\n    file_sd_configs:\n      - files: ['{self.home / job}.json']\n        refresh_interval: 1s\n"
            for job in ("leet", "node", "dcgm")
        )
        config = self.home / "prometheus.yml"
        config.write_text(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n{jobs}")
        port = free_port()
        self.prometheus_url = f"http://127.0.0.1:{port}"
        command = [binary, f"--config.file={config}", f"--storage.tsdb.path={self.home / 'data'}", f"--web.listen-address=127.0.0.1:{port}"]
        self._stack.enter_context(running(command, f"{self.prometheus_url}/-/ready", self.home / "prometheus.log"))

    def add(self, label: str, gpus: int) -> Serve:
        """Start leet serve as node ``label``, wait for its first GPU sweep, and list it for Prometheus."""
        serve = self._launch(label, gpus)
        self._await(serve)
        self._write_leet_targets()
        return serve

    def _launch(self, label: str, gpus: int) -> Serve:
        port = free_port()
        log = (self.home / f"serve-{label}.log").open("wb")
        self._stack.callback(log.close)
        process = subprocess.Popen(serve_command(label, port, gpus), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **NO_CONFIG})
        self._stack.callback(stop_process, process)
        serve = Serve(label, port, process)
        self.serves[label] = serve
        return serve

    def _await(self, serve: Serve) -> None:
        def swept() -> bool:
            if not serve.alive:
                log = (self.home / f"serve-{serve.label}.log").read_text(errors="replace")
                raise Unmet(f"leet serve {serve.label} exited with {serve.process.returncode}:\n{log[-2000:]}")
            serve.look()
            return bool(serve.pages)

        wait_until(swept, 30, f"leet serve {serve.label}'s first GPU sweep")

    def kill(self, label: str) -> None:
        """SIGTERM one leet serve, as an operator stopping it would; its target stays listed for Prometheus."""
        serve = self.serves[label]
        serve.process.terminate()
        serve.process.wait(15)

    # -- targets ------------------------------------------------------------------------
    def _write_targets(self, job: str, targets: list[tuple[str | None, str]]) -> None:
        """A file_sd file, replaced whole so Prometheus never reads half of it."""
        groups = [{"targets": [address], "labels": {"instance": instance} if instance else {}} for instance, address in targets]
        path = self.home / f"{job}.json"
        part = path.with_suffix(".tmp")
        part.write_text(json.dumps(groups))
        part.replace(path)

    def _write_leet_targets(self) -> None:
        # leet serve keeps its real instance (127.0.0.1:port): its node is its node label, nothing else.
        self._write_targets("leet", [(None, serve.address) for serve in self.serves.values()])

    # -- reading ------------------------------------------------------------------------
    def _watch(self) -> None:
        """Keep every page each node serves, a few times a sweep, so a test can find the one Prometheus scraped."""

        def watch() -> None:
            while not self._watching.wait(0.2):
                for serve in list(self.serves.values()):
                    if serve.alive:
                        serve.look()

        self._watcher = threading.Thread(target=watch, name="fleet-pages", daemon=True)
        self._watcher.start()

    def query(self, expr: str) -> list[dict]:
        body = urllib.parse.urlencode({"query": expr})
        answer = json.loads(fetch_text(f"{self.prometheus_url}/api/v1/query?{body}"))
        return answer["data"]["result"]

    def last_scraped(self, serve: Serve) -> Page:
        """The last value Prometheus holds of each W&B key ``serve`` served, as a page (base units)."""
        found = self.query(f'last_over_time({{instance="{serve.address}",wandb_key!=""}}[15m])')
        return Page(0.0, "", {row["metric"]["wandb_key"]: float(row["value"][1]) for row in found})

    def wait_for_query(self, expr: str, what: str, seconds: float = 45.0) -> None:
        wait_until(lambda: bool(self.query(expr)), seconds, what, poll=0.2)

    # -- stopping -----------------------------------------------------------------------
    def close(self) -> None:
        self._watching.set()
        if self._watcher is not None:
            self._watcher.join(5)
        self._stack.close()
