"""The hub: schedule, isolation of slow or broken collectors, merging, shutdown."""

from __future__ import annotations

import math
import threading
import time

import pytest

from collectors import Collector, Health, Hub, Probe, Sample
from collectors.hub import backoff_delay

PATIENCE = 5.0  # generous: the CI box is small and busy


class Counter(Collector):
    """Answers ``{key: number of calls}``."""

    def __init__(self, name: str = "counter", key: str = "x", cadence: float = 0.0, extras=None):
        self.name = name
        self.key = key
        self.cadence = cadence
        self.calls = 0
        self.closed = threading.Event()
        self._extras = extras or {}

    def sample(self):
        self.calls += 1
        return {self.key: self.calls}

    def extras(self):
        return self._extras

    def close(self):
        self.closed.set()


class Stuck(Counter):
    """Blocks in ``sample()`` (or ``probe()``) until ``gate`` opens."""

    def __init__(self, name: str = "stuck", key: str = "s", budget: float = 0.1, in_probe=False):
        super().__init__(name, key)
        self.budget = budget
        self.gate = threading.Event()
        self.in_probe = in_probe

    def probe(self):
        if self.in_probe:
            self.gate.wait(PATIENCE)
        return Probe.ok()

    def sample(self):
        if not self.in_probe:
            self.gate.wait(PATIENCE)
        return super().sample()


class Broken(Counter):
    def __init__(self, name: str = "broken"):
        super().__init__(name, "b")
        self.healed = False

    def sample(self):
        self.calls += 1
        if not self.healed:
            raise RuntimeError("sensor gone")
        return {"b": 1.0}


class Missing(Counter):
    def __init__(self, name: str = "missing", error: Exception | None = None):
        super().__init__(name, "m")
        self.error = error

    def probe(self):
        if self.error is not None:
            raise self.error
        return Probe.absent("no such device")


