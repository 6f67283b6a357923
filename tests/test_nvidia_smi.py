"""``nvidia-smi -q -x`` reports read into the NVML collector's keys and records."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.gpu import GpuProcess
from leet.testing.nvidia_smi import parse_report, quantity, run_nvidia_smi

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia_smi"
A5000 = FIXTURES / "nvidia-smi_q_x_2xRTX-A5000_schema-v13.xml"
A100_MIG = FIXTURES / "nvidia-smi_q_x_A100-SXM4-80GB_MIG_schema-v12.xml"
MIB = 2**20

# Every key the NVML collector can write for a device.
COLLECTOR_KEYS = {
    "gpu", "memory", "memoryAllocated", "memoryAllocatedBytes", "temp", "powerWatts", "powerPercent",
    "enforcedPowerLimitWatts", "smClock", "memoryClock", "graphicsClock", "correctedMemoryErrors",
    "uncorrectedMemoryErrors", "encoderUtilization", "fanSpeed", "pcieLinkGen", "pcieLinkWidth",
    "maxPcieLinkGen", "maxPcieLinkWidth", "energyJoules", "pcieTxKBps", "pcieRxKBps",
}


def fields(values, index: int) -> dict[str, float]:
    prefix = f"gpu.{index}."
    return {key[len(prefix):]: value for key, value in values.items() if key.startswith(prefix)}


def test_two_a5000s_in_schema_v13():
    report = parse_report(A5000.read_text())
    assert (report.driver_version, report.cuda_version) == ("590.44.01", "13.1")
    first = fields(report.values, 0)
    assert first == pytest.approx(
        {
            "gpu": 0.0,
            "memory": 0.0,
            "encoderUtilization": 0.0,
            "memoryAllocatedBytes": (24564 - 1678) * MIB,  # reserved counts, as in NVML's v1 query
            "memoryAllocated": (24564 - 1678) / 24564 * 100,
            "temp": 13.0,
            "powerWatts": 6.41,
            "enforcedPowerLimitWatts": 230.0,
            "powerPercent": 6.41 / 230 * 100,
            "smClock": 210.0,
            "memoryClock": 405.0,
            "graphicsClock": 210.0,
            "fanSpeed": 30.0,
            "pcieLinkGen": 1.0,
            "maxPcieLinkGen": 4.0,
            "pcieLinkWidth": 16.0,
            "maxPcieLinkWidth": 16.0,
            "pcieTxKBps": 488.0,
            "pcieRxKBps": 439.0,
        }
    )  # ECC is off on this card: "N/A", so no error counts
    assert fields(report.values, 1)["powerWatts"] == 13.6
    assert [(g.index, g.name, g.uuid[-2:], g.memory_total) for g in report.gpus] == [
        (0, "NVIDIA RTX A5000", "ab", 24564 * MIB),
        (1, "NVIDIA RTX A5000", "cd", 24564 * MIB),
    ]
    assert all(g.utilization_supported and not g.mig for g in report.gpus)
    assert report.processes == (
        GpuProcess(0, 100477, 100477, command="/root/src/llama.cpp/build/bin/llama-server", used_memory=22430 * MIB),
        GpuProcess(1, 100477, 100477, command="/root/src/llama.cpp/build/bin/llama-server", used_memory=17246 * MIB),
    )


def test_an_a100_in_mig_mode_in_schema_v12():
    report = parse_report(A100_MIG.read_text())
    values = fields(report.values, 0)
    assert "gpu" not in values and "memory" not in values and "fanSpeed" not in values
    assert values["powerWatts"] == 67.03
    assert values["enforcedPowerLimitWatts"] == 500.0
    assert (values["correctedMemoryErrors"], values["uncorrectedMemoryErrors"]) == (0.0, 0.0)
    assert values["memoryAllocatedBytes"] == (81920 - 80999) * MIB
    (gpu,) = report.gpus
    assert gpu.utilization_supported is False
    assert "MIG" in gpu.reason
    assert [(s.index, s.gpu_instance_id, s.compute_instance_id) for s in gpu.mig] == [
        (0, 3, 0), (1, 4, 0), (2, 5, 0), (3, 6, 0)
    ]
    assert {(s.memory_total, s.memory_used) for s in gpu.mig} == {(19968 * MIB, 13 * MIB)}
    assert report.processes == ()


def test_keys_are_the_nvml_collectors_keys():
    for fixture in (A5000, A100_MIG):
        report = parse_report(fixture.read_text())
        names = {key.split(".", 2)[2] for key in report.values}
        assert names <= COLLECTOR_KEYS


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("97 %", (97.0, "%")),
        ("22437 MiB", (22437.0, "MiB")),
        ("6.41 W", (6.41, "W")),
        ("16x", (16.0, "x")),
        ("488 KB/s", (488.0, "KB/s")),
        ("N/A", None),
        ("[N/A]", None),
        ("[Not Supported]", None),
        ("Requested functionality has been deprecated", None),
        ("", None),
        (None, None),
    ],
)
def test_quantities_with_units_and_the_ways_of_saying_none(text, parsed):
    assert quantity(text) == parsed


OLD_SCHEMA = """<?xml version="1.0" ?>
<nvidia_smi_log>
  <driver_version>470.82.01</driver_version>
  <gpu id="00000000:3B:00.0">
    <product_name>Tesla V100-SXM2-16GB</product_name>
    <fb_memory_usage><total>16160 MiB</total><used>1000 MiB</used><free>15160 MiB</free></fb_memory_usage>
    <utilization><gpu_util>42 %</gpu_util><memory_util>7 %</memory_util></utilization>
    <ecc_errors><volatile>
      <single_bit><device_memory>2</device_memory><total>2</total></single_bit>
      <double_bit><device_memory>0</device_memory><total>0</total></double_bit>
    </volatile></ecc_errors>
    <power_readings><power_draw>150.00 W</power_draw><enforced_power_limit>300.00 W</enforced_power_limit></power_readings>
    <processes>
      <process_info><pid>4242</pid><type>G</type><process_name>Xorg</process_name><used_memory>N/A</used_memory></process_info>
      <process_info><gpu_instance_id>1</gpu_instance_id><compute_instance_id>0</compute_instance_id>
        <pid>77</pid><type>C</type><process_name>python</process_name><used_memory>500 MiB</used_memory></process_info>
    </processes>
  </gpu>
