"""A list of any number of lines with a cursor, drawing only the lines on screen.

The owner says how many lines there are and gives a function that makes one
line (a ``Row``) for a place in the list; the list asks it only for the lines
it shows, so a list of a million lines costs what its visible ones cost. The
first row is a title with the cursor's place. ``end`` moves to the last line
and keeps following the end as lines are added, until the cursor moves away.
"""

from __future__ import annotations

from typing import Callable

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import StyledLines

# The list's own keys (n and N are left to the screen).
LINE_LIST_BINDINGS: list[BindingType] = [
    Binding("up", "cursor(-1)", "Up", show=False),
    Binding("down", "cursor(1)", "Down", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False),
    Binding("pagedown", "page(1)", "Page down", show=False),
    Binding("home", "jump(0)", "First", show=False),
    Binding("end", "jump(-1)", "Last", show=False),
]


class LineList(StyledLines, can_focus=True):
    """Lines made on demand by ``line(place, width)``; the cursor's line drawn in the cursor style."""

    DEFAULT_CSS = """
    LineList {
        width: 1fr;
        height: 1fr;
    }
    """

    BINDINGS = LINE_LIST_BINDINGS

    class Moved(Message):
        """The cursor moved to ``place``."""

        def __init__(self, place: int) -> None:
            super().__init__()
            self.place = place

    def __init__(self, line: Callable[[int, int], Row], *, title: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.line = line
        self.title = title
        self.note = ""  # after the title: what the list holds, how far reading has got
        self.count = 0
        self.cursor = 0
        self.top = 0
        self.following = False

    def set_count(self, count: int, note: str = "") -> None:
        """There are ``count`` lines now (a following cursor moves to the last)."""
        moved = self.following and count and self.cursor != count - 1
        self.count, self.note = count, note
        if moved:
            self.move_to(count - 1)
            return
        if self.cursor >= count:
            self.move_to(max(0, count - 1))
            return
        self.relayout(full=True)

    def redraw(self) -> None:
        """Ask for the shown lines again (what they say changed)."""
        self.relayout(full=True)

    def move_to(self, place: int, *, follow: bool = False) -> None:
        place = max(0, min(place, self.count - 1)) if self.count else 0
        self.following = follow
        changed = place != self.cursor
        self.cursor = place
        body = self._body_height()
        if place < self.top:
            self.top = place
        elif place >= self.top + body:
            self.top = place - body + 1
        self.relayout(full=True)
        if changed or follow:
            self.post_message(self.Moved(place))

    def _body_height(self) -> int:
        return max(1, self.size.height - 1)

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, delta: int) -> None:
        self.move_to(self.cursor + delta * self._body_height())

    def action_jump(self, where: int) -> None:
        if where == 0:
            self.move_to(0)
        else:
            self.move_to(self.count - 1, follow=True)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1 and self.top + event.y - 1 < self.count:
            self.move_to(self.top + event.y - 1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.move_to(self.cursor + 3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.move_to(self.cursor - 3)

    def build_rows(self, width: int, height: int) -> list[Row]:
        body = max(0, height - 1)
        self.top = max(0, min(self.top, self.count - body))
        shown = range(self.top, min(self.count, self.top + body))
        place = f" [{self.cursor + 1:,} of {self.count:,}]" if self.count else ""
        heading = clean(f"{self.title}{place}" + (f" · {self.note}" if self.note else ""))
        rows: list[Row] = [[(fit(heading, width).ljust(width), "title-focus" if self.has_focus else "title")]]
        for at in shown:
            row = self.line(at, width)
            rows.append([(text, "cursor") for text, _ in row] if at == self.cursor else row)
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]
