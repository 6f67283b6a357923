"""DCGM-exporter series through Prometheus: W&B's ``gpu.{i}.*/l:{node}`` keys.

The mapping is checked against the composed ``/api/v1/query`` answer wandb
0.31.0 was run against, and end to end against Debian's real ``prometheus``
scraping the DCGM-exporter fixture page from a local HTTP server.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from pathlib import Path
from typing import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_openmetrics import DCGM_PAGE, EXPERIMENTS, FixtureServer, free_port, require_server, running

from collectors.dcgm import (
    DCGM_FIELDS,
    DEFAULT_QUERY,
    DcgmPrometheusCollector,
    DcgmTarget,
    QueryResult,
    accelerator_infos,
    add_response,
    gpu_infos,
    map_query_response,
    parse_dcgm_url,
    result_notes,
)
from collectors.gpu import AcceleratorInfo, GpuInfo
from collectors.openmetrics import ScrapeError

HARDWARE = Path(__file__).parent / "fixtures" / "hardware"
QUERY_ANSWER = json.loads((HARDWARE / "dcgm_exporter" / "prometheus_api_v1_query_DCGM_FI_DEV_GPU_TEMP_COMPOSED.json").read_text())
WANDB_GPU_KEYS = {k: v for k, v in EXPERIMENTS["A"]["non_host_keys_last_value"].items() if k.startswith("gpu.")}
WANDB_URL = EXPERIMENTS["A"]["settings"]["x_stats_dcgm_exporter"]
JSON = "application/json"


def vector(*series: tuple[dict[str, str], str]) -> dict:
    return {
        "status": "success",
        "data": {"resultType": "vector", "result": [{"metric": labels, "value": [1700000000.0, value]} for labels, value in series]},
    }


def expected_from_page(page: str) -> dict[str, float]:
    """The keys W&B's rule gives the exporter page's series once Prometheus stored them."""
    values = {}
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            name = DCGM_FIELDS.get(family.name) or DCGM_FIELDS.get(sample.name)
            if name is not None:
                values[f"gpu.{sample.labels['gpu']}.{name}/l:{sample.labels['hostname']}"] = float(sample.value)
    return values


# -- the URL -----------------------------------------------------------------


def test_wandb_style_urls():
    assert parse_dcgm_url(WANDB_URL) == DcgmTarget("http://127.0.0.1:18931/api/v1/query", ('DCGM_FI_DEV_GPU_TEMP{cluster="globular"}',))
    encoded = "https://prom:9090/api/v1/query?query=" + urllib.parse.quote('DCGM_FI_DEV_GPU_TEMP{node="l1337"}') + "&query=DCGM_FI_DEV_POWER_USAGE"
    assert parse_dcgm_url(encoded).queries == ('DCGM_FI_DEV_GPU_TEMP{node="l1337"}', "DCGM_FI_DEV_POWER_USAGE")


def test_urls_without_a_query_or_behind_a_prefix():
    assert parse_dcgm_url("http://prom:9090") == DcgmTarget("http://prom:9090/api/v1/query", (DEFAULT_QUERY,))
    assert parse_dcgm_url("http://gw/prometheus/").query_url == "http://gw/prometheus/api/v1/query"
    assert parse_dcgm_url("http://gw/prometheus/api/v1/query?query=up").query_url == "http://gw/prometheus/api/v1/query"
    assert all(field in DEFAULT_QUERY for field in DCGM_FIELDS)


@pytest.mark.parametrize(
    "url, message",
    [("http://node:9400/metrics", "--openmetrics dcgm=http://node:9400/metrics"), ("prom:9090", "http:// or https://"), ("", "expected an http")],
)
def test_url_errors(url, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_dcgm_url(url)


# -- answers to keys -----------------------------------------------------------


def test_the_answer_wandb_was_given_maps_to_its_keys():
    assert map_query_response(QUERY_ANSWER) == WANDB_GPU_KEYS


def test_wandb_label_rules():
    answer = vector(
        ({"__name__": "DCGM_FI_DEV_GPU_UTIL", "device": "nvidia3", "node": "n1", "hostname": "h1"}, "97"),
        ({"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "1", "device": "nvidia7", "hostname": "h1"}, "300.5"),
        ({"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "2", "Hostname": "old-exporter"}, "1024"),
        ({"__name__": "DCGM_FI_PROF_SM_ACTIVE", "gpu": "0", "node": ""}, "0.25"),
        ({"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "", "device": "nvidia4"}, "50"),
        ({"__name__": "DCGM_FI_DEV_GPU_TEMP", "instance": "x"}, "51"),
        ({"__name__": "DCGM_FI_DEV_ENC_UTIL", "gpu": "0"}, "0"),
        ({"gpu": "0"}, "1"),
    )
    result = QueryResult()
    add_response(result, answer)
    assert result.values == {
        "gpu.3.gpu/l:n1": 97.0,  # device without "nvidia"; node before hostname
        "gpu.1.powerWatts/l:h1": 300.5,  # the gpu label before device
        "gpu.2.memoryUsed": 1024.0,  # W&B reads "hostname", not "Hostname"; MiB as DCGM gives it
        "gpu.0.smActive": 0.25,  # a 0-1 ratio, raw
    }
    assert result.unplaced == 2
    assert result.unknown == {"DCGM_FI_DEV_ENC_UTIL", "(an expression without a metric name)"}


def test_error_and_odd_answers():
    with pytest.raises(ScrapeError, match="refused the query: bad_data: parse error"):
        map_query_response({"status": "error", "errorType": "bad_data", "error": "parse error"})
    with pytest.raises(ScrapeError, match="not a Prometheus API answer"):
        map_query_response([1, 2])
    with pytest.raises(ScrapeError, match="without data.result"):
        map_query_response({"status": "success", "data": {}})
    result = QueryResult()
    add_response(result, {"status": "success", "data": {"resultType": "matrix", "result": []}}, query="up[5m]")
    assert result.not_vectors == ["up[5m]"] and result.values == {}
    assert result_notes(result) == ("not an instant vector, so not read: up[5m]",)


def test_screen_records_for_one_node_and_for_several():
    one = QueryResult()
    add_response(
        one,
        vector(
            ({"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "1", "modelName": "Tesla T4", "UUID": "GPU-b", "hostname": "h"}, "63"),
            ({"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "1", "hostname": "h"}, "1000"),
            ({"__name__": "DCGM_FI_DEV_FB_FREE", "gpu": "1", "hostname": "h"}, "14000"),
            ({"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "modelName": "Tesla T4", "UUID": "GPU-a", "hostname": "h"}, "41"),
        ),
    )
    assert gpu_infos(one) == (
        GpuInfo(0, "Tesla T4", 0, None, uuid="GPU-a"),
        GpuInfo(1, "Tesla T4", 15000 << 20, None, uuid="GPU-b"),
    )
    assert accelerator_infos(one)[1] == AcceleratorInfo(
        vendor="NVIDIA", index=1, name="Tesla T4 on h", utilization_key="gpu.1.gpu/l:h", memory_total=15000 << 20
    )
    several = QueryResult()
    add_response(several, QUERY_ANSWER)
    assert gpu_infos(several) == ()  # GPU 0 of l1337 and GPU 0 of l1338 cannot share an index
    assert [(info.name, info.temp_key) for info in accelerator_infos(several)] == [
        ("NVIDIA H100 80GB HBM3 on l1337", "gpu.0.temp/l:l1337"),
        ("NVIDIA H100 80GB HBM3 on l1337", "gpu.1.temp/l:l1337"),
        ("NVIDIA H100 80GB HBM3 on l1338", "gpu.0.temp/l:l1338"),
    ]


# -- the collector over HTTP ---------------------------------------------------


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    running_server = FixtureServer().start()
    yield running_server
    running_server.stop()


def test_collector_asks_as_wandb_does(server):
    server.serve("/api/v1/query", json.dumps(QUERY_ANSWER), JSON)
    url = WANDB_URL.replace("http://127.0.0.1:18931", server.url(""))
    collector = DcgmPrometheusCollector(url, headers={"Authorization": "Bearer test-token"}, clock=lambda: 1763703112.5)
    assert collector.sample() == WANDB_GPU_KEYS
    path, headers = server.requests[-1]
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    assert params == {"query": ['DCGM_FI_DEV_GPU_TEMP{cluster="globular"}'], "time": ["1763703112.500"]}
    assert headers["Authorization"] == "Bearer test-token"
    extras = collector.extras()
    assert extras["gpus"] == () and len(extras["accelerators.dcgm"]) == 3 and extras["notes.dcgm"] == ()


def test_collector_errors_name_prometheus_and_its_reason(server):
    refused = json.dumps({"status": "error", "errorType": "bad_data", "error": 'invalid parameter "query": 1:5: parse error'})
    server.serve("/bad/api/v1/query", refused, JSON, statuses=[400])
    with pytest.raises(ScrapeError, match=r"answered HTTP 400 Bad Request: bad_data: invalid parameter") as raised:
        DcgmPrometheusCollector(server.url("/bad?query=x{")).sample()
    assert server.url("/bad/api/v1/query") in str(raised.value)
    server.serve("/empty/api/v1/query", json.dumps(vector()), JSON)
    with pytest.raises(ScrapeError, match="has no DCGM GPU series for DCGM_FI_DEV_GPU_TEMP"):
        DcgmPrometheusCollector(server.url("/empty?query=DCGM_FI_DEV_GPU_TEMP")).sample()
    server.serve("/html/api/v1/query", "<html></html>", "text/html")
    with pytest.raises(ScrapeError, match="not JSON"):
        DcgmPrometheusCollector(server.url("/html")).sample()
    port = free_port()
    with pytest.raises(ScrapeError, match=rf"Prometheus for dcgm \(http://127.0.0.1:{port}/api/v1/query\): connection refused"):
        DcgmPrometheusCollector(f"http://127.0.0.1:{port}", timeout=1).sample()


# -- a real Prometheus scraping the exporter page --------------------------------


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of Debian's prometheus, scraping the DCGM-exporter fixture page every second."""
    binary = require_server("prometheus")
    exporter = FixtureServer().start()
    exporter.serve("/metrics", DCGM_PAGE)
    target = urllib.parse.urlsplit(exporter.url("/metrics")).netloc
    home = tmp_path_factory.mktemp("prometheus")
    config = home / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"scrape_configs:\n  - job_name: dcgm-exporter\n    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [binary, f"--config.file={config}", f"--storage.tsdb.path={home / 'data'}", f"--web.listen-address=127.0.0.1:{port}"]
    try:
        with running(command, f"{base}/-/ready", home / "prometheus.log"):
            yield base
    finally:
        exporter.stop()


