"""The TPU collector against a made-up TPU VM: a sysfs tree, libtpu's metrics service on loopback, a stand-in libtpu.sdk.

The service is a real gRPC server speaking the real method path, serving the
composed fixture (a v6e-4 host, the values of tpu-info's README). Only what
sits outside leet is replaced: the PCI bus, libtpu and the workload that
would serve the metrics.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from concurrent import futures
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")

from google.protobuf import json_format  # noqa: E402

from collectors import Health, Hub  # noqa: E402
from collectors.base import Collector  # noqa: E402
from collectors.gpu import AcceleratorInfo  # noqa: E402
from collectors.tpu import TpuCollector, scan_pci  # noqa: E402
from collectors.tpu_runtime import keys  # noqa: E402
from collectors.tpu_runtime import tpu_metric_service_pb2 as pb  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "hardware" / "tpu" / "tpu_runtime_GetRuntimeMetric_and_libtpu_sdk_COMPOSED.json"
SERVICE = "tpu.monitoring.runtime.RuntimeMetricService"

TOTAL = 33554432000
USAGE = (19810536652, 11166914969, 11166914969, 11166914969)
LATENCY = "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution"
QUEUE = "hlo.queue.size.gauge"


# -- the machine ------------------------------------------------------------------


def fake_sysfs(root: Path, devices: list[tuple[str, str, str, str]]) -> str:
    """``root/sys/bus/pci/devices/<address>/{vendor,device,subsystem_device}``, as the kernel writes them."""
    for address, vendor, device, subsystem in devices:
        folder = root / "sys" / "bus" / "pci" / "devices" / address
        folder.mkdir(parents=True)
        (folder / "vendor").write_text(vendor + "\n")
        (folder / "device").write_text(device + "\n")
        (folder / "subsystem_device").write_text(subsystem + "\n")
    return str(root)


HOST_DEVICES = [
    ("0000:00:00.0", "0x8086", "0x1237", "0x1100"),  # host bridge
    ("0000:00:03.0", "0x1af4", "0x1004", "0x0008"),  # virtio SCSI
    ("0000:00:05.0", "0x1ae0", "0x0042", "0x0058"),  # Google gVNIC: Google's vendor id, not a TPU
]
V6E_4 = HOST_DEVICES + [(f"0000:00:{slot:02x}.0", "0x1ae0", "0x006f", "0x006f") for slot in range(6, 10)]


@pytest.fixture
def v6e_host(tmp_path):
    return fake_sysfs(tmp_path / "v6e", V6E_4)


@pytest.fixture
def plain_host(tmp_path):
    return fake_sysfs(tmp_path / "plain", HOST_DEVICES)


# -- the runtime metrics service ------------------------------------------------------


def fixture_responses() -> dict[str, pb.MetricResponse]:
    composed = json.loads(FIXTURE.read_text())["responses"]
    return {name: json_format.ParseDict(body, pb.MetricResponse()) for name, body in composed.items()}


def _kvlist(pairs: dict[str, str]) -> dict:
    return {"kvlist_attr": {"attributes": [{"key": key, "value": {"string_attr": value}} for key, value in pairs.items()]}}


def latency_response() -> pb.MetricResponse:
    """Buffer transfer latencies for 8MB+ buffers, one distribution per device, as the service sends them."""
    buckets = {"exponential_buckets": {"num_finite_buckets": 4, "growth_factor": 2.0, "scale": 1000.0}}
    per_device = [
        {
            "attribute": {"key": "", "value": _kvlist({"buffer-size": "8MB+", "device_ordinal": str(device)})},
            "distribution": {"count": 50, "mean": mean, "bucket_options": buckets, "bucket_counts": [0, 5, 20, 20, 5, 0]},
        }
        for device, mean in ((0, 5000.0), (1, 5400.0))
    ]
    return json_format.ParseDict({"metric": {"name": LATENCY, "metrics": per_device}}, pb.MetricResponse())


def queue_response() -> pb.MetricResponse:
    metrics = [
        {"attribute": {"key": "", "value": _kvlist({"device_ordinal": str(device), "core_type": "tensor_core"})}, "gauge": {"as_int": size}}
        for device, size in ((0, 5), (1, 12))
    ]
    return json_format.ParseDict({"metric": {"name": QUEUE, "metrics": metrics}}, pb.MetricResponse())


class RuntimeService:
    """``RuntimeMetricService/GetRuntimeMetric`` on a loopback port: known names answered, others NOT_FOUND."""

    def __init__(self, responses: dict[str, pb.MetricResponse], port: int = 0, hang: bool = False) -> None:
        self.responses = responses
        self.requests: list[str] = []
        self.hang = hang
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.unary_unary_rpc_method_handler(
            self._answer,
            request_deserializer=pb.MetricRequest.FromString,
            response_serializer=pb.MetricResponse.SerializeToString,
        )
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"GetRuntimeMetric": handler}),))
        self.port = self._server.add_secure_port(f"localhost:{port}", grpc.local_server_credentials())
        self._server.start()

    @property
    def address(self) -> str:
        return f"localhost:{self.port}"

    def _answer(self, request: pb.MetricRequest, context) -> pb.MetricResponse:
        with self._lock:
            self.requests.append(request.metric_name)
        if self.hang:
            self.release.wait(10)
        if request.metric_name not in self.responses:
            context.abort(grpc.StatusCode.NOT_FOUND, f"metric {request.metric_name} not found")
        return self.responses[request.metric_name]

    def stop(self) -> None:
        self.release.set()
        self._server.stop(None).wait(5)


@pytest.fixture
def service():
    served = RuntimeService({**fixture_responses(), LATENCY: latency_response(), QUEUE: queue_response()})
    yield served
    served.stop()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- a stand-in libtpu ------------------------------------------------------------------

LIBTPU_SDK = '''
import json

_EXAMPLES = json.load(open({fixture!r}))["libtpu_sdk_GetMetric_examples"]


class _Metric:
    def __init__(self, entry):
        self._entry = entry

    def description(self):
        return self._entry["description"]

    def data(self):
        return list(self._entry["values"])


class tpumonitoring:
    @staticmethod
    def get_metric(name):
        if name.startswith("_") or name not in _EXAMPLES:
            raise RuntimeError(f"Metric {{name}} is not supported")
        return _Metric(_EXAMPLES[name])
'''


@pytest.fixture
def fake_libtpu(tmp_path, monkeypatch):
    """A ``libtpu`` package with ``libtpu.sdk.tpumonitoring``, importable the ordinary way, serving the fixture's SDK values."""
    package = tmp_path / "site" / "libtpu"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sdk.py").write_text(LIBTPU_SDK.format(fixture=str(FIXTURE)))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield package
    for name in [name for name in sys.modules if name == "libtpu" or name.startswith("libtpu.")]:
        del sys.modules[name]


