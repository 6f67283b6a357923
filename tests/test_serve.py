"""``leet serve``: the page a scrape reads, its HTTP side, and the real command end to end.

In process: the exposition built from fake sweeps, checked with prometheus_client's
parsers and Debian's ``promtool check metrics``. End to end: ``leet serve`` on a
free loopback port against made-up NVIDIA GPUs (the NVML stand-in, through
``benchmarks/fake_gpus.py``), fetched over HTTP, with token auth, refusals, SIGTERM,
and a real ``prometheus`` scraping it every second.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families
from test_openmetrics import DIRECT, free_port, require_server, running, stop_process
from test_serve_names import EVERY_KEY

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample
from collectors.fake import FakeClock, make_fake_collectors, replay
from collectors.fake_gpu import FAKE_RANK0_PID
from collectors.gpu import GpuProcess
from collectors.hub import Hub
from leet.export.exposition import MAX_PROCESS_SERIES, Exposition, short_command
from leet.export.http import bearer_ok, is_loopback, make_server, metrics_app, resolve
from leet.export.names import series

ROOT = Path(__file__).resolve().parent.parent
FAKE_GPUS = ROOT / "benchmarks" / "fake_gpus.py"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
ENV = {**os.environ, "LEET_CONFIG": "", "PYTHONUNBUFFERED": "1"}


def fake_sample(gpus: int = 2) -> Sample:
    clock = FakeClock(1_000.0)
    return replay(make_fake_collectors(clock, gpus=gpus), clock, 1_000.0, 2.0, 3)[-1]


def page_of(exposition: Exposition, accept: str = "") -> str:
    page, _, _ = exposition.render(accept)
    return page.decode()


def samples_of(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def promtool_check(text: str) -> subprocess.CompletedProcess:
    promtool = require_server("promtool")
    return subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)


# -- the page ----------------------------------------------------------------------


def test_every_value_of_a_sweep_is_on_the_page_in_base_units():
    sample = fake_sample()
    exposition = Exposition(node="box1", hostname="box1.example", version="9.9")
    exposition.update(sample, sweep_seconds=0.012)
    found = samples_of(page_of(exposition))
    for key, value in sample.values.items():
        expected = series(key, "box1")
        assert found[(expected.metric.sample_name, tuple(sorted(expected.labels)))] == pytest.approx(value * expected.scale), key
    clocks = {labels: value for (name, labels), value in found.items() if name == "leet_gpu_sm_clock_hertz"}
    assert clocks and all(value > 1e8 for value in clocks.values())  # MHz became Hz
    assert found[("leet_host_info", (("hostname", "box1.example"), ("node", "box1"), ("version", "9.9")))] == 1
    assert found[("leet_sweep_duration_seconds", (("node", "box1"),))] == pytest.approx(0.012)
    assert found[("leet_sweep_timestamp_seconds", (("node", "box1"),))] == sample.timestamp


def test_collectors_are_up_while_healthy_with_their_last_call_time():
    statuses = (CollectorStatus("nvidia", Health.OK, last_ms=12.5), CollectorStatus("amd", Health.ABSENT, "no driver"), CollectorStatus("tpu", Health.HUNG))
    exposition = Exposition(node="n1", hostname="h", version="1")
    exposition.update(Sample(1.0, {}, status=statuses))
    found = samples_of(page_of(exposition))
    up = {dict(labels)["collector"]: value for (name, labels), value in found.items() if name == "leet_collector_up"}
    assert up == {"nvidia": 1, "amd": 0, "tpu": 0}
    present = {dict(labels)["collector"]: value for (name, labels), value in found.items() if name == "leet_collector_present"}
    assert present == {"nvidia": 1, "amd": 0, "tpu": 1}  # a hung backend is there, and in trouble
    assert found[("leet_collector_duration_seconds", (("collector", "nvidia"), ("node", "n1")))] == pytest.approx(0.0125)


def test_gpu_processes_export_their_memory_by_gpu_pid_and_short_command():
    found = samples_of(page_of(_exposition_with(fake_sample())))
    rows = {dict(labels)["pid"]: dict(labels) for (name, labels), _ in found.items() if name == "leet_gpu_process_memory_bytes"}
    trainer = rows[str(FAKE_RANK0_PID)]
    assert trainer["gpu"] == "0" and trainer["command"] == "python train.py"  # no arguments past the first


def test_gpu_process_series_are_capped_at_the_largest():
    rows = tuple(GpuProcess(gpu=i % 8, pid=1000 + i, host_pid=1000 + i, command=f"/usr/bin/job{i} --secret=x", used_memory=i * 2**20) for i in range(500))
    exposition = Exposition(node="n", hostname="h", version="1")
    exposition.update(Sample(1.0, {}, extras={"gpu_processes": rows}))
    memory = [value for (name, _), value in samples_of(page_of(exposition)).items() if name == "leet_gpu_process_memory_bytes"]
    assert len(memory) == MAX_PROCESS_SERIES
    assert min(memory) == (500 - MAX_PROCESS_SERIES) * 2**20


def test_short_command_keeps_the_program_and_its_first_argument():
    assert short_command("/opt/conda/bin/python -m torch.distributed.run --token=abc") == "python -m"
    assert short_command("") == ""
    assert len(short_command("x" * 500)) == 64


def test_a_dcgm_series_for_this_node_does_not_repeat_nvmls():
    exposition = Exposition(node="box1", hostname="box1", version="1")
    exposition.update(Sample(1.0, {"gpu.0.temp": 50.0, "gpu.0.temp/l:box1": 51.0, "gpu.0.temp/l:box2": 52.0}))
    temps = {dict(labels)["node"]: value for (name, labels), value in samples_of(page_of(exposition)).items() if name == "leet_gpu_temperature_celsius"}
    assert temps == {"box1": 50.0, "box2": 52.0}


def test_promtool_finds_nothing_wrong_with_a_page_of_every_key():
    exposition = _exposition_with(Sample(1.0, dict.fromkeys(EVERY_KEY, 1.0), extras=fake_sample().extras, status=fake_sample().status))
    checked = promtool_check(page_of(exposition))
    assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), checked.stdout + checked.stderr


def test_openmetrics_when_the_scraper_asks_for_it():
    exposition = _exposition_with(Sample(1.0, dict.fromkeys(EVERY_KEY, 1.0)))
    page, content_type, _ = exposition.render("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    families = {family.name: family for family in openmetrics_families(page.decode())}  # strict: # EOF, _total, units
    assert families["leet_network_received_bytes"].type == "counter" and families["leet_network_received_bytes"].unit == "bytes"
    assert families["leet_host"].type == "info"
    _, plain_type, _ = exposition.render("text/plain;version=0.0.4")
    assert plain_type.startswith("text/plain") and "version=0.0.4" in plain_type


def test_scrapes_read_the_last_sweep_and_never_sample():
    class Counting(Collector):
        name = "counting"
        calls = 0

        def probe(self) -> Probe:
            return Probe.ok()

        def sample(self) -> dict[str, float]:
            Counting.calls += 1
            return {"gpu.0.gpu": float(Counting.calls)}

    hub = Hub([Counting()], interval=60, warmup=0)
    exposition = Exposition(node="n", hostname="h", version="1")
    hub.subscribe(exposition.update)
    try:
        hub.sweep()
        pages = {exposition.render("")[0] for _ in range(50)}
        assert Counting.calls == 1 and len(pages) == 1
        assert 'leet_gpu_utilization_percent{gpu="0",node="n",wandb_key="gpu.0.gpu"} 1.0' in pages.pop().decode()
        hub.sweep()
        assert 'wandb_key="gpu.0.gpu"} 2.0' in page_of(exposition)
    finally:
        hub.stop()


def test_the_page_is_gzipped_when_the_scraper_accepts_it():
    exposition = _exposition_with(fake_sample())
    zipped, _, was_zipped = exposition.render("", "gzip")
    assert was_zipped and gzip.decompress(zipped) == exposition.render("")[0]


def _exposition_with(sample: Sample) -> Exposition:
    exposition = Exposition(node="box1", hostname="box1", version="1")
    exposition.update(sample)
    return exposition


# -- the HTTP side -------------------------------------------------------------------


def test_bearer_tokens_match_only_whole():
    import hashlib

    digest = hashlib.sha256(b"s3cret").digest()
    assert bearer_ok("Bearer s3cret", digest) and bearer_ok("bearer  s3cret ", digest)
    for header in ("", "Bearer", "Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"):
        assert not bearer_ok(header, digest), header


def test_loopback_addresses():
    assert is_loopback(resolve("127.0.0.1", 0)) and is_loopback(resolve("localhost", 0))
    assert is_loopback(resolve("::1", 0)) or not socket.has_ipv6
    assert not is_loopback(resolve("0.0.0.0", 0))
    assert not is_loopback([])


@pytest.fixture
def app_server() -> Iterator[str]:
    exposition = _exposition_with(fake_sample())
    server = make_server(socket.AF_INET, ("127.0.0.1", 0), metrics_app(exposition, token="s3cret"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetch(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with DIRECT.open(request, timeout=10) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers.items()), error.read()


def test_http_needs_the_token_and_says_how_to_give_it(app_server):
    status, headers, _ = fetch(f"{app_server}/metrics")
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    status, _, _ = fetch(f"{app_server}/metrics", {"Authorization": "Bearer wrong"})
    assert status == 401
    status, headers, body = fetch(f"{app_server}/metrics", {"Authorization": "Bearer s3cret"})
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and b"leet_gpu_utilization_percent" in body


def test_http_methods_and_paths(app_server):
    auth = {"Authorization": "Bearer s3cret"}
    status, headers, body = fetch(f"{app_server}/metrics", auth, method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
    assert fetch(f"{app_server}/metrics", auth, method="POST")[0] == 405
    assert fetch(f"{app_server}/", auth)[0] == 200
    assert fetch(f"{app_server}/nothing", auth)[0] == 404
    status, headers, body = fetch(f"{app_server}/metrics", {**auth, "Accept-Encoding": "gzip"})
    assert headers.get("Content-Encoding") == "gzip" and b"leet_host_info" in gzip.decompress(body)


# -- the command, end to end ---------------------------------------------------------------


def serve_command(port: int, *args: str, gpus: int = 2) -> list[str]:
    return [sys.executable, str(FAKE_GPUS), "--gpus", str(gpus), "-m", "leet", "serve", "--port", str(port), "--interval", "0.5", *args]


def wait_for_series(url: str, name: str, headers: dict[str, str] | None = None, seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    status, text = 0, ""
    while True:
        try:
            status, _, body = fetch(url, headers)
            text = body.decode()
        except OSError:  # not listening yet
            pass
        if status == 200 and f"\n{name}{{" in text:
            return text
        if time.monotonic() > deadline:
            pytest.fail(f"{name} did not appear at {url} within {seconds:g} s; last answer {status}:\n{text[-2000:]}", pytrace=False)
        time.sleep(0.1)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The /metrics URL of ``leet serve`` on two made-up GPUs, its first GPU sweep in."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LEET_CONFIG", ENV["LEET_CONFIG"])  # no personal config
        with running(serve_command(port, "--label", "gpu-node-1"), url, log):
            wait_for_series(url, "leet_gpu_utilization_percent")
            yield url


def test_served_page_passes_promtool_and_names_each_gpu(served):
    text = wait_for_series(served, "leet_gpu_utilization_percent")
    checked = promtool_check(text)
    assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), checked.stdout + checked.stderr
    found = samples_of(text)
    for gpu in ("0", "1"):
        labels = (("gpu", gpu), ("node", "gpu-node-1"), ("wandb_key", f"gpu.{gpu}.gpu"))
        assert 0 <= found[("leet_gpu_utilization_percent", labels)] <= 100
    assert found[("leet_collector_up", (("collector", "nvidia"), ("node", "gpu-node-1")))] == 1
    assert found[("leet_host_info", (("hostname", socket.gethostname()), ("node", "gpu-node-1"), ("version", _version())))] == 1


def test_served_openmetrics_by_content_negotiation(served):
    status, headers, body = fetch(served, {"Accept": "application/openmetrics-text; version=1.0.0"})
    assert status == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
    assert body.endswith(b"# EOF\n")
    names = {family.name for family in openmetrics_families(body.decode())}
    assert {"leet_gpu_utilization_percent", "leet_network_received_bytes", "leet_host"} <= names


def test_a_token_file_guards_the_page(tmp_path):
    token = tmp_path / "token"
    token.write_text("t0ken-for-tests\n")
    token.chmod(0o600)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    process = subprocess.Popen(serve_command(port, "--token-file", str(token)), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        status, headers = _first_answer(url, process)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        assert fetch(url, {"Authorization": "Bearer t0ken-for-tests"})[0] == 200
    finally:
        stop_process(process)


def test_sigterm_stops_cleanly_with_status_0(tmp_path):
    port = free_port()
    process = subprocess.Popen(serve_command(port), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_series(f"http://127.0.0.1:{port}/metrics", "leet_gpu_utilization_percent")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    finally:
        stop_process(process)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
    with socket.socket() as sock:  # the port is free again, as a restart would bind it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(1)


def test_sigint_stops_cleanly_too():
    port = free_port()
    process = subprocess.Popen(serve_command(port), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _first_answer(f"http://127.0.0.1:{port}/metrics", process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
    finally:
        stop_process(process)
    assert process.returncode == 0 and b"Traceback" not in stderr, stderr.decode()


def test_an_exposed_bind_without_a_token_is_refused_in_one_line():
    done = subprocess.run([sys.executable, "-m", "leet", "serve", "--bind", "0.0.0.0", "--port", str(free_port())], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--token-file" in done.stderr and "--insecure" in done.stderr


def test_an_exposed_bind_with_a_token_serves(tmp_path):
    token = tmp_path / "token"
    token.write_text("abc123")
    token.chmod(0o600)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "leet", "serve", "--bind", "0.0.0.0", "--port", str(port), "--token-file", str(token)],
        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        status, _ = _first_answer(f"http://127.0.0.1:{port}/metrics", process)
        assert status == 401
    finally:
        stop_process(process)


def test_insecure_serves_an_exposed_bind_without_a_token():
    port = free_port()
    command = [sys.executable, "-m", "leet", "serve", "--bind", "0.0.0.0", "--port", str(port), "--insecure"]
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        status, _ = _first_answer(f"http://127.0.0.1:{port}/metrics", process)
        assert status == 200
    finally:
        stop_process(process)


@pytest.mark.parametrize("text", ["", "   \n", "two words", "caf\u00e9"])
def test_a_token_file_without_one_token_is_refused(tmp_path, text):
    token = tmp_path / "token"
    token.write_text(text, encoding="utf-8")
    token.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(free_port()), "--token-file", str(token)], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "one word of printable ASCII" in done.stderr


def test_a_port_in_use_is_one_line_and_status_1():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(port)], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in done.stderr and "in use" in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--token-file", "/nonexistent/token"], "--token-file /nonexistent/token"),
        (["--token-file", "/dev/null"], "not a regular file"),
        (["--bind", "no-such-host.invalid"], "--bind no-such-host.invalid"),
        (["--interval", "0"], "interval"),
        (["--port", "70000"], "port"),
    ],
)
def test_bad_settings_are_one_line_and_status_2(args, says):
    done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(free_port()), *args], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr


def test_serve_help_is_light_and_serving_loads_no_textual():
    code = (
        "import sys; from leet.cli import main\n"
        "try:\n    main(['serve', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('HELP', [m for m in ('textual', 'psutil', 'pynvml', 'prometheus_client') if m in sys.modules])\n"
        "from leet.commands import serve; from leet.export import exposition, http, names\n"
        "serve.headless_collectors(serve._config(serve.argparse.Namespace(openmetrics=None, openmetrics_filter=None, openmetrics_header=None, "
        "dcgm_exporter=None, interval=None, label=None, disk_paths=None, gpu_ids=None, config=None, max_connections=None, tls_cert=None, tls_key=None)), True)\n"
        "print('SERVE', [m for m in sys.modules if m.startswith(('textual', 'leet.ui'))])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=ENV).stdout
    assert "HELP []" in out and "SERVE []" in out, out


# -- a real Prometheus scraping it -----------------------------------------------------------


def test_real_prometheus_scrapes_and_answers_a_query(served, tmp_path):
    binary = require_server("prometheus")
    target = urllib.parse.urlsplit(served).netloc
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"scrape_configs:\n  - job_name: leet\n    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"]
    with running(command, f"{base}/-/ready", tmp_path / "prometheus.log"):
        query = urllib.parse.quote('leet_gpu_utilization_percent{gpu="0"}')
        deadline = time.monotonic() + 20
        while True:
            answer = json.loads(fetch(f"{base}/api/v1/query?query={query}")[2])
            if answer["status"] == "success" and answer["data"]["result"]:
                break
            assert time.monotonic() < deadline, answer
            time.sleep(0.25)
        (result,) = answer["data"]["result"]
        assert result["metric"]["node"] == "gpu-node-1" and result["metric"]["wandb_key"] == "gpu.0.gpu"
        assert 0 <= float(result["value"][1]) <= 100
        health = json.loads(fetch(f"{base}/api/v1/targets")[2])["data"]["activeTargets"]
        assert [target["health"] for target in health] == ["up"], health


# -- helpers -----------------------------------------------------------------------------------


def _version() -> str:
    from leet import __version__

    return __version__


def _first_answer(url: str, process: subprocess.Popen, seconds: float = 20.0) -> tuple[int, dict[str, str]]:
    """The status and headers of the first HTTP answer ``process`` gives at ``url``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"leet serve exited with {process.returncode}: {process.stderr.read().decode() if process.stderr else ''}", pytrace=False)
        try:
            status, headers, _ = fetch(url)
            return status, headers
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{url} did not answer within {seconds:g} s", pytrace=False)


