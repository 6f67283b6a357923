"""The IPU collector against a stand-in ``gcipuinfo`` module serving W&B's own test devices."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from collectors import Health, Hub
from collectors.gpu import AcceleratorInfo
from collectors.ipu import IpuCollector, parse_field

DEVICES = json.loads((Path(__file__).parent / "fixtures" / "hardware" / "ipu" / "gcipuinfo_getDevices_wandb-test-mock.json").read_text())

# What W&B's IPU test expects for process 123 (device 1): every numeric field first…
FIRST_SAMPLE = {
    "ipu.1.user process id": 123.0,
    "ipu.1.average board temp (C)": 30.0,
    "ipu.1.average die temp (C)": 39.0,
    "ipu.1.board ipu index": 1.0,
    "ipu.1.clock (MHz)": 1300.0,
    "ipu.1.id": 1.0,
    "ipu.1.ipu power (W)": 120.0,
    "ipu.1.ipu utilisation (%)": 21.25,
    "ipu.1.ipu utilisation (session) (%)": 15.65,
}
# … then only the six that change.
LATER_SAMPLES = {
    "ipu.1.average board temp (C)": 30.0,
    "ipu.1.average die temp (C)": 39.0,
    "ipu.1.clock (MHz)": 1300.0,
    "ipu.1.ipu power (W)": 120.0,
    "ipu.1.ipu utilisation (%)": 21.25,
    "ipu.1.ipu utilisation (session) (%)": 15.65,
}


class StandIn:
    """The parts of ``gcipuinfo.gcipuinfo`` that W&B used, over a list of device dicts."""

    def __init__(self, devices: list[dict[str, str]], fail: BaseException | None = None) -> None:
        self.devices = devices
        self.fail = fail
        self.update_mode: bool | None = None
        self.calls = 0

    def setUpdateMode(self, enabled: bool) -> None:  # noqa: N802 - the library's name
        self.update_mode = enabled

    def getDevices(self) -> list[dict[str, str]]:  # noqa: N802 - the library's name
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return [dict(device) for device in self.devices]


@pytest.fixture
def gcipuinfo(monkeypatch):
    """Install a stand-in ``gcipuinfo`` module; returns the object its ``gcipuinfo()`` gives."""
    info = StandIn([dict(device) for device in DEVICES])
    module = types.ModuleType("gcipuinfo")
    module.gcipuinfo = lambda: info  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gcipuinfo", module)
    return info


def probed(**options: Any) -> IpuCollector:
    collector = IpuCollector(**options)
    probe = collector.probe()
    assert probe.available, probe.reason
    return collector


def test_absent_without_gcipuinfo(monkeypatch):
    monkeypatch.setitem(sys.modules, "gcipuinfo", None)  # import raises ImportError
    probe = IpuCollector().probe()
    assert not probe.available
    assert probe.reason == "gcipuinfo is not installed (it comes with Graphcore's Poplar SDK)"


def test_absent_without_an_ipu(gcipuinfo):
    gcipuinfo.devices = []
    probe = IpuCollector().probe()
    assert (probe.available, probe.reason) == (False, "gcipuinfo found no IPU")


def test_absent_when_gcipuinfo_fails(gcipuinfo):
    gcipuinfo.fail = RuntimeError("no IPU driver loaded")
    probe = IpuCollector().probe()
    assert (probe.available, probe.reason) == (False, "gcipuinfo failed: no IPU driver loaded")


def test_the_watched_process_gets_wandbs_keys_first_all_then_the_changing_ones(gcipuinfo):
    collector = probed(pid=123)
    assert gcipuinfo.update_mode is True
    assert collector.sample() == FIRST_SAMPLE
    assert collector.sample() == LATER_SAMPLES
    assert collector.sample() == LATER_SAMPLES
    assert collector.extras() == {
        "accelerators.ipu": (
            AcceleratorInfo(
                vendor="Graphcore",
                index=1,
                name="C2 IPU",
                utilization_key="ipu.1.ipu utilisation (%)",
                temp_key="ipu.1.average die temp (C)",
                power_key="ipu.1.ipu power (W)",
            ),
        ),
        "notes.ipu": (),
    }


def test_without_a_watched_process_every_ipu_is_reported(gcipuinfo):
    collector = probed()
    first = collector.sample()
    assert {key.split(".")[1] for key in first} == {"0", "1", "2"}
    assert "ipu.2.user process id" not in first  # device 2 has no process
    assert first["ipu.0.average die temp (C)"] == 25.0
    assert first["ipu.2.average board temp (C)"] == 20.0
    later = collector.sample()
    assert len(later) == 18
    assert [line.index for line in collector.extras()["accelerators.ipu"]] == [0, 1, 2]


def test_a_process_without_an_ipu_gets_nothing_and_a_note(gcipuinfo):
    collector = probed(pid=999)
    assert collector.sample() == {}
    assert collector.extras() == {"accelerators.ipu": (), "notes.ipu": ("no IPU is attached to process 999",)}


def test_a_new_device_of_the_process_gets_all_its_fields_once(gcipuinfo):
    collector = probed(pid=123)
    collector.sample()
    gcipuinfo.devices[0]["user process id"] = "123"  # the process takes device 0 as well
    values = collector.sample()
    assert values["ipu.0.id"] == 0.0
    assert "ipu.1.id" not in values
    assert "ipu.0.id" not in collector.sample()


@pytest.mark.parametrize(
    ("field", "value", "parsed"),
    [
        ("average board temp", "30C", ("average board temp (C)", 30.0)),
        ("clock", "1300MHz", ("clock (MHz)", 1300.0)),
        ("ipu power", "120W", ("ipu power (W)", 120.0)),
        ("ipu utilisation", "21.25%", ("ipu utilisation (%)", 21.25)),
        ("ipu utilisation (session)", "15.65%", ("ipu utilisation (session) (%)", 15.65)),
        ("link speed", "8GT/s", ("link speed (GT/s)", 8.0)),
        # No unit on the value: no unit on the key.
        ("average die temp", "39", ("average die temp", 39.0)),
        # A unit that is not the field's: left on the value, which is then no number.
        ("clock", "1300W", None),
        ("board type", "C2", None),
        ("average die temp", "N/A", None),
        ("ipu power", "", None),
        ("ipu power", 120, None),
        ("id", "3", ("id", 3.0)),
    ],
)
def test_the_unit_suffix_rule(field, value, parsed):
    assert parse_field(field, value) == parsed


def test_a_device_with_an_unreadable_owner_is_not_the_watched_one(gcipuinfo):
    gcipuinfo.devices[1]["user process id"] = "not a pid"
    collector = probed(pid=123)
    assert collector.sample() == {}


def test_a_failing_gcipuinfo_shows_as_failing_in_the_hub(gcipuinfo):
    collector = IpuCollector(pid=123)
    hub = Hub([collector], interval=0.05, warmup=0)
    try:
        good = hub.sweep()
        assert dict(good.values) == FIRST_SAMPLE
        assert good.status[0].health is Health.OK
        gcipuinfo.fail = OSError("IPU lost")
        bad = hub.sweep()
        assert bad.status[0].health is Health.FAILING
        assert bad.status[0].reason == "OSError: IPU lost"
    finally:
        hub.stop()


def test_close_is_safe_at_any_time(gcipuinfo):
    IpuCollector().close()
    collector = probed()
    collector.close()
    collector.close()
    with pytest.raises(RuntimeError):
        collector.sample()
