"""Scrollable panes of plain lines: the run overview and the console.

Lines are (text, style key) pairs made by the owner; untrusted text is
cleaned here, once, before it reaches the terminal. The pane can follow its
end (the console does, like ``tail -f``) until the reader scrolls back.
"""

from __future__ import annotations

from typing import Sequence

from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import LIST_BINDINGS, StyledLines

Line = tuple[str, str]  # (text, style key); the text may be untrusted


class TextPane(StyledLines, can_focus=True):
    """A titled, scrollable list of lines."""

    DEFAULT_CSS = """
    TextPane {
        width: 1fr;
        height: 1fr;
    }
    """

    BINDINGS = LIST_BINDINGS

    def __init__(self, title: str = "", *, follow: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title = title
        self.follow = follow
        self._follow_default = follow
        self._lines: list[Line] = []
        self._top = 0
        self.note = ""  # shown after the title, e.g. a filter or "loading"

    def set_lines(self, lines: Sequence[Line], note: str = "") -> None:
        lines = [(clean(text), style) for text, style in lines]
        if lines == self._lines and note == self.note:
            return
        self._lines = lines
        self.note = note
        self.relayout()

    @property
    def lines(self) -> list[str]:
        return [text for text, _ in self._lines]

    def _body_height(self) -> int:
        return max(1, self.size.height - 1)

    def _max_top(self) -> int:
        return max(0, len(self._lines) - self._body_height())

    def action_cursor(self, delta: int) -> None:
        self._show_from(self._top + delta)

    def action_page(self, delta: int) -> None:
        self._show_from(self._top + delta * self._body_height())

    def action_jump(self, where: int) -> None:
        self._show_from(0 if where == 0 else self._max_top())

    def _show_from(self, top: int) -> None:
        self._top = max(0, min(top, self._max_top()))
        # Scrolling back stops following; reaching the end again resumes it.
        self.follow = self._follow_default and self._top >= self._max_top()
        self.relayout()

    def on_focus(self) -> None:
        self.relayout()

    def on_blur(self) -> None:
        self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        body = max(0, height - 1)
        if self.follow:
            self._top = max(0, len(self._lines) - body)
        self._top = max(0, min(self._top, max(0, len(self._lines) - body)))
        shown = self._lines[self._top : self._top + body]
        total = len(self._lines)
        position = f" [{self._top + 1}-{self._top + len(shown)} of {total}]" if total > body else ""
        heading = f"{self.title}{position}" + (f" · {clean(self.note)}" if self.note else "")
        style = "title-focus" if self.has_focus else "title"
        rows: list[Row] = [[(fit(heading, width).ljust(width), style)]]
        for text, line_style in shown:
            rows.append([(fit(text, width).ljust(width), line_style)])
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]