def collector(sys_root: str, address: str, **options) -> TpuCollector:
    options.setdefault("use_libtpu", False)
    return TpuCollector(sys_root=sys_root, address=address, timeout=0.5, **options)


def grpc_only_values() -> dict[str, float]:
    values: dict[str, float] = {}
    for device, usage in enumerate(USAGE):
        values[f"tpu.{device}.hbmCapacityTotal"] = TOTAL
        values[f"tpu.{device}.hbmCapacityUsage"] = usage
        values[f"tpu.{device}.hbmMemoryUsage"] = usage / TOTAL * 100
        values[f"tpu.{device}.dutyCycle"] = 100.0
    values.update(
        {
            "tpu.grpcTcpMinRtt.meanUs": 160716.0 / 4096,
            "tpu.grpcTcpMinRtt.p50Us": 35.99,
            "tpu.grpcTcpMinRtt.p90Us": 52.15,
            "tpu.grpcTcpMinRtt.p95Us": 53.83,
            "tpu.grpcTcpMinRtt.p999Us": 55.51,
            # The two devices' distributions pooled: 100 samples in [1, 2, 4, 8, 16] ms buckets.
            "tpu.bufferTransferLatency.8mb_plus.meanUs": 5200.0,
            "tpu.bufferTransferLatency.8mb_plus.p50Us": 4000.0,
            "tpu.bufferTransferLatency.8mb_plus.p90Us": 8000.0,
            "tpu.bufferTransferLatency.8mb_plus.p95Us": 12000.0,
            "tpu.bufferTransferLatency.8mb_plus.p999Us": 15920.0,
            "tpu.hloQueueSize.tensor_core_0": 5.0,
            "tpu.hloQueueSize.tensor_core_1": 12.0,
        }
    )
    return values


