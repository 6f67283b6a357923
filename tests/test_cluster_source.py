"""leet cluster's source against a real Prometheus, and its HTTP client against small local servers.

Debian's ``prometheus`` scrapes every second: a real ``prometheus-node-exporter``,
the DCGM-exporter fixture page, and pages made the way ``leet serve`` names
its series (``leet.export.names``), one per node. Targets come from
``file_sd`` files, so a test adds one by rewriting a file, and each target
gets its own ``instance`` label (``gpu-a:9100``, ``gpu-a:9400``…) as if it
ran on its own host. A missing binary skips, unless ``LEET_REQUIRE_SERVERS``
is set.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

import pytest
from loopback_http import LoopbackHTTP
from test_openmetrics import DCGM_PAGE, DIRECT, FixtureServer, free_port, require_server, running

from leet.export.names import series
from leet.model.cluster import CLUSTER_RUN, DCGM_EXPORTER, LEET_SERVE, NODE_EXPORTER, NodeState
from leet.model.keys import natural_key
from leet.model.store import SeriesKey, Store
from leet.sources.cluster import ClusterSource, NodeBook
from leet.sources.cluster_queries import MARKER, SCRAPED, UP, VALUE, Naming, QueryPlan, Reading, parse_selector
from leet.sources.prometheus_api import PrometheusClient, PrometheusError, endpoint

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20

PAGE_A = {"cpu.0.cpu_percent": 20.0, "cpu.1.cpu_percent": 40.0, "memory_percent": 41.5, "network.recv": 123456.0}
PAGE_B = {
    "gpu.0.gpu": 30.0, "gpu.1.gpu": 90.0, "gpu.0.temp": 66.0, "gpu.1.temp": 71.0,
    "gpu.0.memoryUsed": 1024.0, "gpu.0.smClock": 1410.0, "memory_percent": 12.0, "cpu.0.cpu_percent": 50.0,
}
SMALL_PAGE = {"memory_percent": 5.0, "gpu.0.gpu": 1.0}


def leet_page(node: str, hostname: str, values: dict[str, float]) -> str:
    """A page as leet serve writes one: its metric names, ``node`` and ``wandb_key`` labels, base units, host info."""
    families: dict[str, list[str]] = {}
    for key, value in values.items():
        named = series(key, node)
        labels = ",".join(f'{name}="{text}"' for name, text in named.labels)
        families.setdefault(named.metric.sample_name, []).append(f"{named.metric.sample_name}{{{labels}}} {value * named.scale!r}")
    lines = []
    for name, samples in families.items():
        lines += [f"# TYPE {name} {'counter' if name.endswith('_total') else 'gauge'}", *samples]
    lines += ["# TYPE leet_host_info gauge", f'leet_host_info{{hostname="{hostname}",node="{node}",version="0.1"}} 1']
    return "\n".join(lines) + "\n"


def page_server(node: str, hostname: str, values: dict[str, float]) -> FixtureServer:
    server = FixtureServer().start()
    server.serve("/metrics", leet_page(node, hostname, values))
    return server


def write_targets(path: Path, targets: dict[str, str]) -> None:
    """``{instance: host:port}`` as a file_sd file, replaced whole so Prometheus never reads half of it."""
    groups = [{"targets": [address], "labels": {"instance": instance}} for instance, address in targets.items()]
    part = path.with_suffix(".tmp")
    part.write_text(json.dumps(groups))
    part.replace(path)


def netloc(server: FixtureServer) -> str:
    return urllib.parse.urlsplit(server.url("/")).netloc


class Cluster:
    """A running Prometheus and its targets."""

    def __init__(self, url: str, home: Path, leet: dict[str, FixtureServer]) -> None:
        self.url = url
        self.home = home
        self.leet = leet  # instance -> server

    def set_leet(self, servers: dict[str, FixtureServer]) -> None:
        self.leet = servers
        write_targets(self.home / "leet.json", {instance: netloc(server) for instance, server in servers.items()})

    def source(self, plan: QueryPlan | None = None, interval: float = 1.0, range_s: float = 300.0, url: str | None = None) -> ClusterSource:
        client = PrometheusClient(endpoint(url or self.url), timeout=5.0)
        return ClusterSource(Store(), client, plan=plan, interval=interval, range_s=range_s)

    def requests(self) -> dict[str, float]:
        """Prometheus's own count of the API requests it answered, by handler."""
        with DIRECT.open(f"{self.url}/metrics", timeout=5) as response:
            text = response.read().decode()
        counts: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("prometheus_http_requests_total{"):
                handler = line.split('handler="', 1)[1].split('"', 1)[0]
                counts[handler] = counts.get(handler, 0) + float(line.rsplit(" ", 1)[1])
        return counts


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    prometheus = require_server("prometheus")
    exporter = require_server("prometheus-node-exporter")
    home = tmp_path_factory.mktemp("cluster")
    dcgm = FixtureServer().start()
    dcgm.serve("/metrics", DCGM_PAGE)
    leet = {"gpu-a:9464": page_server("gpu-a", "gpu-node-17", PAGE_A), "gpu-b:9464": page_server("gpu-b", "gpu-node-18", PAGE_B)}
    node_port = free_port()
    write_targets(home / "node.json", {"gpu-a:9100": f"127.0.0.1:{node_port}"})
    write_targets(home / "dcgm.json", {"gpu-a:9400": netloc(dcgm)})
    write_targets(home / "leet.json", {instance: netloc(server) for instance, server in leet.items()})
    jobs = "".join(
        f"  - job_name: {job}\n    file_sd_configs:\n      - files: ['{home / job}.json']\n" for job in ("node", "dcgm", "leet")
    )
    (home / "prometheus.yml").write_text(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n{jobs}")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        prometheus, f"--config.file={home / 'prometheus.yml'}", f"--storage.tsdb.path={home / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    node_url = f"http://127.0.0.1:{node_port}/metrics"
    try:
        with running([exporter, f"--web.listen-address=127.0.0.1:{node_port}"], node_url, home / "node_exporter.log"):
            with running(command, f"{url}/-/ready", home / "prometheus.log"):
                made = Cluster(url, home, leet)
                wait_for(lambda: _scraped_enough(made), 30, "Prometheus to scrape every target five times")
                yield made
    finally:
        dcgm.stop()
        for server in leet.values():
            server.stop()


def _scraped_enough(cluster: Cluster) -> bool:
    # Four targets up, and five scrapes of each: some history, and rates.
    query = urllib.parse.urlencode({"query": "count(up == 1) >= 4 and min(count_over_time(up[30s])) >= 5"})
    with DIRECT.open(f"{cluster.url}/api/v1/query?{query}", timeout=5) as response:
        return bool(json.load(response)["data"]["result"])


def wait_for(ready: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds:g} s for {what}", pytrace=False)
        time.sleep(0.2)


def prometheus_time(cluster: Cluster) -> float:
    """Now, by the clock Prometheus's answers are timed with."""
    query = urllib.parse.urlencode({"query": "time()"})
    with DIRECT.open(f"{cluster.url}/api/v1/query?{query}", timeout=5) as response:
        return float(json.load(response)["data"]["result"][0])


def step_until(source: ClusterSource, ready: Callable[[ClusterSource], bool], seconds: float, what: str) -> None:
    def stepped() -> bool:
        source.step()
        return ready(source)

    wait_for(stepped, seconds, what)


def node(source: ClusterSource, name: str) -> NodeState | None:
    return next((state for state in source.nodes() if state.node == name), None)


def latest(source: ClusterSource, key: str, label: str) -> float | None:
    found = source.store.latest(SeriesKey(CLUSTER_RUN, key, label))
    return None if found is None else found[1]


# -- keys and nodes from every kind of target ---------------------------------------------------


def test_every_kind_of_target_gives_keys_on_its_node(cluster):
    source = cluster.source()
    source.step()
    assert {"gpu-a", "gpu-b"} <= set(source.labels())
    a, b = node(source, "gpu-a"), node(source, "gpu-b")
    assert a is not None and b is not None
    assert a.up and a.targets == (LEET_SERVE, NODE_EXPORTER, DCGM_EXPORTER)
    # DCGM-exporter's two H100s on gpu-a: 97 % and 0 %, 58 °C and 44 °C.
    assert (a.gpus, a.gpu_util_mean, a.hottest_gpu_temp, a.hottest_gpu) == (2, 48.5, 58.0, "0")
    assert a.memory_percent == 41.5  # leet serve's figure, not node_exporter's, for a key both give
    assert b.up and b.targets == (LEET_SERVE,)
    assert (b.gpus, b.gpu_util_mean, b.hottest_gpu_temp, b.hottest_gpu) == (2, 60.0, 71.0, "1")
    assert a.last_scrape is not None and time.time() - a.last_scrape < 5

    # leet serve's keys, back in W&B's units; its cores averaged into the host's CPU.
    assert latest(source, "gpu.0.memoryUsed", "gpu-b") == 1024.0
    assert latest(source, "gpu.0.smClock", "gpu-b") == 1410.0
    assert latest(source, "network.recv", "gpu-a") == 123456.0
    assert latest(source, "cpu.percent", "gpu-a") == 30.0
    assert latest(source, "cpu.percent", "gpu-b") == 50.0
    # DCGM-exporter's, in the catalog's units.
    assert latest(source, "gpu.0.temp", "gpu-a") == 58.0
    assert latest(source, "gpu.0.pipeTensorActive", "gpu-a") == pytest.approx(41.3806)
    assert latest(source, "gpu.0.memoryAllocated", "gpu-a") == pytest.approx(100 * 72416 / (72416 + 8135))
    # node_exporter's, where leet serve gives none of the key.
    assert 0 <= latest(source, "disk./.usagePercent", "gpu-a") <= 100
    assert latest(source, "memory.used", "gpu-a") > 0
    assert latest(source, "network.recvBps", "gpu-a") >= 0
    assert any(s.key.endswith(".readBps") and s.label == "gpu-a" for s in source.store.series(CLUSTER_RUN))
    # The history is there too: points from before the first live query (the range's point at its time is the live one).
    history = source.store.snapshot([SeriesKey(CLUSTER_RUN, "gpu.0.temp", "gpu-a")])[SeriesKey(CLUSTER_RUN, "gpu.0.temp", "gpu-a")]
    assert len(history.t) >= 2 and history.t[0] < history.t[-1] - 2 and list(history.t) == sorted(history.t)
    status = source.status()
    assert status.reachable and status.message == "" and status.notes == ()
    assert status.queries == 1 + len(QueryPlan().ranged_batches(1.0, 3.0)), "the live query, then the history's few"


def test_nodes_by_host_name_and_by_node_label(cluster):
    by_host = cluster.source(QueryPlan(node_label="hostname"))
    by_host.step()
    hosts = {state.node: state.targets for state in by_host.nodes()}
    assert hosts["gpu-node-17"] == (LEET_SERVE, DCGM_EXPORTER)  # leet_host_info and DCGM's hostname agree
    assert hosts["gpu-node-18"] == (LEET_SERVE,)
    assert hosts[os.uname().nodename] == (NODE_EXPORTER,)  # node_uname_info's nodename
    assert latest(by_host, "gpu.1.temp", "gpu-node-17") == 44.0
    by_label = cluster.source(QueryPlan(node_label="node"))
    by_label.step()
    labels = {state.node: state.targets for state in by_label.nodes()}
    # leet serve's node label; the exporters without one fall back to their instance, gpu-a too.
    assert labels["gpu-a"] == (LEET_SERVE, NODE_EXPORTER, DCGM_EXPORTER) and labels["gpu-b"] == (LEET_SERVE,)


def test_the_selector_limits_every_expression(cluster):
    source = cluster.source(QueryPlan(parse_selector('{job="leet"}')))
    source.step()
    assert {state.node: state.targets for state in source.nodes() if state.node in ("gpu-a", "gpu-b")} == {
        "gpu-a": (LEET_SERVE,), "gpu-b": (LEET_SERVE,),
    }
    assert not [s for s in source.store.series(CLUSTER_RUN) if s.key.startswith("gpu.") and s.label == "gpu-a"]
    nothing = cluster.source(QueryPlan(parse_selector('{job="no-such-job"}')))
    nothing.step()
    assert nothing.nodes() == ()
    assert nothing.status().notes == ('no leet serve, node_exporter or DCGM-exporter series matching {job="no-such-job"} in the last 5 min',)


def test_at_most_two_queries_an_interval(cluster):
    source = cluster.source(interval=1.0)
    before = cluster.requests()
    started = time.monotonic()
    source.start()

    def instant_queries() -> float:
        return cluster.requests().get("/api/v1/query", 0) - before.get("/api/v1/query", 0)

    wait_for(lambda: instant_queries() >= 4, 60, "four rounds")
    source.close()
    elapsed = time.monotonic() - started
    after = cluster.requests()
    ranged = after.get("/api/v1/query_range", 0) - before.get("/api/v1/query_range", 0)
    instant = after.get("/api/v1/query", 0) - before.get("/api/v1/query", 0)
    assert not source.running
    assert ranged == len(QueryPlan().ranged_batches(1.0, 3.0))  # the history, once: its few range queries
    assert 4 <= instant <= elapsed / source.interval + 1  # one a round
    assert source.status().queries == ranged + instant


def test_a_killed_target_is_down_with_since_and_a_new_one_joins(cluster):
    original = dict(cluster.leet)
    doomed = page_server("gpu-d", "gpu-node-20", SMALL_PAGE)
    newcomer = page_server("gpu-c", "gpu-node-19", SMALL_PAGE)
    try:
        cluster.set_leet({**original, "gpu-d:9464": doomed})
        source = cluster.source()
        step_until(source, lambda s: bool((state := node(s, "gpu-d")) and state.up), 20, "gpu-d to be up")
        killed = time.time()
        doomed.stop()
        step_until(source, lambda s: not node(s, "gpu-d").up, 20, "gpu-d to be seen down")  # type: ignore[union-attr]
        down = node(source, "gpu-d")
        assert down is not None and not down.up and killed <= down.since <= time.time()
        assert down.last_scrape is not None and down.last_scrape <= killed + 0.5
        assert down.gpus == 1 and down.memory_percent == 5.0  # its last values stay
        assert "gpu-d" in source.labels()
        source.step()
        assert node(source, "gpu-d").since == down.since  # type: ignore[union-attr]

        assert "gpu-c" not in source.labels()
        cluster.set_leet({**original, "gpu-d:9464": doomed, "gpu-c:9464": newcomer})
        step_until(source, lambda s: bool((state := node(s, "gpu-c")) and state.up), 20, "gpu-c to join")
        assert latest(source, "memory_percent", "gpu-c") == 5.0
        assert not node(source, "gpu-d").up and node(source, "gpu-a").up  # type: ignore[union-attr]
    finally:
        cluster.set_leet(original)
        newcomer.stop()


# -- Prometheus going away and coming back ------------------------------------------------------


class Door:
    """A forwarder in front of Prometheus: open, it passes requests on; shut, nothing listens on its port."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.paths: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def open(self) -> None:
        door = self

        class Forward(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                door.paths.append(self.path)
                request = urllib.request.Request(door.upstream + self.path, data=body, headers={"Content-Type": self.headers["Content-Type"]})
                try:
                    with DIRECT.open(request, timeout=10) as response:
                        status, answer = response.status, response.read()
                except urllib.error.HTTPError as exc:
                    status, answer = exc.code, exc.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Forward)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def shut(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def test_prometheus_away_is_one_clear_line_retried_with_backoff_and_the_gap_read_back(cluster):
    door = Door(cluster.url)
    door.open()
    try:
        source = cluster.source(url=door.url)
        assert source.step() <= 1.0
        series_before = len(source.store.series(CLUSTER_RUN))
        nodes_before = source.labels()
        last_data = prometheus_time(cluster)  # at or after the last answer's time
        door.shut()
        delays = [source.step() for _ in range(4)]
        status = source.status()
        assert delays == [1.0, 2.0, 4.0, 8.0]
        assert status.reachable is False and status.retry_in == 8.0
        assert status.message == f"Prometheus at {door.url}: connection refused (is Prometheus running there?)"
        assert source.labels() == nodes_before and len(source.store.series(CLUSTER_RUN)) == series_before
        assert all(state.up for state in source.nodes() if state.node in ("gpu-a", "gpu-b"))  # as last seen
        # Away longer than two intervals, by Prometheus's own clock (its answers' times): a gap worth reading back.
        wait_for(lambda: prometheus_time(cluster) > last_data + 2.5, 60, "Prometheus's clock 2.5 s past the last answer")
        door.paths.clear()
        door.open()
        assert source.step() <= 1.0
        status = source.status()
        assert status.reachable and status.message == "" and status.retry_in is None
        assert door.paths == ["/api/v1/query", "/api/v1/query_range"]  # the live query, then the gap
    finally:
        door.shut()


# -- a Prometheus that answers badly, and credentials -----------------------------------------------

VECTOR = {"status": "success", "data": {"resultType": "vector", "result": []}}


class FakePrometheus(LoopbackHTTP):
    """A local server answering every POST with the next canned answer, keeping each request's headers."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, str, bytes]] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, list[str]]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
                fake.requests.append((self.path, dict(self.headers.items()), form))
                status, content_type, body = fake.answers.pop(0) if fake.answers else (200, "application/json", json.dumps(VECTOR).encode())
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.serve(Handler)


@pytest.fixture
def fake() -> Iterator[FakePrometheus]:
    server = FakePrometheus()
    yield server
    server.stop()


HTML = b"<!doctype html><html><body>Sign in</body></html>"


@pytest.mark.parametrize(
    ("answer", "kind", "message"),
    [
        ((502, "text/html", HTML), "http", "answered HTTP 502 Bad Gateway"),
        ((401, "text/html", HTML), "http", "answered HTTP 401 Unauthorized (check --user and --password-file, or --token-file)"),
        ((404, "text/plain", b"404 page not found"), "http", "answered HTTP 404 Not Found (is this a Prometheus server's URL?"),
        ((200, "text/html", HTML), "garbage", "answered with an HTML page, not Prometheus API JSON (a proxy or a login page?)"),
        ((200, "application/json", b'{"data": 1}'), "garbage", "answered with JSON that is not a Prometheus API answer"),
        ((200, "text/plain", b"up 1\n"), "garbage", "answered with something that is not JSON"),
        (
            (400, "application/json", json.dumps({"status": "error", "errorType": "bad_data", "error": "1:5: parse error:\nunexpected"}).encode()),
            "refused", "refused the query (HTTP 400): bad_data: 1:5: parse error: unexpected",
        ),
        (
            (200, "application/json", json.dumps({"status": "error", "errorType": "timeout", "error": "query timed out"}).encode()),
            "refused", "refused the query: timeout: query timed out",
        ),
    ],
)
def test_bad_answers_are_one_line_each(fake, answer, kind, message):
    fake.answers.append(answer)
    client = PrometheusClient(endpoint(fake.url()), timeout=2)
    with pytest.raises(PrometheusError) as raised:
        client.query("up")
    assert raised.value.kind == kind
    assert str(raised.value).startswith(f"Prometheus at {fake.url()} ")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_slow_and_absent_servers(fake):
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        source = ClusterSource(Store(), PrometheusClient(endpoint(url), timeout=0.5), interval=1)
        started = time.monotonic()
        assert source.step() == 1.0
        assert time.monotonic() - started < 3  # the history's longer timeout, then the live query's
        assert source.status().message == f"Prometheus at {url}: no answer within 0.5 s"
        assert source.status().notes == ()  # the history is tried again: the server itself is slow
    with pytest.raises(PrometheusError, match=r"^Prometheus at http://no-such-host\.invalid: cannot resolve the host name") as raised:
        PrometheusClient(endpoint("no-such-host.invalid"), timeout=2).query("up")
    assert raised.value.kind == "unreachable"


def test_a_history_too_big_for_the_server_still_leaves_live_data(fake):
    refusal = json.dumps({"status": "error", "errorType": "execution", "error": "query processing would load too many samples into memory"})
    fake.answers += [(200, "application/json", json.dumps(VECTOR).encode()), (422, "application/json", refusal.encode())]
    source = ClusterSource(Store(), PrometheusClient(endpoint(fake.url()), timeout=2), interval=1)
    source.step()
    status = source.status()
    assert status.reachable and [path for path, _, _ in fake.requests] == ["/api/v1/query", "/api/v1/query_range"]
    assert status.notes[0].startswith(f"history not loaded: Prometheus at {fake.url()} refused the query (HTTP 422): execution: query processing")


def basic(user: str, password: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_basic_auth_and_bearer_tokens_are_sent_and_never_shown(fake, tmp_path):
    password_file = tmp_path / "password"
    password_file.write_text("s3cr3t:pass\n")
    token_file = tmp_path / "token"
    token_file.write_text("  tok-123  \n")
    cases = [
        (endpoint(fake.url("alice:in%20url@")), basic("alice", "in url")),
        (endpoint(fake.url(), user="bob", password_file=str(password_file)), basic("bob", "s3cr3t:pass")),
        (endpoint(fake.url("carol@"), environ={"LEET_PROMETHEUS_PASSWORD": "from-env"}), basic("carol", "from-env")),
        (endpoint(fake.url("dave:url-pass@"), environ={"LEET_PROMETHEUS_PASSWORD": "env-wins"}), basic("dave", "env-wins")),
        (endpoint(fake.url(), token_file=str(token_file), environ={}), "Bearer tok-123"),
        (endpoint(fake.url(), environ={"LEET_PROMETHEUS_TOKEN": "env-token"}), "Bearer env-token"),
    ]
    for where, expected in cases:
        fake.requests.clear()
        PrometheusClient(where, timeout=2).query("up")
        (path, headers, form) = fake.requests[0]
        assert headers["Authorization"] == expected and path == "/api/v1/query" and form == {"query": ["up"]}
        assert where.base == fake.url()
        assert not any(secret in where.display for secret in ("in url", "in%20url", "s3cr3t", "from-env", "url-pass", "env-wins", "tok-123", "env-token"))
    plain = endpoint(fake.url(), environ={})
    PrometheusClient(plain, timeout=2).query("up")
    assert "Authorization" not in fake.requests[-1][1]
    # A refused answer names the server with the password masked.
    fake.answers.append((401, "text/plain", b"no"))
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(endpoint(fake.url("alice:hunter2@")), timeout=2).query("up")
    assert "hunter2" not in str(raised.value) and f"http://alice:***@127.0.0.1:{fake.url().rsplit(':', 1)[1]}" in str(raised.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"url": "ftp://prom:9090"}, "is not an http:// or https:// URL"),
        ({"url": "http://a@prom:9090", "user": "b"}, "two users given"),
        ({"url": "prom:9090", "password_file": "p"}, "--password-file goes with --user NAME"),
        ({"url": "prom:9090", "user": "a", "token_file": "t"}, "either a user (basic auth) or --token-file"),
        ({"url": "prom:9090", "user": "a", "password_file": "/no/such/file"}, "--password-file /no/such/file: No such file or directory"),
        ({"url": "prom:9090", "token_file": "/dev/null"}, "is a character device, not a regular file"),
    ],
)
def test_credential_mistakes_are_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        endpoint(kwargs.pop("url"), environ={}, **kwargs)


