"""The HTTP side of ``leet serve``: ``/metrics`` behind optional Bearer auth.

A small WSGI app over an ``Exposition``, served by a threading WSGI server
(one daemon thread per connection, no access log, optionally over TLS). The
format follows the scrape's ``Accept`` header (OpenMetrics when it asks for
``application/openmetrics-text``, else Prometheus text 0.0.4) and the page
is gzipped when ``Accept-Encoding`` allows it.

With a token every request needs ``Authorization: Bearer <token>``; tokens
are compared in constant time (as SHA-256 digests, so not even their length
shows), and a refusal is 401 with ``WWW-Authenticate: Bearer``.

Under load and abuse: the listen backlog is ``LISTEN_BACKLOG``; at most
``max_connections`` connections hold a thread, and one past that is answered
a fixed 503 from the accepting thread without a thread of its own (over TLS,
from one ``tls_refusals`` thread for all of them, after a handshake given
``TLS_REFUSAL_SECONDS`` at most), unless a connection has been
sending its request for ``slow_at_cap`` seconds: that one is pushed out and
the new one served, so slow clients cannot starve scrapes. A client must
finish its TLS handshake, request line and headers within
``request_deadline`` seconds in all, however slowly it trickles bytes.
``connections.ServeCounters`` counts what was dropped and refused.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import io
import ipaddress
import selectors
import socket
import socketserver
import ssl
import sys
import threading
import time
from typing import Any, Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from leet.export.connections import DeadlineReader, ServeCounters, WaitingRequests, tls_handshake
from leet.export.exposition import Exposition
from leet.export.tls_refusals import TlsRefusals

METRICS_PATH = "/metrics"
REQUEST_TIMEOUT = 10.0  # seconds a client has for its TLS handshake, request line and headers, all told
REALM = "leet"
LISTEN_BACKLOG = 128  # socketserver's 5 turned away hundreds of connections of 50 scrapers at once
DEFAULT_MAX_CONNECTIONS = 64
# At the cap, a connection still sending its request after this many seconds gives its place to a new one:
# a scrape's request takes milliseconds, so only slow (or idle) clients are pushed out.
SLOW_AT_CAP_SECONDS = 1.0
EVICTION_WAIT = 2.0  # seconds the accepting thread waits for a pushed-out connection's thread to end
REFUSED_KEPT_OPEN = 128  # connections answered 503 and not yet closed (a file descriptor each)
TLS_REFUSAL_SECONDS = 2.0  # past the cap, a TLS client's handshake, 503 and close, all told (or the request deadline, if shorter)
# The answer past the cap, sent whole from the accepting thread: no parsing, no app, no thread.
BUSY_RESPONSE = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 1\r\nContent-Length: 29\r\nConnection: close\r\n\r\nleet serve: too many clients\n"
)

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
    """No access log on stderr; the request must be in by the server's deadline, and each write of the answer within ``timeout``."""

    timeout = REQUEST_TIMEOUT
    server: MetricsServer

    def setup(self) -> None:
        deadline = time.monotonic() + self.server.request_deadline
        self.accepted = self.request
        if self.server.ssl_context is not None:
            self.request = tls_handshake(self.server.ssl_context, self.request, deadline)
            self.server.waiting.wrapped(self.accepted, self.request)
        super().setup()
        self.rfile.close()  # the socket's own file; reads go through the deadline instead
        self.rfile = io.BufferedReader(DeadlineReader(self.connection, deadline))

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if isinstance(self.connection, ssl.SSLSocket):  # the server closes the plain socket it accepted, not this
                self.connection.close()

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self.server.waiting.done(self.accepted)
        self.connection.settimeout(self.timeout)  # the request is in: the answer's writes get the usual timeout
        return parsed

    def log_message(self, format: str, *args: Any) -> None:
        pass


class MetricsServer(socketserver.ThreadingMixIn, WSGIServer):
    """A WSGI server with a thread per connection, up to ``max_connections``; binding never asks DNS for the host's name."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    request_deadline = REQUEST_TIMEOUT
    slow_at_cap = SLOW_AT_CAP_SECONDS
    ssl_context: ssl.SSLContext | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._refused: collections.deque[socket.socket] = collections.deque()
        self._tls_refusals: TlsRefusals | None = None
        super().__init__(*args, **kwargs)

    def configure(
        self, counters: ServeCounters, max_connections: int, request_deadline: float, slow_at_cap: float, ssl_context: ssl.SSLContext | None
    ) -> None:
        self.counters = counters
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self.waiting = WaitingRequests()
        self.request_deadline = request_deadline
        self.slow_at_cap = slow_at_cap
        self.ssl_context = ssl_context
        if ssl_context is not None:
            self._tls_refusals = TlsRefusals(ssl_context, BUSY_RESPONSE, min(TLS_REFUSAL_SECONDS, request_deadline), REFUSED_KEPT_OPEN)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._take_slot():
            self.counters.reject()
            self._refuse(request)
            return
        self.counters.opened()
        self.waiting.add(request)
        try:
            super().process_request(request, client_address)  # starts the connection's thread
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # ThreadingMixIn's
        finally:
            self.waiting.done(request)
            self._release()

    def _take_slot(self) -> bool:
        """A place for one more connection: a free one, else one a slow client held (pushed out)."""
        if self._slots.acquire(blocking=False):
            return True
        if not self.waiting.push_out_older_than(self.slow_at_cap):
            return False
        self.counters.timed_out()
        return self._slots.acquire(timeout=EVICTION_WAIT)

    def _release(self) -> None:
        self.counters.closed()
        self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        if self._tls_refusals is not None:
            self._tls_refusals.refuse(request)
            return
        try:
            request.setblocking(False)
            request.send(BUSY_RESPONSE)
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        # Closed only later: closing over a request still arriving resets the connection, which can destroy the 503 unread.
        self._refused.append(request)
        if len(self._refused) > REFUSED_KEPT_OPEN:
            self.close_request(self._refused.popleft())

    def server_close(self) -> None:
        super().server_close()
        if self._tls_refusals is not None:
            self._tls_refusals.close()
        while self._refused:
            self.close_request(self._refused.popleft())

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, TimeoutError):
            self.counters.timed_out()
        elif not isinstance(error, OSError):  # a client that hung up or spoke no TLS is no news; anything else is a bug
            super().handle_error(request, client_address)

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


def make_server(
    family: int,
    address: tuple[Any, ...],
    app: WsgiApp,
    *,
    counters: ServeCounters | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    request_deadline: float = REQUEST_TIMEOUT,
    slow_at_cap: float = SLOW_AT_CAP_SECONDS,
    ssl_context: ssl.SSLContext | None = None,
) -> MetricsServer:
    """A bound, listening server for ``app``; ``OSError`` when the address cannot be had."""
    server_class = type("MetricsServer", (MetricsServer,), {"address_family": family})
    server = server_class(address, _QuietHandler)
    server.configure(counters or ServeCounters(node=""), max_connections, request_deadline, slow_at_cap, ssl_context)
    server.set_app(app)
    return server


__all__ = [
    "BUSY_RESPONSE", "DEFAULT_MAX_CONNECTIONS", "LISTEN_BACKLOG", "METRICS_PATH", "REQUEST_TIMEOUT", "TLS_REFUSAL_SECONDS", "MetricsServer",
    "bearer_ok", "is_loopback", "make_server", "metrics_app", "resolve",
]
