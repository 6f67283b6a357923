"""The Trainium collector against a stand-in ``neuron-monitor`` that replays real reports.

Everything above the executable is the real code path: the config file, the
child, its pipes, the reader thread, restarts and the W&B key mapping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from collectors import Health, Hub
from collectors.gpu import AcceleratorInfo
from collectors.trainium import TrainiumCollector, launch, neuron_monitor_config, parse

HERE = Path(__file__).parent
FAKE = HERE / "fakebin" / "neuron" / "neuron-monitor"
FIXTURES = HERE / "fixtures" / "hardware" / "neuron_monitor"
REPLAY = FIXTURES / "neuron-monitor_stdout_3reports.jsonl"
WANDB_CONFIG = FIXTURES / "neuron_monitor_config_wandb-default.json"
# The trn.* items of the records wandb 0.31.0 wrote while a stand-in replayed
# REPLAY in a loop, with LOCAL_RANK=0 (record 8 = report 1, 9 = report 2, …).
WANDB_RECORDS = FIXTURES / "wandb-0.31.0_trn-items_neuron-replay_LOCAL_RANK0.jsonl"

REPORTS = [json.loads(line) for line in REPLAY.read_text().splitlines()]

# Report 1 (runtime pid 1337), both NeuronCores: W&B's keys for it, by hand from the report.
REPORT_1_ALL_CORES = {
    "trn.0.neuroncore_utilization": 1.3631567613356375,
    "trn.1.neuroncore_utilization": 0.0,
    "trn.host_total_memory_usage": 610705408.0,
    "trn.neuron_device_total_memory_usage": 102298328.0,
    "trn.host_memory_usage.application_memory": 609656832.0,
    "trn.host_memory_usage.constants": 0.0,
    "trn.host_memory_usage.dma_buffers": 1048576.0,
    "trn.host_memory_usage.tensors": 0.0,
    "trn.0.neuroncore_memory_usage.constants": 196608.0,
    "trn.0.neuroncore_memory_usage.model_code": 101125344.0,
    "trn.0.neuroncore_memory_usage.model_shared_scratchpad": 0.0,
    "trn.0.neuroncore_memory_usage.runtime_memory": 0.0,
    "trn.0.neuroncore_memory_usage.tensors": 943608.0,
    "trn.1.neuroncore_memory_usage.constants": 0.0,
    "trn.1.neuroncore_memory_usage.model_code": 32768.0,
    "trn.1.neuroncore_memory_usage.model_shared_scratchpad": 0.0,
    "trn.1.neuroncore_memory_usage.runtime_memory": 0.0,
    "trn.1.neuroncore_memory_usage.tensors": 0.0,
}
HOST_KEYS = {key: value for key, value in REPORT_1_ALL_CORES.items() if not key.startswith(("trn.0.", "trn.1."))}


def wandb_items() -> list[dict[str, float]]:
    records = [json.loads(line) for line in WANDB_RECORDS.read_text().splitlines()]
    return [record["trn"] for record in records if record["trn"]]


# -- the stand-in and how to wait for it -----------------------------------------------


@pytest.fixture
def neuron(tmp_path, monkeypatch):
    """A machine with one Neuron device and the stand-in ``neuron-monitor`` first on PATH.

    ``neuron(**options)`` makes a collector (short backoff, no LOCAL_RANK
    unless given), probes it and closes it after the test; the stand-in's
    behaviour comes from ``FAKE_NEURON_*`` variables set with ``setenv``.
    """
    bin_dir, dev, log = tmp_path / "bin", tmp_path / "dev", tmp_path / "log"
    for folder in (bin_dir, dev, log):
        folder.mkdir()
    (dev / "neuron0").touch()
    shutil.copy(FAKE, bin_dir / "neuron-monitor")
    (bin_dir / "neuron-monitor").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_NEURON_REPLAY", str(REPLAY))
    monkeypatch.setenv("FAKE_NEURON_LOG", str(log))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    made: list[TrainiumCollector] = []

    def make(**options: Any) -> TrainiumCollector:
        options.setdefault("dev_root", str(dev))
        options.setdefault("backoff_base", 0.05)
        options.setdefault("env", {})
        collector = TrainiumCollector(**options)
        made.append(collector)
        probe = collector.probe()
        assert probe.available, probe.reason
        return collector

    make.log = log  # type: ignore[attr-defined]
    make.dev = dev  # type: ignore[attr-defined]
    yield make
    for collector in made:
        collector.close()


def starts(log: Path) -> list[tuple[int, float]]:
    path = log / "starts.log"
    if not path.exists():
        return []
    return [(int(pid), float(at)) for pid, at in (line.split() for line in path.read_text().splitlines())]


def wait_for(condition: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def values_when(collector: TrainiumCollector, wanted: Callable[[dict[str, float]], bool], timeout: float = 5.0) -> dict[str, float]:
    """The first sample that ``wanted`` accepts; a sample that raises counts as not yet."""

    def attempt() -> dict[str, float] | None:
        try:
            values = dict(collector.sample())
        except RuntimeError:
            return None
        return values if wanted(values) else None

    return wait_for(attempt, timeout, "a matching sample")


def received(collector: TrainiumCollector, count: int) -> bool:
    state = collector.state()
    return state is not None and state.received >= count


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def same_values(ours: dict[str, float], wandbs: dict[str, float]) -> bool:
    # W&B's Rust JSON parser rounds 1.3631567613356375 to ...377 (one ulp); the rest is exact.
    return ours.keys() == wandbs.keys() and all(ours[key] == pytest.approx(wandbs[key], rel=1e-15, abs=0) for key in ours)


def neuron_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("leet-neuron-monitor")]


# -- probing ----------------------------------------------------------------------------------


def test_absent_without_neuron_monitor(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(launch, "DEFAULT_NEURON_MONITOR", str(tmp_path / "missing"))
    collector = TrainiumCollector(dev_root=str(tmp_path))
    probe = collector.probe()
    assert not probe.available
    assert "neuron-monitor is not installed" in probe.reason
    collector.close()


def test_absent_without_a_neuron_device(neuron, tmp_path):
    empty = tmp_path / "empty-dev"
    empty.mkdir()
    (empty / "neuron").touch()  # not a device node name
    (empty / "nvidia0").touch()
    collector = TrainiumCollector(dev_root=str(empty))
    probe = collector.probe()
    assert not probe.available
    assert probe.reason == f"no Neuron device ({empty}/neuron*) on this machine"
    assert collector.state() is None
    assert not starts(neuron.log)
    collector.close()


def test_the_child_gets_wandbs_config_and_the_file_goes_with_close(neuron):
    collector = neuron(period=1.0)
    wait_for(lambda: starts(neuron.log), what="the stand-in to start")
    got = json.loads((neuron.log / "config.json").read_text())
    assert got == json.loads(WANDB_CONFIG.read_text()) == neuron_monitor_config(1.0)
    config_file = collector._written_config
    assert config_file is not None and Path(config_file).exists()
    collector.close()
    assert not Path(config_file).exists()


def test_the_config_period_is_whole_seconds_at_least_one():
    assert neuron_monitor_config(15.0)["period"] == "15s"
    assert neuron_monitor_config(2.7)["period"] == "2s"
    assert neuron_monitor_config(0.5)["period"] == "1s"
    assert neuron_monitor_config(0)["period"] == "1s"
    assert neuron_monitor_config(float("nan"))["period"] == "1s"


def test_a_given_config_path_is_used_as_it_is(neuron, tmp_path):
    own = tmp_path / "mine.json"
    own.write_text(json.dumps({"period": "5s", "neuron_runtimes": []}))
    collector = neuron(config_path=str(own))
    wait_for(lambda: starts(neuron.log), what="the stand-in to start")
    assert json.loads((neuron.log / "config.json").read_text()) == {"period": "5s", "neuron_runtimes": []}
    collector.close()
    assert own.exists()


# -- keys and values ----------------------------------------------------------------------------


def test_every_core_of_the_first_runtime_without_a_watched_process(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    values = values_when(collector, bool)
    assert values == REPORT_1_ALL_CORES
    assert collector.extras()["accelerators.trainium"] == (
        AcceleratorInfo(vendor="AWS", index=0, name="trn1.2xlarge NeuronCore", utilization_key="trn.0.neuroncore_utilization"),
        AcceleratorInfo(vendor="AWS", index=1, name="trn1.2xlarge NeuronCore", utilization_key="trn.1.neuroncore_utilization"),
    )
    assert collector.extras()["notes.trainium"] == ()


def test_only_the_watched_process_runtime_is_reported(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    mine = neuron(pid=1337)
    other = neuron(pid=16851)
    assert values_when(mine, bool) == REPORT_1_ALL_CORES
    wait_for(lambda: received(other, 1), what="the report")
    assert other.sample() == {}
    assert other.extras()["notes.trainium"] == ("no Neuron runtime belongs to process 16851",)
    lines = other.extras()["accelerators.trainium"]
    assert [(line.index, line.utilization_key, line.reason) for line in lines] == [
        (0, "", "not in use by the watched Neuron runtime"),
        (1, "", "not in use by the watched Neuron runtime"),
    ]


def test_local_rank_takes_any_runtime_and_only_its_core(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    collector = neuron(pid=4242, env=None)  # LOCAL_RANK from the environment; pid 4242 runs nothing
    values = values_when(collector, bool)
    assert values == {
        **HOST_KEYS,
        **{key: value for key, value in REPORT_1_ALL_CORES.items() if key.startswith("trn.1.")},
    }
    assert [(line.index, line.utilization_key, line.reason) for line in collector.extras()["accelerators.trainium"]] == [
        (0, "", "LOCAL_RANK=1: only NeuronCore 1 is reported"),
        (1, "trn.1.neuroncore_utilization", ""),
    ]


@pytest.mark.parametrize(
    ("local_rank", "core"),
    [("5", 5), ("not-a-number", 0), ("+1", 1)],
)
def test_local_rank_as_wandb_parses_it(neuron, monkeypatch, local_rank, core):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron(env={"LOCAL_RANK": local_rank})
    values = values_when(collector, bool)
    per_core = {key: value for key, value in REPORT_1_ALL_CORES.items() if key.startswith(f"trn.{core}.")}
    if not per_core:  # a core the runtime does not use: zeros, as W&B writes
        per_core = {f"trn.{core}.neuroncore_utilization": 0.0}
        per_core.update({f"trn.{core}.neuroncore_memory_usage.{field}": 0.0 for field in parse.CORE_MEMORY_FIELDS})
    assert values == {**HOST_KEYS, **per_core}


def test_an_empty_local_rank_is_no_local_rank(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron(env={"LOCAL_RANK": ""}, pid=16851)
    wait_for(lambda: received(collector, 1), what="the report")
    assert collector.sample() == {}


def test_the_latest_report_wins_and_matches_what_wandb_recorded(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_DELAY", "0.75")
    collector = neuron(pid=4242, env={"LOCAL_RANK": "0"})
    expected = wandb_items()[:3]
    seen: list[dict[str, float]] = []
    for want in expected:
        seen.append(values_when(collector, lambda values, want=want: same_values(values, want)))
    assert len(expected[0]) == 12  # what W&B observed with LOCAL_RANK=0
    # Each report in turn: report 1 again would have come back with no restart.
    assert collector.state().starts == 1


def test_w_and_b_quirks_in_a_report_are_reproduced(neuron, monkeypatch, tmp_path):
    report = json.loads(json.dumps(REPORTS[0]))
    runtime = report["neuron_runtime_data"][0]["report"]
    used = runtime["memory_used"]["neuron_runtime_used_bytes"]
    del used["usage_breakdown"]["host"]  # → its four keys, all zero
    used["host"] = 1.9e3  # a float: truncated
    cores = used["usage_breakdown"]["neuroncore_memory_usage"]
    cores["1"]["tensors"] = 1.5  # not a whole number: the whole core is dropped
    runtime["neuroncore_counters"]["neuroncores_in_use"] = {"x7": {"neuroncore_utilization": 50}, "1": {"neuroncore_utilization": True}}
    replay = tmp_path / "odd.jsonl"
    replay.write_text(json.dumps(report) + "\n")
    monkeypatch.setenv("FAKE_NEURON_REPLAY", str(replay))
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    values = values_when(collector, bool)
    assert values == {
        "trn.0.neuroncore_utilization": 50.0,  # "x7" is core 0 to W&B; True is no number
        "trn.host_total_memory_usage": 1900.0,
        "trn.neuron_device_total_memory_usage": 102298328.0,
        "trn.host_memory_usage.application_memory": 0.0,
        "trn.host_memory_usage.constants": 0.0,
        "trn.host_memory_usage.dma_buffers": 0.0,
        "trn.host_memory_usage.tensors": 0.0,
        **{key: value for key, value in REPORT_1_ALL_CORES.items() if key.startswith("trn.0.neuroncore_memory")},
    }


def test_a_report_without_the_sections_wandb_needs_gives_nothing(neuron, monkeypatch, tmp_path):
    report = json.loads(json.dumps(REPORTS[0]))
    del report["neuron_runtime_data"][0]["report"]["memory_used"]
    replay = tmp_path / "short.jsonl"
    replay.write_text(json.dumps(report) + "\n")
    monkeypatch.setenv("FAKE_NEURON_REPLAY", str(replay))
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    wait_for(lambda: received(collector, 1), what="the report")
    assert collector.sample() == {}
    assert collector.extras()["notes.trainium"] == ("neuron-monitor's report lacks the NeuronCore counters or memory figures",)


# -- a misbehaving child --------------------------------------------------------------------------------


def test_before_the_first_report_sample_says_it_is_waiting(neuron, monkeypatch, tmp_path):
    gate = tmp_path / "go"
    monkeypatch.setenv("FAKE_NEURON_FIRST_AFTER", str(gate))
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    with pytest.raises(RuntimeError, match="^waiting for neuron-monitor's first report"):
        collector.sample()
    gate.touch()
    assert values_when(collector, bool) == REPORT_1_ALL_CORES


def test_the_hub_shows_the_wait_then_the_values(neuron, monkeypatch, tmp_path):
    gate = tmp_path / "go"
    monkeypatch.setenv("FAKE_NEURON_FIRST_AFTER", str(gate))
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = TrainiumCollector(dev_root=str(neuron.dev), env={})
    hub = Hub([collector], interval=0.05, warmup=0)
    samples = []
    hub.subscribe(samples.append)
    hub.start()
    try:
        # A call still under way on a loaded machine reads as OK in the sweeps that go out meanwhile.
        waiting = wait_for(lambda: [s.status[0] for s in samples if s.status[0].health is Health.FAILING], what="the wait in a sweep")[0]
        assert waiting.reason.startswith("RuntimeError: waiting for neuron-monitor's first report")
        assert not any(s.values for s in samples)  # nothing to show before the first report
        gate.touch()
        good = wait_for(lambda: [s for s in samples if s.values], what="values through the hub")[0]
        assert dict(good.values) == REPORT_1_ALL_CORES
        assert good.status[0].health is Health.OK
        assert len(good.extras["accelerators.trainium"]) == 2
    finally:
        hub.stop(timeout=3.0)
    wait_for(lambda: not neuron_threads(), what="the reader thread to end")


def test_a_child_that_dies_is_restarted_with_backoff(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    monkeypatch.setenv("FAKE_NEURON_THEN", "exit:3")
    collector = neuron(backoff_base=0.05)
    failure = wait_for(lambda: _failure(collector), what="sample to report the exit")
    assert failure.startswith("neuron-monitor exited with code 3: neuron-monitor: fake failure after 1 reports; restarting it in ")
    wait_for(lambda: len(starts(neuron.log)) >= 4, what="three restarts")
    monitor = collector._monitor
    assert monitor is not None and monitor.restart_delays[:3] == [0.05, 0.1, 0.2]
    times = [at for _, at in starts(neuron.log)]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert all(gap >= delay for gap, delay in zip(gaps, [0.05, 0.1, 0.2]))
    assert collector.state().received >= 3  # each new child's report came through


def _failure(collector: TrainiumCollector) -> str | None:
    try:
        collector.sample()
    except RuntimeError as error:
        return str(error) if str(error).startswith("neuron-monitor exited") else None
    return None


def test_a_child_that_exits_at_once_is_reported_and_retried(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "0")
    monkeypatch.setenv("FAKE_NEURON_THEN", "exit:2")
    collector = neuron(backoff_base=0.05)
    message = wait_for(lambda: _failure(collector), what="the exit to be reported")
    assert "neuron-monitor exited with code 2: neuron-monitor: fake failure after 0 reports" in message
    wait_for(lambda: len(starts(neuron.log)) >= 3, what="retries")
    assert collector.state().received == 0


def test_lines_that_are_not_reports_are_skipped_and_counted(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_GARBAGE", "1")
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "3")
    collector = neuron(pid=4242, env={"LOCAL_RANK": "0"})
    wait_for(lambda: collector.state().skipped >= 4, what="every garbage line")
    state = collector.state()
    assert (state.received, state.skipped, state.starts) == (3, 4, 1)
    assert same_values(dict(collector.sample()), wandb_items()[2])  # the last report, not the garbage after it
    assert collector.extras()["notes.trainium"] == ("skipped 4 lines from neuron-monitor that were not JSON reports",)


def test_a_silent_child_leaves_the_last_report_with_a_note(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    now = [1000.0]
    collector = neuron(stale_after=0.3, clock=lambda: now[0])
    assert values_when(collector, bool) == REPORT_1_ALL_CORES
    assert collector.extras()["notes.trainium"] == ()
    now[0] += 0.4
    assert collector.sample() == REPORT_1_ALL_CORES
    (note,) = collector.extras()["notes.trainium"]
    assert note.startswith("neuron-monitor has sent no report for ")
    assert note.endswith(" s; these values are from its last one")


# -- nothing outlives the collector ------------------------------------------------------------------


def test_close_ends_the_child_and_the_reader_thread(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    values_when(collector, bool)
    ((pid, _),) = starts(neuron.log)
    assert alive(pid) and neuron_threads()
    collector.close()
    assert not alive(pid)
    assert not neuron_threads()
    assert collector.state() is None
    collector.close()  # twice is fine


def test_close_kills_a_child_that_ignores_sigterm(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_IGNORE_TERM", "1")
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    collector = neuron()
    values_when(collector, bool)
    ((pid, _),) = starts(neuron.log)
    began = time.monotonic()
    collector.close()
    assert time.monotonic() - began < 2.5
    assert not alive(pid)
    assert not neuron_threads()


def test_close_during_a_restart_wait_starts_nothing_more(neuron, monkeypatch):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "0")
    monkeypatch.setenv("FAKE_NEURON_THEN", "exit:1")
    collector = neuron(backoff_base=0.5)
    wait_for(lambda: _failure(collector), what="the first exit")
    collector.close()
    # Nothing is left that could start a child: the supervisor thread has ended, and every child it started is gone.
    assert not neuron_threads()
    started = starts(neuron.log)
    assert started and not any(alive(pid) for pid, _ in started)


def test_close_before_probe_and_after_an_absent_probe(tmp_path):
    TrainiumCollector(dev_root=str(tmp_path)).close()
    collector = TrainiumCollector(dev_root=str(tmp_path))
    collector.probe()
    collector.close()


_ORPHAN_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from collectors import trainium
    from collectors.trainium import supervisor
    if sys.argv[2] == "exit":  # the atexit hook alone, without the kernel's help
        supervisor._death_signal_hook = lambda: None
    collector = trainium.TrainiumCollector(dev_root=sys.argv[1], env={})
    assert collector.probe().available
    while True:
        state = collector.state()
        if state.received:
            break
        time.sleep(0.01)
    print(collector._monitor.pid, flush=True)
    if sys.argv[2] == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(0)  # no close(): the atexit hook must end the child
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("how", ["die", "exit"])
def test_the_child_never_outlives_leet(neuron, monkeypatch, how):
    monkeypatch.setenv("FAKE_NEURON_REPORTS", "1")
    root = HERE.parent
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", _ORPHAN_SCRIPT, str(neuron.dev), how],
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
        cwd=root,
    )
    assert done.stdout.strip(), done.stderr
    pid = int(done.stdout.split()[0])
    wait_for(lambda: not alive(pid), timeout=5.0, what=f"neuron-monitor {pid} to end")
