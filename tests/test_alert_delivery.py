"""Delivery: a slow, hung or dead sink costs only itself, retries follow the backoff, and what happened is told.

The sinks are real (Apprise to loopback servers, commands); where a test
needs a send that never returns, a sink that waits on an event stands in,
since no real sink may hang past its own timeout.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

import pytest
from alert_servers import HookServer, SilentServer, closed_port, wait_until

from leet.alerts.delivery import DEAD_AFTER, Delivery
from leet.alerts.events import Alert
from leet.alerts.sinks import Sink, SinkError, command_sink, webhook

SECRET = "Zk4Pq9Wx2Lm7Rt5Vb8Nc"


def alert(number: int) -> Alert:
    return Alert("alert", f"alert {number}", "loss went up", run_id="r1", ident=f"r1:{number}")


class Results:
    """``on_result``'s calls, as they come from the workers."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bool, str, float]] = []
        self._lock = threading.Lock()

    def __call__(self, sent: Alert, name: str, ok: bool, error: str) -> None:
        with self._lock:
            self.calls.append((sent.title, name, ok, error, time.monotonic()))

    def of(self, name: str) -> list[tuple[str, str, bool, str, float]]:
        with self._lock:
            return [call for call in self.calls if call[1] == name]


class Timed:
    """A real sink, with the time of each try written down."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.name = sink.name
        self.tries: list[float] = []

    def send(self, sent: Alert, timeout: float) -> None:
        self.tries.append(time.monotonic())
        self.sink.send(sent, timeout)


class Stuck:
    """A send that returns only when ``release`` is set: what a sink stuck in a syscall looks like."""

    name = "stuck"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: list[str] = []

    def send(self, sent: Alert, timeout: float) -> None:
        self.calls.append(sent.title)
        self.release.wait(30)


def test_an_alert_reaches_a_webhook_and_is_reported_once():
    results = Results()
    with HookServer() as server:
        sink = webhook(server.url())
        delivery = Delivery([sink], on_result=results)
        delivery.submit(alert(1))
        assert delivery.flush(5)
        [(_, _, body)] = server.posts
        [status] = delivery.status()
        delivery.close()
    assert body["title"] == "alert 1"
    assert [call[:4] for call in results.calls] == [("alert 1", sink.name, True, "")]
    assert (status.state, status.sent, status.failed, status.queued) == ("ok", 1, 0, 0)
    assert status.last_ok_time is not None


def test_a_server_that_never_answers_costs_only_its_own_sink():
    results = Results()
    with SilentServer() as silent, HookServer() as server:
        hung, working = webhook(f"http://127.0.0.1:{silent.port}/hook"), webhook(server.url())
        delivery = Delivery([hung, working], timeout=1.0, retries=0, on_result=results)
        started = time.monotonic()
        delivery.submit(alert(1))
        assert time.monotonic() - started < 0.05  # submit only queues
        server.wait_for(1, timeout=1)
        assert server.posts and time.monotonic() - started < 1.0
        assert wait_until(lambda: results.of(hung.name), timeout=3)
        [(_, _, ok, error, when)] = results.of(hung.name)
        delivery.close(1)
    assert not ok and "timed out" in error
    assert when - started < 1.0 + 1.0  # its timeout, and a margin
    assert [call[2] for call in results.of(working.name)] == [True]


def test_a_send_that_never_returns_is_hung_and_never_piles_up_threads():
    stuck, results = Stuck(), Results()
    before = set(threading.enumerate())
    delivery = Delivery([stuck], timeout=0.3, retries=1, backoff=(0.05,), on_result=results)
    delivery.submit(alert(1))
    assert wait_until(lambda: results.calls, timeout=5)
    [(_, _, ok, error, _)] = results.calls
    assert not ok and error.startswith("hung:")
    [status] = delivery.status()
    assert status.state == "hung" and status.failed == 1
    assert stuck.calls == ["alert 1"]  # the retry waited for the hung send instead of starting another
    assert sorted(thread.name for thread in set(threading.enumerate()) - before) == ["leet-sink-1", "leet-sink-1-send"]
    stuck.release.set()
    delivery.submit(alert(2))
    assert delivery.flush(5)
    assert results.calls[-1][:3] == ("alert 2", "stuck", True)
    assert delivery.status()[0].state == "ok"
    delivery.close()


def test_retries_follow_the_backoff_then_a_dead_sink_says_so_without_its_secret(caplog):
    caplog.set_level(logging.DEBUG)
    results = Results()
    port = closed_port()
    dead = Timed(webhook(f"http://127.0.0.1:{port}/hooks/${{HOOK}}", environ={"HOOK": SECRET}))
    delivery = Delivery([dead], retries=2, backoff=(0.1, 0.4), on_result=results)
    delivery.submit(alert(1))
    assert wait_until(lambda: delivery.status()[0].state == "retrying", timeout=2)
    assert delivery.flush(5)
    gaps = [later - earlier for earlier, later in zip(dead.tries, dead.tries[1:])]
    assert len(dead.tries) == 3
    assert 0.1 <= gaps[0] < 0.1 + 0.25 and 0.4 <= gaps[1] < 0.4 + 0.25
    for number in range(2, DEAD_AFTER + 1):
        delivery.submit(alert(number))
    assert delivery.flush(5)
    [status] = delivery.status()
    assert (status.state, status.failed, status.sent) == ("dead", DEAD_AFTER, 0)
    assert status.name == f"http://127.0.0.1:{port}/h...s/${{HOOK}}"
    assert "Connection refused" in status.last_error

    tries = len(dead.tries)
    delivery.submit(alert(9))
    assert delivery.flush(5)
    assert len(dead.tries) == tries + 1  # dead: once, no retries

    with HookServer(port=port) as server:  # the endpoint comes back: the next alert goes through
        delivery.submit(alert(10))
        assert delivery.flush(5)
        assert server.posts[0][0] == f"/hooks/{SECRET}"
    assert delivery.status()[0].state == "ok"
    delivery.close()
    said = caplog.text + repr(delivery.status()) + repr(results.calls)
    assert SECRET not in said


def test_a_full_queue_drops_the_oldest_alert_for_that_sink_only():
    stuck, results = Stuck(), Results()
    with HookServer() as server:
        working = webhook(server.url())
        delivery = Delivery([stuck, working], queue_size=2, timeout=10, on_result=results)
        delivery.submit(alert(1))
        assert wait_until(lambda: stuck.calls)  # alert 1 is being sent
        for number in range(2, 6):  # each taken by the working sink before the next comes
            delivery.submit(alert(number))
            server.wait_for(number)
        stuck_status, working_status = delivery.status()
        assert (stuck_status.dropped, stuck_status.queued, stuck_status.state) == (2, 3, "idle")
        assert working_status.dropped == 0
        stuck.release.set()
        assert delivery.flush(5)
        delivery.close()
    assert stuck.calls == ["alert 1", "alert 4", "alert 5"]
    assert [body["title"] for _, _, body in server.posts] == [f"alert {number}" for number in range(1, 6)]


def test_a_slow_command_is_killed_and_reported_through_delivery(tmp_path):
    results = Results()
    sink = command_sink([sys.executable, "-c", "import time; time.sleep(30)"], {})
    delivery = Delivery([sink], timeout=0.5, retries=0, on_result=results)
    delivery.submit(alert(1))
    assert delivery.flush(5)
    delivery.close()
    [(_, name, ok, error, _)] = results.calls
    assert (name, ok) == (sink.name, False)
    assert error == f"{sink.name} did not finish within 0.5 s and was killed"


def test_a_sink_that_raises_something_else_and_a_failing_callback_do_not_stop_the_worker():
    class Broken:
        name = "broken"

        def __init__(self) -> None:
            self.tries = 0

        def send(self, sent: Alert, timeout: float) -> None:
            self.tries += 1
            if self.tries == 1:
                raise RuntimeError("bug\nsecond line")
            if self.tries == 2:
                raise SinkError("said no")

    outcomes: list[tuple[bool, str]] = []

    def on_result(sent: Alert, name: str, ok: bool, error: str) -> None:
        outcomes.append((ok, error))
        raise KeyError("bookkeeping broke")

    delivery = Delivery([Broken()], retries=0, on_result=on_result)
    for number in range(3):
        delivery.submit(alert(number))
    assert delivery.flush(5)
    delivery.close()
    assert outcomes == [(False, "RuntimeError: bug\\nsecond line"), (False, "said no"), (True, "")]


def test_close_stops_the_workers_and_later_alerts_are_ignored():
    stuck = Stuck()
    before = set(threading.enumerate())
    delivery = Delivery([stuck], timeout=10, retries=0)
    [worker] = set(threading.enumerate()) - before
    assert worker.name == "leet-sink-1" and worker.daemon
    delivery.submit(alert(1))
    delivery.submit(alert(2))
    assert wait_until(lambda: stuck.calls)
    started = time.monotonic()
    assert delivery.close(timeout=0.2) is False
    assert time.monotonic() - started < 1
    assert delivery.status()[0].dropped == 1  # alert 2 never went
    stuck.release.set()
    worker.join(3)
    assert not worker.is_alive()
    delivery.submit(alert(3))
    assert stuck.calls == ["alert 1"]


@pytest.mark.parametrize("backoff", [(), (0.0,)])
def test_no_backoff_retries_at_once(backoff):
    with HookServer(statuses=[503, 503]) as server:
        delivery = Delivery([webhook(server.url())], retries=2, backoff=backoff)
        delivery.submit(alert(1))
        assert delivery.flush(5)
        delivery.close()
        assert len(server.posts) == 3
    assert delivery.status()[0].sent == 1


def test_apprise_rate_limit_is_waited_out_before_the_send_not_inside_its_timeout():
    from leet.alerts.sinks import AppriseSink

    results = Results()
    with HookServer() as server:
        ntfy = AppriseSink(f"ntfy://127.0.0.1:{server.port}/leet-alerts")
        ntfy._plugin.request_rate_per_sec = 1.0  # Apprise's is 5.5 s for ntfy: too long for a test
        delivery = Delivery([ntfy], timeout=0.3, retries=0, on_result=results)
        delivery.submit(alert(1))
        delivery.submit(alert(2))
        assert delivery.flush(5)
        delivery.close()
        assert [body["title"] for _, _, body in server.posts] == ["alert 1", "alert 2"]
    assert [call[2] for call in results.calls] == [True, True]
    assert results.calls[1][4] - results.calls[0][4] >= 0.9


def test_offer_refuses_when_a_queue_is_full_and_drops_nothing():
    with SilentServer() as silent:
        delivery = Delivery([webhook(f"http://127.0.0.1:{silent.port}/hook", timeout=5)], queue_size=1, max_age=3600)
        assert delivery.offer(alert(1), time.time())  # taken by the worker, hung
        assert wait_until(lambda: delivery.status()[0].queued == 1 and delivery.offer(alert(2), time.time()), 5)
        assert not delivery.offer(alert(3), time.time())
        [status] = delivery.status()
        assert (status.queued, status.dropped) == (2, 0)
        delivery.close(0.1)


def test_with_a_max_age_an_alert_is_tried_past_any_retry_count_until_it_gets_through():
    with HookServer(statuses=[500] * 8) as server:
        delivery = Delivery([webhook(server.url())], retries=1, backoff=(0.01,), max_age=3600)
        assert delivery.offer(alert(1), time.time())
        assert delivery.flush(30)
        [status] = delivery.status()
        assert (status.sent, status.failed, len(server.posts)) == (1, 0, 9)
