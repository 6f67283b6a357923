"""The top-processes table: sortable by CPU or memory, filterable by name or PID.

Rows are any objects with ``pid``, ``user``, ``cpu_percent``, ``rss_bytes``,
``memory_percent``, ``name`` and ``command`` attributes; the widget does not
care where they come from.
"""

from __future__ import annotations

from typing import Any, Sequence

from widgets.chartframe import Row, fit
from widgets.lines import LIST_BINDINGS, StyledLines
from widgets.matching import compile_filter
from widgets.text import clean
from widgets.units import format_value

SORTS = ("cpu", "memory")


def arrange(rows: Sequence[Any], sort: str = "cpu", pattern: str = "") -> list[Any]:
    """Filtered (name, command or PID) and sorted (descending, PID as tie-break) rows."""
    if pattern:
        matches = compile_filter(pattern)
        rows = [r for r in rows if matches(str(r.pid)) or matches(r.name) or matches(r.command)]
    if sort == "memory":
        return sorted(rows, key=lambda r: (-r.rss_bytes, r.pid))
    return sorted(rows, key=lambda r: (-r.cpu_percent, -r.rss_bytes, r.pid))


def header_row(width: int, sort: str) -> Row:
    cpu = "CPU%▼" if sort == "cpu" else " CPU%"
    mem = "MEM▼" if sort == "memory" else " MEM"
    text = f"{'PID':>7} {'USER':<8} {cpu:>5} {mem:>6} COMMAND"
    return [(fit(text, width).ljust(width), "heading")]


def short_command(command: str, name: str) -> str:
    """The command line with its program path cut to the program's name."""
    if not command:
        return name
    program, _, rest = command.partition(" ")
    program = program.rsplit("/", 1)[-1] or program
    return f"{program} {rest}".rstrip()


def process_row(row: Any, width: int, style: str) -> Row:
    memory = format_value(float(row.rss_bytes), "B", width=6)
    command = clean(short_command(row.command, row.name))
    text = f"{row.pid:>7} {fit(clean(row.user), 8):<8} {row.cpu_percent:>5.1f} {memory:>6} {command}"
    return [(fit(text, width).ljust(width), style)]


class ProcessTable(StyledLines, can_focus=True):
    """A paged list of processes with a cursor."""

    DEFAULT_CSS = """
    ProcessTable {
        height: 1fr;
        width: 1fr;
    }
    """

    BINDINGS = LIST_BINDINGS
    SORTS: tuple[str, ...] = SORTS
    PANE_TITLE = "Processes"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._all: Sequence[Any] = ()
        self._shown: list[Any] = []
        self.sort = self.SORTS[0]
        self.pattern = ""
        self._cursor = 0
        self._top = 0
        self._cursor_pid: Any = None

    # -- what a subclass changes ---------------------------------------------
    def arrange_rows(self, rows: Sequence[Any]) -> list[Any]:
        return arrange(rows, self.sort, self.pattern)

    def row_key(self, row: Any) -> Any:
        """What the cursor follows as rows move."""
        return row.pid

    def header_row(self, width: int) -> Row:
        return header_row(width, self.sort)

    def item_row(self, row: Any, width: int, style: str) -> Row:
        return process_row(row, width, style)

    def preamble_rows(self, width: int) -> list[Row]:
        """Lines between the title and the column headings."""
        return []

    # -- data --------------------------------------------------------------
    def set_processes(self, rows: Sequence[Any]) -> None:
        self._all = rows
        self._rearrange()

    def set_sort(self, sort: str) -> None:
        self.sort = sort
        self._rearrange()

    def cycle_sort(self) -> str:
        self.set_sort(self.SORTS[(self.SORTS.index(self.sort) + 1) % len(self.SORTS)])
        return self.sort

    def set_filter(self, pattern: str) -> None:
        self.pattern = pattern
        self._rearrange()

    @property
    def shown(self) -> list[Any]:
        return list(self._shown)

    @property
    def selected_pid(self) -> int | None:
        return self._cursor_pid

    def _rearrange(self) -> None:
        self._shown = self.arrange_rows(self._all)
        # The cursor follows its process, not its row, as the order shifts.
        pids = [self.row_key(r) for r in self._shown]
        if self._cursor_pid in pids:
            self._cursor = pids.index(self._cursor_pid)
        self._cursor = max(0, min(self._cursor, len(self._shown) - 1))
        self._cursor_pid = pids[self._cursor] if pids else None
        self.relayout()

    # -- cursor --------------------------------------------------------------
    def _body_height(self) -> int:
        return max(1, self.size.height - 2)

    def action_cursor(self, delta: int) -> None:
        self._move_to(self._cursor + delta)

    def action_page(self, delta: int) -> None:
        self._move_to(self._cursor + delta * self._body_height())

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self._shown) - 1)

    def _move_to(self, index: int) -> None:
        if not self._shown:
            return
        self._cursor = max(0, min(index, len(self._shown) - 1))
        self._cursor_pid = self.row_key(self._shown[self._cursor])
        self.relayout()

    def on_focus(self) -> None:
        self.relayout()

    def on_blur(self) -> None:
        self.relayout()

    # -- drawing -------------------------------------------------------------
    def build_rows(self, width: int, height: int) -> list[Row]:
        preamble = self.preamble_rows(width)
        body = max(1, height - 2 - len(preamble))
        if self._cursor < self._top:
            self._top = self._cursor
        elif self._cursor >= self._top + body:
            self._top = self._cursor - body + 1
        self._top = max(0, min(self._top, max(0, len(self._shown) - body)))
        rows = [self._title_row(width, body), *preamble, self.header_row(width)]
        for index in range(self._top, min(len(self._shown), self._top + body)):
            style = "cursor" if index == self._cursor and self.has_focus else "value"
            rows.append(self.item_row(self._shown[index], width, style))
        while len(rows) < height:
            rows.append([(" " * width, "empty")])
        return rows[:height]

    def title_suffix(self) -> str:
        return ""

    def _title_row(self, width: int, body: int) -> Row:
        total = len(self._shown)
        first = self._top + 1 if total else 0
        last = min(total, self._top + body)
        title = f"{self.PANE_TITLE} [{first}-{last} of {total}]"
        legend = self.title_suffix()
        if len(title) + len(legend) <= width:
            title += legend
        if self.pattern:
            title += f" filter: {clean(self.pattern)}"
        style = "title-focus" if self.has_focus else "title"
        return [(fit(title, width).ljust(width), style)]
