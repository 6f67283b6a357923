"""A Linux terminal driver whose input thread sleeps until there is input, and whose output is compact.

Textual's Linux driver polls stdin ten times a second to notice a lone Escape
key. On a monitor that idles for hours over SSH those wake-ups are a
measurable share of its CPU (and keep the core out of deep sleep states).
This driver blocks until a key arrives, wakes only while the parser waits for
the rest of an escape sequence, and is woken by a pipe when the app exits.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder

from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

from leet.ui.output import compact_sgr, install_span_crop

FALLBACK_POLL = 0.1


class _WakingEvent(threading.Event):
    """An Event that also writes to a pipe, so a blocked select() returns."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self._wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        try:
            os.write(self._wake_fd, b"x")
        except OSError:
            pass


def parser_timeout(parser: XTermParser) -> float | None:
    """Seconds until the parser must be ticked, or None when nothing is pending."""
    deadline = getattr(parser, "_timeout_time", FALLBACK_POLL)
    if deadline is None:
        return None
    if deadline is FALLBACK_POLL:
        return FALLBACK_POLL
    return max(0.0, deadline - get_time())


class QuietLinuxDriver(LinuxDriver):
    """Sleeps until input arrives, and writes each frame in as few bytes as it can."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        install_span_crop()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        self.exit_event = _WakingEvent(self._wake_write)

    def run_input_thread(self) -> None:
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        selector = selectors.DefaultSelector()
        selector.register(self.fileno, selectors.EVENT_READ, "input")
        selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        try:
            while not self.exit_event.is_set():
                ready = selector.select(parser_timeout(parser))
                for key, _mask in ready:
                    if key.data == "wake":
                        self._drain_wake_pipe()
                    else:
                        data = os.read(self.fileno, 4096)
                        if not data:
                            return
                        self._dispatch(parser.feed(decode(data)))
                self._dispatch(parser.tick())
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass

    def write(self, data: str) -> None:
        super().write(compact_sgr(data))

    def _dispatch(self, events) -> None:
        for event in events:
            self.process_message(event)

    def _drain_wake_pipe(self) -> None:
        try:
            while os.read(self._wake_read, 64):
                pass
        except OSError:
            pass

    def close(self) -> None:
        super().close()
        for fd in (self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass
