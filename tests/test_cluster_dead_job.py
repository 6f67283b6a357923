"""A Prometheus job whose every target is down: ``leet cluster`` lists its nodes down, ``leet watch --cluster`` tells them.

A real ``prometheus`` (scraping every second) watches a real
``prometheus-node-exporter`` (job ``node``) and job ``gpu``, whose one
target is a port nothing listens on: its ``up`` is 0 from its first scrape,
so no series ever proves what it is. Targets come from ``file_sd`` files
that Prometheus reads again every second, so the dead job can appear while
a watch runs. A missing server binary skips, unless ``LEET_REQUIRE_SERVERS``
is set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Iterator

import pytest
from alert_servers import wait_until
from cluster_fleet import NO_CONFIG, ROOT, Unmet, fetch_text
from test_openmetrics import free_port, require_server, running

from leet.model.cluster import NODE_EXPORTER
from leet.model.store import Store
from leet.sources.cluster import ClusterSource, NodeBook
from leet.sources.cluster_queries import MARKER, UP, Naming, QueryPlan, Reading
from leet.sources.prometheus_api import PrometheusClient, endpoint

SLOW = 45.0  # seconds; bounds a wait on a loaded machine, which ends as soon as its condition holds
DEAD = "gpu-dead-1"


class Prometheus:
    """Prometheus over job ``node`` (a live node_exporter as ``storage-1``) and job ``gpu`` (``set_gpu_targets``)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.url = ""
        self.dead_address = f"127.0.0.1:{free_port()}"  # nothing listens there
        self._stack = ExitStack()

    def start(self, with_dead: bool) -> "Prometheus":
        prometheus, exporter = require_server("prometheus"), require_server("prometheus-node-exporter")
        try:
            node_port = free_port()
            self._stack.enter_context(running(
                [exporter, f"--web.listen-address=127.0.0.1:{node_port}", "--collector.disable-defaults", "--collector.meminfo", "--collector.uname"],
                f"http://127.0.0.1:{node_port}/metrics", self.home / "node_exporter.log",
            ))
            self._targets("node", [("storage-1:9100", f"127.0.0.1:{node_port}")])
            self.set_gpu_targets(with_dead)
            jobs = "".join(
                f"  - job_name: {job}\n    file_sd_configs:\n      - files: ['{self.home / job}.json']\n        refresh_interval: 1s\n"
                for job in ("node", "gpu")
            )
            config = self.home / "prometheus.yml"
            config.write_text(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{jobs}")
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            command = [prometheus, f"--config.file={config}", f"--storage.tsdb.path={self.home / 'data'}", f"--web.listen-address=127.0.0.1:{port}"]
            self._stack.enter_context(running(command, f"{self.url}/-/ready", self.home / "prometheus.log"))
            self.wait_for_query('up{job="node"} == 1', "node_exporter scraped")
        except BaseException:
            self.close()
            raise
        return self

    def set_gpu_targets(self, with_dead: bool) -> None:
        self._targets("gpu", [(f"{DEAD}:9400", self.dead_address)] if with_dead else [])

    def _targets(self, job: str, targets: list[tuple[str, str]]) -> None:
        groups = [{"targets": [address], "labels": {"instance": instance}} for instance, address in targets]
        part = self.home / f"{job}.tmp"
        part.write_text(json.dumps(groups))
        part.replace(self.home / f"{job}.json")  # whole, so Prometheus never reads half of it

    def query(self, expr: str) -> list[dict]:
        from urllib.parse import urlencode

        return json.loads(fetch_text(f"{self.url}/api/v1/query?{urlencode({'query': expr})}"))["data"]["result"]

    def wait_for_query(self, expr: str, what: str) -> None:
        if not wait_until(lambda: bool(self.query(expr)), SLOW, 0.2):
            raise Unmet(f"waited {SLOW:g} s for {what}")

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def dead_from_the_start(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    """One Prometheus for the module: the tests only read what it scraped."""
    made = Prometheus(tmp_path_factory.mktemp("dead-job")).start(with_dead=True)
    try:
        made.wait_for_query('count_over_time(up{job="gpu"}[1m]) >= 2 and up{job="gpu"} == 0', "the dead target scraped twice")
        yield made
    finally:
        made.close()


def leet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "leet", *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, **NO_CONFIG})


