"""Real servers on loopback that alerts are sent to: HTTP that records posts, SMTP that keeps mail, and one that never answers."""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
import time
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from aiosmtpd.controller import Controller
from test_openmetrics import free_port


class HookServer:
    """Takes POSTs on loopback and keeps each (path, headers, JSON body); answers ``statuses`` first, then 200."""

    def __init__(self, statuses: list[int] | None = None, port: int = 0) -> None:
        self.posts: list[tuple[str, dict[str, str], Any]] = []
        self.statuses = list(statuses or [])
        self._arrived = threading.Condition()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server._arrived:  # kept before the answer, so a sender that got it finds it here
                    server.posts.append((self.path, dict(self.headers.items()), json.loads(body)))
                    status = server.statuses.pop(0) if server.statuses else 200
                    server._arrived.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 5.0) -> list[tuple[str, dict[str, str], Any]]:
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.posts) >= count, timeout)
            return list(self.posts)

    def __enter__(self) -> "HookServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class SilentServer:
    """Listens on loopback and never answers: the kernel completes each connection, nobody reads it."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self.port = self._socket.getsockname()[1]

    def __enter__(self) -> "SilentServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.close()


class Mailbox:
    """An SMTP server on loopback (aiosmtpd): no TLS, no auth; keeps every message it is handed."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self._arrived = threading.Condition()
        self.port = free_port()
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's hook name
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._arrived:
            self.messages.append(cast(EmailMessage, message))
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float = 5.0) -> list[EmailMessage]:
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.messages) >= count, timeout)
            return list(self.messages)

    def __enter__(self) -> "Mailbox":
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()


def closed_port() -> int:
    """A loopback port nobody listens on: connecting is refused at once."""
    return free_port()


def wait_until(condition: Any, timeout: float = 5.0, step: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return bool(condition())
