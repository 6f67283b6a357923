"""A Prometheus that answers what cannot be read, or redirects elsewhere: one line, no traceback, no credentials sent on."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator

import pytest

from leet.cli import main
from leet.model.store import Store
from leet.sources.cluster import ClusterSource
from leet.sources.prometheus_api import PrometheusClient, PrometheusError, endpoint

DEEP = b"[" * 10_000 + b"]" * 10_000
TOKEN = "s3cret-token"


class Server:
    """A loopback HTTP server answering every request with ``answer(path)`` -> (status, headers, body); it keeps what it was sent."""

    def __init__(self, answer: Callable[[str], tuple[int, dict[str, str], bytes]]) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                seen.append((self.command, self.path, dict(self.headers)))
                status, headers, body = answer(self.path)
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _wait(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.01)


@pytest.fixture
def deep() -> Iterator[Server]:
    with Server(lambda path: (200, {"Content-Type": "application/json"}, DEEP)) as server:
        yield server


@pytest.mark.parametrize(
    "body",
    [
        DEEP,
        b'{"status": "success", "data": ' + DEEP + b"}",
        b'{"status": "error", "error": ' + b"[" * 900 + b"]" * 900 + b"}",
        b'{"status": "success", "data": {"result": [], "resultType": ' + b"[" * 900 + b"]" * 900 + b"}}",
        b"[1, 2]",
        b'{"status": "success", "data": []}',
    ],
    ids=["deep", "deep-data", "deep-error", "deep-type", "list", "data-list"],
)
def test_an_answer_that_cannot_be_decoded_is_one_line_of_kind_garbage_or_refused(body):
    with Server(lambda path: (200, {"Content-Type": "application/json"}, body)) as server:
        client = PrometheusClient(endpoint(server.url), timeout=10)
        with pytest.raises(PrometheusError) as raised:
            client.query("up")
    assert raised.value.kind in ("garbage", "refused")
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 500


def test_leet_cluster_once_says_one_line_for_deep_json(deep, capsys):
    assert main(["cluster", deep.url, "--once"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"leet: Prometheus at {deep.url}"), captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_the_poller_goes_on_asking_after_deep_json(deep):
    source = ClusterSource(Store(), PrometheusClient(endpoint(deep.url), timeout=10), interval=1.0, load_history=False)
    source.start()
    try:
        _wait(lambda: len(deep.seen) >= 2, "a second query after the first garbage answer")
    finally:
        source.close()
    assert not source.status().reachable and "JSON" in source.status().message
    assert source.error == ""


@pytest.fixture
def elsewhere() -> Iterator[Server]:
    with Server(lambda path: (200, {"Content-Type": "application/json"}, b'{"status": "success", "data": {"resultType": "vector", "result": []}}')) as server:
        yield server


def _redirecting(to: str) -> Server:
    return Server(lambda path: (301, {"Location": to + path}, b""))


@pytest.mark.parametrize("how", ["bearer-env", "token-file", "basic-in-url", "user-and-password-file"])
def test_credentials_never_follow_a_redirect_to_another_origin(how, elsewhere, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LEET_PROMETHEUS_TOKEN", raising=False)
    monkeypatch.delenv("LEET_PROMETHEUS_PASSWORD", raising=False)
    secret = tmp_path / "secret"
    secret.write_text(TOKEN + "\n")
    with _redirecting(elsewhere.url) as first:
        url, flags = first.url, []
        if how == "bearer-env":
            monkeypatch.setenv("LEET_PROMETHEUS_TOKEN", TOKEN)
        elif how == "token-file":
            flags = ["--token-file", str(secret)]
        elif how == "basic-in-url":
            url = first.url.replace("http://", f"http://me:{TOKEN}@")
        else:
            flags = ["--user", "me", "--password-file", str(secret)]
        assert main(["cluster", url, "--once", *flags]) == 1
    err = capsys.readouterr().err
    assert first.seen and "Authorization" in first.seen[0][2], "the server named got the credentials"
    assert elsewhere.seen == [], "the other origin got nothing"
    assert len(err.splitlines()) == 1 and f"redirect to {elsewhere.url}/api/v1/query" in err, err
    assert TOKEN not in err


def test_a_redirect_elsewhere_is_shown_with_its_password_masked(elsewhere):
    target = elsewhere.url.replace("http://", "http://who:hunter2@")
    with _redirecting(target) as first:
        client = PrometheusClient(endpoint(first.url, environ={"LEET_PROMETHEUS_TOKEN": TOKEN}), timeout=10)
        with pytest.raises(PrometheusError) as raised:
            client.query("up")
    assert raised.value.kind == "http"
    assert "hunter2" not in str(raised.value) and "who:***@127.0.0.1" in str(raised.value)
    assert elsewhere.seen == []


def test_a_redirect_to_another_port_of_the_same_host_is_another_origin(elsewhere):
    with _redirecting(elsewhere.url.replace("127.0.0.1", "localhost")) as first:
        client = PrometheusClient(endpoint(first.url), timeout=10)
        with pytest.raises(PrometheusError, match="redirect to http://localhost:"):
            client.query("up")
    assert elsewhere.seen == []
