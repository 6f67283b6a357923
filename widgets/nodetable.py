"""The node table: each node of a cluster, up or down, with its GPUs' load, memory, heat and freshness.

Rows are :class:`NodeRow`s (plain data, the texts already worded by the
caller); the table sorts, filters, scrolls and keeps its cursor on a node as
the process table does (it is one: the cursor, paging, the mouse, clickable
headings, ``<`` ``>`` and the sort chooser come from ``ProcessTable``).
Unknown figures read ``-``, never 0. A node that is down stays listed, its
state in the error colour (``down 3m``), its last figures muted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from textual.binding import Binding
from textual.message import Message

from leet.common.matching import compile_filter
from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import LIST_BINDINGS
from widgets.process_rows import ASCENDING, DESCENDING, cell, column_spans
from widgets.processes import ProcessTable

UNKNOWN = "-"
NAME_MIN, NAME_MAX = 4, 16


@dataclass(frozen=True)
class NodeRow:
    """One node as the table shows it."""

    node: str
    up: bool
    state: str  # "up", "down 3m"
    rank: int = 0  # the node's place in natural order ("node2" before "node10")
    gpus: int | None = None
    gpu_util: float | None = None  # percent
    memory: float | None = None  # percent
    hot_temp: float | None = None  # degrees C
    hot_gpu: str | None = None
    age: float | None = None  # seconds since the newest sample
    age_text: str = UNKNOWN
    hot: bool = False  # the hottest GPU runs hot enough to say so
    stale: bool = False  # the newest sample is older than a few scrape intervals
    shown: bool = True  # False: the charts leave the node out (the node filter)


@dataclass(frozen=True)
class NodeColumn:
    key: str  # also the sort key
    title: str
    width: int  # 0: measured (the node's name)
    right: bool
    descending: bool  # the direction a first pick sorts in
    about: str


NODE = NodeColumn("node", "NODE", 0, False, False, "node name, in natural order")
STATE = NodeColumn("state", "STATE", 8, False, False, "down first, then up")
GPUS = NodeColumn("gpus", "GPUs", 4, True, True, "GPUs the node has")
UTIL = NodeColumn("util", "GPU%", 5, True, True, "mean GPU utilisation")
MEMORY = NodeColumn("memory", "MEM%", 5, True, True, "host memory in use")
TEMP = NodeColumn("temp", "HOT", 6, True, True, "the hottest GPU: °C and its index")
AGE = NodeColumn("age", "AGE", 4, True, True, "time since the newest sample")

COLUMNS = (NODE, STATE, GPUS, UTIL, MEMORY, TEMP, AGE)  # left to right
BY_KEY = {column.key: column for column in COLUMNS}
# Shown always; the rest join, in this order, while they fit.
ALWAYS = ("node", "state", "util")
OPTIONAL = ("temp", "memory", "age", "gpus")
NODE_SORTS = ("node", "util", "temp", "age", "state")  # what ``t`` steps through


def _number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return UNKNOWN
    return f"{value:.0f}"


def cell_text(key: str, row: NodeRow, ascii: bool = False) -> str:
    if key == "node":
        return clean(row.node)
    if key == "state":
        return row.state
    if key == "gpus":
        return UNKNOWN if row.gpus is None else str(row.gpus)
    if key == "util":
        return _number(row.gpu_util)
    if key == "memory":
        return _number(row.memory)
    if key == "temp":
        if row.hot_temp is None or not math.isfinite(row.hot_temp):
            return UNKNOWN
        where = f" g{clean(row.hot_gpu)}" if row.hot_gpu is not None else ""
        return f"{row.hot_temp:.0f}{'C' if ascii else '°'}{where}"
    if key == "age":
        return row.age_text
    raise KeyError(key)


# -- columns and order --------------------------------------------------------------------------

Layout = list[tuple[NodeColumn, int]]


def name_width(rows: Sequence[NodeRow]) -> int:
    return max(NAME_MIN, min(NAME_MAX, max((len(row.node) for row in rows), default=NAME_MIN)))


def choose_columns(width: int, names: int) -> Layout:
    """The columns that fit ``width`` cells, always node, state and GPU%; the node's name gives way to ``NAME_MIN``."""
    widths = {column.key: column.width or names for column in COLUMNS}
    chosen = set(ALWAYS)

    def used(keys: set[str]) -> int:
        return sum(widths[key] + 1 for key in keys) - 1

    for key in OPTIONAL:
        if used(chosen | {key}) <= width:
            chosen.add(key)
    spare = width - used(chosen)
    if spare < 0:
        widths["node"] = max(NAME_MIN, widths["node"] + spare)
    else:
        widths["node"] += min(spare, max(0, NAME_MAX - widths["node"]))  # a long name gets back what is free
    return [(column, widths[column.key]) for column in COLUMNS if column.key in chosen]


def header_text(layout: Layout, sort: str, descending: bool) -> str:
    parts = []
    for column, cells in layout:
        title = column.title + ((DESCENDING if descending else ASCENDING) if column.key == sort else "")
        parts.append(cell(title, cells, column.right))
    return " ".join(parts)


