"""Small dialogs over the process table: the sort chooser (F6) and the kill dialog (k, F9).

The kill dialog names its target, offers the signals people send (TERM
first), then asks once more before anything is sent. Sending is the
caller's, through :func:`send_signal` and an injectable sender, so tests
never signal a process they did not start.
"""

from __future__ import annotations

import getpass
import os
import signal
from dataclasses import dataclass
from typing import Callable, Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.widgets import Static

from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import StyledLines

Sender = Callable[[int, int], None]  # (pid, signal number), as os.kill

# (name without SIG, what it does to most programs), in the order offered; TERM is the default.
SIGNALS: tuple[tuple[str, str], ...] = (
    ("TERM", "ask it to end (the default)"),
    ("KILL", "end it now; cannot be caught"),
    ("INT", "interrupt, as ctrl+c does"),
    ("HUP", "hang up; many daemons reload"),
    ("QUIT", "quit and dump core"),
    ("STOP", "pause it; cannot be caught"),
    ("CONT", "resume a paused process"),
    ("TSTP", "pause, as ctrl+z does"),
    ("USR1", "user signal 1 (program-defined)"),
    ("USR2", "user signal 2 (program-defined)"),
    ("ABRT", "abort and dump core"),
    ("ALRM", "alarm clock"),
    ("WINCH", "terminal size changed"),
)


def offered_signals() -> list[tuple[str, int, str]]:
    """``(name, number, what it does)`` for each signal this platform has, in the order offered."""
    found = []
    for name, about in SIGNALS:
        number = getattr(signal, f"SIG{name}", None)
        if number is not None:
            found.append((name, int(number), about))
    return found


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class Target:
    """The process a signal is for, as the table showed it."""

    pid: int
    command: str = ""
    user: str = ""

    def describe(self) -> str:
        command = clean(self.command)
        return f"PID {self.pid} ({command})" if command else f"PID {self.pid}"


def _me() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.geteuid())


def send_signal(target: Target, number: int, sender: Sender = os.kill) -> tuple[str, SeverityLevel]:
    """Send signal ``number`` to ``target`` through ``sender``: ``(message, severity)`` for a notification.

    A PID of 0 or less would signal a process group or every process: it is
    refused, never sent.
    """
    name = signal_name(number)
    who = target.describe()
    if target.pid <= 0:
        return f"Not sent: {who} names no single process", "error"
    try:
        sender(target.pid, number)
    except PermissionError:
        owner = clean(target.user) or "another user"
        return f"Not permitted to send {name} to {who}: it belongs to {owner}, and you are {_me()}", "error"
    except ProcessLookupError:
        return f"{who} has already exited", "warning"
    except OSError as error:
        return f"Could not send {name} to {who}: {error.strerror or error}", "error"
    return f"Sent {name} to {who}", "information"


