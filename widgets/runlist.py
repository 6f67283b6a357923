"""The runs list of a workspace: a cursor, selection marks in each run's colour (◆: pinned), states.

Rows are plain data (``RunRow``, ``GroupHeader`` above the runs of a
group, ``RunNote`` under a run that hit an error) made by the owner; text
comes from files and is cleaned before it reaches the terminal. The cursor
moves over runs only: headers and notes are read, never selected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Sequence, Union

from textual.binding import Binding
from textual.message import Message

from leet.common.text import clean
from widgets.chartframe import Row, fit, fit_middle, trim_row
from widgets.lines import LIST_BINDINGS, StyledLines
from widgets.palette import series_key

MIN_DETAIL = 4  # fewer cells than this say nothing: the detail is left out
DETAIL_SEPARATOR = " · "


@dataclass(frozen=True)
class RunRow:
    key: str
    name: str
    run_id: str
    state: str
    state_style: str
    started: str
    live: bool = False
    writers: int = 1  # processes writing this run (shared mode)
    labels: str = ""  # their node labels, compacted ("rank0-3")
    detail: tuple[str, ...] = ()  # muted facts after the name (group, job type), most telling first
    alerts: int = 0  # alerts the person has not looked at: ``!2`` after the name
    alert_style: str = "warn"  # the style of that mark (its most severe level's)


@dataclass(frozen=True)
class GroupHeader:
    name: str
    runs: int
    running: int = 0


@dataclass(frozen=True)
class RunNote:
    """A line under a run saying what went wrong reading it: the whole width, as a reason needs. Read, never selected."""

    key: str  # the run it is about
    text: str


ListRow = Union[RunRow, GroupHeader, RunNote]

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compact_labels(labels: Sequence[str]) -> str:
    """Node labels in few cells: ``rank0-3`` for a numbered range, else comma-joined."""
    labels = [clean(label) for label in labels if label]
    numbered = [_NUMBERED.match(label) for label in labels]
    if len(labels) > 1 and all(numbered):
        prefixes = {match.group(1) for match in numbered if match}
        ordered = sorted((int(match.group(2)), match.group(2)) for match in numbered if match)
        numbers = [number for number, _ in ordered]
        if len(prefixes) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return f"{prefixes.pop()}{ordered[0][1]}-{ordered[-1][1]}"
    return ",".join(labels)


def writer_tag(run: RunRow, room: int) -> str:
    """``×4 rank0-3``, or ``×4`` when the labels do not fit in ``room``; nothing for one writer."""
    if run.writers <= 1:
        return ""
    full = f"×{run.writers} {clean(run.labels)}" if run.labels else f"×{run.writers}"
    for tag in (full, f"×{run.writers}"):
        if len(tag) <= room:
            return tag
    return ""


def identity(run: RunRow, width: int) -> tuple[str, str]:
    """(name, writer tag) within ``width`` cells: the name wins, the tag takes what is left."""
    name = clean(run.name)
    if len(name) >= width:
        return fit(name, width), ""
    tag = writer_tag(run, width - len(name) - 1)
    return name, tag


def alert_mark(run: RunRow) -> str:
    """``!2`` for a run with alerts not looked at (``!99+`` past 99); nothing without."""
    if run.alerts <= 0:
        return ""
    return f"!{run.alerts}" if run.alerts < 100 else "!99+"


def _head(run: RunRow, width: int) -> tuple[str, str, str]:
    """(name, alert mark, writer tag) within ``width`` cells: the mark keeps its cells before the name is cut."""
    mark = alert_mark(run)
    if not mark or width < len(mark) + 2:
        name, tag = identity(run, width)
        return name, "", tag
    name, tag = identity(run, width - len(mark) - 1)
    return name, mark, tag


def detail_text(parts: Sequence[str], room: int) -> str:
    """As many whole parts as fit in ``room``, else the first one cut; nothing when too tight."""
    parts = [clean(part) for part in parts if part]
    if not parts or room < MIN_DETAIL:
        return ""
    for count in range(len(parts), 0, -1):
        text = DETAIL_SEPARATOR.join(parts[:count])
        if len(text) <= room:
            return text
    return fit(parts[0], room)


class RunList(StyledLines, can_focus=True):
    DEFAULT_CSS = """
    RunList {
        width: 1fr;
        height: 1fr;
    }
    """

    BINDINGS = [
        *LIST_BINDINGS,
        Binding("space", "toggle_run", "Select", show=False),
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
        self._lines: list[ListRow] = []
        self._selected: list[str] = []  # in selection order: it decides each run's colour
        self._pinned: frozenset[str] = frozenset()  # marked ◆ in place of ●
        self._cursor_key: str | None = None
        self._top = 0
        self._columns: dict[int, int] = {}  # name width → detail column, for the current rows
        self.pattern_note = ""
        self.empty_text: tuple[str, ...] = ()  # what the list says while it has no lines

    def set_runs(
        self, rows: Sequence[ListRow], selected: Sequence[str], note: str = "", empty: Sequence[str] = (), pinned: Collection[str] = (),
    ) -> None:
        """The lines to list (runs, and headers above groups), the selected keys in selection order, and a note for the title.

        ``empty``: lines to show in place of runs while there are none (why, and what happens next); ``pinned``: keys marked pinned.
        """
        rows, selected, empty, pins = list(rows), list(selected), tuple(empty), frozenset(pinned)
        if rows == self._lines and selected == self._selected and note == self.pattern_note and empty == self.empty_text and pins == self._pinned:
            return
        self._lines, self._selected, self.pattern_note, self.empty_text, self._pinned = rows, selected, note, empty, pins
        self._columns.clear()
        runs = self.runs
        if self._cursor_key not in {run.key for run in runs}:
            self._cursor_key = runs[0].key if runs else None
        self.relayout()

    @property
    def runs(self) -> list[RunRow]:
        return [line for line in self._lines if isinstance(line, RunRow)]

    @property
    def cursor_key(self) -> str | None:
        return self._cursor_key

    def _cursor_line(self) -> int:
        for index, line in enumerate(self._lines):
            if isinstance(line, RunRow) and line.key == self._cursor_key:
                return index
        return 0

    def _run_lines(self) -> list[int]:
        return [index for index, line in enumerate(self._lines) if isinstance(line, RunRow)]

    def _move_to(self, run_index: int) -> None:
        runs = self.runs
        if runs:
            self._cursor_key = runs[max(0, min(run_index, len(runs) - 1))].key
            self.relayout()

    def _cursor_run(self) -> int:
        keys = [run.key for run in self.runs]
        return keys.index(self._cursor_key) if self._cursor_key in keys else 0

    def action_cursor(self, delta: int) -> None:
        self._move_to(self._cursor_run() + delta)

    def action_page(self, delta: int) -> None:
        # A page is a screenful of lines; headers on it count, so land on the run nearest that line.
        target = self._cursor_line() + delta * max(1, self.size.height - 1)
        lines = self._run_lines()
        if not lines:
            return
        if delta > 0:
            index = next((i for i, line in enumerate(lines) if line >= target), len(lines) - 1)
        else:
            index = next((i for i in range(len(lines) - 1, -1, -1) if lines[i] <= target), 0)
        self._move_to(index)

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self.runs) - 1)

    def action_toggle_run(self) -> None:
        if self._cursor_key is not None:
            self.post_message(self.Toggled(self._cursor_key))

    def action_open(self) -> None:
        if self._cursor_key is not None:
            self.post_message(self.Opened(self._cursor_key))

    def on_focus(self) -> None:
        self.relayout()

    def on_blur(self) -> None:
        self.relayout()

    # -- drawing -------------------------------------------------------------------------
    def _scroll(self, body: int) -> None:
        cursor = self._cursor_line()
        # Scrolling down to a run brings its note along (room allowing).
        last = cursor + 1 if cursor + 1 < len(self._lines) and isinstance(self._lines[cursor + 1], RunNote) else cursor
        if cursor < self._top:
            # Scrolling up to a group's first run brings its header along.
            self._top = cursor
            while self._top > 0 and isinstance(self._lines[self._top - 1], GroupHeader):
                self._top -= 1
        elif last >= self._top + body:
            self._top = min(cursor, last - body + 1)
        self._top = max(0, min(self._top, max(0, len(self._lines) - body)))

    def _title(self, body: int) -> str:
        run_lines = self._run_lines()
        shown = [n for n, line in enumerate(run_lines, 1) if self._top <= line < self._top + body]
        span = f"{shown[0]}-{shown[-1]}" if shown else "0-0"
        return f"Runs [{span} of {len(run_lines)}]" + (f" · {self.pattern_note}" if self.pattern_note else "")

    def build_rows(self, width: int, height: int) -> list[Row]:
        body = max(1, height - 1)
        self._scroll(body)
        cursor = self._cursor_line()
        rows: list[Row] = [[(fit(self._title(body), width).ljust(width), "title-focus" if self.has_focus else "title")]]
        name_width = max(8, width - 2 - 9 - 11 - 12)
        align = self._detail_column(name_width)
        for index in range(self._top, min(len(self._lines), self._top + body)):
            line = self._lines[index]
            if isinstance(line, GroupHeader):
                rows.append(self._header(line, width))
            elif isinstance(line, RunNote):
                rows.append([(fit(f"  ⚠ {clean(line.text)}", width).ljust(width), "error")])
            else:
                rows.append(self._row(line, index == cursor, width, name_width, align))
        if not self._lines:
            rows += [[(fit_middle(f" {clean(text)}", width).ljust(width), "muted")] for text in self.empty_text]
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]

    def _detail_column(self, name_width: int) -> int:
        """Where details start so that they line up, or 0 when lining up would leave them no room."""
        if name_width in self._columns:
            return self._columns[name_width]
        widths = []
        for run in self.runs:
            name, mark, tag = _head(run, name_width)
            widths.append(len(name) + (len(mark) + 1 if mark else 0) + (len(tag) + 1 if tag else 0))
        column = max(widths, default=0) + 1
        self._columns[name_width] = column if column + MIN_DETAIL <= name_width else 0
        return self._columns[name_width]

    def _header(self, group: GroupHeader, width: int) -> Row:
        counts = f" · {group.runs} run{'s' if group.runs != 1 else ''}"
        running = f" · {group.running} running" if group.running else ""
        name = fit(clean(group.name), max(8, width - len(counts) - len(running) - 2))
        row: Row = [(name, "heading"), (counts, "muted"), (running, "ok")]
        used = sum(len(text) for text, _ in row)
        if used + 2 <= width:
            row.append((" " + "─" * (width - used - 1), "frame"))
        return trim_row(row, width)

    def _row(self, run: RunRow, at_cursor: bool, width: int, name_width: int, align: int) -> Row:
        if run.key in self._selected:
            mark, mark_style = "◆" if run.key in self._pinned else "●", series_key(self._selected.index(run.key))
        else:
            mark, mark_style = "○", "muted"
        at = at_cursor and self.has_focus
        text_style = "cursor" if at else "value"
        row: Row = [(mark + " ", mark_style), *self._name_cell(run, name_width, align, at)]
        rest = f" {fit(clean(run.run_id), 8):<8} "
        row += [(rest, text_style), (f"{fit(run.state, 10):<10} ", run.state_style), (fit(run.started, 11), "muted")]
        used = sum(len(text) for text, _ in row)
        if used < width:
            row.append((" " * (width - used), text_style))
        return trim_row(row, width)

    def _name_cell(self, run: RunRow, width: int, align: int, at_cursor: bool) -> Row:
        """Name, writer tag and details in exactly ``width`` cells."""
        name, mark, tag = _head(run, width)
        cell: Row = [(name, "cursor" if at_cursor else "value")]
        used = len(name)
        if mark:
            cell.append((" " + mark, "cursor" if at_cursor else run.alert_style))
            used += len(mark) + 1
        if tag:
            cell.append((" " + tag, "cursor" if at_cursor else "label"))
            used += len(tag) + 1
        start = max(used + 1, align)
        detail = detail_text(run.detail, width - start)
        if detail:
            cell.append((" " * (start - used) + detail, "cursor" if at_cursor else "muted"))
            used = start + len(detail)
        cell.append((" " * (width - used), "cursor" if at_cursor else "value"))
        return cell