# -- detection ---------------------------------------------------------------------------


def test_a_box_without_a_tpu_is_absent_without_asking_the_service_or_loading_libtpu(plain_host, service, fake_libtpu):
    tpu = TpuCollector(sys_root=plain_host, address=service.address, use_libtpu=True)
    probe = tpu.probe()
    tpu.close()
    assert not probe.available
    assert probe.reason == "no Google TPU on the PCI bus (Google devices 0x0042 are not TPUs)"
    assert service.requests == []
    assert "libtpu" not in sys.modules


def test_a_machine_without_pci_sysfs_is_absent(tmp_path):
    probe = TpuCollector(sys_root=str(tmp_path)).probe()
    assert (probe.available, probe.reason) == (False, "no Google TPU on the PCI bus")


def test_the_pci_scan_names_the_model_and_counts_chips_not_functions(tmp_path):
    scan = scan_pci(fake_sysfs(tmp_path / "c", V6E_4))
    assert (scan.chip.name, scan.chip.hbm_gib, scan.chip.devices_per_chip, scan.count, scan.others) == ("TPU v6e", 32, 1, 4, ("0x0042",))
    v3 = [(f"0000:00:04.{function}", "0x1ae0", "0x0027", "0x004f") for function in (0, 1)]  # one chip, two functions
    scan = scan_pci(fake_sysfs(tmp_path / "d", v3))
    assert (scan.chip.name, scan.chip.devices_per_chip, scan.count) == ("TPU v3", 2, 1)


def test_without_grpcio_or_libtpu_the_collector_says_what_to_install(v6e_host, monkeypatch):
    monkeypatch.setitem(sys.modules, "grpc", None)
    monkeypatch.delitem(sys.modules, "collectors.tpu_runtime.client", raising=False)
    probe = TpuCollector(sys_root=v6e_host, use_libtpu=False).probe()
    assert (probe.available, probe.reason) == (False, "grpcio is not installed: install leet-monitor[tpu]")


# -- the gRPC service -------------------------------------------------------------------------


def test_a_v6e_4_host_gives_the_wandb_keys_from_the_runtime_service(v6e_host, service):
    tpu = collector(v6e_host, service.address)
    assert isinstance(tpu, Collector) and tpu.name == "tpu"
    assert tpu.probe().available
    try:
        values = dict(tpu.sample())
        assert values == pytest.approx(grpc_only_values())
        assert set(values) == set(grpc_only_values())
        infos = tpu.extras()["accelerators.tpu"]
        assert infos == tuple(
            AcceleratorInfo(
                vendor="Google",
                index=device,
                name="TPU v6e",
                utilization_key=f"tpu.{device}.dutyCycle",
                memory_key=f"tpu.{device}.hbmMemoryUsage",
                memory_total=TOTAL,
            )
            for device in range(4)
        )
        assert tpu.extras()["notes.tpu"] == ()
    finally:
        tpu.close()


def test_metrics_the_service_does_not_serve_are_not_asked_every_sweep(v6e_host, service):
    tpu = collector(v6e_host, service.address)
    tpu.probe()
    try:
        tpu.sample()
        tpu.sample()
    finally:
        tpu.close()
    served = set(service.responses)
    asked_twice = {name for name in service.requests if service.requests.count(name) == 2}
    asked_once = {name for name in service.requests if service.requests.count(name) == 1}
    assert asked_twice == served
    assert asked_once == {w.grpc_name for w in keys.WANTED if w.grpc_name} - served
    assert "tpu.runtime.hbm.utilization.percent" in asked_once


def test_before_the_first_sample_each_chip_is_listed_with_its_nominal_memory(v6e_host):
    tpu = collector(v6e_host, f"localhost:{closed_port()}")
    tpu.probe()
    infos = tpu.extras()["accelerators.tpu"]
    tpu.close()
    assert [(info.index, info.name, info.memory_total) for info in infos] == [(device, "TPU v6e", 32 * 2**30) for device in range(4)]


