"""Every GPU of a cluster at a glance: one shaded cell per GPU, one named block per node.

The pure part (no Textual) turns a :class:`HeatmapModel` into rows of
``(text, style key)`` runs for a given size: ``choose_layout`` picks how the
nodes are laid out and ``heatmap_rows`` draws them. A cell's shade and its
colour both follow the level (``glyphs.heat_glyph``: ``░▒▓█``, ``.:-=+*#%@``
in ASCII; styles ``h0``…``h7``), so levels read apart without colour too.

Layouts, in the order they are tried:

* **grid**: each node a row, ``name ▒▓██▓▒░█``, nodes down columns of blocks
  side by side (as ``ls`` lists files), whole names, two cells a GPU when
  that costs no height; then names cut from the left (``…de-017``: node
  names differ at their ends).
* **strip**: GPUs as rows and nodes as columns, one cell each, with the
  nodes' names (less what they share) under them where they fit: for many
  nodes in a wide, short space.
* **window**: the grid as it fits, showing the run of nodes around the
  selected one, and saying which.

The widget knows no metric: the model brings a title, a unit, the range the
shades span, and the names of the metrics a key steps through.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from textual import events
from textual.message import Message

from leet.common.text import clean
from widgets.chartframe import Row, heat_scale, trim_row
from widgets.glyphs import heat_glyph
from widgets.lines import StyledLines
from widgets.raster import HEAT_LEVELS

DOWN = "×"  # every cell of a node that is down
UNKNOWN = "?"  # a GPU the node has, with no reading
GAP = 2  # cells between blocks of nodes
NAME_MAX = 16  # a longer node name is cut even where there is room
NAME_MIN = 4  # names are cut no shorter than this before the strip is tried
STRIP_LABEL = 3  # "g0 " … before a strip's rows
STRIP_NAME_GAP = 1


@dataclass(frozen=True)
class HeatNode:
    """One node's row: a value per GPU index (None: no reading), and how many GPUs it has."""

    name: str
    values: tuple[float | None, ...]
    gpus: int
    down: bool = False


@dataclass(frozen=True)
class HeatmapModel:
    title: str  # what is shaded: "GPU utilisation"
    unit: str
    lo: float  # the value of the lowest shade
    hi: float  # the value of the highest
    nodes: tuple[HeatNode, ...] = ()
    selected: str | None = None  # drawn as the cursor, and kept in view
    metrics: tuple[str, ...] = ()  # the names a key steps through, for the title
    metric: str = ""  # the one shown
    note: str = ""  # said after the title: "3 nodes without GPUs"

    @property
    def columns(self) -> int:
        """GPU cells per node: the most any node has."""
        return max((max(node.gpus, len(node.values)) for node in self.nodes), default=0)


@dataclass(frozen=True)
class HeatLayout:
    form: str  # "grid" or "strip" (a window is a grid showing fewer nodes than it has)
    name_width: int
    cell_width: int
    blocks: int  # blocks side by side (grid)
    body: int  # node rows a block has (grid), GPU rows (strip)
    first: int  # the first node shown
    count: int  # nodes shown
    scale_apart: bool  # the scale has a row of its own under the body

    @property
    def height(self) -> int:
        """Rows the heatmap takes: the title, the GPU indices or the names row, the body, and the scale's row if apart."""
        return 2 + self.body + (1 if self.scale_apart else 0)


def level_of(value: float, lo: float, hi: float, levels: int = HEAT_LEVELS) -> int:
    """The shade of ``value`` on ``levels`` steps from ``lo`` to ``hi``; values beyond take the end steps."""
    if not hi > lo:
        return levels - 1 if value > lo else 0
    scaled = (value - lo) / (hi - lo) * levels
    if not scaled > 0:  # NaN included; callers skip it
        return 0
    return min(levels - 1, int(scaled))


def common_suffix(names: Sequence[str]) -> str:
    """The domain or port every name ends with (``.cluster.example``, ``:9400``), when at least two names share one."""
    if len(names) < 2:
        return ""
    first = names[0]
    for at, char in enumerate(first):
        if char in ".:" and at:
            suffix = first[at:]
            if all(name.endswith(suffix) and len(name) > len(suffix) for name in names):
                return suffix
    return ""


def shown_names(model: HeatmapModel) -> dict[str, str]:
    """Each node's name as the heatmap writes it: clean, less the domain or port they all share."""
    names = [clean(node.name) for node in model.nodes]
    suffix = common_suffix(names)
    return {node.name: name[: len(name) - len(suffix)] for node, name in zip(model.nodes, names)}


