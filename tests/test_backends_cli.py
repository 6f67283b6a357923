"""Every backend registered, the OpenMetrics/DCGM settings, ``leet symon --backends`` and ``--once`` with them."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_hub import Stuck

from collectors import Collector, Health, Hub, Probe
from collectors.accelerators import accelerator_collectors, exporter_collectors, sys_root
from collectors.amd import AmdCollector
from collectors.apple import AppleCollector
from collectors.base import CollectorStatus
from collectors.dcgm import DcgmPrometheusCollector
from collectors.ipu import IpuCollector
from collectors.nvidia import NvidiaCollector
from collectors.openmetrics import MetricFilter, OpenMetricsCollector
from collectors.tpu import TpuCollector
from collectors.trainium import TrainiumCollector
from leet.commands.backends import as_json, as_text, backends, print_backends
from leet.config import Config, ConfigError, load

HERE = Path(__file__).parent
ROOT = HERE.parent
FAKEBIN = HERE / "fakebin" / "amd"
ROCM_6_1 = HERE / "fixtures" / "hardware" / "rocm_smi" / "rocm-smi_a_json_rocm6.1.2_RX6700XT.json"
ORDER = ["nvidia", "amd", "tpu", "trainium", "ipu", "apple"]
QUICK = 60.0  # seconds: only bounds a hang


# -- a made-up AMD box ---------------------------------------------------------------


@dataclass
class AmdBox:
    """A filesystem root where amdgpu is live, and a bin holding only python3 and a stand-in rocm-smi."""

    root: Path
    bin: Path

    def env(self, behaviour: str | Path) -> dict[str, str]:
        """What ``leet`` needs to meet this box: PATH, ``LEET_SYS_ROOT``, what rocm-smi does, no config file."""
        return {
            "PATH": f"{self.bin}{os.pathsep}/usr/bin:/bin",
            "LEET_SYS_ROOT": str(self.root),
            "LEET_CONFIG": "",
            "FAKE_ROCM_SMI": str(behaviour),
        }


def make_amd_box(where: Path) -> AmdBox:
    box = AmdBox(where / "root", where / "bin")
    module = box.root / "sys" / "module" / "amdgpu"
    module.mkdir(parents=True)
    (module / "initstate").write_text("live\n")
    box.bin.mkdir(parents=True)
    (box.bin / "python3").symlink_to(sys.executable)
    for name in ("rocm-smi", "_replay.py"):
        shutil.copy(FAKEBIN / name, box.bin / name)
    (box.bin / "rocm-smi").chmod(0o755)
    return box


@pytest.fixture
def amd_box(tmp_path) -> AmdBox:
    return make_amd_box(tmp_path)


def leet(*args: str, env: dict[str, str] | None = None, timeout: float = QUICK) -> subprocess.CompletedProcess[str]:
    environ = env or {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "leet", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout, env=environ, cwd=ROOT
    )


# -- registration ----------------------------------------------------------------------


def test_every_accelerator_backend_is_registered_nvidia_first():
    collectors = accelerator_collectors()
    assert [c.name for c in collectors] == ORDER
    kinds = [NvidiaCollector, AmdCollector, TpuCollector, TrainiumCollector, IpuCollector, AppleCollector]
    assert [type(c) for c in collectors] == kinds


def test_the_choices_reach_the_backends_that_take_them(tmp_path):
    nvidia, amd, tpu, trainium, ipu, _ = accelerator_collectors(gpu_ids=[1, 0], pid=42, track_tree=True, root=str(tmp_path))
    assert (nvidia.gpu_ids, nvidia.pid, nvidia.track_tree) == ((1, 0), 42, True)
    assert (amd.gpu_ids, amd.sys_root) == ((1, 0), str(tmp_path))
    assert tpu.sys_root == str(tmp_path)
    assert trainium.pid == 42 and ipu.pid == 42


def test_the_sysfs_root_comes_from_leet_sys_root(monkeypatch, tmp_path):
    assert sys_root({}) == "/" and sys_root({"LEET_SYS_ROOT": ""}) == "/"
    assert sys_root({"LEET_SYS_ROOT": "/host"}) == "/host"
    monkeypatch.setenv("LEET_SYS_ROOT", str(tmp_path))
    _, amd, tpu, *_ = accelerator_collectors()
    assert amd.sys_root == tpu.sys_root == str(tmp_path)


def test_exporters_make_one_collector_per_endpoint_then_dcgm_with_the_same_headers():
    assert exporter_collectors() == []
    made = exporter_collectors(
        [("node", "http://localhost:9100/metrics"), ("app", "http://localhost:8000/metrics")],
        ["node_load1"],
        [("Authorization", "Bearer T")],
        "http://prom:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP",
    )
    assert [c.name for c in made] == ["openmetrics:node", "openmetrics:app", "dcgm"]
    node, _, dcgm = made
    assert isinstance(node, OpenMetricsCollector) and isinstance(dcgm, DcgmPrometheusCollector)
    assert node.url == "http://localhost:9100/metrics"
    assert node._getter.headers["Authorization"] == dcgm._getter.headers["Authorization"] == "Bearer T"
    assert dcgm.target.queries == ("DCGM_FI_DEV_GPU_TEMP",)


# -- config file keys and flags --------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


FULL = """
dcgm_exporter = "http://prom:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP"
open_metrics_filters = ["node_load1", "app\\\\.requests"]

