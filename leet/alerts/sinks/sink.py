"""What every alert sink is: something that carries an alert somewhere, and the one error its send may raise."""

from __future__ import annotations

from typing import Protocol

from leet.alerts.events import Alert


class SinkError(Exception):
    """A send that failed: one printable line, already redacted."""


class Sink(Protocol):
    """Anything that carries an alert somewhere. ``send`` raises ``SinkError``, and nothing else."""

    name: str  # redacted: safe for a screen, a log and the ledger

    def send(self, alert: Alert, timeout: float) -> None: ...