def short_name(name: str, width: int) -> str:
    """``name`` in ``width`` cells, cut from the left: node names differ at their ends."""
    if len(name) <= width:
        return name
    if width <= 1:
        return name[-width:] if width > 0 else ""
    return "…" + name[len(name) - width + 1 :]


# -- choosing a layout ----------------------------------------------------------------------


def _title_row(model: HeatmapModel, width: int, layout: HeatLayout | None, total: int, apart: bool | None = None, ascii: bool = False) -> tuple[Row, bool]:
    """The title, with the scale on its right unless ``apart`` (None: when both fit); and whether the scale is apart."""
    title = _title_runs(model, layout, total)
    scale = _scale_runs(model, width, ascii)
    scale_width = sum(len(text) for text, _ in scale)
    if apart is None:
        apart = sum(len(text) for text, _ in title) + scale_width + 1 > width
    if apart:
        return trim_row(title, width), True
    room = width - scale_width - 1
    used = min(room, sum(len(text) for text, _ in title))
    return [*trim_row(title, room)[: len(title)], (" " * (width - used - scale_width), "empty"), *scale], False


def _scale_runs(model: HeatmapModel, width: int, ascii: bool = False) -> Row:
    scale = heat_scale(model.lo, model.hi, model.unit, width, ascii)
    return [*scale, (f"{DOWN} down ", "error"), (f"{UNKNOWN} no reading", "muted")] if scale else []


def _title_runs(model: HeatmapModel, layout: HeatLayout | None, total: int) -> Row:
    runs: Row = [(clean(model.title), "title")]
    if layout is not None and layout.count < total:
        runs.append((f" · nodes {layout.first + 1}-{layout.first + layout.count} of {total}", "warn"))
    else:
        gpus = sum(node.gpus for node in model.nodes)
        runs.append((f" · {total} node{'s' if total != 1 else ''}, {gpus} GPU{'s' if gpus != 1 else ''}", "muted"))
    if model.note:
        runs.append((f" · {clean(model.note)}", "muted"))
    if len(model.metrics) > 1:
        runs.append(("  m", "key"))
        for name in model.metrics:
            runs.append((f" {name}", "heading" if name == model.metric else "muted"))
    return runs


