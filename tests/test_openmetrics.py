"""OpenMetrics endpoints: W&B's keys, filters and index rule, over real HTTP.

The pages are the fixtures wandb 0.31.0 was run against (its records are in
``fixtures/hardware/wandb_records``), served by a local ``http.server``; a
real ``prometheus-node-exporter`` is scraped too. A server binary that is
missing skips its tests, unless ``LEET_REQUIRE_SERVERS`` is set (CI), where
it fails them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collectors.base import Health
from collectors.hub import Hub
from collectors.openmetrics import (
    EndpointSpec,
    HttpStatusError,
    OpenMetricsCollector,
    PageMapper,
    ScrapeError,
    endpoints_from_args,
    endpoints_from_settings,
    openmetrics_collectors,
    parse_endpoint_arg,
    parse_filters,
    parse_header_arg,
)

HARDWARE = Path(__file__).parent / "fixtures" / "hardware"
NODE_PAGE = (HARDWARE / "node_exporter" / "node_exporter_metrics_SUBSET_of_e2e-output.prom").read_text()
DCGM_PAGE = (HARDWARE / "dcgm_exporter" / "dcgm-exporter_metrics_2xH100_default-counters_COMPOSED.prom").read_text()
EXPERIMENTS = json.loads((HARDWARE / "wandb_records" / "wandb-0.31.0_openmetrics_filter_experiments.json").read_text())["experiments"]
RECORDS = HARDWARE / "wandb_records" / "wandb-0.31.0_stats_linux_openmetrics+dcgm-promql+neuron-replay_1s.jsonl"
PROM_TEXT = "text/plain; version=0.0.4; charset=utf-8"
# Loopback servers only: a proxy from the environment must not get in the way.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


# -- servers ---------------------------------------------------------------


def require_server(binary: str) -> str:
    """The path of a server binary; skip without it, or fail where servers are required."""
    path = shutil.which(binary) or (f"/usr/bin/{binary}" if os.access(f"/usr/bin/{binary}", os.X_OK) else None)
    if path is None:
        message = f"{binary} is not installed (Debian: apt-get install {binary})"
        if os.environ.get("LEET_REQUIRE_SERVERS"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Route:
    body: bytes
    content_type: str = PROM_TEXT
    statuses: list[int] = field(default_factory=list)  # answered first, one per request, before 200s


class FixtureServer:
    """A local HTTP server: fixed answers per path, and the headers of every request it got."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
                server.requests.append((self.path, dict(self.headers.items())))
                route = server.routes.get(self.path.partition("?")[0])
                if route is None:
                    self.send_error(404)
                    return
                status = route.statuses.pop(0) if route.statuses else 200
                self.send_response(status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{path}"

    def serve(self, path: str, body: str | bytes, content_type: str = PROM_TEXT, statuses: list[int] | None = None) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(data, content_type, list(statuses or []))
        return self.url(path)

    def headers_for(self, path: str) -> list[dict[str, str]]:
        return [headers for got, headers in self.requests if got.partition("?")[0] == path]

    def start(self) -> "FixtureServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        # shutdown() waits for serve_forever's loop to notice: wait for it a while, never for ever.
        stopping = threading.Thread(target=self._httpd.shutdown, daemon=True)
        stopping.start()
        stopping.join(5)
        self._httpd.server_close()


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    running = FixtureServer().start()
    yield running
    running.stop()


def wait_for_http(url: str, process: subprocess.Popen, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before it answered")
        try:
            with DIRECT.open(url, timeout=1.0) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {seconds:g} s")


@contextmanager
def running(command: list[str], ready_url: str, log: Path) -> Iterator[subprocess.Popen]:
    """Starts a server, waits until ``ready_url`` answers 200, and stops it afterwards."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            try:
                wait_for_http(ready_url, process)
            except RuntimeError as exc:
                pytest.fail(f"{exc}\n{log.read_text(errors='replace')[-2000:]}", pytrace=False)
            yield process
        finally:
            stop_process(process, 5)


def stop_process(process: subprocess.Popen, seconds: float = 10) -> None:
    """SIGTERM, then SIGKILL if it is still there after ``seconds``; never waits without end."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            try:
                process.wait(seconds)
            except subprocess.TimeoutExpired:
                print(f"pid {process.pid} ({process.args[0]}) still there {seconds:g} s after SIGKILL", file=sys.stderr)


@pytest.fixture(scope="module")
def node_exporter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The metrics URL of a real prometheus-node-exporter on a free loopback port."""
    binary = require_server("prometheus-node-exporter")
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    log = tmp_path_factory.mktemp("node_exporter") / "node_exporter.log"
    with running([binary, f"--web.listen-address=127.0.0.1:{port}"], url, log):
        yield url


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A URL whose server accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/metrics"


# -- a plain reading of a page, to check the mapper against -----------------


def reference_keys(endpoint: str, text: str) -> dict[str, float]:
    """W&B's keys for an unfiltered page, by the slow obvious route: the whole parse, then names from ``# TYPE``."""
    counters = set(re.findall(r"^#\s*TYPE\s+(\S+)\s+counter\s*$", text, re.MULTILINE))
    values: dict[str, float] = {}
    indices: dict[str, dict[tuple, int]] = {}
    for family in text_string_to_metric_families(text):
        if family.type not in ("gauge", "counter"):
            continue
        exposed = family.name
        if family.type == "counter" and family.name + "_total" in counters:
            exposed = family.name + "_total"
        for sample in family.samples:
            seen = indices.setdefault(exposed, {})
            index = seen.setdefault(tuple(sorted(sample.labels.items())), len(seen))
            values[f"openmetrics.{endpoint}.{exposed}.{index}"] = float(sample.value)
    return values


def wandb_openmetrics(experiment: str) -> dict[str, float]:
    return {k: v for k, v in EXPERIMENTS[experiment]["non_host_keys_last_value"].items() if k.startswith("openmetrics.")}


def scrape_both(filters: object, headers: dict[str, str] | None, server: FixtureServer) -> dict[str, float]:
    values: dict[str, float] = {}
    for name, page in (("dcgm", DCGM_PAGE), ("node", NODE_PAGE)):
        collector = OpenMetricsCollector(name, server.serve(f"/{name}/metrics", page), filters, headers, timeout=5)
        values.update(collector.sample())
    return values


# -- the settings ------------------------------------------------------------


def test_a_missing_server_skips_unless_servers_are_required(monkeypatch):
    monkeypatch.delenv("LEET_REQUIRE_SERVERS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="leet-no-such-server is not installed"):
        require_server("leet-no-such-server")
    monkeypatch.setenv("LEET_REQUIRE_SERVERS", "1")
    with pytest.raises(pytest.fail.Exception, match="leet-no-such-server is not installed"):
        require_server("leet-no-such-server")


def test_endpoint_and_header_args():
    assert parse_endpoint_arg("node=http://localhost:9100/metrics") == ("node", "http://localhost:9100/metrics")
    assert parse_endpoint_arg("q=http://h/m?a=b=c") == ("q", "http://h/m?a=b=c")
    assert parse_header_arg("Authorization: Bearer a:b") == ("Authorization", "Bearer a:b")
    assert parse_header_arg("X-Empty:") == ("X-Empty", "")


@pytest.mark.parametrize(
    "arg, message",
    [
        ("node", "NAME=URL"),
        ("=http://h/m", "NAME=URL"),
        ("node=", "NAME=URL"),
        ("node=ftp://h/m", "not an http:// or https:// URL"),
        ("node=http:///metrics", "with a host"),
        ("my node=http://h/m", "must not contain blanks"),
        ("a/b=http://h/m", "'/'"),
        ("node=http://h:99999/m", "not a valid URL"),
    ],
)
def test_endpoint_arg_errors(arg, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_endpoint_arg(arg)


@pytest.mark.parametrize(
    "arg, message",
    [("Authorization Bearer x", "'Name: value'"), (": x", "'Name: value'"), ("Bad Name: x", "not a valid HTTP header name")],
)
def test_header_arg_errors(arg, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_header_arg(arg)


def test_filters_both_forms_compile():
    listed = parse_filters(["node_load1", "^dcgm\\."])
    assert [rule.metric.pattern for rule in listed.rules] == ["node_load1", "^dcgm\\."]
    assert all(rule.labels == () for rule in listed.rules)
    mapped = parse_filters({"node.node_cpu": {"cpu": "0", "mode": "idle|user"}, "dcgm.X": None})
    assert [(rule.metric.pattern, [(name, p.pattern) for name, p in rule.labels]) for rule in mapped.rules] == [
        ("node.node_cpu", [("cpu", "0"), ("mode", "idle|user")]),
        ("dcgm.X", []),
    ]
    assert parse_filters(None).captures_all and parse_filters([]).captures_all and parse_filters({}).captures_all
    assert parse_filters("x").rules[0].metric.pattern == "x"


@pytest.mark.parametrize(
    "setting, message",
    [
        (["ok", "bad["], "'bad[' is not a valid regular expression"),
        ({"m": {"cpu": "("}}, "[\'m\'][\'cpu\']"),
        ({"m": ["cpu"]}, "must be a mapping"),
        ({"m": {"": "x"}}, "non-empty text"),
        ([1], "expected a regular expression"),
        (42, "expected a list of regular expressions or a mapping"),
    ],
)
def test_filter_errors(setting, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_filters(setting)


def test_endpoints_from_settings_and_args():
    specs = endpoints_from_settings(
        {"dcgm": "http://gpu:9400/metrics", "node": "http://localhost:9100/metrics"},
        ["node_load"],
        {"Authorization": "Bearer t"},
        timeout=3,
    )
    assert [(spec.name, spec.url, spec.headers, spec.timeout) for spec in specs] == [
        ("dcgm", "http://gpu:9400/metrics", (("Authorization", "Bearer t"),), 3.0),
        ("node", "http://localhost:9100/metrics", (("Authorization", "Bearer t"),), 3.0),
    ]
    assert specs[0].filters is specs[1].filters  # global, as in W&B
    from_args = endpoints_from_args(["node=http://localhost:9100/metrics"], ["node_load1"], ["Authorization: Bearer t"])
    assert from_args == [EndpointSpec("node", "http://localhost:9100/metrics", parse_filters(["node_load1"]), (("Authorization", "Bearer t"),))]
    collectors = openmetrics_collectors(specs)
    assert [c.name for c in collectors] == ["openmetrics:dcgm", "openmetrics:node"]
    assert collectors[0].budget > collectors[0].timeout == 3.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"endpoints": [("a", "http://h/1"), ("a", "http://h/2")]}, "'a' is given twice"),
        ({"endpoints": {"a": "http://h/1"}, "headers": {"X-A": "1", "x-a": "2"}}, "header 'x-a' is given twice"),
        ({"endpoints": {"a": "http://h/1"}, "headers": {"X-A": "a\r\nX-B: b"}}, "on one line"),
        ({"endpoints": {"a": "http://h/1"}, "timeout": 0}, "timeout must be more than 0"),
        ({"endpoints": {"": "http://h/1"}}, "non-empty name"),
        ({"endpoints": {"a": 5}}, "expected an http:// or https:// URL"),
    ],
)
def test_endpoints_from_settings_errors(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        endpoints_from_settings(**kwargs)


# -- pages to keys -----------------------------------------------------------


def test_fixture_pages_map_like_a_plain_reading():
    for name, page in (("node", NODE_PAGE), ("dcgm", DCGM_PAGE)):
        assert PageMapper(name).map(page) == reference_keys(name, page)


def test_counters_keep_the_name_they_are_exposed_under():
    node = PageMapper("node").map(NODE_PAGE)
    dcgm = PageMapper("dcgm").map(DCGM_PAGE)
    assert node["openmetrics.node.node_cpu_seconds_total.0"] == 10870.69
    assert dcgm["openmetrics.dcgm.DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION.1"] == 31877010356
    assert not any("_TOTAL_ENERGY_CONSUMPTION_total" in key or "seconds_total_total" in key for key in (*node, *dcgm))


def test_only_gauges_and_counters_are_recorded():
    page = """\
# TYPE g gauge
g 1
# TYPE u untyped
u 2
plain_without_type 3
# TYPE s summary
s{quantile="0.5"} 4
s_sum 5
s_count 6
# TYPE h histogram
h_bucket{le="+Inf"} 7
h_sum 8
h_count 7
# TYPE i info
i_info{version="1"} 1
"""
    mapper = PageMapper("ep")
    assert mapper.map(page) == {"openmetrics.ep.g.0": 1.0}
    assert mapper.last.recorded_families == 1


def test_indices_stay_with_their_label_sets_across_pages():
    mapper = PageMapper("ep")
    first = '# TYPE t gauge\nt{gpu="0"} 1\nt{gpu="1"} 2\n'
    assert mapper.map(first) == {"openmetrics.ep.t.0": 1.0, "openmetrics.ep.t.1": 2.0}
    # Reordered, label order changed, one series gone and one new: old indices hold.
    later = '# TYPE t gauge\nt{gpu="2"} 30\nt{  gpu="1" } 20\n'
    assert mapper.map(later) == {"openmetrics.ep.t.2": 30.0, "openmetrics.ep.t.1": 20.0}
    same_set = '# TYPE t gauge\nt{b="2",a="1"} 5\n# TYPE u gauge\nu{a="1",b="2"} 6\n'
    assert mapper.map(same_set) == {"openmetrics.ep.t.3": 5.0, "openmetrics.ep.u.0": 6.0}
    assert mapper.map('# TYPE t gauge\nt{a="1",b="2"} 7\n') == {"openmetrics.ep.t.3": 7.0}


def test_openmetrics_exposition_counters_and_eof():
    page = """\
# HELP requests Requests.
# TYPE requests counter
# UNIT requests requests
requests_total{path="/"} 3 1700000000.5
requests_created{path="/"} 1700000000
# TYPE temp gauge
temp 40.5
# EOF
"""
    assert PageMapper("ep").map(page) == {"openmetrics.ep.requests_total.0": 3.0, "openmetrics.ep.temp.0": 40.5}


def test_escapes_quoted_names_exemplars_and_special_values():
    page = r"""# TYPE m gauge
m{path="C:\\dir",quote="say \"hi\"",brace="}"} 1
m{path="a#b"} 2
m{path="x"} +Inf
m{path="y"} NaN
# TYPE "my.metric" gauge
{"my.metric",zone="a"} 3
# TYPE c_total counter
c_total{code="200"} 4 # {trace_id="abc"} 1.0
"""
    values = PageMapper("ep").map(page)
    assert values["openmetrics.ep.m.0"] == 1.0
    assert values["openmetrics.ep.m.1"] == 2.0
    assert values["openmetrics.ep.m.2"] == float("inf")
    assert values["openmetrics.ep.m.3"] != values["openmetrics.ep.m.3"]  # NaN: the hub drops it
    assert values["openmetrics.ep.my.metric.0"] == 3.0
    assert values["openmetrics.ep.c_total.0"] == 4.0


def test_malformed_lines_cost_only_themselves():
    page = '# TYPE m gauge\nm{a="1"} 1\nm{a="2"} not-a-number\nm{a=3} 3\nm{a="4"}\nm{a="5"} 5\n'
    mapper = PageMapper("ep")
    for _ in range(2):  # the second page goes through the caches
        assert mapper.map(page) == {"openmetrics.ep.m.0": 1.0, "openmetrics.ep.m.1": 5.0}
        assert mapper.notes() == ("3 sample lines could not be parsed",)


def test_notes_when_nothing_is_captured():
    empty = PageMapper("ep")
    empty.map("# TYPE u untyped\nu 1\n")
    assert empty.notes() == ("no gauge or counter metrics on the page (only those are recorded)",)
    filtered = PageMapper("ep", ["nothing-matches"])
    assert filtered.map(NODE_PAGE) == {}
    assert filtered.notes() == ("the filters capture none of the 18 gauge and counter metrics on the page",)
    everything = PageMapper("node")
    assert everything.map(NODE_PAGE) and everything.notes() == ()


def test_filters_are_unanchored_searches_on_endpoint_dot_metric():
    values = PageMapper("node", ["node_load1"]).map(NODE_PAGE)
    assert sorted(values) == ["openmetrics.node.node_load1.0", "openmetrics.node.node_load15.0"]
    assert PageMapper("node", ["^node_load1$"]).map(NODE_PAGE) == {}
    assert list(PageMapper("node", ["^node\\.node_load1$"]).map(NODE_PAGE)) == ["openmetrics.node.node_load1.0"]


def test_mapping_filters_need_every_label_and_index_only_captured_series():
    values = PageMapper("node", {"node.node_cpu_seconds_total": {"cpu": "^[01]$", "mode": "idle"}}).map(NODE_PAGE)
    assert values == {"openmetrics.node.node_cpu_seconds_total.0": 10870.69, "openmetrics.node.node_cpu_seconds_total.1": 11107.87}
    assert PageMapper("node", {"node_network": {"nosuchlabel": ".*"}}).map(NODE_PAGE) == {}
    # A rule without labels captures the metric whatever another rule asks of its labels.
    both = PageMapper("node", {"node_load1$": {"nosuchlabel": "x"}, "node_load": {}}).map(NODE_PAGE)
    assert len(both) == 3


# -- what wandb 0.31.0 logged --------------------------------------------------


@pytest.mark.parametrize("experiment", ["A", "B", "C"])
def test_same_keys_and_values_as_wandb(experiment, server):
    settings = EXPERIMENTS[experiment]["settings"]
    filters = settings.get("x_stats_open_metrics_filters")
    headers = settings.get("x_stats_open_metrics_http_headers")
    assert scrape_both(filters, headers, server) == wandb_openmetrics(experiment)


def test_every_wandb_record_has_our_keys_and_values(server):
    ours = scrape_both(None, None, server)
    for line in RECORDS.read_text().splitlines():
        item = json.loads(line)["stats"]["item"]
        assert {k: v for k, v in item.items() if k.startswith("openmetrics.")} == ours


def test_dcgm_exporter_page_over_http_with_headers(server):
    url = server.serve("/metrics", DCGM_PAGE)
    collector = OpenMetricsCollector("dcgm", url, headers={"Authorization": "Bearer test-token", "X-Team": "ml"})
    values = collector.sample()
    assert len(values) == 50
    assert values["openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.1"] == 44
    assert collector.extras() == {"notes.openmetrics:dcgm": ()}
    sent = server.headers_for("/metrics")[-1]
    assert sent["Authorization"] == "Bearer test-token" and sent["X-Team"] == "ml"
    assert sent["Accept"].startswith("text/plain;version=0.0.4")


# -- failures ------------------------------------------------------------------


def test_black_holed_endpoint_costs_only_itself(black_hole, server):
    dead = OpenMetricsCollector("stuck", black_hole, timeout=0.5)
    alive = OpenMetricsCollector("dcgm", server.serve("/metrics", DCGM_PAGE), timeout=5)
    started = time.monotonic()
    with pytest.raises(ScrapeError) as raised:
        dead.sample()
    assert time.monotonic() - started < 1.5
    assert "'stuck'" in str(raised.value) and black_hole in str(raised.value) and "no answer within 0.5 s" in str(raised.value)

    hub = Hub([dead, alive], interval=60, warmup=0)
    try:
        started = time.monotonic()
        sample = hub.sweep()
        took = time.monotonic() - started
    finally:
        hub.stop()
    assert took < dead.budget
    assert sample.values["openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0"] == 58
    assert not any(key.startswith("openmetrics.stuck.") for key in sample.values)
    status = {s.name: s for s in sample.status}
    assert status["openmetrics:stuck"].health is Health.FAILING and black_hole in status["openmetrics:stuck"].reason
    assert status["openmetrics:dcgm"].health is Health.OK


def test_refused_connection_is_retried_once_then_named():
    url = f"http://127.0.0.1:{free_port()}/metrics"
    started = time.monotonic()
    with pytest.raises(ScrapeError, match=re.escape(f"OpenMetrics endpoint 'gone' ({url}): connection refused")):
        OpenMetricsCollector("gone", url, timeout=2).sample()
    assert 0.15 < time.monotonic() - started < 1.0


def test_server_errors_are_retried_and_client_errors_are_not(server):
    flaky = server.serve("/flaky", NODE_PAGE, statuses=[503])
    assert OpenMetricsCollector("node", flaky).sample()["openmetrics.node.node_load1.0"] == 0.21
    assert len(server.headers_for("/flaky")) == 2
    with pytest.raises(HttpStatusError, match=r"answered HTTP 404") as raised:
        OpenMetricsCollector("node", server.url("/missing")).sample()
    assert raised.value.status == 404 and len(server.headers_for("/missing")) == 1
    down = server.serve("/down", NODE_PAGE, statuses=[500, 500, 500])
    with pytest.raises(HttpStatusError, match=r"answered HTTP 500"):
        OpenMetricsCollector("node", down).sample()


def test_an_html_page_is_not_metrics(server):
    url = server.serve("/login", "<html><body>sign in</body></html>", "text/html; charset=utf-8")
    with pytest.raises(ScrapeError, match="answered with an HTML page"):
        OpenMetricsCollector("node", url).sample()


def test_passwords_stay_out_of_messages():
    port = free_port()
    with pytest.raises(ScrapeError) as raised:
        OpenMetricsCollector("node", f"http://user:s3cret@127.0.0.1:{port}/metrics", timeout=0.4).sample()
    assert "s3cret" not in str(raised.value) and f"user:***@127.0.0.1:{port}" in str(raised.value)


# -- a real node_exporter -------------------------------------------------------


def test_real_node_exporter(node_exporter):
    collector = OpenMetricsCollector("node", node_exporter, timeout=5)
    first = collector.sample()
    assert first["openmetrics.node.node_load1.0"] >= 0
    assert any(key.startswith("openmetrics.node.node_cpu_seconds_total.") for key in first)
    assert "openmetrics.node.node_memory_MemTotal_bytes.0" in first
    assert collector.extras() == {"notes.openmetrics:node": ()}
    second = collector.sample()
    assert set(first) <= set(second)  # the same series keep their keys

    with DIRECT.open(node_exporter, timeout=5) as response:
        page = response.read().decode()
    assert PageMapper("node").map(page) == pytest.approx(reference_keys("node", page), nan_ok=True)


def test_real_node_exporter_with_filters(node_exporter):
    listed = OpenMetricsCollector("node", node_exporter, ["^node\\.node_load(1|5)$", "node_memory_MemTotal"], timeout=5).sample()
    assert sorted(listed) == [
        "openmetrics.node.node_load1.0",
        "openmetrics.node.node_load5.0",
        "openmetrics.node.node_memory_MemTotal_bytes.0",
    ]
    mapped = OpenMetricsCollector("node", node_exporter, {"node_cpu_seconds_total": {"cpu": "^0$", "mode": "^(idle|user)$"}}, timeout=5).sample()
    assert sorted(mapped) == ["openmetrics.node.node_cpu_seconds_total.0", "openmetrics.node.node_cpu_seconds_total.1"]
