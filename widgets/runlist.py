"""The runs list of a workspace: a cursor, selection marks in each run's colour, states.

Rows are plain data (``RunRow``) made by the owner; names come from files and
are cleaned before they reach the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from textual.binding import Binding
from textual.message import Message

from widgets.chartframe import Row, fit, trim_row
from widgets.lines import LIST_BINDINGS, StyledLines
from widgets.palette import series_key
from widgets.text import clean


@dataclass(frozen=True)
class RunRow:
    key: str
    name: str
    run_id: str
    state: str
    state_style: str
    started: str
    live: bool = False


class RunList(StyledLines, can_focus=True):
    DEFAULT_CSS = """
    RunList {
        width: 1fr;
        height: 1fr;
    }
    """

    BINDINGS = [
        *LIST_BINDINGS,
        Binding("space", "toggle", "Select", show=False),
        Binding("enter", "open", "Open", show=False),
    ]

    class Toggled(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class Opened(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._runs: list[RunRow] = []
        self._selected: list[str] = []  # in selection order: it decides each run's colour
        self._cursor_key: str | None = None
        self._top = 0
        self.pattern_note = ""

    def set_runs(self, rows: Sequence[RunRow], selected: Sequence[str], note: str = "") -> None:
        """The rows to list, the selected keys in selection order, and a note for the title (the filter)."""
        rows, selected = list(rows), list(selected)
        if rows == self._runs and selected == self._selected and note == self.pattern_note:
            return
        self._runs, self._selected, self.pattern_note = rows, selected, note
        if self._cursor_key not in {row.key for row in rows}:
            self._cursor_key = rows[0].key if rows else None
        self.relayout()

    @property
    def cursor_key(self) -> str | None:
        return self._cursor_key

    def _cursor(self) -> int:
        keys = [row.key for row in self._runs]
        return keys.index(self._cursor_key) if self._cursor_key in keys else 0

    def _move_to(self, index: int) -> None:
        if self._runs:
            self._cursor_key = self._runs[max(0, min(index, len(self._runs) - 1))].key
            self.relayout()

    def action_cursor(self, delta: int) -> None:
        self._move_to(self._cursor() + delta)

    def action_page(self, delta: int) -> None:
        self._move_to(self._cursor() + delta * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self._runs) - 1)

    def action_toggle(self) -> None:
        if self._cursor_key is not None:
            self.post_message(self.Toggled(self._cursor_key))

    def action_open(self) -> None:
        if self._cursor_key is not None:
            self.post_message(self.Opened(self._cursor_key))

    def on_focus(self) -> None:
        self.relayout()

    def on_blur(self) -> None:
        self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        body = max(1, height - 1)
        cursor = self._cursor()
        if cursor < self._top:
            self._top = cursor
        elif cursor >= self._top + body:
            self._top = cursor - body + 1
        self._top = max(0, min(self._top, max(0, len(self._runs) - body)))
        total = len(self._runs)
        first = self._top + 1 if total else 0
        last = min(total, self._top + body)
        title = f"Runs [{first}-{last} of {total}]" + (f" · {self.pattern_note}" if self.pattern_note else "")
        rows: list[Row] = [[(fit(title, width).ljust(width), "title-focus" if self.has_focus else "title")]]
        name_width = max(8, width - 2 - 9 - 11 - 12)
        for index in range(self._top, min(total, self._top + body)):
            rows.append(self._row(self._runs[index], index == cursor, width, name_width))
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]

    def _row(self, run: RunRow, at_cursor: bool, width: int, name_width: int) -> Row:
        if run.key in self._selected:
            mark, mark_style = "●", series_key(self._selected.index(run.key))
        else:
            mark, mark_style = "○", "muted"
        text_style = "cursor" if at_cursor and self.has_focus else "value"
        name = fit(clean(run.name), name_width).ljust(name_width)
        rest = f" {fit(clean(run.run_id), 8):<8} "
        row: Row = [(mark + " ", mark_style), (name + rest, text_style), (f"{fit(run.state, 10):<10} ", run.state_style), (fit(run.started, 11), "muted")]
        used = sum(len(text) for text, _ in row)
        if used < width:
            row.append((" " * (width - used), text_style))
        return trim_row(row, width)