def _grid_blocks(width: int, name_width: int, cell_width: int, columns: int) -> int:
    block = name_width + 1 + columns * cell_width
    return max(1, (width + GAP) // (block + GAP))


def choose_layout(model: HeatmapModel, width: int, height: int) -> HeatLayout:
    """How to lay the nodes out in ``width`` × ``height`` cells (see the module's docstring)."""
    total = len(model.nodes)
    columns = model.columns
    widest = min(NAME_MAX, max((len(name) for name in shown_names(model).values()), default=NAME_MIN))
    apart = _title_row(model, width, None, total)[1]
    room = max(1, height - 2 - (1 if apart else 0))

    def grid(name_width: int, cell_width: int) -> HeatLayout:
        blocks, body = _balanced(total, _grid_blocks(width, name_width, cell_width, columns))
        return HeatLayout("grid", name_width, cell_width, blocks, body, 0, total, apart)

    whole = [grid(widest, cell) for cell in (2, 1)]
    fitting = [layout for layout in whole if layout.body <= room and _fits_across(layout, width, columns)]
    if fitting:
        # The least height leaves the charts the most; wider cells are worth one row more.
        least = min(layout.body for layout in fitting)
        return next(layout for layout in fitting if layout.body <= least + 1)
    for name_width in range(widest - 1, NAME_MIN - 1, -1):
        layout = grid(name_width, 1)
        if layout.body <= room:
            return layout
    if columns <= room and STRIP_LABEL + total <= width:
        return HeatLayout("strip", 0, 1, 1, columns, 0, total, apart)
    return _window(model, width, room, widest, apart)


def _balanced(count: int, blocks: int) -> tuple[int, int]:
    """Blocks and rows for ``count`` nodes in at most ``blocks`` blocks: no block left empty."""
    rows = max(1, math.ceil(count / max(1, blocks)))
    return max(1, math.ceil(count / rows)), rows


def _fits_across(layout: HeatLayout, width: int, columns: int) -> bool:
    return layout.name_width + 1 + columns * layout.cell_width <= width


def _window(model: HeatmapModel, width: int, room: int, name_width: int, apart: bool) -> HeatLayout:
    """The grid cut to ``room`` rows: the run of nodes that holds the selected one."""
    total = len(model.nodes)
    columns = model.columns
    while name_width > NAME_MIN and name_width + 1 + columns > width:
        name_width -= 1
    blocks = _grid_blocks(width, name_width, 1, columns)
    capacity = max(1, blocks * room)
    names = [node.name for node in model.nodes]
    at = names.index(model.selected) if model.selected in names else 0
    first = min(max(0, at - at % capacity), max(0, total - capacity))
    count = min(capacity, total - first)
    blocks, body = _balanced(count, blocks)
    return HeatLayout("grid", name_width, 1, blocks, body, first, count, apart)


# -- drawing --------------------------------------------------------------------------------


def _cells(node: HeatNode, model: HeatmapModel, columns: int, cell_width: int, ascii: bool) -> Row:
    runs: Row = []
    for index in range(columns):
        if index >= node.gpus and (index >= len(node.values) or node.values[index] is None):
            runs.append((" " * cell_width, "empty"))
        elif node.down:
            runs.append((DOWN * cell_width, "error"))
        else:
            value = node.values[index] if index < len(node.values) else None
            if value is None or not math.isfinite(value):
                runs.append((UNKNOWN * cell_width, "muted"))
            else:
                level = level_of(value, model.lo, model.hi)
                runs.append((heat_glyph(level, HEAT_LEVELS, ascii) * cell_width, f"h{level}"))
    return runs


def _name_style(node: HeatNode, model: HeatmapModel) -> str:
    if node.name == model.selected:
        return "cursor"
    return "error" if node.down else "label"


def _index_row(layout: HeatLayout, columns: int, width: int) -> Row:
    """The GPU indices over each block's cells (their last digit where a cell is one wide)."""
    cells = "".join(str(index)[-layout.cell_width :].rjust(layout.cell_width) for index in range(columns))
    block = " " * layout.name_width + " " + cells
    text = (" " * GAP).join(block for _ in range(layout.blocks))
    return trim_row([(text, "muted")], width)


def _grid_rows(model: HeatmapModel, layout: HeatLayout, width: int, ascii: bool) -> tuple[list[Row], list[list[tuple[int, int, str]]]]:
    columns = model.columns
    shown = model.nodes[layout.first : layout.first + layout.count]
    rows: list[Row] = []
    hits: list[list[tuple[int, int, str]]] = []
    block_width = layout.name_width + 1 + columns * layout.cell_width
    names = shown_names(model)
    for line in range(layout.body):
        row: Row = []
        spots = []
        for block in range(layout.blocks):
            index = block * layout.body + line
            if index >= len(shown):
                break
            node = shown[index]
            x = block * (block_width + GAP)
            if block:
                row.append((" " * GAP, "empty"))
            name = short_name(names[node.name], layout.name_width).ljust(layout.name_width)
            row.append((name, _name_style(node, model)))
            row.append((" ", "empty"))
            row.extend(_cells(node, model, columns, layout.cell_width, ascii))
            spots.append((x, x + block_width, node.name))
        rows.append(trim_row(row, width))
        hits.append(spots)
    return rows, hits


def common_prefix(names: Sequence[str]) -> str:
    """What every name starts with, ending before its last run of digits: ``node`` of ``node01``…``node64``."""
    if not names:
        return ""
    first, last = min(names), max(names)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    prefix = first[:size]
    while prefix and prefix[-1].isdigit():
        prefix = prefix[:-1]
    return prefix if all(len(name) > len(prefix) for name in names) else ""


def _strip_rows(model: HeatmapModel, layout: HeatLayout, width: int, ascii: bool) -> tuple[list[Row], list[list[tuple[int, int, str]]]]:
    nodes = model.nodes
    rows: list[Row] = []
    for gpu in range(layout.body):
        row: Row = [(f"g{gpu}"[: STRIP_LABEL - 1].ljust(STRIP_LABEL), "muted")]
        for node in nodes:
            row.extend(_cells(HeatNode(node.name, node.values[gpu : gpu + 1], 1 if gpu < node.gpus else 0, node.down), model, 1, 1, ascii))
        rows.append(trim_row(row, width))
    spot = [(STRIP_LABEL + i, STRIP_LABEL + i + 1, node.name) for i, node in enumerate(nodes)]
    return rows, [spot for _ in rows]


def _strip_names(model: HeatmapModel, width: int) -> Row:
    """Under a strip: each node's name less the prefix all share, where it fits; the selected node's always."""
    nodes = model.nodes
    prefix = common_prefix([node.name for node in nodes])
    cells = [" "] * max(0, width)
    styles = ["muted"] * len(cells)

    def place(i: int, style: str, force: bool = False) -> bool:
        text = clean(nodes[i].name[len(prefix) :])
        at = STRIP_LABEL + i
        end = at + len(text)
        if end > len(cells):
            return False
        if not force and any(c != " " for c in cells[max(0, at - STRIP_NAME_GAP) : end + STRIP_NAME_GAP]):
            return False
        cells[at:end] = list(text)
        styles[at:end] = [style] * len(text)
        return True

    names = [node.name for node in nodes]
    if model.selected in names:
        place(names.index(model.selected), "cursor", force=True)
    for i in range(len(nodes)):
        place(i, "error" if nodes[i].down else "label")
    row: Row = []
    for char, style in zip(cells, styles):
        if row and row[-1][1] == style:
            row[-1] = (row[-1][0] + char, style)
        else:
            row.append((char, style))
    return row


def heatmap_rows(model: HeatmapModel, width: int, height: int, ascii: bool = False) -> list[Row]:
    """The heatmap in exactly ``height`` rows of ``width`` cells."""
    return render(model, width, height, ascii)[0]


def render(model: HeatmapModel, width: int, height: int, ascii: bool = False) -> tuple[list[Row], dict[int, list[tuple[int, int, str]]]]:
    """Rows, and for each row the ``(first cell, end, node)`` spans a click there may land on."""
    if width <= 0 or height <= 0:
        return [], {}
    blank: Row = [(" " * width, "empty")]
    total = len(model.nodes)
    if not total or not model.columns:
        what = model.title + (" · " + model.note if model.note else "")
        message = "no node has reported a GPU yet" if not total else "no GPU readings"
        lines = [trim_row([(clean(what), "title")], width), trim_row([(message, "muted")], width)]
        return (lines + [blank] * height)[:height], {}
    layout = choose_layout(model, width, height)
    title, _ = _title_row(model, width, layout, total, layout.scale_apart, ascii)
    rows: list[Row] = [title]
    if layout.form == "strip":
        body, spots = _strip_rows(model, layout, width, ascii)
        rows.extend(body)
        rows.append(trim_row(_strip_names(model, width), width))
        top = 1
    else:
        rows.append(_index_row(layout, model.columns, width))
        body, spots = _grid_rows(model, layout, width, ascii)
        rows.extend(body)
        top = 2
    hits = {top + offset: spot for offset, spot in enumerate(spots)}
    if layout.scale_apart:
        rows.append(trim_row(_scale_runs(model, width, ascii), width))
    rows = [trim_row(row, width) for row in rows]
    return (rows + [blank] * height)[:height], hits


class GpuHeatmap(StyledLines):
    """The heatmap as a panel: as tall as its layout needs, up to ``max_rows``; a click on a node says which."""

    DEFAULT_CSS = """
    GpuHeatmap {
        height: auto;
        width: 1fr;
    }
    """

    class NodeClicked(Message):
        """A node's name or cells were clicked."""

        def __init__(self, node: str) -> None:
            super().__init__()
            self.node = node

    def __init__(self, *, id: str | None = None, max_rows: int = 16) -> None:
        super().__init__(id=id)
        self.model = HeatmapModel("GPUs", "", 0.0, 1.0)
        self.max_rows = max_rows
        self._hits: dict[int, list[tuple[int, int, str]]] = {}
        self._height_for = -1

    def set_model(self, model: HeatmapModel) -> None:
        if model == self.model:
            return
        self.model = model
        self._check_height()
        self.relayout()

    def set_max_rows(self, rows: int) -> None:
        if rows != self.max_rows:
            self.max_rows = max(3, rows)
            self._check_height()

    def _check_height(self) -> None:
        # Only a different height costs a relayout of the screen.
        wanted = self._wanted_height(self.size.width)
        if wanted != self._height_for:
            self._height_for = wanted
            self.refresh(layout=True)

    def _wanted_height(self, width: int) -> int:
        if width <= 0:
            return self.max_rows
        if not self.model.nodes or not self.model.columns:
            return 2
        return min(self.max_rows, choose_layout(self.model, width, self.max_rows).height)

    def get_content_height(self, container, viewport, width: int) -> int:
        return self._wanted_height(width)

    def on_resize(self) -> None:
        # StyledLines' own handler runs after this one (Textual calls each class's) and lays the rows out.
        self._height_for = self._wanted_height(self.size.width)

    def build_rows(self, width: int, height: int) -> list[Row]:
        rows, self._hits = render(self.model, width, height, self.ascii)
        return rows

    def on_click(self, event: events.Click) -> None:
        for first, end, node in self._hits.get(event.y, ()):
            if first <= event.x < end:
                event.stop()
                self.post_message(self.NodeClicked(node))
                return