def first_answer(collector: DcgmPrometheusCollector, seconds: float = 20.0) -> dict[str, float]:
    """The collector's first sample once Prometheus has scraped the page."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return collector.sample()
        except ScrapeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def test_real_prometheus_every_field_with_a_wandb_key(prometheus):
    collector = DcgmPrometheusCollector(prometheus, timeout=5)
    values = first_answer(collector)
    assert values == expected_from_page(DCGM_PAGE)
    assert values["gpu.0.temp/l:gpu-node-17"] == 58 and values["gpu.1.memoryUsed/l:gpu-node-17"] == 0
    assert values["gpu.0.pipeTensorActive/l:gpu-node-17"] == pytest.approx(0.413806)
    extras = collector.extras()
    assert [(g.index, g.name, g.uuid, g.memory_total) for g in extras["gpus"]] == [
        (0, "NVIDIA H100 80GB HBM3", "GPU-3b9d2f4e-6a1c-4b7e-9f30-2d5c8e71a0b4", (72416 + 8135) << 20),
        (1, "NVIDIA H100 80GB HBM3", "GPU-8e1a7c55-0d2b-4f96-a3c8-71b4e9d02f6c", (0 + 80551) << 20),
    ]
    assert extras["accelerators.dcgm"][0].power_key == "gpu.0.powerWatts/l:gpu-node-17"


def test_real_prometheus_wandb_style_query(prometheus):
    query = 'DCGM_FI_DEV_GPU_TEMP{job="dcgm-exporter"}'
    collector = DcgmPrometheusCollector(f"{prometheus}/api/v1/query?query={query}&query=DCGM_FI_DEV_ENC_UTIL", timeout=5)
    assert first_answer(collector) == {"gpu.0.temp/l:gpu-node-17": 58.0, "gpu.1.temp/l:gpu-node-17": 44.0}
    assert collector.extras()["notes.dcgm"] == ("no W&B key for DCGM_FI_DEV_ENC_UTIL; scrape the exporter with --openmetrics to see every field",)


def test_real_prometheus_refuses_a_bad_query(prometheus):
    with pytest.raises(ScrapeError, match=r"HTTP 400 Bad Request: bad_data: .*parse error"):
        DcgmPrometheusCollector(f"{prometheus}/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP{{", timeout=5).sample()