def test_urls_as_people_copy_them():
    assert endpoint("prom:9090", environ={}).base == "http://prom:9090"
    assert endpoint("https://prom.example/prometheus/api/v1/query", environ={}).base == "https://prom.example/prometheus"
    assert endpoint("http://[::1]:9090/graph", environ={}).base == "http://[::1]:9090"


# -- the command -----------------------------------------------------------------------------


def leet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leet", *args], capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def test_once_json_prints_every_node_and_its_values(cluster):
    done = leet("cluster", cluster.url, "--once", "--json", "--label", "gpu-[ab]")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["prometheus"] == cluster.url and printed["node_label"] == "instance" and printed["notes"] == []
    assert set(printed["nodes"]) == {"gpu-a", "gpu-b"}
    a, b = printed["nodes"]["gpu-a"], printed["nodes"]["gpu-b"]
    assert a["up"] is True and a["targets"] == ["leet", "node", "dcgm"] and a["last_scrape"] > 0
    assert a["keys"]["gpu.0.gpu"] == 97.0 and a["keys"]["memory_percent"] == 41.5 and "network.recvBps" in a["keys"]
    assert b["keys"] == {
        "cpu.percent": 50.0, "cpu.0.cpu_percent": 50.0, "gpu.0.gpu": 30.0, "gpu.0.memoryUsed": 1024.0, "gpu.0.smClock": 1410.0,
        "gpu.0.temp": 66.0, "gpu.1.gpu": 90.0, "gpu.1.temp": 71.0, "memory_percent": 12.0,
    }
    assert list(b["keys"]) == sorted(b["keys"], key=natural_key)


