"""The process table: htop's columns in a sidebar's width, sorted by any column, flat or as a tree.

Rows are any objects with ``pid``, ``user``, ``cpu_percent``, ``rss_bytes``,
``memory_percent``, ``name`` and ``command`` attributes; ``ppid``, ``state``,
``threads``, ``cpu_seconds`` and ``kernel`` are used when a row has them.
The widget does not care where rows come from.

Columns come by priority: PID, CPU%, MEM and COMMAND always; USER when the
command keeps room; state, MEM%, threads and CPU time only when there is
room to spare. COMMAND takes what is left and never vanishes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from textual import events
from textual.binding import Binding

from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.common.units import format_value
from widgets.chartframe import Row, fit
from widgets.lines import LIST_BINDINGS, StyledLines

SORTS = ("cpu", "memory")  # what ``t`` steps through
DESCENDING = "▼"
ASCENDING = "▲"
WATCHED = "●"
# ``c`` steps through: the command line with the program's path cut to its name (fits a
# narrow sidebar), the whole command line as the kernel has it, the program name alone.
COMMAND_MODES = ("command", "full", "name")
WHEEL_ROWS = 3  # rows one wheel notch scrolls

# COMMAND never gets fewer cells than this while a column can still give way.
COMMAND_MIN = 6
# USER shows only when COMMAND keeps this many cells beside it; further columns need more.
USER_ROOM = 12
EXTRA_ROOM = 18
# A deep tree's guide gives way before the command has fewer cells than this.
GUIDE_LEAVES = 8


@dataclass(frozen=True)
class Column:
    key: str  # also the sort key
    title: str
    right: bool  # right-aligned
    descending: bool  # the direction a first pick sorts in
    width: int = 0  # 0: measured from the rows (PID, USER, threads) or the rest (COMMAND)
    about: str = ""  # what the sort chooser says of it


PID = Column("pid", "PID", True, False, about="process id")
USER = Column("user", "USER", False, False, about="owner")
STATE = Column("state", "S", False, False, 1, "state: R running, S sleeping, D disk wait, Z zombie …")
CPU = Column("cpu", "CPU%", True, True, 5, "CPU use; 100 = one core")
MEMORY = Column("memory", "MEM", True, True, 4, "resident memory")
MEMORY_PERCENT = Column("memory_percent", "MEM%", True, True, 4, "share of memory")
THREADS = Column("threads", "THR", True, True, 0, "threads")
TIME = Column("time", "TIME+", True, True, 8, "CPU time used")
COMMAND = Column("command", "COMMAND", False, False, about="command line, or program name")

COLUMNS = (PID, USER, STATE, CPU, MEMORY, MEMORY_PERCENT, THREADS, TIME, COMMAND)  # left to right
BY_KEY = {column.key: column for column in COLUMNS}
ALWAYS = (PID, CPU, MEMORY)  # besides COMMAND
OPTIONAL = ((USER, USER_ROOM), (STATE, EXTRA_ROOM), (MEMORY_PERCENT, EXTRA_ROOM), (THREADS, EXTRA_ROOM), (TIME, EXTRA_ROOM))
GIVE_WAY = (MEMORY, CPU)  # dropped, in this order, rather than leave COMMAND under COMMAND_MIN

Layout = list[tuple[Column, int]]  # (column, cells) left to right; COMMAND last


# -- text of one cell ---------------------------------------------------------------


def cpu_text(percent: float) -> str:
    if not math.isfinite(percent):
        return "?"
    return f"{percent:.1f}" if percent < 99.95 else f"{min(percent, 99999):.0f}"


@functools.lru_cache(maxsize=1024)  # most processes keep their size from one refresh to the next
def memory_text(size: float) -> str:
    """Bytes in at most four cells, as htop writes them: ``512K``, ``4.8M``, ``38G``."""
    if not math.isfinite(size) or size < 0:
        return "?"
    return format_value(size, "B", width=4)  # the size rule's narrowest form


def time_text(seconds: float) -> str:
    """CPU time as htop's TIME+: ``m:ss.hh``, then ``hh:mm:ss`` hours, then days."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    if seconds < 6000:
        minutes, rest = divmod(seconds, 60)
        return f"{int(minutes)}:{rest:05.2f}"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    if hours < 100:
        return f"{hours}h{rest // 60:02d}:{rest % 60:02d}"
    return f"{hours // 24}d{hours % 24:02d}h"


def short_command(command: str, name: str) -> str:
    """The command line with its program path cut to the program's name."""
    if not command:
        return name
    program, _, rest = command.partition(" ")
    program = program.rsplit("/", 1)[-1] or program
    return f"{program} {rest}".rstrip()


def command_text(row: Any, mode: str = "command") -> str:
    """What the COMMAND column says of ``row``: a kernel thread's whole name, never cut at its ``/``."""
    if getattr(row, "kernel", False):
        return row.command if mode == "command" else row.name
    if mode == "name":
        return row.name or short_command(row.command, "").partition(" ")[0]
    if mode == "full":
        return row.command or row.name
    return short_command(row.command, row.name)


