"""What Apprise logs while a thread calls it: kept for that call's error message, and out of every log.

Apprise says why a send failed only in its log, and the useful part
("Connection refused", "Read timed out") at DEBUG, next to URLs with their
secrets. So while any thread is inside Apprise, its logger is opened to
DEBUG; a filter keeps the records of the calling thread and lets none of
them through (the outcome is reported redacted, as a ``SinkError``), while
other threads' records pass exactly as they would have before.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class AppriseLog:
    """The filter on Apprise's (and urllib3's) loggers; ``captured`` collects the calling thread's records."""

    LOGGERS = ("apprise", "urllib3", "urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry")
    KEPT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._active = 0
        self._saved_level = logging.NOTSET
        self._installed = False

    def filter(self, record: logging.LogRecord) -> bool:
        lines = getattr(self._local, "lines", None)
        if lines is not None:
            if len(lines) < self.KEPT:
                lines.append((record.levelno, record.getMessage()))
            return False
        if record.name != "apprise":
            return True
        return bool(record.levelno >= self._floor())

    def _floor(self) -> int:
        """The level Apprise's records had to reach before this class opened its logger."""
        logger = logging.getLogger("apprise")
        if self._saved_level != logging.NOTSET:
            return self._saved_level
        return logger.parent.getEffectiveLevel() if logger.parent else logging.WARNING

    @contextmanager
    def captured(self) -> Iterator[list[tuple[int, str]]]:
        logger = logging.getLogger("apprise")
        with self._lock:
            if not self._installed:
                for name in self.LOGGERS:
                    logging.getLogger(name).addFilter(self)
                self._installed = True
            if self._active == 0:
                self._saved_level = logger.level
                logger.setLevel(logging.DEBUG)
            self._active += 1
        lines: list[tuple[int, str]] = []
        self._local.lines = lines
        try:
            yield lines
        finally:
            self._local.lines = None
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    logger.setLevel(self._saved_level)


apprise_log = AppriseLog()


def failure_reason(lines: list[tuple[int, str]]) -> str:
    """Why Apprise failed, from its log: its last warning, with the socket's own words when it logged them."""
    warnings = [message for level, message in lines if level >= logging.WARNING and not message.startswith("Unparseable")]
    detail = ""
    for _, message in reversed(lines):
        if "Exception" in message or "Errno" in message or "timed out" in message:
            detail = _condensed(message)
            break
    head = warnings[-1].rstrip(".") if warnings else ""
    if head and detail and detail.lower() not in head.lower():
        return f"{head}: {detail}"
    return head or detail


def _condensed(message: str) -> str:
    errno = re.search(r"\[Errno -?\d+\] ([^'\"()\[\]]+)", message)
    if errno:
        return errno.group(1).strip().rstrip(".")
    timeout = re.search(r"(read|connect(?:ion)?)? ?timed out", message, re.IGNORECASE)
    if timeout:
        return f"{timeout.group(1).lower()} timed out" if timeout.group(1) else "timed out"
    return message.split(":", 1)[1].strip() if message.startswith("Socket Exception:") else message