def test_once_table_and_unreachable_prometheus(cluster):
    done = leet("cluster", cluster.url, "--once", "--label", "gpu-a,gpu-b")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Prometheus {cluster.url}: 2 nodes, 2 up"
    assert lines[1].split() == ["NODE", "STATE", "TARGETS", "GPUS", "GPU", "UTIL", "HOTTEST", "GPU", "MEMORY", "SCRAPED"]
    assert lines[2].split()[:9] == ["gpu-a", "up", "leet,node,dcgm", "2", "48", "%", "58", "°C", "(gpu"]
    assert lines[3].split()[:5] == ["gpu-b", "up", "leet", "2", "60"]
    port = free_port()
    failed = leet("cluster", f"http://u:pw@127.0.0.1:{port}", "--once", "--json")
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr == f"leet: Prometheus at http://u:***@127.0.0.1:{port}: connection refused (is Prometheus running there?)\n"
    bad = leet("cluster", cluster.url, "--selector", "up{job='x'}")
    assert bad.returncode == 2 and bad.stderr.startswith("leet: --selector \"up{job='x'}\": give only label matchers")
    assert leet("cluster", cluster.url, "--json").stderr == "leet: --json goes with --once\n"


# -- the node book, fed by hand ------------------------------------------------------------------

NODE_T, DCGM_T, LEET_T = ("node", "h1:9100"), ("dcgm", "h1:9400"), ("leet", "h1:9464")


def at(t: float, role: str, kind: str, target: tuple[str, str], key: str = "", value: float = 1.0) -> Reading:
    return Reading(role, kind, target, key, "", "", (t,), (value,))


def answer(t: float, dcgm_up: bool | None, gpus: int = 2) -> list[Reading]:
    readings = [
        at(t, MARKER, NODE_EXPORTER, NODE_T), at(t, UP, "", NODE_T), at(t, SCRAPED, "", NODE_T, value=t - 0.5),
        at(t, VALUE, NODE_EXPORTER, NODE_T, "memory_percent", 20.0),
    ]
    if dcgm_up is not None:
        readings.append(at(t, UP, "", DCGM_T, value=1.0 if dcgm_up else 0.0))
    if dcgm_up:
        readings += [at(t, MARKER, DCGM_EXPORTER, DCGM_T), at(t, SCRAPED, "", DCGM_T, value=t - 0.2)]
        readings += [at(t, VALUE, DCGM_EXPORTER, DCGM_T, f"gpu.{i}.temp", 50.0 + i) for i in range(gpus)]
    return readings


def test_node_book_up_down_since_and_the_last_values():
    book = NodeBook(Naming())
    book.apply(answer(100, True), now=100)
    (h1,) = book.states()
    assert (h1.node, h1.up, h1.since, h1.last_scrape, h1.gpus, h1.hottest_gpu) == ("h1", True, 100, 99.8, 2, "1")
    book.apply(answer(115, None), now=115)  # DCGM's target is gone from Prometheus altogether
    (h1,) = book.states()
    assert (h1.up, h1.since, h1.gpus, h1.last_scrape) == (False, 115, 2, 114.5)  # down, with its last values
    book.apply(answer(130, False), now=130)
    assert book.states()[0].since == 115
    book.apply(answer(145, True, gpus=1), now=145)  # back, one GPU fewer
    (h1,) = book.states()
    assert (h1.up, h1.since, h1.gpus, h1.hottest_gpu_temp) == (True, 145, 1, 50.0)


