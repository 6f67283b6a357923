"""How ``leet serve``'s server keeps its connections in bounds, and counts what it drops.

``ServeCounters``: the ``leet_serve_*`` series (clients dropped for a slow
request, connections refused past the cap, connections open) and at most
one stderr line a minute about dropped clients. ``WaitingRequests``: the
connections still sending their request, oldest first, which a new
connection may push out at the cap. ``DeadlineReader``: a socket read
against one deadline for the whole request, not one timeout per read.
``tls_context`` and ``tls_handshake``: https, the handshake on the
connection's own thread and within the same deadline.
"""

from __future__ import annotations

import io
import socket
import ssl
import threading
import time
from typing import Any, Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from leet.export.names import NODE, PREFIX

TIMEOUT_NOTE_SECONDS = 60.0  # at most one stderr line per this many seconds about clients that timed out


class ServeCounters:
    """What the server did with its connections, as ``leet_serve_*`` series; a prometheus_client collector.

    Client timeouts also go to stderr, at most one line a minute: a port
    scanned or held open by slow clients must not flood a service's log.
    """

    def __init__(
        self, node: str, say: Callable[[str], None] | None = None, quiet_seconds: float = TIMEOUT_NOTE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.node = node
        self._say = say
        self._clock = clock
        self._quiet_seconds = quiet_seconds
        self._lock = threading.Lock()
        self.client_timeouts = 0
        self.rejected = 0
        self.open = 0
        self._unsaid_timeouts = 0
        self._said_at: float | None = None

    def opened(self) -> None:
        with self._lock:
            self.open += 1

    def closed(self) -> None:
        with self._lock:
            self.open -= 1

    def reject(self) -> None:
        with self._lock:
            self.rejected += 1

    def timed_out(self) -> None:
        """A client sent no whole request in time (the deadline, or pushed out at the cap); said on stderr at most once a ``quiet_seconds``."""
        now = self._clock()
        with self._lock:
            self.client_timeouts += 1
            self._unsaid_timeouts += 1
            if self._said_at is not None and now - self._said_at < self._quiet_seconds:
                return
            count, self._unsaid_timeouts, self._said_at = self._unsaid_timeouts, 0, now
        if self._say is not None:
            clients = "1 client that" if count == 1 else f"{count} clients that"
            self._say(f"dropped {clients} sent no whole request in time (since the last such line; said at most once a minute)")

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            timeouts, rejected, open_now = self.client_timeouts, self.rejected, self.open
        labels = (NODE,)
        timed_out = CounterMetricFamily(f"{PREFIX}serve_client_timeouts", "Connections dropped for sending no whole request in time: by the deadline, or pushed out at the cap after a second", labels=labels)
        timed_out.add_metric((self.node,), timeouts)
        refused = CounterMetricFamily(
            f"{PREFIX}serve_connections_rejected", "Connections answered 503 because --max-connections were open", labels=labels
        )
        refused.add_metric((self.node,), rejected)
        connections = GaugeMetricFamily(f"{PREFIX}serve_connections", "Connections open now, each on a handler thread", labels=labels)
        connections.add_metric((self.node,), open_now)
        return iter((timed_out, refused, connections))


class WaitingRequests:
    """The connections whose request is not in yet, oldest first: those a new connection may push out at the cap."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: dict[Any, tuple[float, socket.socket]] = {}  # accepted socket → (when, the socket to shut: TLS's once wrapped)

    def add(self, accepted: Any) -> None:
        with self._lock:
            self._since[accepted] = (time.monotonic(), accepted)

    def wrapped(self, accepted: Any, sock: socket.socket) -> None:
        with self._lock:
            if accepted in self._since:
                self._since[accepted] = (self._since[accepted][0], sock)

    def done(self, accepted: Any) -> None:
        with self._lock:
            self._since.pop(accepted, None)

    def push_out_older_than(self, seconds: float) -> bool:
        """Shut the oldest connection waiting ``seconds`` or more (its thread then ends); whether there was one."""
        with self._lock:
            oldest = next(iter(self._since.items()), None)
            if oldest is None or time.monotonic() - oldest[1][0] < seconds:
                return False
            del self._since[oldest[0]]
        try:
            # socket.socket's own shutdown: an SSLSocket's would unwrap TLS under its thread's feet.
            socket.socket.shutdown(oldest[1][1], socket.SHUT_RDWR)
        except OSError:
            pass
        return True


class DeadlineReader(io.RawIOBase):
    """A socket's bytes until ``deadline`` (monotonic): each read waits only for what is left of it."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no whole request before the deadline")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


def tls_handshake(context: ssl.SSLContext, sock: socket.socket, deadline: float) -> ssl.SSLSocket:
    """``sock`` wrapped in TLS, its handshake done by ``deadline``; closed on failure."""
    tls = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no TLS handshake before the deadline")
            tls.settimeout(left)
            try:
                tls.do_handshake()
                return tls
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                continue
    except BaseException:
        tls.close()
        raise


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A server-side TLS context with this certificate chain and key; ``OSError`` or ``ssl.SSLError`` when they cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    return context


__all__ = ["TIMEOUT_NOTE_SECONDS", "DeadlineReader", "ServeCounters", "WaitingRequests", "tls_context", "tls_handshake"]
