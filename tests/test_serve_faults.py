"""``leet serve`` under load and abuse: the backlog, the cap on connections, the request deadline, quiet logs, TLS.

In process: a ``MetricsServer`` on a loopback port with a small cap and a
short deadline, and clients that connect and trickle bytes. End to end: ``leet
serve`` over https with a certificate made here by the ``openssl`` CLI, a
real ``prometheus`` scraping it with a bearer token, and token files that
others could read.
"""

from __future__ import annotations

import json
import selectors
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest
from test_openmetrics import free_port, require_server, running, stop_process
from test_serve import ENV, _exposition_with, fake_sample, fetch, samples_of, serve_command

from leet.config import ConfigError, load
from leet.export.connections import ServeCounters, tls_context
from leet.export.http import LISTEN_BACKLOG, MetricsServer, make_server, metrics_app

# A condition not met this long after it should have been is a failure, however busy the machine.
PATIENCE = 30.0
SLOW_REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "


def wait_until(condition: Callable[[], bool], what: str, seconds: float = PATIENCE) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds:g} s: {what}", pytrace=False)
        time.sleep(0.02)


@contextmanager
def serving(
    max_connections: int = 4, request_deadline: float = 10.0, slow_at_cap: float = 1.0, lines: list[str] | None = None, serve: bool = True,
    ssl_context: ssl.SSLContext | None = None,
) -> Iterator[MetricsServer]:
    counters = ServeCounters("n1", say=(lines.append if lines is not None else None))
    server = make_server(
        socket.AF_INET, ("127.0.0.1", 0), metrics_app(_exposition_with(fake_sample())),
        counters=counters, max_connections=max_connections, request_deadline=request_deadline, slow_at_cap=slow_at_cap,
        ssl_context=ssl_context,
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True) if serve else None
    if thread:
        thread.start()
    try:
        yield server
    finally:
        if thread:
            server.shutdown()
        server.server_close()


def url_of(server: MetricsServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/metrics"


def slow_clients(server: MetricsServer, count: int, stack: ExitStack) -> list[socket.socket]:
    """``count`` connections, each having sent the start of a request and no more."""
    clients = []
    for _ in range(count):
        client = stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        client.sendall(SLOW_REQUEST[:1])
        clients.append(client)
    return clients


def closed_by_server(client: socket.socket) -> bool:
    """Whether the server has answered or closed ``client`` (without waiting)."""
    with selectors.DefaultSelector() as selector:
        selector.register(client, selectors.EVENT_READ)
        return bool(selector.select(0))


# -- the backlog ---------------------------------------------------------------------------------


def test_a_burst_of_connections_waits_in_the_backlog_rather_than_being_dropped():
    with serving(serve=False) as server, ExitStack() as stack:  # nobody accepts: every connection waits in the backlog
        assert server.request_queue_size >= 128 == LISTEN_BACKLOG
        selector = stack.enter_context(selectors.DefaultSelector())
        pending = set()
        for _ in range(100):
            client = stack.enter_context(socket.socket())
            client.setblocking(False)
            client.connect_ex(server.server_address[:2])
            selector.register(client, selectors.EVENT_WRITE)
            pending.add(client)

        def all_connected() -> bool:
            for key, _ in selector.select(0.05):
                selector.unregister(key.fileobj)
                pending.discard(key.fileobj)  # type: ignore[arg-type]
            return not pending

        wait_until(all_connected, "100 connections in the backlog (socketserver's default of 5 leaves the rest retrying their SYN)", seconds=10)


# -- the cap -------------------------------------------------------------------------------------


def test_past_the_cap_a_connection_is_answered_503_at_once_without_a_thread():
    with serving(max_connections=4, slow_at_cap=10 * PATIENCE) as server, ExitStack() as stack:  # none is pushed out
        slow_clients(server, 4, stack)
        wait_until(lambda: server.counters.open == 4, "4 connections open")
        threads = threading.active_count()
        extra = stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        answer = b""
        while chunk := extra.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.0 503 ") and answer.endswith(b"too many clients\n")
        assert server.counters.rejected == 1 and threading.active_count() == threads
        assert fetch(url_of(server))[0] == 503  # a whole request past the cap gets its 503 too


def test_slow_clients_hold_no_more_threads_than_the_cap_and_a_scrape_still_answers():
    cap, extra = 8, 12
    # The deadline is far off: the scrape gets in by pushing out a slow client, not by waiting for one to time out.
    with serving(max_connections=cap, request_deadline=10 * PATIENCE) as server, ExitStack() as stack:
        baseline = threading.active_count()
        most = baseline
        clients = slow_clients(server, cap + extra, stack)
        wait_until(lambda: server.counters.open + server.counters.rejected == cap + extra, "every slow connection accepted or refused")
        status, sent = 0, 1
        deadline = time.monotonic() + PATIENCE
        while status != 200:
            # Trickle a byte a time on every connection still open (each read succeeds: a per-read timeout never fires).
            byte = (SLOW_REQUEST + b"a" * 10_000)[sent:sent + 1]
            for client in clients:
                try:
                    if not closed_by_server(client):
                        client.send(byte)
                except OSError:
                    pass
            sent += 1
            most = max(most, threading.active_count())
            status, _, body = fetch(url_of(server))
            most = max(most, threading.active_count())
            assert time.monotonic() < deadline, f"no scrape answered 200 within {PATIENCE:g} s of {cap + extra} slow clients"
            time.sleep(0.1)  # the slow clients' pace
        assert b"leet_gpu_utilization_percent" in body
        assert most <= baseline + cap + 1, (most, baseline)
        assert server.counters.client_timeouts >= 1  # the slow client pushed out


def test_the_deadline_is_for_the_whole_request_not_each_read():
    with serving(request_deadline=1.0) as server, socket.create_connection(server.server_address[:2], timeout=PATIENCE) as client:
        started = time.monotonic()
        payload = SLOW_REQUEST + b"a" * 10_000
        for byte_at in range(len(payload)):
            if closed_by_server(client):
                break
            try:
                client.send(payload[byte_at:byte_at + 1])
            except OSError:
                break
            assert time.monotonic() - started < 8, "a client sending a byte every 0.1 s is still held after 8 s (a per-read timeout of 10 s never fires)"
            time.sleep(0.1)  # the slow client's pace
        wait_until(lambda: server.counters.client_timeouts == 1, "the dropped client counted")


# -- quiet logs and counters --------------------------------------------------------------------------


def test_idle_clients_cost_no_traceback_and_one_line(capfd):
    lines: list[str] = []
    with serving(max_connections=8, request_deadline=0.3, lines=lines) as server, ExitStack() as stack:
        slow_clients(server, 5, stack)
        wait_until(lambda: server.counters.client_timeouts == 5, "5 idle clients dropped")
    assert lines == ["dropped 1 client that sent no whole request in time (since the last such line; said at most once a minute)"]
    assert "Traceback" not in capfd.readouterr().err


def test_timeouts_are_said_at_most_once_a_minute_with_how_many_since_the_last_line():
    lines: list[str] = []
    now = [1000.0]
    counters = ServeCounters("n1", say=lines.append, clock=lambda: now[0])
    for moment in (1000.0, 1001.0, 1030.0, 1059.0):
        now[0] = moment
        counters.timed_out()
    assert len(lines) == 1 and lines[0].startswith("dropped 1 client ")
    now[0] = 1061.0
    counters.timed_out()
    assert len(lines) == 2 and lines[1].startswith("dropped 4 clients that sent no whole request in time")
    assert counters.client_timeouts == 5


def test_timeouts_and_refusals_are_series_on_the_page():
    exposition = _exposition_with(fake_sample())
    counters = ServeCounters("n1")
    exposition.registry.register(counters)
    counters.timed_out()
    counters.reject()
    counters.reject()
    exposition.update(fake_sample())
    found = samples_of(exposition.render()[0].decode())
    assert found[("leet_serve_client_timeouts_total", (("node", "n1"),))] == 1
    assert found[("leet_serve_connections_rejected_total", (("node", "n1"),))] == 2
    assert found[("leet_serve_connections", (("node", "n1"),))] == 0


def test_max_connections_is_a_setting_and_a_flag(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('max_connections = 16\ntls_cert = "/etc/leet/cert.pem"\ntls_key = "/etc/leet/key.pem"\n')
    loaded = load(path=config, must_exist=True)
    assert (loaded.max_connections, loaded.tls_cert, loaded.tls_key) == (16, "/etc/leet/cert.pem", "/etc/leet/key.pem")
    assert load({"max_connections": "3"}, path=config, must_exist=True).max_connections == 3
    with pytest.raises(ConfigError, match="--max-connections"):
        load({"max_connections": "0"}, path=config, must_exist=True)
    done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(free_port()), "--max-connections", "lots"], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "--max-connections" in done.stderr and "Traceback" not in done.stderr


# -- the token file ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_token_file_others_may_read_is_refused_with_the_chmod_that_fixes_it(tmp_path, mode):
    token = tmp_path / "token"
    token.write_text("t0ken")
    token.chmod(mode)
    done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(free_port()), "--token-file", str(token)], env=ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"chmod 600 {token}" in done.stderr


