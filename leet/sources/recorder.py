"""Records a host session as a W&B run file: one stats record per sample, flushed on a slow cadence.

It is fed on the hub's sweep thread, never the screen's. A write error or the
size bound ends recording (the reason is kept for the screen to show); the
session itself goes on.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path
from typing import Callable

from collectors.base import Sample
from leet.runfile.writer import RunFileWriter, new_run_id

PROJECT = "leet-symon"
FLUSH_SECONDS = 10.0
DEFAULT_MAX_BYTES = 1 << 30
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes in ``500M``, ``1G``, ``64K`` or a plain count (units are powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if match is None or float(match[1]) <= 0:
        raise ValueError(f"{text!r} is not a size like 500M or 1G")
    return int(float(match[1]) * _UNITS[match[2].upper()])


def run_file_path(path: str | os.PathLike[str], run_id: str) -> Path:
    """The run file for ``path``: itself when it names a ``.wandb`` file, else ``run-<id>.wandb`` in that run directory."""
    target = Path(path)
    if target.suffix == ".wandb":
        return target
    return target / f"run-{run_id}.wandb"


class SessionRecorder:
    """Writes each sample as it comes; ``finish`` adds the exit record and closes."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_bytes: int = DEFAULT_MAX_BYTES,
        flush_seconds: float = FLUSH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create the run file (and its run directory); raises ``OSError`` when it cannot be made."""
        self.run_id = new_run_id()
        self.path = run_file_path(path, self.run_id)
        if self.path != Path(path):
            (Path(path) / "files").mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._flush_seconds = flush_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._writer: RunFileWriter | None = RunFileWriter(self.path)
        self.started = time.time()
        self._writer.run(self.run_id, PROJECT, socket.gethostname(), self.started)
        self._writer.flush()
        self._last_flush = clock()
        self._final_size = 0
        self.stopped_because = ""  # why recording ended early; empty while it goes on
        self.on_stop: Callable[[str], None] = lambda reason: None  # told once, when recording ends early

    @property
    def recording(self) -> bool:
        return self._writer is not None

    @property
    def size(self) -> int:
        writer = self._writer
        return writer.size if writer is not None else self._final_size

    def ingest(self, sample: Sample) -> None:
        with self._lock:
            writer = self._writer
            if writer is None or not sample.values:
                return
            try:
                writer.stats(sample.timestamp, dict(sample.values))
                if writer.size >= self.max_bytes:
                    self._stop(f"recording stopped: {self.path} reached its size limit ({self.max_bytes} bytes)")
                elif self._clock() - self._last_flush >= self._flush_seconds:
                    writer.flush()
                    self._last_flush = self._clock()
            except OSError as error:
                self._abandon(f"recording stopped: {error.strerror or error}")

    def finish(self, exit_code: int = 0) -> None:
        with self._lock:
            writer = self._writer
            if writer is None:
                return
            try:
                writer.exit(exit_code, time.time() - self.started)
                self._stop("")
            except OSError as error:
                self._abandon(f"recording stopped: {error.strerror or error}")

    def headline(self) -> str:
        """The screen's line for the recording: where, how big, or why it stopped."""
        if self.stopped_because:
            return self.stopped_because
        return f"● rec {self.path} {self.size / (1 << 20):.1f} MiB"

    def _stop(self, reason: str) -> None:
        writer = self._writer
        assert writer is not None
        self._writer = None
        self._final_size = writer.size
        self.stopped_because = reason
        writer.close()
        if reason:
            self.on_stop(reason)

    def _abandon(self, reason: str) -> None:
        writer = self._writer
        assert writer is not None
        self._writer = None
        self._final_size = writer.size
        self.stopped_because = reason
        try:
            writer.close()
        except OSError:
            pass
        self.on_stop(reason)
