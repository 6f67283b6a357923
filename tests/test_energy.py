"""Energy: power integrated over a run's samples, GPU and CPU-package energy since leet started, and where it is shown."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import nvml_standin
import pynvml
import pytest
from nvml_standin import FakeGpu, host_proc

from collectors.base import Collector, Sample
from collectors.cpu import CpuCollector
from collectors.energy import DeviceEnergy, EnergyMeter
from collectors.fake import DEFAULT_START, make_fake_collectors
from collectors.fake_curves import FakeClock
from collectors.nvidia import NvidiaCollector
from collectors.rapl import RaplReader
from leet.commands.inspect_run import add_arguments
from leet.commands.inspect_run import run as inspect
from leet.config import Config, ConfigError, load
from leet.export.exposition import Exposition
from leet.model.energy import (
    GAP_FACTOR,
    NO_GPU_POWER,
    RESCAN_ROWS,
    NodeEnergy,
    RunEnergy,
    cost_text,
    energy_report_line,
    energy_text,
    integrate_power,
    merged_nodes,
    run_energy_items,
)
from leet.model.run import RunModel, RunSnapshot, RunState
from leet.model.store import Store
from leet.runfile.decode import EventReader
from leet.runfile.events import StatsRow
from leet.sources.live import LiveSource
from leet.testing.demo import DEMO_THEME, Demo
from leet.ui.app import LeetApp
from leet.ui.views.energy import host_energy_line
from leet.ui.views.gpu import device_sections
from leet.ui.views.run import overview_lines

fake_nvml = nvml_standin.fake_nvml  # the fixture: a one-GPU box, installed for the test

HOUR = 3600.0
KWH = 3.6e6  # joules


def power_rows(gpus: int, watts: float, seconds: int, start: float = 1.7e9, jitter: float = 0.0, label: str = "") -> list[tuple[float, dict[str, float]]]:
    """One stats row a second for ``seconds`` + 1 samples, every GPU at ``watts``; timestamps moved by up to ``jitter`` s."""
    shake = random.Random(25)
    suffix = f"/l:{label}" if label else ""
    rows = []
    for second in range(seconds + 1):
        moved = shake.uniform(-jitter, jitter) if 0 < second < seconds else 0.0
        values = {f"gpu.{gpu}.powerWatts{suffix}": watts for gpu in range(gpus)}
        values.update({"cpu": 12.0, f"gpu.process.0.powerWatts{suffix}": watts, f"gpu.0.temp{suffix}": 60.0})
        rows.append((start + second + moved, values))
    return rows


def run_energy(rows, label: str | None = None) -> RunEnergy:
    energy = RunEnergy()
    for timestamp, values in rows:
        energy.add(timestamp, values, label)
    return energy


# -- integrating a run's power samples --------------------------------------------


@pytest.mark.parametrize("jitter", [0.0, 0.3])
def test_eight_gpus_at_300_w_for_an_hour_read_2_4_kwh(jitter):
    nodes = run_energy(power_rows(8, 300.0, 3600, jitter=jitter)).nodes()
    assert [(node.node, node.gpus) for node in nodes] == [("", 8)]
    assert nodes[0].joules / KWH == pytest.approx(2.4, rel=0.01)
    assert energy_text(nodes[0].joules) == "2.40 kWh"


def test_the_trapezoid_follows_a_ramp_exactly():
    samples = [(float(t), 100.0 + t) for t in range(0, 11)]
    assert integrate_power(samples) == pytest.approx(100 * 10 + 10 * 10 / 2)


def test_a_pause_longer_than_three_median_intervals_is_not_counted():
    before = [(float(t), 200.0) for t in range(0, 601, 2)]
    after = [(float(t), 200.0) for t in range(600 + 3600, 600 + 3600 + 601, 2)]
    assert integrate_power(before + after) == pytest.approx(200.0 * 1200)
    # An interval within the factor is a slow sample, not a gap.
    slow = [(0.0, 100.0), (2.0, 100.0), (4.0, 100.0), (4.0 + 2 * (GAP_FACTOR - 0.5), 100.0)]
    assert integrate_power(slow) == pytest.approx(100.0 * (4 + 2 * (GAP_FACTOR - 0.5)))


def test_samples_out_of_order_or_not_finite_add_nothing():
    assert integrate_power([(0.0, 100.0), (1.0, float("nan")), (2.0, 100.0), (1.5, 100.0), (2.5, 100.0)]) == pytest.approx(250.0)
    assert integrate_power([(5.0, 100.0)]) == 0.0
    assert integrate_power([]) == 0.0


def test_a_shared_run_gets_its_energy_per_node():
    rows = power_rows(2, 100.0, 360, label="node-a") + power_rows(4, 250.0, 360, label="node-b")
    nodes = run_energy(sorted(rows, key=lambda row: row[0])).nodes()
    assert [(node.node, node.gpus) for node in nodes] == [("node-a", 2), ("node-b", 4)]
    assert nodes[0].joules == pytest.approx(2 * 100.0 * 360) and nodes[1].joules == pytest.approx(4 * 250.0 * 360)
    # Writers whose keys carry no label are named by their writer's label.
    first, second = run_energy(power_rows(1, 100.0, 10)).nodes(), run_energy(power_rows(1, 300.0, 10)).nodes()
    assert merged_nodes([(first, "rank0"), (second, "rank1")]) == (NodeEnergy("rank0", 1000.0, 1), NodeEnergy("rank1", 3000.0, 1))


def test_a_gpu_whose_key_comes_later_is_integrated_from_then_on():
    energy = RunEnergy()
    for second in range(200):
        values = {"gpu.0.powerWatts": 100.0, "cpu": 5.0}
        if second >= 100:  # the same number of keys: a GPU came as another key went
            values = {"gpu.0.powerWatts": 100.0, "gpu.1.powerWatts": 100.0}
        energy.add(float(second), values, "rank0")
    (node,) = energy.nodes()
    assert (node.node, node.gpus) == ("rank0", 2)
    assert 100.0 * 199 + 100.0 * (99 - RESCAN_ROWS) <= node.joules <= 100.0 * 199 * 2
    # A row from another writer's label is that node's, whatever the keys.
    energy.add(200.0, {"gpu.0.powerWatts": 100.0, "gpu.1.powerWatts": 100.0}, "rank1")
    energy.add(201.0, {"gpu.0.powerWatts": 100.0, "gpu.1.powerWatts": 100.0}, "rank1")
    assert [(node.node, node.gpus) for node in energy.nodes()] == [("rank0", 2), ("rank1", 2)]


def test_energy_is_written_in_wh_kwh_and_cost():
    assert [energy_text(joules) for joules in (0.0, 36.0, 3600 * 12.34, 3600 * 999.4, 3600 * 999.6, 8.64e6, 3.6e9 * 1.05)] == [
        "0.00 Wh", "0.01 Wh", "12.3 Wh", "999 Wh", "1.00 kWh", "2.40 kWh", "1.05 MWh",
    ]
    assert cost_text(8.64e6, 0.15) == "$0.36" and cost_text(8.64e6, 0.3, "€") == "€0.72"
    assert run_energy_items([]) == [("GPU energy", NO_GPU_POWER)]
    assert run_energy_items([NodeEnergy("", 8.64e6, 8)]) == [("GPU energy", "≈2.40 kWh over 8 GPUs")]
    assert run_energy_items([NodeEnergy("a", 3.6e6, 1), NodeEnergy("b", 7.2e6, 2)], 0.5) == [
        ("GPU energy a", "≈1.00 kWh over 1 GPU · $0.50"),
        ("GPU energy b", "≈2.00 kWh over 2 GPUs · $1.00"),
        ("GPU energy, all nodes", "≈3.00 kWh over 3 GPUs · $1.50"),
    ]
    assert energy_report_line({}) == f"gpu energy {NO_GPU_POWER}"


# -- energy since leet started: NVML's counter, or power integrated ------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def nvidia(proc: Path, clock: Clock) -> NvidiaCollector:
    made = NvidiaCollector(proc_root=str(proc), nvml=pynvml, clock=clock)
    assert made.probe().available
    return made


def test_a_gpu_with_an_energy_counter_counts_from_leet_start_and_one_without_integrates_power(fake_nvml, tmp_path):
    fake_nvml.gpus = [
        FakeGpu(energy_mj=5_000_000, power_mw=300_000),
        FakeGpu(power_mw=200_000, unsupported={"nvmlDeviceGetTotalEnergyConsumption"}),
    ]
    clock = Clock()
    collector = nvidia(host_proc(tmp_path / "proc"), clock)
    for _ in range(11):
        collector.sample()
        fake_nvml.gpus[0].energy_mj += 123_000  # 123 J per 10 s sweep, whatever the power says
        clock.now += 10
    counted, integrated = collector.extras()["energy.nvidia"]
    assert counted == DeviceEnergy("gpu", 0, pytest.approx(10 * 123.0), integrated=False)
    assert integrated == DeviceEnergy("gpu", 1, pytest.approx(200.0 * 100), integrated=True)


def test_a_counter_that_goes_back_counts_on_from_its_new_value():
    meter = EnergyMeter("gpu")
    for now, counter in ((0.0, 1000.0), (1.0, 1100.0), (2.0, 30.0), (3.0, 80.0)):
        meter.observe(0, now, counter, 500.0)
    assert meter.readings() == (DeviceEnergy("gpu", 0, 100.0 + 30.0 + 50.0),)


# -- RAPL -----------------------------------------------------------------------------


def rapl_zone(root: Path, zone: str, name: str, counter: int | None, wrap: int = 262_143_328_850) -> Path:
    where = root / "sys" / "class" / "powercap" / zone
    where.mkdir(parents=True)
    (where / "name").write_text(name + "\n")
    (where / "max_energy_range_uj").write_text(f"{wrap}\n")
    if counter is not None:
        (where / "energy_uj").write_text(f"{counter}\n")
    return where


def test_rapl_reads_each_package_under_leet_sys_root_and_unwraps_its_counter(tmp_path, monkeypatch):
    root = tmp_path / "host"
    package0 = rapl_zone(root, "intel-rapl:0", "package-0", 999_000_000, wrap=1_000_000_000)
    package1 = rapl_zone(root, "intel-rapl:1", "package-1", 5_000_000)
    rapl_zone(root, "intel-rapl:0:0", "core", 1)  # inside package 0's figure
    rapl_zone(root, "intel-rapl:2", "psys", 1)  # the platform, not a CPU
    rapl_zone(root, "intel-rapl:3", "package-3", None)  # a counter only root may read
    monkeypatch.setenv("LEET_SYS_ROOT", str(root))
    reader = RaplReader()
    assert reader.probe()
    (package0 / "energy_uj").write_text("4000000\n")  # wrapped: 1 J to the top, then 4 J
    (package1 / "energy_uj").write_text("7500000\n")
    assert reader.read() == (DeviceEnergy("cpu", 0, pytest.approx(5.0), label="0"), DeviceEnergy("cpu", 1, pytest.approx(2.5), label="1"))
    (package0 / "energy_uj").write_text("6000000\n")
    assert reader.read()[0].joules == pytest.approx(7.0)


def test_the_cpu_collector_reports_package_energy_as_an_extra_and_no_key(tmp_path, monkeypatch):
    root = tmp_path / "host"
    package = rapl_zone(root, "intel-rapl:0", "package-0", 1_000_000)
    monkeypatch.setenv("LEET_SYS_ROOT", str(root))
    cpu = CpuCollector(startup=0)
    assert cpu.probe().available
    (package / "energy_uj").write_text("3000000\n")
    values = cpu.sample()
    assert cpu.extras() == {"energy.rapl": (DeviceEnergy("cpu", 0, pytest.approx(2.0), label="0"),)}
    assert not any("energy" in key for key in values)
    monkeypatch.setenv("LEET_SYS_ROOT", str(tmp_path / "nothing"))
    bare = CpuCollector(startup=0)
    bare.probe()
    bare.sample()
    assert bare.extras() == {}


# -- where it is shown ------------------------------------------------------------------


def test_the_sidebar_gives_each_gpu_its_energy_and_the_host_a_line():
    extras = {
        "energy.nvidia": (DeviceEnergy("gpu", 0, 3600 * 12.0), DeviceEnergy("gpu", 1, 3600 * 2.0, integrated=True)),
        "energy.rapl": (DeviceEnergy("cpu", 0, 3600 * 5.0, label="0"),),
    }
    latest = {"gpu.0.gpu": 50.0, "gpu.1.gpu": 20.0, "gpu.0.powerWatts": 300.0}
    section, _ = device_sections(latest, {}, extras)
    assert [row.details[-1][0] for row in section.rows] == ["12.0 Wh", "≈2.00 Wh"]
    assert host_energy_line(extras) == ("Energy", "≈19.0 Wh  CPU 5.00 Wh")
    assert host_energy_line(extras, 0.5, "€") == ("Energy", "≈19.0 Wh  €0.01  CPU 5.00 Wh")
    assert host_energy_line({"energy.rapl": extras["energy.rapl"]}, 0.5) == ("Energy", "5.00 Wh  $0.00")
    assert host_energy_line({}) is None


async def test_symon_shows_wh_for_gpus_behind_nvml(fake_nvml, tmp_path):
    fake_nvml.gpus = [FakeGpu(energy_mj=1_000_000), FakeGpu(power_mw=250_000, unsupported={"nvmlDeviceGetTotalEnergyConsumption"})]
    clock = FakeClock(1.7e9)
    collector = NvidiaCollector(proc_root=str(host_proc(tmp_path / "proc")), nvml=pynvml, clock=clock)
    assert collector.probe().available
    source = LiveSource(Store())
    for sweep in range(31):
        clock.set(1.7e9 + 2.0 * sweep)
        source.ingest(Sample(clock(), collector.sample(), collector.extras()))
        fake_nvml.gpus[0].energy_mj += 600_000
    app = LeetApp(source, Config(energy_price=0.25, energy_currency="€"), clock=clock, live=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        rows = "\n".join(app.screen.query_one("#vitals").plain_rows())
    assert "5.00 Wh" in rows and "≈4.17 Wh" in rows  # 600 J a sweep for 30 sweeps; 250 W for 60 s
    assert "Energy" in rows and "€" in rows


class FakeEnergy(Collector):
    """Energy extras as the NVIDIA and CPU collectors give them: two GPUs (one without a counter) and a package, at fixed watts."""

    name = "energy"

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.start: float | None = None

    def sample(self) -> dict[str, float]:
        self.start = self.clock() if self.start is None else self.start
        return {}

    def extras(self) -> dict[str, object]:
        seconds = self.clock() - (self.start or 0.0)
        gpus = (DeviceEnergy("gpu", 0, 410.0 * seconds), DeviceEnergy("gpu", 1, 380.0 * seconds, integrated=True))
        return {"energy.nvidia": gpus, "energy.rapl": (DeviceEnergy("cpu", 0, 95.0 * seconds, label="0"),)}


def test_snapshot_of_the_sidebar_with_energy(snap_compare):
    clock = FakeClock(DEFAULT_START - 119 * 2.0)
    collectors = [*make_fake_collectors(clock, gpus=2), FakeEnergy(clock)]
    source = LiveSource(Store())
    app = LeetApp(source, Config(interval=2.0, theme=DEMO_THEME, energy_price=0.3, energy_currency="€"), clock=clock, live=False)
    Demo(app, source, clock, collectors, 2.0).feed(120)
    assert snap_compare(app, terminal_size=(120, 36))


def test_energy_price_and_currency_are_checked(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('energy_price = 0.31\nenergy_currency = "€"\n')
    loaded = load(path=config, environ={})
    assert (loaded.energy_price, loaded.energy_currency) == (0.31, "€")
    for bad in ("energy_price = -1\n", 'energy_price = "cheap"\n', 'energy_currency = ""\n', 'energy_currency = "dollars"\n'):
        config.write_text(bad)
        with pytest.raises(ConfigError):
            load(path=config, environ={})


# -- leet serve ------------------------------------------------------------------------


def test_serve_exports_cpu_package_and_gpu_energy_counters():
    exposition = Exposition("node-1", "host-1", "1.0", process_metrics=False)
    extras = {"energy.rapl": (DeviceEnergy("cpu", 0, 1234.5, label="0"), DeviceEnergy("cpu", 1, 99.0, label="1"))}
    exposition.update(Sample(1.7e9, {"gpu.0.energyJoules": 5000.0}, extras))
    page = exposition.render()[0].decode()
    assert "# TYPE leet_host_cpu_energy_joules_total counter" in page
    assert "# HELP leet_host_cpu_energy_joules_total Energy the CPU package used since leet started (RAPL), in joules" in page
    assert 'leet_host_cpu_energy_joules_total{node="node-1",package="0"} 1234.5' in page
    assert 'leet_host_cpu_energy_joules_total{node="node-1",package="1"} 99.0' in page
    assert "# TYPE leet_gpu_energy_joules_total counter" in page
    assert 'leet_gpu_energy_joules_total{gpu="0",node="node-1",wandb_key="gpu.0.energyJoules"} 5000.0' in page


# -- a run's overview and leet inspect --summary -------------------------------------------


def snapshot_of(events) -> RunSnapshot:
    model = RunModel()
    for event in events:
        model.apply(event)
    return RunSnapshot.of(model, run_key="run", state=RunState.FINISHED, file_size=0, run_id="")


def test_the_overview_gives_a_runs_gpu_energy_from_its_power_samples():
    snapshot = snapshot_of(StatsRow(timestamp, values) for timestamp, values in power_rows(8, 300.0, 3600, jitter=0.3))
    lines = [text for text, _ in overview_lines(snapshot, now=1.8e9)]
    assert "Energy" in lines
    assert any(line.split() == ["GPU", "energy", "≈2.40", "kWh", "over", "8", "GPUs"] for line in lines), lines


def test_a_real_run_without_gpu_power_says_so_in_inspect_and_has_no_energy_in_its_overview(basic_run, capsys):
    with EventReader(basic_run.wandb_path) as reader:
        events = [item.event for item in reader.poll(100_000).items]
    assert any(isinstance(event, StatsRow) for event in events)  # the SDK's own system monitor wrote samples
    assert "Energy" not in [text for text, _ in overview_lines(snapshot_of(events), now=1.8e9)]
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert inspect(parser.parse_args([str(basic_run.run_dir), "--summary"])) == 0
    assert f"gpu energy {NO_GPU_POWER}" in capsys.readouterr().out.splitlines()
    assert inspect(parser.parse_args([str(basic_run.run_dir), "--summary", "--json"])) == 0
    assert json.loads(capsys.readouterr().out)["gpu_energy"] == {}


def test_inspect_reports_energy_per_node():
    report = {"node-a": {"joules": 8.64e6, "kwh": 2.4, "gpus": 8}, "node-b": {"joules": 3.6e6, "kwh": 1.0, "gpus": 4}}
    assert energy_report_line(report) == "gpu energy node-a ≈2.40 kWh over 8 GPUs; node-b ≈1.00 kWh over 4 GPUs"


def test_an_unknown_setting_near_energy_is_refused(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("energy_prize = 1\n")
    with pytest.raises(ConfigError, match="energy_prize"):
        load(path=config, environ={})
    assert Config().energy_price is None