# -- TLS -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made by the openssl CLI."""
    openssl = require_server("openssl")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


def test_a_real_prometheus_scrapes_https_with_a_bearer_token(certificate, tmp_path):
    cert, key = certificate
    token = tmp_path / "token"
    token.write_text("tls-t0ken\n")
    token.chmod(0o600)
    port = free_port()
    url = f"https://127.0.0.1:{port}/metrics"
    command = serve_command(port, "--label", "tls-node", "--token-file", str(token), "--tls-cert", str(cert), "--tls-key", str(key))
    trusted = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=str(cert))))
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def answers() -> bool:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                with trusted.open(urllib.request.Request(url, headers={"Authorization": "Bearer tls-t0ken"}), timeout=10) as response:
                    return b"leet_gpu_utilization_percent{" in response.read()
            except OSError:
                return False

        wait_until(answers, "leet serve answering over https")
        with pytest.raises(OSError):  # plain http reaches no page
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        _prometheus_scrapes(port, cert, tmp_path)
    finally:
        stop_process(process)


def _prometheus_scrapes(port: int, cert: Path, tmp_path: Path) -> None:
    binary = require_server("prometheus")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: leet\n    scheme: https\n"
        f"    tls_config:\n      ca_file: {cert}\n"
        "    authorization:\n      type: Bearer\n      credentials: tls-t0ken\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    prometheus_port = free_port()
    base = f"http://127.0.0.1:{prometheus_port}"
    command = [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prometheus_port}"]
    with running(command, f"{base}/-/ready", tmp_path / "prometheus.log"):

        def result(query: str) -> list:
            answer = json.loads(fetch(f"{base}/api/v1/query?query={urllib.parse.quote(query)}")[2])
            return answer["data"]["result"] if answer["status"] == "success" else []

        wait_until(lambda: bool(result('up{job="leet"} == 1')), "Prometheus's up for the https target is 1")
        wait_until(lambda: bool(result('leet_gpu_utilization_percent{node="tls-node",gpu="0"}')), "a leet series queryable in Prometheus")
        (up,) = result('up{job="leet"}')
        assert up["value"][1] == "1"


