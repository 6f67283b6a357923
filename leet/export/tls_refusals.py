"""``leet serve``'s answer to a TLS connection past the cap: a 503 over TLS, from one thread for all of them.

A plain connection past the cap gets its 503 from the accepting thread at
once. A TLS one needs a handshake first, which the client may stall; so
``TlsRefusals`` takes each such connection to its own thread (``leet-busy``,
started at the first), which drives every handshake without blocking
(a selector over all of them), sends the 503 when one is done, lets the
client's request drain, and closes. Each connection has ``deadline``
seconds (short: a refusal is worth little work) for all of it, and at most
``limit`` are in hand at once; one more is closed unanswered. A stalled
handshake therefore holds no thread and delays no other refusal.
"""

from __future__ import annotations

import collections
import selectors
import socket
import ssl
import sys
import threading
import time

DRAIN_CHUNK = 4096
# Past the TLS handshake: what the refusal waits for next.
HANDSHAKE, SEND, DRAIN = "handshake", "send", "drain"


class _Refusal:
    """One connection being refused: its TLS socket, its stage, what is left to send, its deadline."""

    def __init__(self, tls: ssl.SSLSocket, answer: bytes, deadline: float) -> None:
        self.tls = tls
        self.stage = HANDSHAKE
        self.unsent = answer
        self.deadline = deadline
        self.wants = selectors.EVENT_READ

    def advance(self) -> bool:
        """As far as the socket allows now; False once the refusal is over (the connection is to be closed)."""
        try:
            if self.stage == HANDSHAKE:
                self.tls.do_handshake()
                self.stage = SEND
            if self.stage == SEND:
                while self.unsent:
                    self.unsent = self.unsent[self.tls.send(self.unsent):]
                # The plain socket's own shutdown: an SSLSocket's would drop TLS before the client has read the answer.
                socket.socket.shutdown(self.tls, socket.SHUT_WR)
                self.stage = DRAIN
            # Read until the client closes: closing over its unread request would reset the connection, the 503 with it.
            while self.tls.recv(DRAIN_CHUNK):
                pass
            return False
        except ssl.SSLWantReadError:
            self.wants = selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            self.wants = selectors.EVENT_WRITE
        except (OSError, ValueError):  # the client hung up, spoke no TLS, or sent what TLS cannot read
            return False
        return True


class TlsRefusals:
    """Answers 503 over TLS to the connections handed to ``refuse``, on one thread; ``close`` ends them all."""

    def __init__(self, context: ssl.SSLContext, answer: bytes, deadline: float, limit: int) -> None:
        self._context = context
        self._answer = answer
        self._deadline = deadline
        self._limit = limit
        self._lock = threading.Lock()
        self._inbox: collections.deque[socket.socket] = collections.deque()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._thread: threading.Thread | None = None
        self._closed = False

    def refuse(self, sock: socket.socket) -> None:
        """Hand over an accepted connection past the cap; it is answered, or closed, from here on."""
        with self._lock:
            if self._closed:
                sock.close()
                return
            self._inbox.append(sock)
            if self._thread is None or not self._thread.is_alive():  # first use, or after a failure it said
                self._thread = threading.Thread(target=self._run, name="leet-busy", daemon=True)
                self._thread.start()
        self._wake()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join()
        with self._lock:
            while self._inbox:
                self._inbox.popleft().close()
        self._wake_read.close()
        self._wake_write.close()

    def _wake(self) -> None:
        try:
            self._wake_write.send(b"\0")
        except OSError:  # its buffer is full (the thread wakes anyway) or it is closed
            pass

    def _run(self) -> None:
        live: dict[socket.socket, _Refusal] = {}
        with selectors.DefaultSelector() as selector:
            selector.register(self._wake_read, selectors.EVENT_READ)
            try:
                while not self._closed:
                    self._take_new(selector, live)
                    now = time.monotonic()
                    for sock in [sock for sock, refusal in live.items() if now >= refusal.deadline]:
                        self._end(selector, live, sock)
                    soonest = min((refusal.deadline for refusal in live.values()), default=None)
                    for key, _ in selector.select(None if soonest is None else max(0.0, soonest - time.monotonic())):
                        if key.fileobj is self._wake_read:
                            self._drain_wake()
                        else:
                            self._advance(selector, live, key.fileobj)  # type: ignore[arg-type]
            except Exception as error:  # noqa: BLE001 - said, and the next refusal starts a new thread
                sys.stderr.write(f"leet serve: answering connections past the cap failed ({type(error).__name__}: {error}); starting again\n")
            finally:
                for sock in list(live):
                    self._end(selector, live, sock)

    def _take_new(self, selector: selectors.BaseSelector, live: dict[socket.socket, _Refusal]) -> None:
        with self._lock:
            arrived, self._inbox = list(self._inbox), collections.deque()
        for sock in arrived:
            if len(live) >= self._limit:
                sock.close()
                continue
            try:
                sock.setblocking(False)
                tls = self._context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError):
                sock.close()
                continue
            live[tls] = _Refusal(tls, self._answer, time.monotonic() + self._deadline)
            selector.register(tls, selectors.EVENT_READ)
            self._advance(selector, live, tls)

    def _advance(self, selector: selectors.BaseSelector, live: dict[socket.socket, _Refusal], sock: socket.socket) -> None:
        refusal = live[sock]
        if not refusal.advance():
            self._end(selector, live, sock)
        elif selector.get_key(sock).events != refusal.wants:
            selector.modify(sock, refusal.wants)

    @staticmethod
    def _end(selector: selectors.BaseSelector, live: dict[socket.socket, _Refusal], sock: socket.socket) -> None:
        live.pop(sock, None)
        try:
            selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_read.recv(DRAIN_CHUNK):
                pass
        except OSError:  # nothing more to read now
            pass