class ChoiceList(StyledLines, can_focus=True):
    """A short list with a cursor; enter or a click chooses."""

    DEFAULT_CSS = """
    ChoiceList {
        height: auto;
        max-height: 16;
    }
    """

    # Arrows and page keys only: letters belong to the dialog (y, n).
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter,space", "choose", "Choose", show=False),
    ]

    def __init__(self, items: Sequence[tuple[str, str]], on_choose: Callable[[int], None], cursor: int = 0, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items = list(items)
        self.cursor = max(0, min(cursor, len(self.items) - 1))
        self._on_choose = on_choose
        self._top = 0
        self.dimmed = False  # shown but not in play (the dialog asks something else)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.items))

    def build_rows(self, width: int, height: int) -> list[Row]:
        if self.cursor < self._top:
            self._top = self.cursor
        elif self.cursor >= self._top + height:
            self._top = self.cursor - height + 1
        label_width = max((len(label) for label, _ in self.items), default=0)
        rows: list[Row] = []
        for index in range(self._top, min(len(self.items), self._top + height)):
            label, detail = self.items[index]
            here = index == self.cursor
            style = "cursor" if here and not self.dimmed else ("heading" if here else "value")
            text = f"{'›' if here else ' '} {label.ljust(label_width)}  "
            rows.append([(fit(text, width), style), (fit(detail, max(0, width - len(text))).ljust(max(0, width - len(text))), style if here else "muted")])
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.items) - 1, self.cursor + delta))
        self.relayout()

    def action_page(self, delta: int) -> None:
        self.action_cursor(delta * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        self.cursor = 0 if where == 0 else max(0, len(self.items) - 1)
        self.relayout()

    def action_choose(self) -> None:
        if self.items:
            self._on_choose(self.cursor)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        index = self._top + event.y
        if 0 <= index < len(self.items):
            self.cursor = index
            self.relayout()
            self._on_choose(index)


DIALOG_CSS = """
{name} {{
    align: center middle;
}}
{name} > Vertical {{
    width: 60;
    max-width: 95%;
    height: auto;
    max-height: 90%;
    border: round {border};
    background: $surface;
    padding: 0 1;
}}
{name} .dialog-title {{
    text-style: bold;
}}
{name} .dialog-help {{
    color: $text-muted;
}}
{name} .dialog-ask {{
    color: $warning;
    text-style: bold;
}}
"""


class SortPicker(ModalScreen[str | None]):
    """Pick the column processes sort by; the result is its sort key, or None."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SortPicker", border="$accent")
    BINDINGS = [Binding("escape,q,f6", "cancel", "Cancel", show=False)]

    def __init__(self, choices: Sequence[tuple[str, str, str]], sort: str, descending: bool) -> None:
        super().__init__()
        self.keys = [key for key, _, _ in choices]
        arrow = "▼" if descending else "▲"
        items = [(title + (arrow if key == sort else ""), about) for key, title, about in choices]
        at = self.keys.index(sort) if sort in self.keys else 0
        self.list = ChoiceList(items, self._chosen, at, id="sort-list")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Sort processes by", classes="dialog-title")
            yield self.list
            yield Static("enter sort · the sorted column again reverses · esc cancel", classes="dialog-help")

    def on_mount(self) -> None:
        self.list.focus()

    def _chosen(self, index: int) -> None:
        self.dismiss(self.keys[index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class SignalPicker(ModalScreen[int | None]):
    """Pick a signal for ``target``, then confirm: the result is the signal number, or None."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SignalPicker", border="$error")
    BINDINGS = [
        Binding("escape,q", "back", "Back / cancel", show=False),
        Binding("y", "confirm", "Send", show=False),
        Binding("n", "back", "Back", show=False),
    ]

    def __init__(self, target: Target) -> None:
        super().__init__()
        self.target = target
        self.signals = offered_signals()
        items = [(f"{number:>2} {name}", about) for name, number, about in self.signals]
        self.list = ChoiceList(items, self._chosen, 0, id="signal-list")
        self.asking: int | None = None  # the signal chosen, while the dialog asks to confirm it

    def compose(self) -> ComposeResult:
        owner = f", owned by {clean(self.target.user)}" if self.target.user else ""
        with Vertical():
            yield Static(f"Send a signal to {self.target.describe()}{owner}", classes="dialog-title", id="signal-target", markup=False)
            yield self.list
            yield Static("", classes="dialog-ask", id="signal-ask", markup=False)
            yield Static("enter choose · esc cancel", classes="dialog-help", id="signal-help")

    def on_mount(self) -> None:
        self.query_one("#signal-ask").display = False
        self.list.focus()

    @property
    def question(self) -> str:
        """What the dialog asks before sending ("" while a signal is being picked)."""
        if self.asking is None:
            return ""
        return f"Send {signal_name(self.asking)} ({self.asking}) to {self.target.describe()}?"

    def _chosen(self, index: int) -> None:
        if self.asking is not None:
            return  # asking already: only y sends
        self.asking = self.signals[index][1]
        self._show_stage()

    def _show_stage(self) -> None:
        ask = self.query_one("#signal-ask", Static)
        ask.update(self.question)
        ask.display = self.asking is not None
        help_text = "y send · n back · esc back" if self.asking is not None else "enter choose · esc cancel"
        self.query_one("#signal-help", Static).update(help_text)
        self.list.dimmed = self.asking is not None
        self.list.relayout()

    def action_confirm(self) -> None:
        if self.asking is not None:
            self.dismiss(self.asking)

    def action_back(self) -> None:
        if self.asking is None:
            self.dismiss(None)
        else:
            self.asking = None
            self._show_stage()
