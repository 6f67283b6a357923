"""The process table widget: a paged, sortable, filterable list of processes whose cursor follows its process.

What each row and heading says, and in which order the rows come, is
``widgets.process_rows``; this is the Textual side: keys, the mouse, the
cursor and the title line.
"""

from __future__ import annotations

from typing import Any, Sequence

from textual import events
from textual.binding import Binding

from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import LIST_BINDINGS, StyledLines
from widgets.process_rows import (
    ASCENDING,
    COLUMNS,
    COMMAND_MODES,
    DESCENDING,
    MEMORY_PERCENT,
    SORTS,
    WATCHED,
    Layout,
    arrange,
    arrange_tree,
    choose_columns,
    column_spans,
    default_descending,
    header_text,
    measured_widths,
    process_row,
)

WHEEL_ROWS = 3  # rows one wheel notch scrolls


class ProcessTable(StyledLines, can_focus=True):
    """A paged list of processes with a cursor that follows its process."""

    DEFAULT_CSS = """
    ProcessTable {
        height: 1fr;
        width: 1fr;
    }
    """

    BINDINGS = [*LIST_BINDINGS, Binding("c", "toggle_command", "Program name / command line", show=False)]
    SORTS: tuple[str, ...] = SORTS
    PANE_TITLE = "Processes"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._all: Sequence[Any] = ()
        self._shown: list[Any] = []
        self._guides: dict[Any, str] = {}
        self._context_only: set[Any] = set()
        self.sort = self.SORTS[0]
        self.descending = self.default_descending(self.sort)
        self.pattern = ""
        self.tree_view = False
        self.command_mode = COMMAND_MODES[0]
        self.watched_pid: int | None = None
        self.watch_tree = False
        self._watched: frozenset[int] = frozenset()
        self._widths = measured_widths(())
        self._cursor = 0
        self._top = 0
        self._cursor_pid: Any = None
        self._chosen = False  # a person picked a row (moved, clicked, focused): the cursor follows it
        self._moved = False  # a person moved the cursor (keys, click): a new sort keeps that row
        self.show_kernel = False
        self.kernel_hidden = 0  # kernel threads left out of the last arrangement
        self._body = 0  # rows the last frame had for processes
        self._header_y = 1
        self._spans: list[tuple[int, int, str]] = []

    # -- what a subclass changes ---------------------------------------------
    def arrange_rows(self, rows: Sequence[Any]) -> list[Any]:
        if not self.show_kernel:
            # As htop: kernel threads are hidden until asked for (K). They are most
            # of a quiet box's list, and every one shifts when a process above comes or goes.
            self.kernel_hidden = sum(1 for row in rows if getattr(row, "kernel", False))
            if self.kernel_hidden:
                rows = [row for row in rows if not getattr(row, "kernel", False)]
        else:
            self.kernel_hidden = 0
        if self.tree_view:
            lines = arrange_tree(rows, self.sort, self.pattern, self.descending, self.command_mode)
            self._guides = {self.row_key(line.row): line.guide for line in lines if line.guide}
            self._context_only = {self.row_key(line.row) for line in lines if line.context}
            return [line.row for line in lines]
        self._guides, self._context_only = {}, set()
        return arrange(rows, self.sort, self.pattern, self.descending, self.command_mode)

    def row_key(self, row: Any) -> Any:
        """What the cursor follows as rows move."""
        return row.pid

    def _marker_cells(self) -> int:
        return 1 if self.watched_pid is not None else 0

    def _layout(self, width: int) -> Layout:
        return choose_columns(width, self._widths, self._marker_cells())

    def header_row(self, width: int) -> Row:
        marker = " " * self._marker_cells()
        text = marker + header_text(self._layout(width), self.sort, self.descending, self.command_mode)
        return [(fit(text, width).ljust(width), "heading")]

    def item_row(self, row: Any, width: int, style: str) -> Row:
        key = self.row_key(row)
        marker = None
        if self.watched_pid is not None:
            marker = WATCHED if row.pid in self._watched else " "
        return process_row(
            row,
            self._layout(width),
            style,
            guide=self._guides.get(key, ""),
            command_mode=self.command_mode,
            marker=marker,
            muted=key in self._context_only,
        )

    def header_spans(self, width: int) -> list[tuple[int, int, str]]:
        """``(first, end, sort key)`` of each heading, left to right: what a click or ``<`` ``>`` picks."""
        return column_spans(self._layout(width), self._marker_cells())

    def sort_choices(self) -> list[tuple[str, str, str]]:
        """``(sort key, heading, what it is)`` for the sort chooser, in column order."""
        return [(column.key, column.title, column.about) for column in COLUMNS if column is not MEMORY_PERCENT]

    def default_descending(self, sort: str) -> bool:
        return default_descending(sort)

    def preamble_rows(self, width: int) -> list[Row]:
        """Lines between the title and the column headings."""
        return []

    # -- data --------------------------------------------------------------
    def set_processes(self, rows: Sequence[Any]) -> None:
        self._all = rows
        self._widths = measured_widths(rows)
        self._update_watched()
        self._rearrange()

    def set_watched(self, pid: int | None, tree: bool = False) -> None:
        """Mark ``pid`` (and, with ``tree``, its descendants): the process ``--pid`` names."""
        self.watched_pid = pid if pid is not None and pid > 0 else None
        self.watch_tree = tree
        self._update_watched()
        self.relayout()

    def _update_watched(self) -> None:
        pid = self.watched_pid
        if pid is None:
            self._watched = frozenset()
            return
        found = {pid}
        if self.watch_tree:
            children: dict[int, list[int]] = {}
            for row in self._all:
                children.setdefault(getattr(row, "ppid", 0), []).append(row.pid)
            queue = [pid]
            while queue:
                for child in children.get(queue.pop(), ()):
                    if child not in found:
                        found.add(child)
                        queue.append(child)
        self._watched = frozenset(found)

    def set_sort(self, sort: str, descending: bool | None = None) -> None:
        self.sort = sort
        self.descending = self.default_descending(sort) if descending is None else descending
        self._rearrange()
        self._show_top()

    def _show_top(self) -> None:
        """A new order starts at its top: a row a person moved to stays selected (and in view), else the first row is."""
        self._top = 0
        if self._shown and not self._moved:
            self._cursor = 0
            self._cursor_pid = self.row_key(self._shown[0])
        self.relayout()

    def cycle_sort(self) -> str:
        at = self.SORTS.index(self.sort) + 1 if self.sort in self.SORTS else 0
        self.set_sort(self.SORTS[at % len(self.SORTS)])
        return self.sort

    def sort_by(self, sort: str) -> None:
        """Sort by a column; the sorted column again reverses the direction."""
        if sort == self.sort:
            self.set_sort(sort, not self.descending)
        else:
            self.set_sort(sort)

    def move_sort(self, step: int) -> str:
        """Sort by the column ``step`` places right (left when negative) of the sorted one, among those shown."""
        keys = [key for _, _, key in self.header_spans(max(1, self.size.width))]
        if not keys:
            return self.sort
        if self.sort in keys:
            at = (keys.index(self.sort) + step) % len(keys)
        else:
            at = 0 if step > 0 else len(keys) - 1
        self.set_sort(keys[at])
        return self.sort

    def set_tree(self, tree: bool) -> None:
        self.tree_view = tree
        self._rearrange()

    def set_filter(self, pattern: str) -> None:
        self.pattern = pattern
        self._rearrange()

    def set_show_kernel(self, show: bool) -> None:
        self.show_kernel = show
        self._rearrange()

    def action_toggle_command(self) -> None:
        self.command_mode = COMMAND_MODES[(COMMAND_MODES.index(self.command_mode) + 1) % len(COMMAND_MODES)]
        self._rearrange()

    @property
    def shown(self) -> list[Any]:
        return list(self._shown)

    @property
    def selected_pid(self) -> int | None:
        return self._cursor_pid

    @property
    def selected_row(self) -> Any | None:
        """The row under the cursor, or None when the table is empty."""
        if not self._shown:
            return None
        return self._shown[min(self._cursor, len(self._shown) - 1)]

    def _rearrange(self) -> None:
        previous = [self.row_key(r) for r in self._shown]
        self._shown = self.arrange_rows(self._all)
        keys = [self.row_key(r) for r in self._shown]
        if not self._chosen:
            self._cursor = 0  # no row picked yet: the cursor stays on the top row
        elif self._cursor_pid in keys:
            # The cursor follows its process, not its row, as the order shifts.
            self._cursor = keys.index(self._cursor_pid)
        elif self._cursor_pid in previous:
            self._cursor = self._neighbour(previous, keys)
        self._cursor = max(0, min(self._cursor, len(self._shown) - 1))
        self._cursor_pid = keys[self._cursor] if keys else None
        self.relayout()

    def _neighbour(self, previous: list[Any], keys: list[Any]) -> int:
        """Where the cursor goes when its process is gone: the next one that was below it, else above."""
        at = previous.index(self._cursor_pid)
        index = {key: n for n, key in enumerate(keys)}
        for key in previous[at + 1 :]:
            if key in index:
                return index[key]
        for key in reversed(previous[:at]):
            if key in index:
                return index[key]
        return self._cursor

    # -- cursor --------------------------------------------------------------
    def _body_height(self) -> int:
        return max(1, self._body or self.size.height - 2)

    def action_cursor(self, delta: int) -> None:
        self._move_to(self._cursor + delta)

    def action_page(self, delta: int) -> None:
        self._move_to(self._cursor + delta * self._body_height())

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self._shown) - 1)

    def select_pid(self, key: Any) -> bool:
        """Put the cursor on the process ``key`` names; False when it is not shown."""
        keys = [self.row_key(r) for r in self._shown]
        if key not in keys:
            return False
        self._move_to(keys.index(key))
        return True

    def _move_to(self, index: int) -> None:
        if not self._shown:
            return
        self._chosen = True
        self._moved = True
        self._cursor = max(0, min(index, len(self._shown) - 1))
        self._cursor_pid = self.row_key(self._shown[self._cursor])
        self.relayout()

    def scroll_rows(self, delta: int) -> None:
        """Move the view ``delta`` rows, taking the cursor along only where it would leave the view."""
        body = self._body_height()
        self._top = max(0, min(self._top + delta, len(self._shown) - body))
        if self._shown and not self._top <= self._cursor < self._top + body:
            self._move_to(max(self._top, min(self._cursor, self._top + body - 1)))
        else:
            self.relayout()

    def on_focus(self) -> None:
        self._chosen = True
        self._cursor_pid = self.row_key(self._shown[self._cursor]) if self._shown else None
        self.relayout()

    def on_blur(self) -> None:
        self.relayout()

    # -- the mouse -------------------------------------------------------------
    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_rows(WHEEL_ROWS)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_rows(-WHEEL_ROWS)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if event.y == self._header_y:
            for first, end, key in self._spans:
                if first <= event.x < end:
                    self.sort_by(key)
                    break
            return
        index = self._top + event.y - self._header_y - 1
        if event.y > self._header_y and index < len(self._shown):
            self.focus()
            self._move_to(index)

    # -- drawing -------------------------------------------------------------
    def build_rows(self, width: int, height: int) -> list[Row]:
        preamble = self.preamble_rows(width)
        body = max(1, height - 2 - len(preamble))
        if body != self._body:
            # Resized: rows hidden above come back as far as the cursor stays in view.
            self._top = min(self._top, max(0, self._cursor - body + 1))
            self._body = body
        if self._cursor < self._top:
            self._top = self._cursor
        elif self._cursor >= self._top + body:
            self._top = self._cursor - body + 1
        self._top = max(0, min(self._top, max(0, len(self._shown) - body)))
        self._header_y = 1 + len(preamble)
        self._spans = self.header_spans(width)
        rows = [self._title_row(width, body), *preamble, self.header_row(width)]
        for index in range(self._top, min(len(self._shown), self._top + body)):
            if index == self._cursor and self.has_focus:
                style = "cursor"
            elif index == self._cursor and self._chosen:
                style = "heading"  # the selection of an unfocused table: what k acts on
            else:
                style = "value"
            rows.append(self.item_row(self._shown[index], width, style))
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]

    def title_suffix(self) -> str:
        parts = []
        if self._watched and any(row.pid in self._watched for row in self._shown):
            parts.append(f" {WATCHED} watched")
        if self.tree_view:
            parts.append(" tree")
        return "".join(parts)

    def _kernel_note(self) -> str:
        """How many kernel threads are left out (K shows them), as htop's header counts them."""
        return f" +{self.kernel_hidden} kthr" if self.kernel_hidden else ""

    def _sort_note(self, width: int) -> str:
        """The sort, when its column is not shown."""
        if any(key == self.sort for _, _, key in self._spans):
            return ""
        arrow = DESCENDING if self.descending else ASCENDING
        titles = {key: title for key, title, _ in self.sort_choices()}
        return f" by {titles.get(self.sort, self.sort)}{arrow}"

    def _span_note(self, body: int) -> str:
        """Which rows are in view, ``4-25 of 88``; ``none``, or ``0 of 88 match`` when a filter hides them all."""
        total = len(self._shown)
        if total:
            return f"{self._top + 1}-{min(total, self._top + body)} of {total}"
        listed = len(self._all) - self.kernel_hidden
        return f"0 of {listed} match" if listed > 0 else "none"

    def _title_row(self, width: int, body: int) -> Row:
        title = f"{self.PANE_TITLE} [{self._span_note(body)}]"
        for extra in (self.title_suffix(), self._sort_note(width)):
            if len(title) + len(extra) <= width:
                title += extra
        if self.pattern:
            title += f" filter: {clean(self.pattern)}"
        kernel = self._kernel_note()
        if len(title) + len(kernel) <= width:
            title += kernel
        style = "title-focus" if self.has_focus else "title"
        return [(fit(title, width).ljust(width), style)]