class Collected:
    """A subscriber that keeps every Sample and lets a test wait for more."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self._changed = threading.Condition()

    def __call__(self, sample: Sample) -> None:
        with self._changed:
            self.samples.append(sample)
            self._changed.notify_all()

    def wait_for(self, predicate, timeout: float = PATIENCE) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.samples), timeout)

    def wait_count(self, count: int, timeout: float = PATIENCE) -> bool:
        return self.wait_for(lambda samples: len(samples) >= count, timeout)


def health_of(hub: Hub, name: str):
    return next(s for s in hub.status() if s.name == name)


def wait_until(condition, timeout: float = PATIENCE) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@pytest.fixture
def hubs():
    started: list[Hub] = []

    def make(*args, **kwargs) -> Hub:
        hub = Hub(*args, **kwargs)
        started.append(hub)
        return hub

    yield make
    for hub in started:
        hub.stop(timeout=0.5)


def test_first_sweep_comes_after_warmup_not_after_an_interval(hubs):
    hub = hubs([Counter()], interval=30.0, warmup=0.05)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(1, timeout=3.0), "no sweep long before the 30 s interval"
    assert got.samples[0].values == {"x": 1.0}


def test_sweeps_repeat_at_the_interval_with_the_injected_clock(hubs):
    hub = hubs([Counter()], interval=0.05, warmup=0.0, clock=lambda: 1234.5)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(4)
    assert [s.values["x"] for s in got.samples[:4]] == [1.0, 2.0, 3.0, 4.0]
    assert all(s.timestamp == 1234.5 for s in got.samples)


def test_hung_collector_is_marked_while_others_keep_delivering(hubs):
    stuck, counter = Stuck(budget=0.1), Counter()
    hub = hubs([stuck, counter], interval=0.05, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    hub.start()

    assert wait_until(lambda: health_of(hub, "stuck").health is Health.HUNG)
    assert health_of(hub, "stuck").reason == "no answer in 0.1 s"
    seen = len(got.samples)
    assert got.wait_count(seen + 3), "a hung collector stalled the others"
    assert all("x" in s.values and "s" not in s.values for s in got.samples)
    last = got.samples[-1]
    assert [st.health for st in last.status] == [Health.HUNG, Health.OK]
    assert stuck.calls == 0, "called again while its first call is stuck"

    stuck.gate.set()
    assert got.wait_for(lambda samples: "s" in samples[-1].values)
    assert health_of(hub, "stuck").health is Health.OK
    assert health_of(hub, "stuck").reason == ""


def test_late_answer_is_discarded_and_the_next_sweep_asks_again():
    stuck = Stuck(budget=0.1)
    hub = Hub([stuck], warmup=0.0)
    try:
        first = hub.sweep()
        assert "s" not in first.values
        assert first.status[0].health is Health.HUNG
        stuck.gate.set()  # its late answer is {"s": 1}
        assert wait_until(lambda: "s" in hub.sweep().values)
        assert stuck.calls == 2
        assert hub.status()[0].health is Health.OK
    finally:
        hub.stop()


def test_stop_is_prompt_even_with_a_hung_collector_which_is_closed_later(hubs):
    stuck, counter = Stuck(budget=0.1), Counter()
    hub = hubs([stuck, counter], interval=0.05, warmup=0.0)
    hub.start()
    assert wait_until(lambda: health_of(hub, "stuck").health is Health.HUNG)

    began = time.monotonic()
    hub.stop(timeout=1.0)
    assert time.monotonic() - began < 1.5
    assert counter.closed.is_set()
    assert not stuck.closed.is_set(), "closed while its call was still running"
    stuck.gate.set()
    assert stuck.closed.wait(PATIENCE), "closed once its stuck call returned"
    with pytest.raises(RuntimeError, match="stopped"):
        hub.sweep()


def test_raising_collector_is_failing_backed_off_then_recovers():
    broken, counter = Broken(), Counter()
    hub = Hub([broken, counter], warmup=0.0)
    try:
        first = hub.sweep()
        assert first.values == {"x": 1.0}
        assert first.status[0].health is Health.FAILING
        assert first.status[0].reason == "RuntimeError: sensor gone"

        hub.sweep()
        hub.sweep()
        assert broken.calls == 1, "retried before its backoff ran out"
        assert counter.calls == 3
        assert health_of(hub, "broken").health is Health.FAILING

        broken.healed = True
        # Swept until its backoff runs out and it is called again: then it answers.
        healed = hub.sweep()
        deadline = time.monotonic() + 6 * PATIENCE
        while broken.calls == 1 and time.monotonic() < deadline:
            time.sleep(0.05)
            healed = hub.sweep()
        assert healed.values["b"] == 1.0
        assert health_of(hub, "broken").health is Health.OK
    finally:
        hub.stop()


def test_backoff_doubles_up_to_a_minute():
    assert [backoff_delay(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff_delay(10_000) == 60


def test_absent_collector_is_never_sampled_and_says_why():
    missing = Missing()
    crashing = Missing("crashing", OSError("libfoo.so.1: cannot open shared object file"))
    hub = Hub([missing, crashing, Counter()], warmup=0.0)
    try:
        for _ in range(3):
            sample = hub.sweep()
        assert sample.values == {"x": 3.0}
        assert missing.calls == crashing.calls == 0
        by_name = {s.name: s for s in hub.status()}
        assert by_name["missing"].health is Health.ABSENT
        assert by_name["missing"].reason == "no such device"
        assert by_name["crashing"].health is Health.ABSENT
        assert by_name["crashing"].reason == (
            "probe failed: OSError: libfoo.so.1: cannot open shared object file"
        )
    finally:
        hub.stop()
    assert missing.closed.is_set() and crashing.closed.is_set()


def test_hung_probe_is_reported_and_its_late_answer_still_counts():
    slow = Stuck("slow", budget=0.1, in_probe=True)
    hub = Hub([slow, Counter()], warmup=0.0)
    try:
        first = hub.sweep()
        assert first.values == {"x": 1.0}
        assert health_of(hub, "slow").health is Health.HUNG
        assert health_of(hub, "slow").reason == "probe gave no answer in 0.1 s"
        slow.gate.set()
        assert wait_until(lambda: "s" in hub.sweep().values)
        assert health_of(hub, "slow").health is Health.OK
    finally:
        hub.stop()


def test_cadence_limits_how_often_a_collector_is_sampled():
    slow, fast = Counter("slow", "slow", cadence=0.4), Counter("fast", "fast")
    hub = Hub([slow, fast], interval=0.05, warmup=0.0)
    try:
        began = time.monotonic()
        samples = []
        while slow.calls < 3:  # swept until the slow one was due twice more: its cadence, however busy the machine
            samples.append(hub.sweep())
            assert time.monotonic() - began < 12 * PATIENCE, "the slow collector was never due again"
            time.sleep(0.02)
        elapsed = time.monotonic() - began
    finally:
        hub.stop()
    assert "slow" in samples[0].values, "the first sweep samples everybody"
    assert fast.calls == len(samples)
    assert 2 <= slow.calls <= 1 + math.floor(elapsed / 0.39)
    assert sum("slow" in s.values for s in samples) == slow.calls


def test_label_suffix_on_every_key():
    hub = Hub([Counter(key="cpu"), Counter("other", "gpu.0.temp")], warmup=0.0, label="node0")
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert dict(sample.values) == {"cpu/l:node0": 1.0, "gpu.0.temp/l:node0": 1.0}


def test_extras_are_merged_and_the_first_collector_keeps_a_key():
    first = Counter("first", "a", extras={"host": "h1", "gpus": (1,)})
    second = Counter("second", "b", extras={"host": "h2", "processes": ()})
    hub = Hub([first, second], warmup=0.0)
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert dict(sample.extras) == {"host": "h1", "gpus": (1,), "processes": ()}


def test_bad_values_are_dropped_one_by_one_and_a_non_mapping_is_a_failure():
    class Messy(Collector):
        name = "messy"

        def sample(self):
            return {"ok": 2, "text": "hot", "nan": float("nan"), "inf": math.inf, "flag": True}

    class Wrong(Collector):
        name = "wrong"

        def sample(self):
            return [1, 2, 3]

    hub = Hub([Messy(), Wrong()], warmup=0.0)
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert dict(sample.values) == {"ok": 2.0}
    assert sample.status[1].health is Health.FAILING
    assert sample.status[1].reason == "TypeError: sample() returned list, expected a mapping"


def test_a_raising_subscriber_does_not_stop_the_hub(hubs):
    hub = hubs([Counter()], interval=0.05, warmup=0.0)

    def rude(sample):
        raise ValueError("subscriber bug")

    got = Collected()
    hub.subscribe(rude)
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(3)


def test_set_interval_applies_without_waiting_out_the_old_one(hubs):
    hub = hubs([Counter()], interval=30.0, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(1)
    hub.set_interval(0.05)
    assert hub.interval == 0.05
    assert got.wait_count(3, timeout=3.0)


def test_interval_must_be_a_positive_number():
    with pytest.raises(ValueError, match="interval"):
        Hub([], interval=0)
    hub = Hub([])
    for bad in (-1, float("nan"), "soon"):
        with pytest.raises(ValueError, match="interval"):
            hub.set_interval(bad)
    assert hub.interval == 2.0


def test_sweep_without_a_thread_returns_and_delivers_a_sample():
    got = Collected()
    hub = Hub([Counter()], warmup=0.0, clock=lambda: 42.0)
    hub.subscribe(got)
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert sample.timestamp == 42.0
    assert dict(sample.values) == {"x": 1.0}
    assert sample.status[0].health is Health.OK
    assert got.samples == [sample]


def test_stop_without_start_closes_every_collector_quickly():
    counters = [Counter(f"c{i}") for i in range(3)]
    hub = Hub(counters)
    hub.stop()
    assert all(c.closed.is_set() for c in counters)
    hub.stop()  # a second stop is harmless


class Slow(Counter):
    """Takes ``seconds`` to answer, well within its budget."""

    def __init__(self, name: str = "slow", key: str = "w", seconds: float = 0.15, budget: float = 2.0):
        super().__init__(name, key)
        self.seconds = seconds
        self.budget = budget

    def sample(self):
        time.sleep(self.seconds)
        return super().sample()


def test_a_longer_interval_set_while_running_is_the_next_wait(hubs):
    hub = hubs([Counter()], interval=0.02, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    waits = LongWaits(got)
    hub._wake = waits  # the scheduler's wait: each one it makes is seen
    hub.start()
    assert got.wait_count(3)
    hub.set_interval(30.0)
    before = len(got.samples)
    # The scheduler's next wait is the new interval's: no sweep comes before it ends.
    assert waits.armed.wait(PATIENCE), "the scheduler never waited for the new interval"
    assert waits.samples_then[0] - before <= 1, "sweeps went on at the old interval (one already under way may land)"
    assert hub.interval == 30.0


class LongWaits(threading.Event):
    """An Event standing in for the hub's wake-up: notes how many samples there were when the hub first waited long."""

    def __init__(self, got: "Collected") -> None:
        super().__init__()
        self.got = got
        self.armed = threading.Event()
        self.samples_then: list[int] = []

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None and timeout > 10.0 and not self.armed.is_set():
            self.samples_then.append(len(self.got.samples))
            self.armed.set()
        return super().wait(timeout)