def _value(row: NodeRow, sort: str) -> Any:
    """The ascending key of ``sort``, None where the row does not know it."""
    if sort == "state":
        return (row.up, row.rank)
    if sort == "gpus":
        return row.gpus
    if sort == "util":
        return row.gpu_util
    if sort == "memory":
        return row.memory
    if sort == "temp":
        return row.hot_temp
    if sort == "age":
        return row.age
    return row.rank


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def arrange_nodes(rows: Sequence[NodeRow], sort: str = "node", pattern: str = "", descending: bool | None = None) -> list[NodeRow]:
    """Filtered (by name) and sorted rows; unknown figures sort last either way round, ties in natural order."""
    if pattern:
        matches = compile_filter(pattern)
        rows = [row for row in rows if matches(row.node)]
    if descending is None:
        descending = BY_KEY[sort].descending if sort in BY_KEY else False
    by_rank = sorted(rows, key=lambda row: row.rank)
    known = [row for row in by_rank if _known(_value(row, sort))]
    unknown = [row for row in by_rank if not _known(_value(row, sort))]
    return sorted(known, key=lambda row: _value(row, sort), reverse=descending) + unknown


def _style(key: str, row: NodeRow, style: str) -> str:
    if style == "cursor":
        return style
    if key == "state":
        return "error" if not row.up else "ok"
    if not row.shown or not row.up:
        return "muted"
    if (key == "temp" and row.hot) or (key == "age" and row.stale):
        return "warn"
    return style


def node_row(row: NodeRow, layout: Layout, style: str, width: int, ascii: bool = False) -> Row:
    runs: Row = []
    used = 0
    for index, (column, cells) in enumerate(layout):
        if index:
            runs.append((" ", style if style == "cursor" else "empty"))
            used += 1
        text = cell(cell_text(column.key, row, ascii), cells, column.right)
        runs.append((text, _style(column.key, row, style)))
        used += cells
    if used < width:
        runs.append((" " * (width - used), style if style == "cursor" else "empty"))
    return runs


class NodeTable(ProcessTable, inherit_bindings=False):
    """The nodes, sorted by any column; ``enter`` says which node was chosen (sized as ``ProcessTable``)."""

    BINDINGS = [*LIST_BINDINGS, Binding("enter", "choose", "Only this node / all", show=False)]
    SORTS = NODE_SORTS
    PANE_TITLE = "Nodes"

    class Chosen(Message):
        """``enter`` on a node."""

        def __init__(self, node: str) -> None:
            super().__init__()
            self.node = node

    class Highlighted(Message):
        """The cursor moved to another node."""

        def __init__(self, node: str | None) -> None:
            super().__init__()
            self.node = node

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._names = NAME_MIN
        self._announced: str | None = None

    def set_nodes(self, rows: Sequence[NodeRow]) -> None:
        self.set_processes(rows)

    def set_processes(self, rows: Sequence[Any]) -> None:
        self._all = rows
        self._names = name_width(rows)
        self._rearrange()

    @property
    def selected_node(self) -> str | None:
        """The node under the cursor once a person has moved it (or focused the table), else None."""
        row = self.selected_row
        return row.node if row is not None and self._chosen else None

    # -- ProcessTable hooks ------------------------------------------------------------
    def arrange_rows(self, rows: Sequence[Any]) -> list[Any]:
        return arrange_nodes(rows, self.sort, self.pattern, self.descending)

    def row_key(self, row: Any) -> Any:
        return row.node

    def _layout_for(self, width: int) -> Layout:
        return choose_columns(width, self._names)

    def header_row(self, width: int) -> Row:
        return [(fit(header_text(self._layout_for(width), self.sort, self.descending), width).ljust(width), "heading")]

    def item_row(self, row: Any, width: int, style: str) -> Row:
        return node_row(row, self._layout_for(width), style, width, self.ascii)

    def header_spans(self, width: int) -> list[tuple[int, int, str]]:
        return column_spans(self._layout_for(width))

    def sort_choices(self) -> list[tuple[str, str, str]]:
        return [(column.key, column.title, column.about) for column in COLUMNS]

    def default_descending(self, sort: str) -> bool:
        column = BY_KEY.get(sort)
        return column.descending if column is not None else False

    def set_watched(self, pid: int | None, tree: bool = False) -> None:
        """Nodes are not processes: nothing is watched."""

    def set_tree(self, tree: bool) -> None:
        """Nodes make no tree."""

    def title_suffix(self) -> str:
        down = sum(1 for row in self._all if not row.up)
        return f" · {down} down" if down else ""

    def _rearrange(self) -> None:
        super()._rearrange()
        self._announce()

    def _move_to(self, index: int) -> None:
        super()._move_to(index)
        self._announce()

    def on_focus(self) -> None:
        # ProcessTable's own handler runs too (Textual calls each class's): it marks the row chosen first.
        self.call_after_refresh(self._announce)

    def _announce(self) -> None:
        node = self.selected_node
        if node != self._announced:
            self._announced = node
            self.post_message(self.Highlighted(node))

    def action_choose(self) -> None:
        row = self.selected_row
        if row is not None:
            self.post_message(self.Chosen(row.node))

    def build_rows(self, width: int, height: int) -> list[Row]:
        rows = super().build_rows(width, height)
        if not self._shown and len(rows) > 2:
            what = "  no node matches" if self.pattern else "  no nodes yet"
            rows[2] = [(fit(what, width).ljust(width), "muted")]
        return rows
