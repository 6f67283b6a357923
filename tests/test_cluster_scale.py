"""``leet cluster`` on a big fleet: what it asks Prometheus, and in which order, does not grow with the nodes.

``FleetClient`` stands in for Prometheus: it answers the parts of each
batch (their ``leet_part`` tags) for a fleet of N nodes, each with a
node_exporter and a DCGM-exporter target, some of them down. A target that
is down gives no values to a live query (its series went stale), only to
one that looks back for its last values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from leet.commands.cluster_once import as_json
from leet.model.cluster import CLUSTER_RUN
from leet.model.store import SeriesKey, Store
from leet.sources.cluster import ClusterSource
from leet.sources.cluster_queries import PART_LABEL, QueryPlan
from leet.sources.prometheus_api import Answer

NOW = 1_800_000_000.0
DOWN_AT = NOW - 300.0  # when the down nodes went down
GPUS = 2
HISTORY = ["range"] * len(QueryPlan().ranged_batches(15.0, 15.0))  # the same few range queries for any fleet
_PART = re.compile(rf'"{PART_LABEL}", "([a-z_]+)"')
_INSTANCES = re.compile(r'instance=~"([^"]*)"')


@dataclass
class FleetClient:
    """Answers like a Prometheus watching ``nodes`` nodes (``down`` of them down), noting each query."""

    nodes: int
    down: frozenset[int] = frozenset()
    timeout: float = 5.0
    display_url: str = "http://fleet"
    requests: int = 0
    asked: list[tuple[str, str]] = field(default_factory=list)  # (instant | range, expression)

    def query(self, expr: str, at: float | None = None, timeout: float | None = None) -> Answer:
        self.requests += 1
        self.asked.append(("instant", expr))
        last = "last_over_time((" in expr  # a look back for the last values of computed series
        return Answer("vector", [{"metric": labels, "value": [t, value]} for labels, t, value in self._series(expr, last, NOW)])

    def query_range(self, expr: str, start: float, end: float, step: float, timeout: float | None = None) -> Answer:
        self.requests += 1
        self.asked.append(("range", expr))
        times = [start + i * step for i in range(int((end - start) // step) + 1)]
        result: dict[tuple, dict] = {}
        for t in times:
            for labels, _, value in self._series(expr, False, t):
                entry = result.setdefault(tuple(sorted(labels.items())), {"metric": labels, "values": []})
                entry["values"].append([t, str(value)])
        return Answer("matrix", list(result.values()))

    def instants(self) -> list[str]:
        return [expr for kind, expr in self.asked if kind == "instant"]

    def _series(self, expr: str, last: bool, t: float):
        parts = set(_PART.findall(expr))
        wanted = _INSTANCES.search(expr)
        for index in range(self.nodes):
            node = f"node{index + 1:04d}"
            node_t, dcgm_t = f"{node}:9100", f"{node}:9400"
            if wanted and not re.fullmatch(wanted.group(1).replace("\\\\", "\\"), node_t) and not re.fullmatch(wanted.group(1).replace("\\\\", "\\"), dcgm_t):
                continue
            is_down = index in self.down and t >= DOWN_AT
            seen_at = min(t, DOWN_AT) if is_down else t
            if "up" in parts:
                for job, instance in (("node", node_t), ("dcgm", dcgm_t)):
                    yield {"job": job, "instance": instance, PART_LABEL: "up"}, t, "0" if is_down else "1"
            if "down_since" in parts and is_down:
                for job, instance in (("node", node_t), ("dcgm", dcgm_t)):
                    yield {"job": job, "instance": instance, PART_LABEL: "down_since"}, t, str(DOWN_AT)
            if "scraped" in parts:
                for job, instance in (("node", node_t), ("dcgm", dcgm_t)):
                    yield {"job": job, "instance": instance, PART_LABEL: "scraped"}, t, str(seen_at)
            if "node_host" in parts:
                yield {"job": "node", "instance": node_t, "nodename": node, PART_LABEL: "node_host"}, t, "1"
            if "dcgm_host" in parts:
                yield {"job": "dcgm", "instance": dcgm_t, "Hostname": node, PART_LABEL: "dcgm_host"}, t, "1"
            if is_down and not last:
                continue  # a down target's series are stale: gone from a live query
            if "node_mem" in parts:
                yield {"job": "node", "instance": node_t, PART_LABEL: "node_mem"}, t, str(30.0 + index % 50 + (seen_at % 7))
            if "dcgm" in parts:
                for gpu in range(GPUS):
                    labels = {"job": "dcgm", "instance": dcgm_t, "gpu": str(gpu), "Hostname": node, "dcgm_field": "DCGM_FI_DEV_GPU_UTIL", PART_LABEL: "dcgm"}
                    yield labels, t, str(50.0 + gpu + (seen_at % 11))


def make_source(client: FleetClient, **kwargs) -> ClusterSource:
    return ClusterSource(Store(), client, interval=15.0, range_s=600.0, clock=lambda: NOW, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("nodes", [3, 40])
def test_a_round_is_one_instant_query_whatever_the_fleet_size(nodes):
    client = FleetClient(nodes)
    source = make_source(client)
    source.step()
    assert [kind for kind, _ in client.asked] == ["instant", *HISTORY], "the first round: live values, then the history"
    for _ in range(3):
        client.asked.clear()
        source.step()
        assert [kind for kind, _ in client.asked] == ["instant"]
    assert len(source.nodes()) == nodes


def test_live_values_are_told_before_the_history_is_asked():
    client = FleetClient(5, down=frozenset({1}))
    source = make_source(client)
    told: list[tuple[list[str], int]] = []
    source.on_change(lambda: told.append(([kind for kind, _ in client.asked], len(source.nodes()))))
    source.step()
    assert told and told[0] == (["instant"], 5), "the node table had every node before the history was asked for"
    assert [kind for kind, _ in client.asked] == ["instant", *HISTORY]


def test_the_history_after_the_live_values_keeps_since_and_the_newest_value():
    client = FleetClient(4, down=frozenset({2}))
    source = make_source(client)
    source.step()
    states = {state.node: state for state in source.nodes()}
    assert states["node0001"].up and states["node0001"].since == NOW - 600.0, "up since the range's start, not since the live answer"
    assert not states["node0003"].up and states["node0003"].since == DOWN_AT
    key = SeriesKey(CLUSTER_RUN, "gpu.1.gpu", "node0001")
    data = source.store.snapshot([key])[key]
    assert list(data.t) == sorted(data.t) and data.t[-1] == NOW
    assert len(set(data.t)) == len(data.t), "the live point is kept once"
    assert source.store.latest(key) == (NOW, 51.0 + NOW % 11)


def test_a_failed_history_after_good_live_values_is_asked_again_next_round():
    client = FleetClient(3)
    source = make_source(client)
    calls = {"n": 0}
    answer_range = client.query_range

    def flaky(expr: str, start: float, end: float, step: float, timeout: float | None = None) -> Answer:
        calls["n"] += 1
        if calls["n"] == 1:
            from leet.sources.prometheus_api import PrometheusError

            raise PrometheusError("Prometheus at http://fleet: connection refused", "unreachable")
        return answer_range(expr, start, end, step, timeout)

    client.query_range = flaky  # type: ignore[method-assign]
    source.step()
    assert source.status().reachable and len(source.nodes()) == 3, "the live values stand"
    source.step()
    assert calls["n"] == 1 + len(HISTORY)
    key = SeriesKey(CLUSTER_RUN, "gpu.0.gpu", "node0001")
    assert len(source.store.snapshot([key])[key].t) > 2, "the history came on the next round"


@pytest.mark.parametrize("nodes", [3, 40])
def test_once_is_one_live_query_when_every_node_is_up(nodes):
    client = FleetClient(nodes)
    source = make_source(client, load_history=False, last_values=True)
    source.step()
    (expr,) = client.instants()
    assert ":" not in "".join(re.findall(r"\[[^\]]*\]", expr)), "no subquery over the fleet"
    assert len(source.nodes()) == nodes and all(state.up for state in source.nodes())


def test_once_looks_back_only_for_the_targets_that_are_down():
    client = FleetClient(40, down=frozenset({6, 30}))
    source = make_source(client, load_history=False, last_values=True)
    source.step()
    live, back = client.instants()
    assert ":" not in "".join(re.findall(r"\[[^\]]*\]", live)), "the live batch has no subquery"
    wanted = _INSTANCES.findall(back)
    assert wanted and all("node0007" in w and "node0031" in w and "node0001" not in w for w in wanted)
    payload = __import__("json").loads(as_json(source, source.nodes(), NOW))
    down = payload["nodes"]["node0007"]
    assert down["up"] is False and down["since"] == DOWN_AT
    assert down["keys"]["gpu.0.gpu"] == 50.0 + DOWN_AT % 11, "its last values"
    assert payload["nodes"]["node0001"]["up"] is True and payload["nodes"]["node0001"]["keys"]["gpu.0.gpu"] == 50.0 + NOW % 11


@pytest.mark.parametrize("instances", [["node-1.a:9100", "[::1]:9400"], ['odd"name\\x', "tab\there", "sp ace", "a|b", "ünï:1"]])
def test_the_look_back_matches_exactly_the_instances_named(instances):
    from leet.sources.cluster_queries import instances_regex, promql_string

    as_python = re.sub(r"\\x\{([0-9a-f]+)\}", lambda found: f"\\x{int(found.group(1), 16):02x}", instances_regex(instances))  # RE2's \x{..}
    pattern = re.compile(as_python)
    assert all(pattern.fullmatch(name) for name in instances)
    assert not any(pattern.fullmatch(other) for other in ["node-1xa:9100", "a", "b", "odd", "node-1.a:91000"])
    quoted = promql_string(instances_regex(instances))
    assert '"' not in quoted.replace('\\"', "")
    matcher = QueryPlan('job="gpu"').only_instances(instances).selector
    assert matcher.startswith('job="gpu",instance=~"') and matcher.endswith('"')