def cell_text(column: Column, row: Any) -> str:
    key = column.key
    if key == "pid":
        return str(row.pid)
    if key == "user":
        return clean(row.user)
    if key == "state":
        return clean(getattr(row, "state", "") or "?")
    if key == "cpu":
        return cpu_text(row.cpu_percent)
    if key == "memory":
        return memory_text(float(row.rss_bytes))
    if key == "memory_percent":
        return cpu_text(row.memory_percent)
    if key == "threads":
        return str(getattr(row, "threads", "?"))
    if key == "time":
        return time_text(getattr(row, "cpu_seconds", math.nan))
    raise KeyError(key)


# -- columns for a width ----------------------------------------------------------


def measured_widths(rows: Iterable[Any]) -> dict[str, int]:
    """Cells each column needs for ``rows``, its title and a sort arrow."""
    widths = {column.key: max(column.width, len(column.title) + 1) for column in COLUMNS}
    pid = user = threads = 0
    for row in rows:
        pid = max(pid, len(str(row.pid)))
        user = max(user, len(row.user))
        threads = max(threads, len(str(getattr(row, "threads", ""))))
    widths["pid"] = max(widths["pid"], pid)
    widths["user"] = max(widths["user"], min(user, 8))
    widths["threads"] = max(widths["threads"], threads)
    return widths


def choose_columns(width: int, widths: Mapping[str, int], marker: int = 0) -> Layout:
    """The columns that fit ``width`` cells (less ``marker`` for a mark before each row), by priority.

    PID, CPU% and MEM always, then USER while COMMAND keeps ``USER_ROOM`` cells,
    then the rest while it keeps ``EXTRA_ROOM``; COMMAND gets what is left.
    """
    chosen = {column.key for column in ALWAYS}

    def used(keys: set[str]) -> int:
        return marker + sum(widths[key] + 1 for key in keys)

    for column, room in OPTIONAL:
        if width - used(chosen | {column.key}) < room:
            break
        chosen.add(column.key)
    for column in GIVE_WAY:
        if width - used(chosen) >= COMMAND_MIN:
            break
        chosen.discard(column.key)
    command = max(1, width - used(chosen))
    return [(column, widths[column.key]) for column in COLUMNS if column.key in chosen] + [(COMMAND, command)]


def column_spans(layout: Layout, marker: int = 0) -> list[tuple[int, int, str]]:
    """``(first cell, last cell + 1, column key)`` of each column, for clicks on the header."""
    spans = []
    x = marker
    for column, cells in layout:
        spans.append((x, x + cells, column.key))
        x += cells + 1
    return spans


def _cell(text: str, cells: int, right: bool) -> str:
    text = fit(text, cells)
    return text.rjust(cells) if right else text.ljust(cells)


def header_text(layout: Layout, sort: str, descending: bool, command_mode: str = "command") -> str:
    parts = []
    for column, cells in layout:
        title = "PROGRAM" if column is COMMAND and command_mode == "name" else column.title
        if column.key == sort:
            title += DESCENDING if descending else ASCENDING
        parts.append(_cell(title, cells, column.right))
    return " ".join(parts)


# -- order ----------------------------------------------------------------------------


def sort_key(sort: str, command_mode: str = "command") -> Callable[[Any], Any]:
    """The ascending key of a column (ties are broken by PID, always ascending)."""
    if sort == "pid":
        return lambda r: r.pid
    if sort == "user":
        return lambda r: r.user.casefold()
    if sort == "state":
        return lambda r: getattr(r, "state", "")
    if sort == "memory" or sort == "memory_percent":
        return lambda r: r.rss_bytes
    if sort == "threads":
        return lambda r: getattr(r, "threads", 0)
    if sort == "time":
        return lambda r: getattr(r, "cpu_seconds", 0.0)
    if sort == "command":
        return lambda r: command_text(r, command_mode).casefold()
    # Ties by PID alone, as htop: idle processes keep their places, and a new one
    # joins the end of them instead of pushing every row below it down a line.
    return lambda r: r.cpu_percent


def default_descending(sort: str) -> bool:
    column = BY_KEY.get(sort)
    return column.descending if column is not None else True


def order(rows: Iterable[Any], sort: str = "cpu", descending: bool | None = None, command_mode: str = "command") -> list[Any]:
    """``rows`` sorted by a column; equal rows stay in PID order."""
    if descending is None:
        descending = default_descending(sort)
    by_pid = sorted(rows, key=lambda r: r.pid)
    return sorted(by_pid, key=sort_key(sort, command_mode), reverse=descending)


def matcher(pattern: str) -> Callable[[Any], bool]:
    """Whether a row matches a filter, by PID, name or command."""
    matches = compile_filter(pattern)
    return lambda r: matches(str(r.pid)) or matches(r.name) or matches(r.command)


