"""The sinks' answers on their way to ``leet watch``'s ledger: ``Answers``, with acknowledgements on disk first.

A sink's thread hands each answer (alert, route name, ok, error) to
``Answers.put``; the watch's loop takes them with ``get_nowait`` and writes
the ledger now and then. Between the two, an alert a sink acknowledged is
owed still in the ledger on disk; a process killed then would send it again
on its next start, and with it every other alert acknowledged since the
last write. So ``put`` first appends the acknowledgement to a journal beside
the ledger (``<ledger>.acks``, one JSON line, one write), before the sink's
thread goes on to its next alert: a kill then repeats at most the send that
was in flight.

``fold`` reads the journal into the ledger (at start) and ``settled`` empties
it once the ledger holding every answer in it is written; both hold the lock
``put`` holds, so no acknowledgement is dropped between the two.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from pathlib import Path
from typing import Any, Callable

from leet.alerts.ledger import Ledger
from leet.runfile.files import open_regular

MAX_JOURNAL_BYTES = 1 << 20  # a journal past this is not ours to read: its acknowledgements cost repeats, never a crash


def journal_path(ledger_path: Path) -> Path:
    return ledger_path.with_name(ledger_path.name + ".acks")


class Answers(queue.SimpleQueue):
    """A queue of sink answers whose acknowledgements are journaled beside the ledger at ``ledger_path`` (None: kept nowhere)."""

    def __init__(self, ledger_path: Path | None) -> None:
        super().__init__()
        self.path = journal_path(ledger_path) if ledger_path is not None else None
        self.lock = threading.Lock()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        alert, route, ok, _ = item
        with self.lock:
            if ok and self.path is not None:
                self._append({"ident": alert.ident, "sink": route})
            super().put(item, block, timeout)

    def _append(self, entry: dict[str, str]) -> None:
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8", "surrogateescape")
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)  # type: ignore[arg-type]
        except OSError:
            return  # no journal: a kill may then repeat more than the send in flight, as before there was one
        try:
            os.write(descriptor, line)  # one write of one line: whole, or not there
        except OSError:
            pass
        finally:
            os.close(descriptor)

    def fold(self, ledger: Ledger) -> int:
        """Every acknowledgement the journal holds, into ``ledger`` (not written); how many."""
        with self.lock:
            entries = self._entries()
            for ident, sink in entries:
                ledger.delivered(ident, sink)
            return len(entries)

    def _entries(self) -> list[tuple[str, str]]:
        if self.path is None:
            return []
        try:
            with open_regular(self.path) as handle:
                data = handle.read(MAX_JOURNAL_BYTES + 1)
        except OSError:
            return []
        found = []
        for raw in data[:MAX_JOURNAL_BYTES].splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:  # a line cut short by a full disk
                continue
            if isinstance(entry, dict) and isinstance(entry.get("ident"), str) and isinstance(entry.get("sink"), str):
                found.append((entry["ident"], entry["sink"]))
        return found

    def settled(self, write_ledger: Callable[[], bool]) -> None:
        """``write_ledger`` (which takes every answer queued into the ledger and writes it), then, if it wrote, the journal emptied."""
        with self.lock:
            if write_ledger() and self.path is not None:
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass
