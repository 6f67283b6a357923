"""The sweeper's decisions on a fake clock: cadence, backoff, HUNG, FAILING, ABSENT, with no thread and no sleep."""

from __future__ import annotations

import math

from collectors import Collector, Health, Probe
from collectors.fake_curves import FakeClock
from collectors.hub import Sweeper
from collectors.hub.sweeper import MAX_BUDGET, Call

INTERVAL = 1.0


class Counter(Collector):
    """Answers ``{key: number of calls}``; raises while ``broken``."""

    def __init__(self, name: str = "counter", key: str = "x", cadence: float = 0.0, budget: float = 2.0, extras=None):
        self.name = name
        self.key = key
        self.cadence = cadence
        self.budget = budget
        self.calls = 0
        self.broken = False
        self._extras = extras or {}

    def sample(self):
        self.calls += 1
        if self.broken:
            raise RuntimeError("sensor gone")
        return {self.key: self.calls}

    def extras(self):
        return self._extras


class Missing(Counter):
    def probe(self):
        return Probe.absent("no such device")


def answer(sweeper: Sweeper, calls: list[Call]) -> None:
    for call in calls:
        sweeper.started(call)
        sweeper.absorb(call.perform(timer=sweeper.clock))


def ready(*collectors: Collector, label: str | None = None) -> tuple[Sweeper, FakeClock]:
    clock = FakeClock(0.0)
    sweeper = Sweeper(collectors, clock=clock, label=label)
    answer(sweeper, sweeper.probes())
    return sweeper, clock


def sweep_at(sweeper: Sweeper, clock: FakeClock, t: float):
    clock.set(t)
    answer(sweeper, sweeper.due(INTERVAL))
    return sweeper.collect(t)


def test_every_collector_starts_unprobed_and_is_probed_once():
    clock = FakeClock(0.0)
    sweeper = Sweeper([Counter()], clock=clock)
    assert [(s.health, s.reason) for s in sweeper.status()] == [(Health.OK, "starting")]
    assert sweeper.due(INTERVAL) == [], "sampled before its probe"
    answer(sweeper, sweeper.probes())
    assert sweeper.probes() == []
    assert [(s.health, s.reason) for s in sweeper.status()] == [(Health.OK, "")]


def test_cadence_skips_sweeps_until_it_is_due_with_a_little_slack():
    paced, every = Counter("paced", "p", cadence=5.0), Counter("every", "e")
    sweeper, clock = ready(paced, every)
    sampled = [t for t in range(13) if "p" in sweep_at(sweeper, clock, float(t)).values]
    assert sampled == [0, 5, 10]
    assert every.calls == 13
    # Jitter that brings a sweep a little early (within a tenth of the interval) still takes it.
    assert "p" in sweep_at(sweeper, clock, 14.95).values


def test_a_raising_collector_is_failing_and_backed_off_until_it_answers():
    broken = Counter("broken", "b")
    broken.broken = True
    sweeper, clock = ready(broken)
    called_at = []
    for t in range(16):
        before = broken.calls
        sample = sweep_at(sweeper, clock, float(t))
        if broken.calls > before:
            called_at.append(t)
        assert sample.status[0].health is Health.FAILING
        assert sample.status[0].reason == "RuntimeError: sensor gone"
    assert called_at == [0, 1, 3, 7, 15], "retries 1, 2, 4, 8 s apart"
    broken.broken = False
    assert sweep_at(sweeper, clock, 30.0).status[0].health is Health.FAILING, "retried before its backoff ran out"
    healed = sweep_at(sweeper, clock, 31.0)
    assert dict(healed.values) == {"b": 6.0}
    assert (healed.status[0].health, healed.status[0].reason) == (Health.OK, "")


def test_a_call_past_its_budget_is_hung_and_its_late_answer_is_dropped():
    stuck, counter = Counter("stuck", "s", budget=0.5), Counter()
    sweeper, clock = ready(stuck, counter)
    calls = sweeper.due(INTERVAL)
    for call in calls:
        sweeper.started(call)
    late = calls[0].perform()
    sweeper.absorb(calls[1].perform())
    assert sweeper.next_deadline() == 0.5
    clock.set(0.5)
    sweeper.give_up_overdue()
    assert sweeper.next_deadline() is None
    status = sweeper.status()[0]
    assert (status.health, status.reason) == (Health.HUNG, "no answer in 0.5 s")
    assert [call.slot.collector for call in sweeper.due(INTERVAL)] == [counter], "asked again while its call is stuck"

    sweeper.absorb(late)
    assert "s" not in sweeper.collect(0.5).values
    assert sweeper.status()[0].health is Health.HUNG
    again = sweep_at(sweeper, clock, 1.0)
    assert again.values["s"] == 2.0
    assert again.status[0].health is Health.OK


def test_a_hung_probe_says_so_and_its_late_answer_still_counts():
    slow = Counter("slow", "w", budget=0.1)
    clock = FakeClock(0.0)
    sweeper = Sweeper([slow], clock=clock)
    [probe] = sweeper.probes()
    sweeper.started(probe)
    clock.set(0.2)
    sweeper.give_up_overdue()
    assert (sweeper.status()[0].health, sweeper.status()[0].reason) == (Health.HUNG, "probe gave no answer in 0.1 s")
    assert sweeper.probes() == [], "probed again while its probe is stuck"
    sweeper.absorb(probe.perform())
    assert sweep_at(sweeper, clock, 1.0).values == {"w": 1.0}


def test_an_absent_collector_is_never_due_and_says_why():
    class Raising(Counter):
        def probe(self):
            raise OSError("libfoo.so.1: cannot open shared object file")

    class Odd(Counter):
        def probe(self):
            return True

    missing, raising, odd = Missing("missing"), Raising("raising"), Odd("odd")
    sweeper, clock = ready(missing, raising, odd)
    assert all(slot.absent for slot in sweeper.slots)
    assert sweeper.due(INTERVAL) == []
    assert [(s.health, s.reason) for s in sweep_at(sweeper, clock, 1.0).status] == [
        (Health.ABSENT, "no such device"),
        (Health.ABSENT, "probe failed: OSError: libfoo.so.1: cannot open shared object file"),
        (Health.ABSENT, "probe failed: probe() returned bool, expected Probe"),
    ]
    assert missing.calls == raising.calls == odd.calls == 0


def test_a_sample_is_labelled_and_keeps_each_collectors_last_extras():
    first = Counter("first", "a", cadence=10.0, extras={"host": "h1"})
    second = Counter("second", "b", extras={"host": "h2", "gpus": ()})
    sweeper, clock = ready(first, second, label="node0")
    sweep_at(sweeper, clock, 0.0)
    later = sweep_at(sweeper, clock, 1.0)
    assert dict(later.values) == {"b/l:node0": 2.0}, "a value is handed out once"
    assert dict(later.extras) == {"host": "h1", "gpus": ()}


def test_a_budget_is_capped_and_nan_means_none():
    endless, nan = Counter("endless", budget=math.inf), Counter("nan", budget=math.nan)
    sweeper, clock = ready(endless, nan)
    for call in sweeper.due(INTERVAL):
        sweeper.started(call)
    assert [slot.deadline for slot in sweeper.slots] == [MAX_BUDGET, 0.0]