def arrange(
    rows: Sequence[Any], sort: str = "cpu", pattern: str = "", descending: bool | None = None, command_mode: str = "command"
) -> list[Any]:
    """Filtered (name, command or PID) and sorted rows (by default CPU and memory descending, PID as tie-break)."""
    if pattern:
        matches = matcher(pattern)
        rows = [r for r in rows if matches(r)]
    return order(rows, sort, descending, command_mode)


@dataclass(frozen=True)
class TreeLine:
    row: Any
    guide: str  # drawn before the command: "├─", "│ └─" …
    context: bool = False  # shown only because a descendant matches the filter


def arrange_tree(
    rows: Sequence[Any], sort: str = "cpu", pattern: str = "", descending: bool | None = None, command_mode: str = "command"
) -> list[TreeLine]:
    """Rows as a tree by parent PID: each parent above its children, siblings in the sort's order.

    A row whose parent is not among ``rows`` is a root. With a filter, the
    matching rows show with their ancestors, which are marked as context.
    """
    by_pid = {r.pid: r for r in rows}
    children: dict[int, list[Any]] = {}
    roots = []
    for row in rows:
        parent = getattr(row, "ppid", 0)
        if parent in by_pid and parent != row.pid:
            children.setdefault(parent, []).append(row)
        else:
            roots.append(row)
    keep: set[int] | None = None
    matched: set[int] = set()
    if pattern:
        matches = matcher(pattern)
        matched = {r.pid for r in rows if matches(r)}
        keep = set()
        for pid in matched:
            while pid in by_pid and pid not in keep:
                keep.add(pid)
                pid = getattr(by_pid[pid], "ppid", 0)
    lines: list[TreeLine] = []
    seen: set[int] = set()

    def walk(row: Any, guide: str, lead: str) -> None:
        # Iterative: a deep chain of processes must not exhaust the stack.
        stack = [(row, guide, lead)]
        while stack:
            node, node_guide, node_lead = stack.pop()
            if node.pid in seen:
                continue
            seen.add(node.pid)
            if keep is None or node.pid in keep:
                lines.append(TreeLine(node, node_guide, keep is not None and node.pid not in matched))
            kids = [k for k in order(children.get(node.pid, ()), sort, descending, command_mode) if keep is None or k.pid in keep]
            for index in reversed(range(len(kids))):
                last = index == len(kids) - 1
                stack.append((kids[index], node_lead + ("└─" if last else "├─"), node_lead + ("  " if last else "│ ")))

    for root in order(roots, sort, descending, command_mode):
        walk(root, "", "")
    # Rows caught in a parent loop (a reused PID) are reached from no root: listed as roots.
    for row in order((r for r in rows if r.pid not in seen), sort, descending, command_mode):
        walk(row, "", "")
    return lines


# -- one row ----------------------------------------------------------------------------


def fit_guide(guide: str, cells: int) -> str:
    """The tree guide, cut from the left (``…│ └─``) so that the command keeps ``GUIDE_LEAVES`` cells."""
    room = max(0, cells - GUIDE_LEAVES)
    if len(guide) <= room:
        return guide
    if room < 3:
        return ""
    return "…" + guide[len(guide) - room + 1 :]


def process_row(
    row: Any,
    layout: Layout,
    style: str,
    *,
    guide: str = "",
    command_mode: str = "command",
    marker: str | None = None,
    muted: bool = False,
) -> Row:
    """One process in ``layout``'s columns; ``marker`` (one cell) comes first when given."""
    runs: Row = []
    if marker is not None:
        runs.append((marker, "ok") if marker.strip() and style != "cursor" else (marker, style))
    cells = [_cell(cell_text(column, row), width, column.right) for column, width in layout[:-1]]
    fields = " ".join(cells) + " " if cells else ""
    quiet = "muted" if (muted or getattr(row, "kernel", False)) and style != "cursor" else style
    runs.append((fields, "muted" if muted and style != "cursor" else style))
    command_cells = layout[-1][1]
    guide = fit_guide(guide, command_cells)
    if guide:
        runs.append((guide, "muted" if style != "cursor" else style))
        command_cells -= len(guide)
    runs.append((fit(clean(command_text(row, command_mode)), command_cells).ljust(command_cells), quiet))
    return [(text, key) for text, key in runs if text]


def header_row(width: int, sort: str, descending: bool | None = None, command_mode: str = "command") -> Row:
    """The column headings for ``width`` cells, the sorted one marked ▼ (descending) or ▲."""
    if descending is None:
        descending = default_descending(sort)
    layout = choose_columns(width, measured_widths(()))
    return [(fit(header_text(layout, sort, descending, command_mode), width).ljust(width), "heading")]


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

    def _title_row(self, width: int, body: int) -> Row:
        total = len(self._shown)
        first = self._top + 1 if total else 0
        last = min(total, self._top + body)
        title = f"{self.PANE_TITLE} [{first}-{last} of {total}]"
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
