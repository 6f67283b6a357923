"""The input driver sleeps until input arrives and wakes at once when told to stop."""

import os
import select

from textual._xterm_parser import XTermParser

from leet.ui.driver import _WakingEvent, parser_timeout


def test_parser_without_pending_input_needs_no_wakeups():
    parser = XTermParser(False)
    assert parser_timeout(parser) is None
    list(parser.feed("\x1b"))  # a lone Escape: is it a key, or the start of a sequence?
    timeout = parser_timeout(parser)
    assert timeout is not None and 0 <= timeout <= 1.0


def test_setting_the_exit_event_wakes_a_blocked_select():
    read_fd, write_fd = os.pipe()
    try:
        event = _WakingEvent(write_fd)
        event.set()
        assert event.is_set()
        ready, _, _ = select.select([read_fd], [], [], 1.0)
        assert ready == [read_fd]
    finally:
        os.close(read_fd)
        os.close(write_fd)
