"""A backend that hangs must not hold up the host's samples: a stuck rocm-smi, a black-holed OpenMetrics endpoint.

Each test runs the real collectors in a Hub at a short interval and checks
that samples carrying the host's keys (``memory_percent``, ``cpu.N.*``) keep
arriving: no gap between two of them longer than two intervals (one interval
late at most), plus some slack for a small, busy machine.

A scheduled sweep waits for slow collectors only half an interval: a tool
that hangs until its own timeout (rocm-smi: 5 s) or an endpoint that never
answers (2 s) is given up on at its budget, while the host's samples go on.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from test_backends_cli import ROCM_6_1, make_amd_box
from test_hub import Collected, wait_until

from collectors import Health, Hub, Sample
from collectors.accelerators import accelerator_collectors
from collectors.host import host_collectors
from collectors.openmetrics import OpenMetricsCollector

INTERVAL = 0.2
SLACK = 0.3  # scheduling noise on a busy 2-core box; far below the stalls this looks for (2 s, 5 s)
WATCH = 3.0  # seconds of samples to check


def has_host_keys(sample: Sample) -> bool:
    return "memory_percent" in sample.values and any(key.startswith("cpu.") for key in sample.values)


def host_arrivals(got: Collected, started: float, watch: float = WATCH) -> list[float]:
    """When each sample with the host's keys arrived, from ``started``; stops at the first one overdue."""
    arrivals: list[float] = []
    deadline = time.monotonic() + watch
    seen = 0
    while time.monotonic() < deadline:
        previous = arrivals[-1] if arrivals else 0.0
        due = started + previous + 2 * INTERVAL + SLACK
        if not got.wait_for(lambda samples, seen=seen: len(samples) > seen, timeout=max(0.0, due - time.monotonic())):
            arrivals.append(time.monotonic() - started)  # overdue: the gap it shows is at least this
            break
        seen = len(got.samples)
        if has_host_keys(got.samples[-1]):
            arrivals.append(time.monotonic() - started)
    return arrivals


def assert_on_time(arrivals: list[float]) -> None:
    gaps = [b - a for a, b in zip([0.0, *arrivals], arrivals)]
    late = [round(gap, 2) for gap in gaps if gap > 2 * INTERVAL + SLACK]
    assert not late, f"host samples held back: gaps of {late} s at an interval of {INTERVAL} s (arrivals {[round(a, 2) for a in arrivals]})"


def start(collectors: list, got: Collected) -> tuple[Hub, float]:
    hub = Hub(collectors, interval=INTERVAL, warmup=0.0)
    hub.subscribe(got)
    began = time.monotonic()
    hub.start()
    return hub, began


def status_of(hub: Hub, name: str):
    return next(status for status in hub.status() if status.name == name)


@pytest.fixture
def amd_here(tmp_path, monkeypatch) -> Path:
    """This process's PATH and sysfs root are a made-up AMD box; rocm-smi does what FAKE_ROCM_SMI says."""
    box = make_amd_box(tmp_path)
    monkeypatch.setenv("PATH", str(box.bin))
    monkeypatch.setenv("LEET_SYS_ROOT", str(box.root))
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # only the tool: "import amdsmi" fails
    return box.root


def every_collector() -> list:
    return host_collectors(use_cgroup=False) + accelerator_collectors()


# -- a rocm-smi that hangs -------------------------------------------------------------


def test_rocm_smi_hanging_at_start_is_given_up_on_and_the_host_goes_on(amd_here, monkeypatch):
    monkeypatch.setenv("FAKE_ROCM_SMI", "hang")
    got = Collected()
    hub, began = start(every_collector(), got)
    try:
        # The probe runs out the tool's timeout (5 s), then AMD is absent and never asked again.
        assert wait_until(lambda: status_of(hub, "amd").health is Health.ABSENT, timeout=15.0)
        assert "no answer in 5 s" in status_of(hub, "amd").reason
        assert_on_time(host_arrivals(got, time.monotonic()))
    finally:
        hub.stop(timeout=0.5)


def test_rocm_smi_hanging_at_start_does_not_hold_back_the_first_host_sample(amd_here, monkeypatch):
    monkeypatch.setenv("FAKE_ROCM_SMI", "hang")
    got = Collected()
    hub, began = start(every_collector(), got)
    try:
        assert_on_time(host_arrivals(got, began))
    finally:
        hub.stop(timeout=0.5)


def test_rocm_smi_that_starts_hanging_mid_run_does_not_hold_back_the_host(amd_here, monkeypatch):
    monkeypatch.setenv("FAKE_ROCM_SMI", str(ROCM_6_1))
    got = Collected()
    hub, _ = start(every_collector(), got)
    try:
        assert got.wait_for(lambda samples: any("gpu.0.temp" in s.values for s in samples), timeout=15.0)
        os.environ["FAKE_ROCM_SMI"] = "hang"  # the next run of the tool (within its 2 s cadence) hangs
        assert_on_time(host_arrivals(got, time.monotonic(), watch=WATCH + 2.0))
    finally:
        hub.stop(timeout=0.5)


# -- an OpenMetrics endpoint that never answers ----------------------------------------


class BlackHole:
    """A loopback port that accepts connections, reads nothing and never answers."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def black_hole():
    hole = BlackHole()
    yield hole
    hole.close()


def test_a_black_holed_endpoint_fails_with_its_timeout_and_the_host_keeps_its_keys(black_hole):
    got = Collected()
    hub, _ = start(host_collectors(use_cgroup=False) + [OpenMetricsCollector("hole", black_hole.url)], got)
    try:
        assert wait_until(lambda: status_of(hub, "openmetrics:hole").health is Health.FAILING, timeout=10.0)
        assert "hole" in status_of(hub, "openmetrics:hole").reason
        assert any(has_host_keys(s) for s in got.samples)
        assert all(not key.startswith("openmetrics.") for sample in got.samples for key in sample.values)
    finally:
        hub.stop(timeout=0.5)


def test_a_black_holed_endpoint_does_not_hold_back_the_host(black_hole):
    got = Collected()
    hub, began = start(host_collectors(use_cgroup=False) + [OpenMetricsCollector("hole", black_hole.url)], got)
    try:
        assert_on_time(host_arrivals(got, began))
    finally:
        hub.stop(timeout=0.5)