def test_set_interval_from_many_threads_leaves_one_valid_interval_and_sweeps_going(hubs):
    hub = hubs([Counter()], interval=0.05, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    choices = (0.02, 0.05, 0.1)
    threads = [threading.Thread(target=lambda i=i: [hub.set_interval(choices[(i + n) % 3]) for n in range(200)]) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(PATIENCE)
    hub.set_interval(0.02)
    count = len(got.samples)
    assert got.wait_count(count + 3), "the scheduler stopped after the changes"


def test_a_collector_slower_than_the_interval_keeps_its_budget_and_holds_back_no_one(hubs):
    slow, fast = Slow(seconds=0.15, budget=2.0), Counter("fast", "f")
    hub = hubs([slow, fast], interval=1.0, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(1)
    hub.set_interval(0.02)
    assert got.wait_for(lambda samples: sum("w" in s.values for s in samples[1:]) >= 3)
    late = got.samples[1:]
    # Samples keep the interval; the slow answers (its budget is 2 s) join later samples, never HUNG.
    assert all("f" in sample.values for sample in late)
    assert health_of(hub, "slow").health is Health.OK
    assert len(late) > 3 * sum("w" in s.values for s in late), "sweeps waited for the slow collector"


def test_a_collectors_cadence_holds_when_the_interval_shrinks(hubs):
    paced, every = Counter("paced", "p", cadence=0.4), Counter("every", "e")
    hub = hubs([paced, every], interval=1.0, warmup=0.0)
    got = Collected()
    hub.subscribe(got)
    hub.start()
    assert got.wait_count(1)
    hub.set_interval(0.02)
    assert got.wait_count(15)
    with_paced = sum("p" in sample.values for sample in got.samples)
    assert every.calls >= 15 and with_paced <= every.calls // 3, (with_paced, every.calls)