def test_without_a_workload_the_collector_is_healthy_and_says_why_it_has_nothing(v6e_host):
    address = f"localhost:{closed_port()}"
    tpu = collector(v6e_host, address)
    assert tpu.probe().available
    try:
        started = time.monotonic()
        assert tpu.sample() == {}
        assert time.monotonic() - started < 1.0
        reasons = {info.reason for info in tpu.extras()["accelerators.tpu"]}
        assert reasons == {f"no TPU workload is running: nothing answers at {address}"}
    finally:
        tpu.close()


def test_a_service_that_never_answers_makes_the_sample_raise_within_its_timeout(v6e_host):
    hung = RuntimeService(fixture_responses(), hang=True)
    tpu = collector(v6e_host, hung.address)
    tpu.probe()
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"gave no answer in 0\.5 s"):
            tpu.sample()
        assert time.monotonic() - started < tpu.budget
    finally:
        tpu.close()
        hung.stop()


def test_a_service_that_goes_away_mid_run_leaves_the_collector_idle_until_it_returns(v6e_host):
    served = RuntimeService(fixture_responses())
    port = served.port
    tpu = collector(v6e_host, served.address)
    tpu.probe()
    try:
        assert tpu.sample()["tpu.0.dutyCycle"] == 100.0
        served.stop()
        assert tpu.sample() == {}
        assert tpu.extras()["accelerators.tpu"][0].reason.startswith("no TPU workload is running")
        served = RuntimeService(fixture_responses(), port=port)
        deadline = time.monotonic() + 10
        values = tpu.sample()
        while not values and time.monotonic() < deadline:
            time.sleep(0.2)
            values = tpu.sample()
        assert values["tpu.0.hbmCapacityUsage"] == USAGE[0]
        assert tpu.extras()["accelerators.tpu"][0].reason == ""
    finally:
        tpu.close()
        served.stop()


def test_two_device_chips_write_the_chip_duty_cycle_to_both_devices(tmp_path):
    root = fake_sysfs(tmp_path, [("0000:00:04.0", "0x1ae0", "0x0027", "0x004f")])  # one TPU v3 chip
    device = {"key": "device-id", "value": {"int_attr": 0}}
    duty = {"metric": {"metrics": [{"attribute": device, "gauge": {"as_double": 42.5}}]}}
    usage = {"metric": {"metrics": [{"attribute": {"key": "device-id", "value": {"int_attr": d}}, "gauge": {"as_int": 100 + d}} for d in (0, 1)]}}
    served = RuntimeService(
        {
            "tpu.runtime.tensorcore.dutycycle.percent": json_format.ParseDict(duty, pb.MetricResponse()),
            "tpu.runtime.hbm.memory.usage.bytes": json_format.ParseDict(usage, pb.MetricResponse()),
        }
    )
    tpu = collector(root, served.address)
    tpu.probe()
    try:
        assert tpu.sample() == {
            "tpu.0.dutyCycle": 42.5,
            "tpu.1.dutyCycle": 42.5,
            "tpu.0.hbmCapacityUsage": 100.0,
            "tpu.1.hbmCapacityUsage": 101.0,
        }
        assert [info.memory_total for info in tpu.extras()["accelerators.tpu"]] == [8 * 2**30, 8 * 2**30]
    finally:
        tpu.close()
        served.stop()


# -- libtpu's SDK -------------------------------------------------------------------------------


def test_libtpu_sdk_comes_first_and_the_service_fills_the_gaps(v6e_host, service, fake_libtpu):
    tpu = collector(v6e_host, service.address, use_libtpu=True)
    assert tpu.probe().available
    try:
        values = dict(tpu.sample())
    finally:
        tpu.close()
    expected: dict[str, float] = {}
    for device, (utilization, usage) in enumerate(zip((13.60, 14.81, 14.36, 13.60), USAGE)):
        expected[f"tpu.{device}.tensorcoreUtilization"] = utilization
        expected[f"tpu.{device}.dutyCycle"] = 100.0
        expected[f"tpu.{device}.hbmCapacityUsage"] = usage
        expected[f"tpu.{device}.hbmCapacityTotal"] = TOTAL  # not in this SDK: from the service
        expected[f"tpu.{device}.hbmMemoryUsage"] = usage / TOTAL * 100
    for label, stats in (
        ("8mb_plus", (112345.10, 108978.82, 164849.81, 177366.42, 212419.07)),
        ("4mb_plus", (23001.77, 21739.38, 38126.84, 42110.12, 55474.21)),
    ):
        for name, value in zip(("mean", "p50", "p90", "p95", "p999"), stats):
            expected[f"tpu.bufferTransferLatency.{label}.{name}Us"] = value
    for name, value in zip(("mean", "p50", "p90", "p95", "p999"), (39.24, 35.99, 52.15, 53.83, 55.51)):
        expected[f"tpu.grpcTcpMinRtt.{name}Us"] = value
    expected["tpu.hloQueueSize.tensor_core_0"] = 5.0
    expected["tpu.hloQueueSize.tensor_core_1"] = 12.0
    assert values == pytest.approx(expected)
    assert set(values) == set(expected)
    asked = set(service.requests)
    assert "tpu.runtime.hbm.memory.total.bytes" in asked
    assert not asked & {"tpu.runtime.tensorcore.dutycycle.percent", "tpu.runtime.hbm.memory.usage.bytes", LATENCY, QUEUE}