def test_node_book_replays_a_range_and_prefers_leet_serve():
    book = NodeBook(Naming())
    ups = Reading(UP, "", LEET_T, "", "", "", (10, 20, 30, 40), (1, 1, 0, 0))
    values = [
        Reading(VALUE, NODE_EXPORTER, NODE_T, "memory_percent", "", "", (10, 20), (30.0, 31.0)),
        Reading(VALUE, LEET_SERVE, LEET_T, "memory_percent", "", "", (10, 20), (40.0, 41.0)),
        Reading(VALUE, LEET_SERVE, LEET_T, "cpu.percent", "", "", (10, 20), (math.nan, 5.0)),
    ]
    batch = book.apply([ups, Reading(UP, "", NODE_T, "", "", "", (10, 40), (1, 1)), *values])
    assert set(batch) == {("memory_percent", "h1"), ("cpu.percent", "h1")}
    assert batch["memory_percent", "h1"] == ([10, 20], [40.0, 41.0])  # leet serve's, not node_exporter's
    (h1,) = book.states()
    assert (h1.up, h1.since, h1.memory_percent, h1.targets) == (False, 30, 41.0, (LEET_SERVE, NODE_EXPORTER))
    assert book.values("h1") == {"memory_percent": 41.0, "cpu.percent": 5.0}
