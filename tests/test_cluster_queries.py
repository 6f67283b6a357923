"""leet cluster's PromQL and the reading of its answers: pure, no server (promtool checks the syntax)."""

from __future__ import annotations

import math
import re
import subprocess

import pytest
from test_openmetrics import require_server

from leet.model.cluster import DCGM_EXPORTER, LEET_SERVE, NODE_EXPORTER
from leet.sources.cluster_queries import (
    MARKER,
    SCRAPED,
    UP,
    VALUE,
    Naming,
    QueryPlan,
    Reading,
    decode,
    history_step,
    marker_window,
    parse_selector,
    rate_window,
    strip_port,
)

MIB = 1 << 20


# -- the selector ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "matchers"),
    [
        (None, ""),
        ("", ""),
        ("{}", ""),
        ('{job="gpu"}', 'job="gpu"'),
        ('job="gpu", cluster=~"a.*"', 'job="gpu",cluster=~"a.*"'),
        ("{job='gpu', zone!~`eu-.*`,}", "job='gpu',zone!~`eu-.*`"),
        (r'{path="C:\\data"}', r'path="C:\\data"'),
    ],
)
def test_selector_forms(text, matchers):
    assert parse_selector(text) == matchers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{job="gpu"', "the closing '}' is missing"),
        ('up{job="gpu"}', "without a metric name"),
        ("{job=gpu}", "cannot read the matcher at 'job=gpu'"),
        ('{job="gpu" zone="a"}', "cannot read the matcher"),
        ('{__name__="up"}', "a metric name matcher cannot be added"),
        ('{job=~"(gpu"}', "is not a valid regular expression"),
    ],
)
def test_selector_errors_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        parse_selector(text)
    assert str(raised.value).startswith("--selector") and "\n" not in str(raised.value)


def test_node_label_must_be_one_of_three():
    with pytest.raises(ValueError, match="--node-label must be one of instance, hostname, node"):
        QueryPlan(node_label="pod")


# -- the batch ---------------------------------------------------------------------------


def test_every_selector_in_the_batch_carries_the_users_matchers():
    plan = QueryPlan(parse_selector('{job="gpu", zone=~"eu-.*"}'))
    for batch in (plan.instant(15, 3600), plan.ranged(15, 30), plan.latest(15, 3600)):
        selectors = re.findall(r"\{([^{}]*)\}", batch)
        assert len(selectors) >= 20
        assert all(body.endswith('job="gpu",zone=~"eu-.*"') for body in selectors), selectors


def test_one_instant_query_holds_every_part_each_tagged():
    plan = QueryPlan()
    parts = plan.parts(60, 3600)
    batch = plan.instant(15, 3600)
    tags = re.findall(r'"leet_part", "([a-z_]+)"', batch)
    assert tags == [part.name for part in parts] and len(set(tags)) == len(tags)
    assert batch.count(" or ") == len(parts) - 1
    assert {part.role for part in parts} == {VALUE, UP, SCRAPED, MARKER}
    assert {part.kind for part in parts} == {LEET_SERVE, NODE_EXPORTER, DCGM_EXPORTER, ""}
    # The live batch looks back for targets that are down now; the history reads the info series as they are.
    assert "last_over_time(node_uname_info{}[3600s])" in batch
    assert "last_over_time" not in plan.ranged(15, 30)
    assert "[60s]" in batch and "[90s]" in plan.ranged(15, 45)


def test_the_batches_are_promql_prometheus_accepts(tmp_path):
    promtool = require_server("promtool")
    plan = QueryPlan(parse_selector('{job=~"gpu|node", cluster="a"}'), "hostname")
    rules = ["groups:", "  - name: leet", "    rules:"]
    for name, expr in (("leet:instant", plan.instant(15, 3600)), ("leet:range", plan.ranged(15, 30)), ("leet:latest", plan.latest(15, 3600))):
        rules += [f"      - record: {name}", "        expr: |", f"          {expr}"]
    path = tmp_path / "rules.yml"
    path.write_text("\n".join(rules) + "\n")
    checked = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 3 rules found" in checked.stdout