def test_a_job_dead_all_along_is_listed_down_by_the_book():
    book = NodeBook(Naming())
    alive, dead, prometheus = ("node", "nodeA:9100"), ("gpu", "gpu-dead-1:9400"), ("prometheus", "localhost:9090")
    book.apply([  # a range answer: job gpu was down all along, so no series proves its kind
        Reading(MARKER, NODE_EXPORTER, alive, "", "", "nodeA", (10.0,), (1.0,)),
        Reading(UP, "", alive, "", "", "", (10.0, 20.0), (1.0, 1.0)),
        Reading(UP, "", dead, "", "", "", (10.0, 20.0), (0.0, 0.0)),
        Reading(UP, "", prometheus, "", "", "", (10.0, 20.0), (1.0, 1.0)),
    ])
    states = {state.node: state for state in book.states()}
    assert set(states) == {"nodeA", "gpu-dead-1"}, "a job that answers with no series of a known kind is not the fleet's"
    assert states["gpu-dead-1"].up is False and states["gpu-dead-1"].since == 10.0


def test_a_dead_target_that_comes_up_as_something_else_leaves_the_list():
    book = NodeBook(Naming())
    dead = ("pushgateway", "pg:9091")
    book.apply([Reading(UP, "", dead, "", "", "", (10.0,), (0.0,))], now=10.0)
    assert [state.node for state in book.states()] == ["pg"]
    book.apply([Reading(UP, "", dead, "", "", "", (20.0,), (1.0,))], now=20.0)
    assert book.states() == (), "up, and no series proves it a node: not one of the fleet"


def test_once_lists_a_dead_job_down_since_its_first_scrape(dead_from_the_start):
    first = min(float(row["value"][1]) for row in dead_from_the_start.query('min_over_time(timestamp(up{job="gpu"})[10m:1s])'))
    done = leet("cluster", dead_from_the_start.url, "--once", "--json")
    assert done.returncode == 0, done.stderr
    nodes = json.loads(done.stdout)["nodes"]
    assert set(nodes) == {"storage-1", DEAD}, nodes
    assert nodes["storage-1"]["up"] is True and nodes[DEAD]["up"] is False
    assert nodes[DEAD]["since"] is not None and abs(nodes[DEAD]["since"] - first) <= 2.0, (nodes[DEAD], first)

    table = leet("cluster", dead_from_the_start.url, "--once")
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if line.startswith(DEAD))
    assert row.split()[1] == "down" and "1 up" in table.stdout.splitlines()[0], table.stdout


def test_the_screens_source_lists_a_dead_job_down_since_its_first_up_point(dead_from_the_start):
    client = PrometheusClient(endpoint(dead_from_the_start.url), timeout=10)
    source = ClusterSource(Store(), client, plan=QueryPlan(), interval=1.0, range_s=300.0)  # history, as the screen loads it
    source.step()
    states = {state.node: state for state in source.nodes()}
    assert set(states) == {"storage-1", DEAD}
    first = min(float(row["value"][1]) for row in dead_from_the_start.query('min_over_time(timestamp(up{job="gpu"})[10m:1s])'))
    assert states[DEAD].up is False and states[DEAD].since is not None and first - 1.0 <= states[DEAD].since <= first + 4.0, (states[DEAD], first)


def test_watch_tells_a_job_that_appears_dead(tmp_path):
    prometheus = Prometheus(tmp_path).start(with_dead=False)
    out = tmp_path / "watch.out"
    command = [
        sys.executable, "-m", "leet", "watch", "--cluster", prometheus.url, "--interval", "1", "--rule", "memory_percent/l:storage-1 >= 0",
        "--node-lost-after", "2", "--json", "--state", str(tmp_path / "ledger.json"),
    ]
    try:
        with out.open("wb") as sink:
            watch = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **NO_CONFIG})
        try:
            def lines() -> list[dict]:
                return [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")]

            assert wait_until(lambda: any(line["kind"] == "threshold" for line in lines()), SLOW), out.read_text()  # it answers
            prometheus.set_gpu_targets(with_dead=True)
            assert wait_until(lambda: any(line["kind"] == "node-lost" for line in lines()), SLOW), out.read_text()
            lost = [line for line in lines() if line["kind"] == "node-lost"]
            assert [line["label"] for line in lost] == [DEAD] and lost[0]["title"] == f"node {DEAD} down"
        finally:
            watch.terminate()
            assert watch.wait(15) == 0
    finally:
        prometheus.close()


def test_the_screen_lists_a_dead_job_down(dead_from_the_start, leet_terminal):
    terminal = leet_terminal("cluster", dead_from_the_start.url, "--interval", "1", "--range", "5m")

    def dead_row_down(screen: str) -> bool:
        row = next((line for line in screen.splitlines() if DEAD in line and "down" in line), "")
        return bool(row) and " · 2 nodes · 1 up · 1 down" in screen.splitlines()[0]

    screen = terminal.wait_for(dead_row_down, timeout=SLOW, what=f"{DEAD} listed down")
    row = next(line for line in screen.splitlines() if DEAD in line)
    assert "down " in row, row  # with how long: "down 40s"
    terminal.press("q")
    assert terminal.wait_exit(SLOW) == 0