[open_metrics_endpoints]
node = "http://localhost:9100/metrics"
app = "http://localhost:8000/metrics"

[open_metrics_http_headers]
Authorization = "Bearer FILE"
X-Team = "ml"
"""


def test_the_file_keys_are_read_and_checked(tmp_path):
    config = load(environ={}, path=write(tmp_path, FULL))
    assert config.open_metrics_endpoints == (("node", "http://localhost:9100/metrics"), ("app", "http://localhost:8000/metrics"))
    assert isinstance(config.open_metrics_filters, MetricFilter)
    assert [rule.metric.pattern for rule in config.open_metrics_filters.rules] == ["node_load1", "app\\.requests"]
    assert config.open_metrics_http_headers == (("Authorization", "Bearer FILE"), ("X-Team", "ml"))
    assert config.dcgm_exporter == "http://prom:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP"
    default = Config()
    assert (default.open_metrics_endpoints, default.open_metrics_filters, default.open_metrics_http_headers, default.dcgm_exporter) == ((), None, (), None)


def test_the_mapping_form_of_the_filters_is_w_and_bs(tmp_path):
    config = load(environ={}, path=write(tmp_path, '[open_metrics_filters]\n"node_cpu_.*" = {cpu = "0|1", mode = "idle"}\n'))
    (rule,) = config.open_metrics_filters.rules
    assert rule.metric.pattern == "node_cpu_.*"
    assert [(label, pattern.pattern) for label, pattern in rule.labels] == [("cpu", "0|1"), ("mode", "idle")]


def test_flags_add_endpoints_and_headers_and_replace_filters_and_dcgm(tmp_path):
    overrides = {
        "open_metrics_endpoints": (("app", "http://other:8000/metrics"), ("gpu", "http://localhost:9400/metrics")),
        "open_metrics_filters": ("DCGM_",),
        "open_metrics_http_headers": (("authorization", "Bearer FLAG"),),
        "dcgm_exporter": "http://prom2:9090/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL",
    }
    config = load(overrides, environ={}, path=write(tmp_path, FULL))
    assert config.open_metrics_endpoints == (
        ("node", "http://localhost:9100/metrics"),
        ("app", "http://other:8000/metrics"),
        ("gpu", "http://localhost:9400/metrics"),
    )
    assert config.open_metrics_http_headers == (("authorization", "Bearer FLAG"), ("X-Team", "ml"))
    assert [rule.metric.pattern for rule in config.open_metrics_filters.rules] == ["DCGM_"]
    assert config.dcgm_exporter.startswith("http://prom2:9090/")


@pytest.mark.parametrize(
    "text, words",
    [
        ('open_metrics_endpoints = "http://x"', "open_metrics_endpoints must be a table"),
        ("open_metrics_endpoints = {a = 3}", "expected an http:// or https:// URL"),
        ('open_metrics_endpoints = {"a/b" = "http://x"}', "must not contain blanks, '/'"),
        ('open_metrics_endpoints = {a = "ftp://x"}', "is not an http:// or https:// URL"),
        ("open_metrics_filters = 3", "open_metrics_filters: expected a list of regular expressions or a mapping"),
        ('open_metrics_filters = ["("]', "open_metrics_filters: '(' is not a valid regular expression"),
        ('open_metrics_filters = {"x" = {"l" = 3}}', "expected a regular expression as text"),
        ('open_metrics_http_headers = {"bad name" = "x"}', "open_metrics_http_headers: 'bad name' is not a valid HTTP header name"),
        ('open_metrics_http_headers = ["x"]', "open_metrics_http_headers must be a table"),
        ("dcgm_exporter = 3", "dcgm_exporter must be a URL as text"),
        ('dcgm_exporter = "http://h:9400/metrics"', "dcgm_exporter wants a Prometheus server's query URL"),
        ('dcgm_exporter = "nope"', "dcgm_exporter: 'nope' is not an http:// or https:// URL"),
    ],
)
def test_a_bad_value_in_the_file_names_the_file_the_key_and_the_problem(tmp_path, text, words):
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as caught:
        load(environ={}, path=path)
    message = str(caught.value)
    assert message.startswith(f"config file {path}: ") and words in message and "\n" not in message


def test_an_empty_dcgm_exporter_means_none(tmp_path):
    assert load(environ={}, path=write(tmp_path, 'dcgm_exporter = ""\n')).dcgm_exporter is None


@pytest.mark.parametrize(
    "args, words",
    [
        (["--openmetrics", "node"], "--openmetrics expects NAME=URL"),
        (["--openmetrics", "a=ftp://x"], "--openmetrics a: 'ftp://x' is not an http:// or https:// URL"),
        (["--openmetrics", "a=http://x", "--openmetrics", "a=http://y"], "--openmetrics: endpoint 'a' is given twice"),
        (["--openmetrics-filter", "("], "--openmetrics-filter: '(' is not a valid regular expression"),
        (["--openmetrics-header", "no colon"], "--openmetrics-header expects 'Name: value'"),
        (["--openmetrics-header", "bad name: x"], "--openmetrics-header: 'bad name' is not a valid HTTP header name"),
        (["--openmetrics-header", "X-A: 1", "--openmetrics-header", "x-a: 2"], "--openmetrics-header: header 'x-a' is given twice"),
        (["--dcgm-exporter", "http://h:9400/metrics"], "--dcgm-exporter wants a Prometheus server's query URL"),
        (["--dcgm-exporter", "ftp://h"], "--dcgm-exporter: 'ftp://h' is not an http:// or https:// URL"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2(args, words):
    result = leet("symon", "--once", *args)
    assert result.returncode == 2
    assert result.stderr.startswith("leet: ") and words in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_bad_key_in_the_config_file_stops_leet_symon_in_one_line(tmp_path):
    path = write(tmp_path, 'dcgm_exporter = "nope"\n')
    result = leet("symon", "--backends", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr == f"leet: config file {path}: dcgm_exporter: 'nope' is not an http:// or https:// URL with a host\n"


# -- --backends: the report ------------------------------------------------------------


def test_the_report_says_present_absent_failing_hung_with_the_cost_of_the_last_call():
    statuses = [
        CollectorStatus("cpu", Health.OK, "", 0.42),
        CollectorStatus("amd", Health.ABSENT, "no AMD GPU driver: the amdgpu kernel module is not loaded", 1.0),
        CollectorStatus("openmetrics:node", Health.FAILING, "ScrapeError: connection refused", 2.5),
        CollectorStatus("tpu", Health.HUNG, "no answer in 2.0 s", 12.0),
    ]
    rows = backends(statuses)
    assert [(row.state, row.last_ms) for row in rows] == [("present", 0.42), ("absent", 1.0), ("failing", 2.5), ("hung", None)]
    assert as_text(rows).splitlines() == [
        "BACKEND           STATE      LAST  REASON",
        "cpu               present  0.4 ms",
        "amd               absent   1.0 ms  no AMD GPU driver: the amdgpu kernel module is not loaded",
        "openmetrics:node  failing  2.5 ms  ScrapeError: connection refused",
        "tpu               hung          -  no answer in 2.0 s",
    ]
    assert json.loads(as_json(rows))[3] == {"name": "tpu", "state": "hung", "reason": "no answer in 2.0 s", "last_ms": None}


def test_the_report_makes_reasons_inert():
    rows = backends([CollectorStatus("amd", Health.FAILING, "rocm-smi said \x1b[31mred\x1b]0;title\x07\nand more", 1.0)])
    text = as_text(rows)
    assert "\x1b" not in text and "\x07" not in text and text.count("\n") == 1
    assert "\x1b" not in as_json(rows) and "\\u001b" in as_json(rows)


class _Absent(Collector):
    name = "gone"

    def probe(self) -> Probe:
        return Probe.absent("no such device")


def test_a_hung_backend_costs_the_report_its_budget_and_no_more():
    stuck = Stuck("slow", budget=0.3)
    out = io.StringIO()
    began = time.monotonic()
    try:
        assert print_backends(Hub([stuck, _Absent()], interval=60.0, warmup=0.0), out=out) == 0
        took = time.monotonic() - began
    finally:
        stuck.gate.set()
    assert took < 0.3 + 1.0 + 0.5, took  # the budget, the stop's own bound, slack for a busy box
    lines = out.getvalue().splitlines()
    assert lines[1].split() == ["slow", "hung", "-", "no", "answer", "in", "0.3", "s"]
    assert lines[2].split()[:2] == ["gone", "absent"] and lines[2].endswith("no such device")


def test_leet_symon_backends_lists_every_backend_once():
    result = leet("symon", "--backends")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["BACKEND", "STATE", "LAST", "REASON"]
    names = [line.split()[0] for line in lines[1:]]
    assert names[: len(names) - len(ORDER)] == ["cpu", "memory", "disk", "network", "processes", "host"]
    assert names[-len(ORDER):] == ORDER
    states = {line.split()[0]: line.split()[1] for line in lines[1:]}
    assert set(states.values()) <= {"present", "absent", "failing", "hung"}
    assert states["cpu"] == states["memory"] == "present"


def test_leet_symon_backends_json_gives_the_same_rows():
    result = leet("symon", "--backends", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["name"] for row in rows][-len(ORDER):] == ORDER
    assert all(set(row) == {"name", "state", "reason", "last_ms"} for row in rows)
    absent = [row for row in rows if row["state"] == "absent"]
    assert all(row["reason"] and isinstance(row["last_ms"], float) for row in absent)


def test_leet_symon_backends_names_the_exporters_and_why_they_fail(tmp_path):
    path = write(tmp_path, '[open_metrics_endpoints]\nnode = "http://127.0.0.1:9/metrics"\n')
    result = leet("symon", "--backends", "--json", "--config", str(path), "--dcgm-exporter", "http://127.0.0.1:9/api/v1/query?query=up")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["openmetrics:node"]["state"] == rows["dcgm"]["state"] == "failing"
    assert "connection refused" in rows["openmetrics:node"]["reason"]


@pytest.mark.parametrize("args, words", [(["--json"], "--json goes with --once or --backends"), (["--once", "--backends"], "two different reports")])
def test_report_flags_that_do_not_go_together(args, words):
    result = leet("symon", *args)
    assert result.returncode == 2 and words in result.stderr


@pytest.mark.parametrize("args", [["symon", "--backends"], ["symon", "--backends", "--json"], ["symon", "--help"]])
def test_backends_and_help_import_no_textual(args):
    code = (
        "import sys; from leet.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "print('TEXTUAL', 'textual' in sys.modules)\n"
    )
    env = {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=QUICK, env=env, cwd=ROOT)
    assert "TEXTUAL False" in result.stdout, result.stderr


def test_the_help_names_the_new_flags():
    result = leet("symon", "--help")
    for flag in ("--openmetrics NAME=URL", "--openmetrics-filter REGEX", "--openmetrics-header", "--dcgm-exporter URL", "--backends"):
        assert flag in result.stdout


# -- the AMD backend through the command line ------------------------------------------


def test_once_json_carries_the_amd_keys_with_the_host_ones(amd_box):
    result = leet("symon", "--once", "--json", env=amd_box.env(ROCM_6_1))
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["gpu.0.temp"] == 46.0 and values["gpu.0.memoryAllocatedBytes"] == 1572745216.0
    assert values["gpu.0.powerPercent"] == pytest.approx(6 / 211 * 100)
    assert "memory_percent" in values and "network.sent" in values
    assert "amd" not in result.stderr  # present: nothing to say beside the JSON


def test_once_table_shows_the_amd_gpu_and_one_line_for_the_absent_backends(amd_box):
    result = leet("symon", "--once", env=amd_box.env(ROCM_6_1))
    assert result.returncode == 0, result.stderr
    assert "gpu.0.temp" in result.stdout
    (absent,) = [line for line in result.stdout.splitlines() if line.startswith("! not on this machine:")]
    assert "amd" not in absent and "tpu" in absent and absent.endswith("(leet symon --backends says why)")


def test_backends_reports_amd_present_from_the_fake_tool(amd_box):
    result = leet("symon", "--backends", "--json", env=amd_box.env(ROCM_6_1))
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["amd"]["state"] == "present" and rows["amd"]["reason"] == ""
    assert rows["tpu"]["state"] == "absent"


def test_backends_with_a_hung_rocm_smi_ends_within_amds_budget(amd_box):
    began = time.monotonic()
    result = leet("symon", "--backends", "--json", env=amd_box.env("hang"))
    took = time.monotonic() - began
    budget = AmdCollector().budget
    assert took < budget + 5.0, took  # the tool's own timeout ends it well before the budget
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["amd"]["state"] in ("absent", "hung")
    assert "rocm-smi" in rows["amd"]["reason"]
    assert rows["memory"]["state"] == "present"