def test_windows_and_history_steps():
    assert rate_window(15) == 60 and rate_window(30) == 120 and rate_window(15, step=45) == 90
    assert marker_window(60) == 300 and marker_window(3600) == 3600 and marker_window(86400) == 3600
    assert history_step(3600, 240, 15) == 15  # 240 cells: the interval decides
    assert history_step(3600, 40, 15) == 90  # a point a cell
    assert history_step(600, 1000, 0.5) == 1  # whole seconds
    assert history_step(7 * 86400, 100_000, 1) == 55  # Prometheus's 11,000 points a series
    assert history_step(3600, 0, 15) == 3600


# -- answers to readings ---------------------------------------------------------------------


def entry(part: str, value: str, **labels: str) -> dict:
    return {"metric": {"leet_part": part, "job": "j", "instance": "gpu-a:9100", **labels}, "value": [1700000000.5, value]}


def test_each_kind_reads_as_wandb_keys_in_the_catalogs_units():
    plan = QueryPlan()
    answer = [
        entry("leet", "37", __name__="leet_gpu_utilization_percent", wandb_key="gpu.0.gpu", node="gpu-a"),
        entry("leet", str(72416 * MIB), __name__="leet_gpu_memory_used_bytes", wandb_key="gpu.0.memoryUsed", node="gpu-a"),
        entry("leet", "1980000000", __name__="leet_gpu_sm_clock_hertz", wandb_key="gpu.0.smClock", node="gpu-a"),
        entry("leet", "123456", __name__="leet_network_received_bytes_total", wandb_key="network.recv", node="gpu-a"),
        entry("leet", "1", __name__="leet_gpu_utilization_percent", wandb_key="gpu.0.gpu/l:rank0", node="gpu-a"),
        entry("leet_cpu", "25", node="gpu-a"),
        entry("leet_host", "1", __name__="leet_host_info", hostname="host-17", node="gpu-a"),
        entry("node_disk_pct", "27.5", mountpoint="/"),
        entry("node_read", "4096", device="nvme0n1"),
        entry("node_rx", "2048"),
        entry("node_host", "1", __name__="node_uname_info", nodename="host-17"),
        entry("dcgm", "0.41", __name__="DCGM_FI_PROF_SM_ACTIVE", gpu="0", Hostname="host-17"),
        entry("dcgm", str(3 * MIB), __name__="DCGM_FI_PROF_PCIE_TX_BYTES", gpu="0", Hostname="host-17"),
        entry("dcgm", "58", __name__="DCGM_FI_DEV_GPU_TEMP", device="nvidia1", hostname="host-17"),
        entry("dcgm", "1", __name__="DCGM_FI_DEV_GPU_TEMP"),  # no gpu, no device: cannot be placed
        entry("dcgm_mem", "NaN", gpu="1"),
        entry("up", "1", __name__="up"),
        entry("scraped", "1700000000.25"),
        {"metric": {"leet_part": "up", "job": "j"}, "value": [1700000000.5, "1"]},  # no instance
        {"metric": {"job": "j", "instance": "x:1"}, "value": [1700000000.5, "1"]},  # no tag
        {"metric": {"leet_part": "up", "job": "j", "instance": "x:1"}, "value": [1700000000.5, "not a number"]},
        "not an entry",
    ]
    decoded = decode(answer, plan.parts(60, 3600))
    got = {(r.role, r.kind, r.key): r.values[0] for r in decoded.readings}
    nan = got.pop((VALUE, DCGM_EXPORTER, "gpu.1.memoryAllocated"))
    assert math.isnan(nan)
    assert got == {
        (VALUE, LEET_SERVE, "gpu.0.gpu"): 37.0,
        (VALUE, LEET_SERVE, "gpu.0.memoryUsed"): 72416.0,  # MiB again, as the catalog charts it
        (VALUE, LEET_SERVE, "gpu.0.smClock"): 1980.0,  # MHz
        (VALUE, LEET_SERVE, "network.recv"): 123456.0,  # cumulative, as the key means
        (VALUE, LEET_SERVE, "cpu.percent"): 25.0,
        (MARKER, LEET_SERVE, ""): 1.0,
        (VALUE, NODE_EXPORTER, "disk./.usagePercent"): 27.5,
        (VALUE, NODE_EXPORTER, "disk.nvme0n1.readBps"): 4096.0,
        (VALUE, NODE_EXPORTER, "network.recvBps"): 2048.0,
        (MARKER, NODE_EXPORTER, ""): 1.0,
        (VALUE, DCGM_EXPORTER, "gpu.0.smActive"): pytest.approx(41.0),  # percent, not DCGM's ratio
        (VALUE, DCGM_EXPORTER, "gpu.0.pcieTxBytes"): 3.0,  # MiB/s, not DCGM's bytes/s
        (VALUE, DCGM_EXPORTER, "gpu.1.temp"): 58.0,
        (UP, "", ""): 1.0,
        (SCRAPED, "", ""): 1700000000.25,
    }
    assert decoded.skipped == 6
    hosts = {r.kind: r.hostname for r in decoded.readings if r.role == MARKER}
    assert hosts == {LEET_SERVE: "host-17", NODE_EXPORTER: "host-17"}
    assert all(r.target == ("j", "gpu-a:9100") and r.times == (1700000000.5,) for r in decoded.readings)


