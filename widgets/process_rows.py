"""The process table's rows without a widget: htop's columns in a width, sorted by any column, flat or as a tree.

Rows are any objects with ``pid``, ``user``, ``cpu_percent``, ``rss_bytes``,
``memory_percent``, ``name`` and ``command`` attributes; ``ppid``, ``state``,
``threads``, ``cpu_seconds``, ``kernel``, ``where`` and ``run`` are used when a row has them.
Nothing here cares where rows come from, and nothing imports Textual.

Columns come by priority: PID, CPU% and MEM always; USER when the command
keeps room; state, MEM%, threads and CPU time only when there is room to
spare. WHERE (a process's job or container) and RUN (the W&B run it
writes) show only when some row has one, so a plain host's table is as
narrow as ever. COMMAND takes what is left and never vanishes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.common.units import format_value
from widgets.chartframe import Row, fit

SORTS = ("cpu", "memory")  # what ``t`` steps through
DESCENDING = "▼"
ASCENDING = "▲"
WATCHED = "●"
# ``c`` steps through: the command line with the program's path cut to its name (fits a
# narrow sidebar), the whole command line as the kernel has it, the program name alone.
COMMAND_MODES = ("command", "full", "name")

# COMMAND never gets fewer cells than this while a column can still give way.
COMMAND_MIN = 6
# USER shows only when COMMAND keeps this many cells beside it; further columns need more.
USER_ROOM = 12
EXTRA_ROOM = 18
# WHERE and RUN never take more cells than these (a pod name can be long).
WHERE_MOST = 24
RUN_MOST = 10
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
WHERE = Column("where", "WHERE", False, False, about="Slurm job or container")
RUN = Column("run", "RUN", False, False, about="W&B run written")
COMMAND = Column("command", "COMMAND", False, False, about="command line, or program name")

COLUMNS = (PID, USER, STATE, CPU, MEMORY, MEMORY_PERCENT, THREADS, TIME, COMMAND)  # left to right; the sort chooser's
PLACES = (*COLUMNS[:-1], WHERE, RUN, COMMAND)  # left to right, with the columns only some hosts have
BY_KEY = {column.key: column for column in PLACES}
ALWAYS = (PID, CPU, MEMORY)  # besides COMMAND
OPTIONAL = (
    (USER, USER_ROOM),
    (WHERE, EXTRA_ROOM),
    (RUN, EXTRA_ROOM),
    (STATE, EXTRA_ROOM),
    (MEMORY_PERCENT, EXTRA_ROOM),
    (THREADS, EXTRA_ROOM),
    (TIME, EXTRA_ROOM),
)
WHEN_PRESENT = {WHERE.key, RUN.key}  # measured at 0 cells when no row has one: then left out
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
    if key == "where" or key == "run":
        return clean(getattr(row, key, ""))
    raise KeyError(key)


# -- columns for a width ----------------------------------------------------------


def measured_widths(rows: Iterable[Any]) -> dict[str, int]:
    """Cells each column needs for ``rows``, its title and a sort arrow."""
    widths = {column.key: max(column.width, len(column.title) + 1) for column in PLACES}
    pid = user = threads = where = run = 0
    for row in rows:
        pid = max(pid, len(str(row.pid)))
        user = max(user, len(row.user))
        threads = max(threads, len(str(getattr(row, "threads", ""))))
        where = max(where, len(getattr(row, "where", "")))
        run = max(run, len(getattr(row, "run", "")))
    widths["pid"] = max(widths["pid"], pid)
    widths["user"] = max(widths["user"], min(user, 8))
    widths["threads"] = max(widths["threads"], threads)
    widths["where"] = max(widths["where"], min(where, WHERE_MOST)) if where else 0
    widths["run"] = max(widths["run"], min(run, RUN_MOST)) if run else 0
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
        if column.key in WHEN_PRESENT and not widths.get(column.key):
            continue
        if width - used(chosen | {column.key}) < room:
            break
        chosen.add(column.key)
    for column in GIVE_WAY:
        if width - used(chosen) >= COMMAND_MIN:
            break
        chosen.discard(column.key)
    command = max(1, width - used(chosen))
    return [(column, widths[column.key]) for column in PLACES[:-1] if column.key in chosen] + [(COMMAND, command)]


class Keyed(Protocol):
    """A table's column as far as clicks on its header go: its key."""

    @property
    def key(self) -> str: ...


def column_spans(layout: Sequence[tuple[Keyed, int]], marker: int = 0) -> list[tuple[int, int, str]]:
    """``(first cell, last cell + 1, column key)`` of each column, for clicks on the header."""
    spans = []
    x = marker
    for column, cells in layout:
        spans.append((x, x + cells, column.key))
        x += cells + 1
    return spans


def cell(text: str, cells: int, right: bool) -> str:
    """``text`` fitted to ``cells`` and aligned, as a column of a table shows it."""
    text = fit(text, cells)
    return text.rjust(cells) if right else text.ljust(cells)


def header_text(layout: Layout, sort: str, descending: bool, command_mode: str = "command") -> str:
    parts = []
    for column, cells in layout:
        title = "PROGRAM" if column is COMMAND and command_mode == "name" else column.title
        if column.key == sort:
            title += DESCENDING if descending else ASCENDING
        parts.append(cell(title, cells, column.right))
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
    if sort == "where" or sort == "run":
        return lambda r: getattr(r, sort, "").casefold()
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
    cells = [cell(cell_text(column, row), width, column.right) for column, width in layout[:-1]]
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