def test_libtpu_is_not_imported_unless_asked(v6e_host, service, fake_libtpu):
    tpu = collector(v6e_host, service.address, use_libtpu=False)
    tpu.probe()
    tpu.close()
    assert "libtpu" not in sys.modules


def test_with_libtpu_but_without_grpcio_the_sdk_alone_is_read(v6e_host, fake_libtpu, monkeypatch):
    monkeypatch.setitem(sys.modules, "grpc", None)
    monkeypatch.delitem(sys.modules, "collectors.tpu_runtime.client", raising=False)
    tpu = TpuCollector(sys_root=v6e_host, use_libtpu=True)
    assert tpu.probe().available
    assert tpu.extras()["notes.tpu"] == ("grpcio is not installed (install leet-monitor[tpu]): only libtpu's SDK is read",)
    values = tpu.sample()
    tpu.close()
    assert values["tpu.2.tensorcoreUtilization"] == pytest.approx(14.36)
    assert "tpu.0.hbmCapacityTotal" not in values


# -- the key rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "part"),
    [("8MB+", "8mb_plus"), ("tensor_core-0", "tensor_core_0"), ("  GPU+Memory 100% ", "gpu_plus_memory_100pct"), ("!!!", "unknown")],
)
def test_labels_become_key_parts(label, part):
    assert keys.sanitize(label) == part


def test_a_p99_row_is_named_by_its_description():
    wanted = keys.Wanted("tpu.hloExecTiming", keys.LABELED, unit="Us")
    values = keys.from_sdk(wanted, "mean, p50, p90, p99, p999", ["main.1, 10, 20, 30, 40, 50"], 1)
    assert values == {f"tpu.hloExecTiming.main_1.{name}Us": value for name, value in zip(("mean", "p50", "p90", "p99", "p999"), (10, 20, 30, 40, 50))}


def test_percentiles_interpolate_inside_a_bucket_and_stop_at_the_last_edge():
    edges = [1.0, 2.0, 4.0]
    assert keys.percentile([0, 2, 2, 0], edges, 0.5) == 2.0
    assert keys.percentile([0, 2, 2, 0], edges, 0.75) == 3.0
    assert keys.percentile([2, 0, 0, 0], edges, 0.5) == 0.5  # underflow: from 0 to the first edge
    assert keys.percentile([0, 0, 0, 4], edges, 0.9) == 4.0  # overflow


# -- under the hub ---------------------------------------------------------------------------------------


def test_under_the_hub_a_served_host_is_ok_and_a_hung_service_is_failing(v6e_host, service):
    hub = Hub([collector(v6e_host, service.address)], warmup=0.0)
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert sample.values["tpu.3.hbmMemoryUsage"] == pytest.approx(USAGE[3] / TOTAL * 100)
    assert len(sample.extras["accelerators.tpu"]) == 4
    assert [(status.name, status.health) for status in sample.status] == [("tpu", Health.OK)]

    hung = RuntimeService(fixture_responses(), hang=True)
    hub = Hub([collector(v6e_host, hung.address)], warmup=0.0)
    try:
        (status,) = hub.sweep().status
    finally:
        hub.stop()
        hung.stop()
    assert status.health is Health.FAILING
    assert "gave no answer in 0.5 s" in status.reason