def test_a_range_answer_keeps_every_point():
    answer = [{"metric": {"leet_part": "node_mem", "job": "node", "instance": "a:9100"}, "values": [[10, "1"], [25, "2"], [40, "+Inf"], ["x", "3"]]}]
    (reading,) = decode(answer, QueryPlan().parts(60, None)).readings
    assert reading.key == "memory_percent" and reading.times == (10.0, 25.0, 40.0) and reading.values == (1.0, 2.0, math.inf)


# -- node names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance", "host"),
    [("gpu-a:9100", "gpu-a"), ("10.0.0.5:9400", "10.0.0.5"), ("[::1]:9100", "::1"), ("gpu-a", "gpu-a"), ("http://a:9100/metrics", "http://a:9100/metrics")],
)
def test_instance_without_its_port(instance, host):
    assert strip_port(instance) == host


def reading(role: str, kind: str, target: tuple[str, str], key: str = "", node: str = "", hostname: str = "") -> Reading:
    return Reading(role, kind, target, key, node, hostname, (1.0,), (1.0,))


NODE_TARGET = ("node", "10.0.0.5:9100")
DCGM_TARGET = ("dcgm", "10.0.0.9:9400")  # in its own pod, on another address
LEET_TARGET = ("leet", "10.0.0.5:9464")
HOST_READINGS = [
    reading(MARKER, NODE_EXPORTER, NODE_TARGET, hostname="host-17"),
    reading(VALUE, NODE_EXPORTER, NODE_TARGET, "memory_percent"),
    reading(VALUE, DCGM_EXPORTER, DCGM_TARGET, "gpu.0.gpu", hostname="host-17"),
    reading(MARKER, LEET_SERVE, LEET_TARGET, node="trainer-3", hostname="host-17"),
    reading(VALUE, LEET_SERVE, LEET_TARGET, "gpu.0.temp", node="trainer-3"),
    reading(UP, "", NODE_TARGET),
    reading(UP, "", ("prometheus", "localhost:9090")),
]


@pytest.mark.parametrize(
    ("mode", "names"),
    [
        ("instance", ["10.0.0.5", "10.0.0.5", "10.0.0.9", "10.0.0.5", "10.0.0.5", "10.0.0.5"]),
        ("hostname", ["host-17"] * 6),
        ("node", ["10.0.0.5", "10.0.0.5", "10.0.0.9", "trainer-3", "trainer-3", "10.0.0.5"]),
    ],
)
def test_node_names_by_each_rule(mode, names):
    naming = Naming(mode)
    naming.learn(HOST_READINGS)
    assert [naming.node_of(r) for r in HOST_READINGS[:-1]] == names
    # A target of no known kind (Prometheus scraping itself) is no node.
    assert set(naming.targets()) == {NODE_TARGET, DCGM_TARGET, LEET_TARGET}
    assert not naming.known(("prometheus", "localhost:9090"))
