"""``leet cluster`` under faults: a redirect within the server, a slow recovery, a node down from the start (deep JSON and redirects elsewhere: test_prometheus_faults)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest
from loopback_http import LoopbackHTTP
from test_cluster_source import VECTOR

from leet.model.cluster import NODE_EXPORTER
from leet.model.store import Store
from leet.sources.cluster import ClusterSource, NodeBook
from leet.sources.cluster_queries import MARKER, UP, Naming, Reading
from leet.sources.prometheus_api import Answer, PrometheusClient, PrometheusError, endpoint


class Redirecting(LoopbackHTTP):
    """A local server answering every POST with a 301 to ``target`` + the path asked."""

    def __init__(self, target: str) -> None:
        self.requests: list[dict[str, str]] = []
        door = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                door.requests.append(dict(self.headers.items()))
                self.send_response(301)
                self.send_header("Location", (target or door.url()) + self.path.replace("/api/v1/", "/moved/api/v1/"))
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST  # noqa: N815 - a 301 to a POST comes back as a GET

            def log_message(self, *args: object) -> None:
                pass

        self.serve(Handler)


def test_a_redirect_within_the_origin_is_followed():
    door = Redirecting("")  # to itself: answers 301 again for /moved/…, so the client gives up after a few
    try:
        client = PrometheusClient(endpoint(door.url("ann:pw@")), timeout=5)
        with pytest.raises(PrometheusError) as raised:
            client.query("up")
        assert "not followed" not in str(raised.value)
        assert len(door.requests) > 1, "the same-origin redirect was followed"
    finally:
        door.stop()


class RecordingClient:
    """Answers every query at once, noting each: ``range`` or ``instant``; fails while ``away``."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.away = False
        self.timeout = 5.0
        self.requests = 0
        self.display_url = "http://fake"

    def query(self, expr: str, at: float | None = None, timeout: float | None = None) -> Answer:
        return self._answer("instant")

    def query_range(self, expr: str, start: float, end: float, step: float, timeout: float | None = None) -> Answer:
        return self._answer("range")

    def _answer(self, what: str) -> Answer:
        self.requests += 1
        self.asked.append(what)
        if self.away:
            raise PrometheusError("Prometheus at http://fake: connection refused", "unreachable")
        data = VECTOR["data"]
        return Answer(data["resultType"], data["result"], (), 1.0)


def test_after_a_recovery_the_live_query_goes_before_the_gap():
    client = RecordingClient()
    now = [1000.0]
    source = ClusterSource(Store(), client, interval=1.0, load_history=False, clock=lambda: now[0])  # type: ignore[arg-type]
    heard: list[list[str]] = []
    source.on_change(lambda: heard.append(list(client.asked)))
    source.step()
    client.away = True
    source.step()
    now[0] += 600
    client.away = False
    client.asked.clear()
    source.step()
    assert client.asked == ["instant", "range"], "live values first, then the gap"
    assert heard and heard[0] == ["instant"], "the live values were told before the gap was asked for"


def test_a_node_down_before_the_watch_started_is_listed_down():
    book = NodeBook(Naming())
    alive, dead, prometheus = ("node", "nodeA:9100"), ("node", "nodeC:9100"), ("prometheus", "localhost:9090")
    book.apply([  # the first range answer: nodeC was down all along, so no series proves its kind
        Reading(MARKER, NODE_EXPORTER, alive, "", "", "nodeA", (10.0,), (1.0,)),
        Reading(UP, "", alive, "", "", "", (10.0, 20.0), (1.0, 1.0)),
        Reading(UP, "", dead, "", "", "", (10.0, 20.0), (0.0, 0.0)),
        Reading(UP, "", prometheus, "", "", "", (10.0, 20.0), (1.0, 1.0)),
    ])
    states = {state.node: state for state in book.states()}
    assert set(states) == {"nodeA", "nodeC"}, "a target of another job is not a node of the fleet"
    assert states["nodeC"].up is False and states["nodeC"].since == 10.0
    book.apply([Reading(UP, "", alive, "", "", "", (30.0,), (1.0,)), Reading(UP, "", dead, "", "", "", (30.0,), (0.0,))], now=30.0)
    assert {state.node: state.up for state in book.states()} == {"nodeA": True, "nodeC": False}
