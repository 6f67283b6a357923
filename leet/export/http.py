"""The HTTP side of ``leet serve``: ``/metrics`` behind optional Bearer auth.

A small WSGI app over an ``Exposition``, served by a threading WSGI server
(one daemon thread per connection, a request timeout, no access log). The
format follows the scrape's ``Accept`` header (OpenMetrics when it asks for
``application/openmetrics-text``, else Prometheus text 0.0.4) and the page
is gzipped when ``Accept-Encoding`` allows it.

With a token every request needs ``Authorization: Bearer <token>``; tokens
are compared in constant time (as SHA-256 digests, so not even their length
shows), and a refusal is 401 with ``WWW-Authenticate: Bearer``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import selectors
import socket
import socketserver
from typing import Any, Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from leet.export.exposition import Exposition

METRICS_PATH = "/metrics"
REQUEST_TIMEOUT = 10.0  # seconds a client may take to send its request
REALM = "leet"

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_TEXT = "text/plain; charset=utf-8"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


def bearer_ok(header: str, token_digest: bytes) -> bool:
    """Whether an ``Authorization`` header carries the token whose SHA-256 is ``token_digest``."""
    scheme, _, credentials = header.strip().partition(" ")
    given = _digest(credentials.strip())
    # Compared even when the scheme is wrong, so a refusal takes the same time whatever was sent.
    matches = hmac.compare_digest(given, token_digest)
    return scheme.lower() == "bearer" and matches


def metrics_app(exposition: Exposition, token: str | None = None) -> WsgiApp:
    """The WSGI app: ``/metrics`` (GET, HEAD), a pointer to it at ``/``, 404 elsewhere."""
    token_digest = _digest(token) if token else None

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if token_digest is not None and not bearer_ok(environ.get("HTTP_AUTHORIZATION", ""), token_digest):
            return _plain(start_response, "401 Unauthorized", "a Bearer token is required\n", [("WWW-Authenticate", f'Bearer realm="{REALM}"')])
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            return _plain(start_response, "405 Method Not Allowed", f"{method} is not served; use GET\n", [("Allow", "GET, HEAD")])
        path = environ.get("PATH_INFO", "")
        if path == METRICS_PATH:
            page, content_type, zipped = exposition.render(environ.get("HTTP_ACCEPT", ""), environ.get("HTTP_ACCEPT_ENCODING", ""))
            headers = [("Content-Type", content_type), ("Content-Length", str(len(page)))]
            if zipped:
                headers.append(("Content-Encoding", "gzip"))
            start_response("200 OK", headers)
            return [b""] if method == "HEAD" else [page]
        if path in ("", "/"):
            return _plain(start_response, "200 OK", f"leet serve: the metrics are at {METRICS_PATH}\n")
        return _plain(start_response, "404 Not Found", f"nothing here; the metrics are at {METRICS_PATH}\n")

    return app


def _plain(start_response: StartResponse, status: str, text: str, headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", _TEXT), ("Content-Length", str(len(body))), *(headers or [])])
    return [body]


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr, and a client that stalls is dropped after ``REQUEST_TIMEOUT``."""

    timeout = REQUEST_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:
        pass


class MetricsServer(socketserver.ThreadingMixIn, WSGIServer):
    """A WSGI server with a thread per connection; binding never asks DNS for the host's name."""

    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls getfqdn(), a reverse lookup that can hang where DNS is broken.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])
        self.setup_environ()

    def serve_until(self, wake: socket.socket) -> None:
        """Answer connections until ``wake`` has something to read; no timer wakes it meanwhile.

        ``wake`` is what ``signal.set_wakeup_fd`` writes to: a signal the kernel
        hands to some other thread still ends the wait here, where
        ``serve_forever`` would sleep on until its next poll.
        """
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in selector.select()}
                if wake in ready:
                    return
                self._handle_request_noblock()  # type: ignore[attr-defined]  # socketserver's one-request step


def resolve(bind: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
    """(family, socket address) for every address ``bind`` names; ``socket.gaierror`` if none."""
    infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    return [(family, address) for family, _, _, _, address in infos]


def is_loopback(addresses: Iterable[tuple[int, tuple[Any, ...]]]) -> bool:
    """Whether every address is a loopback one (so only this machine can connect)."""
    found = False
    for _, address in addresses:
        found = True
        try:
            if not ipaddress.ip_address(str(address[0]).split("%", 1)[0]).is_loopback:
                return False
        except ValueError:
            return False
    return found


def make_server(family: int, address: tuple[Any, ...], app: WsgiApp) -> MetricsServer:
    """A bound, listening server for ``app``; ``OSError`` when the address cannot be had."""
    server_class = type("MetricsServer", (MetricsServer,), {"address_family": family})
    server = server_class(address, _QuietHandler)
    server.set_app(app)
    return server


__all__ = ["METRICS_PATH", "MetricsServer", "bearer_ok", "is_loopback", "make_server", "metrics_app", "resolve"]