</nvidia_smi_log>
"""


def test_an_older_schema_still_gives_power_and_ecc_counts():
    report = parse_report(OLD_SCHEMA)
    values = fields(report.values, 0)
    assert (values["powerWatts"], values["enforcedPowerLimitWatts"], values["powerPercent"]) == (150.0, 300.0, 50.0)
    assert (values["correctedMemoryErrors"], values["uncorrectedMemoryErrors"]) == (2.0, 0.0)
    assert values["memoryAllocatedBytes"] == 1000 * MIB
    xorg, python = report.processes
    assert (xorg.kind, xorg.used_memory, xorg.mig) == ("graphics", None, "")
    assert (python.kind, python.used_memory, python.mig) == ("compute", 500 * MIB, "GI 1 CI 0")


@pytest.mark.parametrize(
    ("text", "message"),
    [("<nvidia_smi_log><gpu>", "not valid XML"), ("<html></html>", "not nvidia-smi -q -x output")],
)
def test_something_else_is_a_clear_error(text, message):
    with pytest.raises(ValueError, match=message):
        parse_report(text)


def test_running_nvidia_smi_gives_its_xml_or_a_clear_error(tmp_path: Path):
    good = tmp_path / "nvidia-smi"
    good.write_text(f"#!/bin/sh\ncat '{A100_MIG}'\n")
    good.chmod(0o755)
    assert parse_report(run_nvidia_smi(str(good))).gpus[0].name == "NVIDIA A100-SXM4-80GB"

    bad = tmp_path / "broken-smi"
    bad.write_text('#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n')
    bad.chmod(0o755)
    with pytest.raises(OSError, match="NVIDIA-SMI has failed"):
        run_nvidia_smi(str(bad))
    with pytest.raises(OSError):
        run_nvidia_smi(os.fspath(tmp_path / "missing"))