def test_tls_settings_that_cannot_work_are_one_line_and_status_2(certificate, tmp_path):
    cert, key = certificate
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    for args, says in (
        (["--tls-cert", str(cert)], "--tls-cert and --tls-key go together"),
        (["--tls-cert", "/nonexistent/cert.pem", "--tls-key", str(key)], "--tls-cert /nonexistent/cert.pem"),
        (["--tls-cert", str(garbage), "--tls-key", str(key)], "not a PEM certificate chain and its key"),
    ):
        done = subprocess.run([sys.executable, "-m", "leet", "serve", "--port", str(free_port()), *args], env=ENV, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, (args, done.stderr)


def tls_client(server: MetricsServer, cert: Path) -> ssl.SSLSocket:
    """A TLS connection to ``server`` that trusts ``cert``, its handshake done."""
    trusting = ssl.create_default_context(cafile=str(cert))
    raw = socket.create_connection(server.server_address[:2], timeout=PATIENCE)
    return trusting.wrap_socket(raw, server_hostname="127.0.0.1")


def read_all(client: socket.socket) -> bytes:
    answer = b""
    while chunk := client.recv(4096):
        answer += chunk
    return answer


def test_past_the_cap_a_tls_connection_is_answered_503_over_tls(certificate):
    with serving(max_connections=2, slow_at_cap=10 * PATIENCE, ssl_context=tls_context(*map(str, certificate))) as server, ExitStack() as stack:
        for _ in range(2):  # the cap, held by clients that never start their handshake
            stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        wait_until(lambda: server.counters.open == 2, "2 connections open")
        extra = stack.enter_context(tls_client(server, certificate[0]))
        extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = read_all(extra)
        assert answer.startswith(b"HTTP/1.0 503 ") and answer.endswith(b"too many clients\n"), answer
        assert server.counters.rejected == 1


def test_past_the_cap_a_slow_tls_handshake_holds_no_thread_and_delays_no_other_refusal(certificate):
    context = tls_context(*map(str, certificate))
    with serving(max_connections=2, request_deadline=10 * PATIENCE, slow_at_cap=10 * PATIENCE, ssl_context=context) as server, ExitStack() as stack:
        for _ in range(2):
            stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        wait_until(lambda: server.counters.open == 2, "2 connections open")
        baseline = threading.active_count()
        stalled = [stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE)) for _ in range(5)]
        for client in stalled:
            client.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, and no more
        wait_until(lambda: server.counters.rejected == 5, "5 stalled connections refused")
        extra = stack.enter_context(tls_client(server, certificate[0]))  # its handshake is not queued behind theirs
        assert read_all(extra).startswith(b"HTTP/1.0 503 ")
        assert threading.active_count() <= baseline + 1, "one thread answers every TLS connection past the cap"
        # Their handshake's short deadline, far within the request's: each is dropped, none holds anything.
        wait_until(lambda: all(closed_by_server(client) for client in stalled), "every stalled handshake past the cap closed")


def test_past_the_cap_a_tls_refusal_thread_that_fails_says_so_and_the_next_is_answered(certificate, monkeypatch, capsys):
    from leet.export import tls_refusals

    failures = iter([RuntimeError("planted")])

    def take_new_once_failing(self, selector, live):
        for failure in failures:
            raise failure
        return original(self, selector, live)

    original = tls_refusals.TlsRefusals._take_new
    monkeypatch.setattr(tls_refusals.TlsRefusals, "_take_new", take_new_once_failing)
    with serving(max_connections=2, slow_at_cap=10 * PATIENCE, ssl_context=tls_context(*map(str, certificate))) as server, ExitStack() as stack:
        for _ in range(2):
            stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        wait_until(lambda: server.counters.open == 2, "2 connections open")
        lost = stack.enter_context(socket.create_connection(server.server_address[:2], timeout=PATIENCE))
        wait_until(lambda: "planted" in capsys.readouterr().err, "the failure said on stderr")
        extra = stack.enter_context(tls_client(server, certificate[0]))
        extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_all(extra).startswith(b"HTTP/1.0 503 ")
        lost.close()
