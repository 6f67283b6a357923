"""The media pane: a run's logged images as tiles, a histogram as bars, or a table, at one step.

The pane draws a ``MediaModel`` its screen builds and answers its own keys
while focused (left/right/home/end scrub the logged steps, up/down choose
the media key, page up/down scroll a table) by posting ``Scrub`` and
``Pick``. A tile reads its image only when it is drawn, at the size it
draws it, through the pane's ``ImageCache``, on a thread worker: the screen
draws ``reading …`` until the picture is there, and never waits for a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import Any, BinaryIO, Callable

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from leet.common.text import clean
from widgets.chartframe import Row
from widgets.graphics import cell_pixels, graphics_widget
from widgets.halfblocks import HalfBlocks
from widgets.histogram_bars import HistogramBars
from widgets.image_cache import ImageCache
from widgets.textline import TextLine

MIN_TILE_WIDTH = 18  # cells: narrower tiles show nothing a person can make out


@dataclass(frozen=True)
class TileModel:
    caption: str
    name: str = ""  # the file, as the cache knows it
    opener: Callable[[], BinaryIO] | None = None
    error: str = ""  # one line, shown in place of the image


@dataclass(frozen=True)
class MediaModel:
    """What the pane shows; ``kind`` is ``images``, ``histogram``, ``table`` or ``text``."""

    head: Row
    scrubber: Row
    kind: str = "text"
    tiles: tuple[TileModel, ...] = ()
    counts: tuple[float, ...] = ()
    edges: tuple[float, ...] = ()
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    text: str = ""


class TileImage(Widget):
    """One tile's picture, read and scaled when it is drawn; an error as one line."""

    DEFAULT_CSS = "TileImage { height: 1fr; width: 1fr; }"

    def __init__(self, cache: ImageCache, mode: str) -> None:
        super().__init__()
        self.cache = cache
        self.mode = mode
        self.tile: TileModel | None = None
        self._graphics: Any = None
        self._reading: tuple[str, tuple[int, int]] | None = None  # the file and box a worker reads now
        self.drawn = True  # False from a new tile until its picture, or why not, is drawn

    def show(self, tile: TileModel) -> None:
        if tile != self.tile:
            self.tile = tile
            self.drawn = False
            if self.mode in ("sixel", "kitty"):
                self.call_after_refresh(self._place_graphics)
            self.refresh()

    def picture(self) -> Any:
        """The picture for the tile at this size, a ``str`` why not, or None while a worker reads it."""
        tile = self.tile
        if tile is None or tile.error or tile.opener is None:
            return tile.error if tile is not None else ""
        width, height = self.size
        if not width or not height:
            return ""
        if self.mode in ("sixel", "kitty"):
            cell_width, cell_height = cell_pixels()
            box = (width * cell_width, height * cell_height)
        else:
            box = (width, 2 * height)
        held = self.cache.held(tile.name, box)
        if held is None and self._reading != (tile.name, box):
            self._reading = (tile.name, box)
            self.run_worker(partial(self.cache.get, tile.name, tile.opener, box), thread=True, group="image", exclusive=True)
        return held

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._reading = None
            if event.state is WorkerState.ERROR and self.tile is not None:  # the cache turns every reading error into a why
                self.tile = TileModel(self.tile.caption, self.tile.name, error=f"{type(event.worker.error).__name__}: {event.worker.error}")
            if self.mode in ("sixel", "kitty"):
                self._place_graphics()
            self.refresh()

    def why(self, reason: str) -> str:
        """A reason the image is not drawn, with the file's name when the reading failed."""
        tile = self.tile
        if tile is None or tile.error or not reason:
            return reason
        return f"{os.path.basename(tile.name)}: {reason}"

    def render(self) -> RenderableType:
        if self.mode in ("sixel", "kitty") and self._graphics is not None:
            return ""
        if self.mode == "off" and self.tile is not None and not self.tile.error:
            self.drawn = True
            return Text("not drawn: images are off", no_wrap=True, overflow="ellipsis")
        picture = self.picture()
        if picture is None:
            return Text("reading …", no_wrap=True, overflow="ellipsis")
        self.drawn = True
        if isinstance(picture, str):
            return Text(clean(self.why(picture)), no_wrap=True, overflow="ellipsis")
        return HalfBlocks(picture, self.size.width, self.size.height)

    def _place_graphics(self) -> None:
        picture = self.picture()
        if picture is None:
            return  # placed when its worker is done
        self.drawn = True
        if isinstance(picture, str):
            if self._graphics is not None:
                self._graphics.remove()
                self._graphics = None
            self.refresh()
            return
        if self._graphics is None:
            self._graphics = graphics_widget(self.mode)(picture)
            self._graphics.styles.width = "auto"
            self._graphics.styles.height = "100%"
            self.mount(self._graphics)
        else:
            self._graphics.image = picture


class Bars(Widget):
    """A histogram as bars filling the widget, laid out again at each size."""

    DEFAULT_CSS = "Bars { height: 1fr; } Bars > .bars--muted { color: $text-muted; }"
    COMPONENT_CLASSES = {"bars--muted"}

    counts: tuple[float, ...] = ()
    edges: tuple[float, ...] = ()

    def show(self, counts: tuple[float, ...], edges: tuple[float, ...]) -> None:
        if (counts, edges) != (self.counts, self.edges):
            self.counts, self.edges = counts, edges
            self.refresh()

    def render(self) -> RenderableType:
        if not self.counts:
            return ""
        return HistogramBars(self.counts, self.edges, self.size.height, muted=self.get_component_rich_style("bars--muted"))


class Tile(Vertical):
    DEFAULT_CSS = """
    Tile { width: 1fr; height: 1fr; padding: 0 1 0 0; }
    Tile > .tile-caption { height: 1; color: $text-muted; }
    """

    def __init__(self, cache: ImageCache, mode: str) -> None:
        super().__init__()
        self.caption = Static("", classes="tile-caption", markup=False)
        self.image = TileImage(cache, mode)

    def compose(self) -> ComposeResult:
        yield self.caption
        yield self.image

    def show(self, tile: TileModel) -> None:
        self.caption.update(Text(clean(tile.caption), no_wrap=True, overflow="ellipsis"))
        self.image.show(tile)


class MediaPane(Vertical, can_focus=True):
    """Tiles, bars or a table for one media key at one step, with the step scrubber above."""

    DEFAULT_CSS = """
    MediaPane { height: 1fr; border-top: solid $panel-lighten-2; }
    MediaPane:focus { border-top: solid $accent; }
    MediaPane > #media-tiles { height: 1fr; }
    MediaPane > #media-bars { height: 1fr; }
    MediaPane > #media-table { height: 1fr; }
    MediaPane > #media-text { height: 1fr; color: $text-muted; }
    MediaPane TileImage { color: $error; }  /* only a why is text: a picture's cells carry their own colours */
    """

    BINDINGS = [
        Binding("left", "scrub('prev')", "Previous logged step", show=False),
        Binding("right", "scrub('next')", "Next logged step", show=False),
        Binding("home", "scrub('first')", "First logged step", show=False),
        Binding("end", "scrub('last')", "Last logged step", show=False),
        Binding("up", "pick(-1)", "Previous media key", show=False),
        Binding("down", "pick(1)", "Next media key", show=False),
        Binding("pageup", "scroll_table(-1)", "Scroll the table up", show=False),
        Binding("pagedown", "scroll_table(1)", "Scroll the table down", show=False),
    ]

    class Scrub(Message):
        def __init__(self, move: str) -> None:
            super().__init__()
            self.move = move

    class Pick(Message):
        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    class Read(Message):
        """More of a run's media, or a table, was read off the screen's thread: draw again."""

    def __init__(self, mode: str = "blocks", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = mode
        self.cache = ImageCache()
        self.model = MediaModel([], [])
        self._ready = False

    def compose(self) -> ComposeResult:
        yield TextLine(id="media-head")
        yield TextLine(id="media-steps")
        # Tiles for the model set before the pane mounted come with it: no second round of mounting before the first picture.
        first = self.model.tiles[: self._room(self._width_before_layout())] if self.model.kind == "images" else ()
        yield Horizontal(*(Tile(self.cache, self.mode) for _ in first), id="media-tiles")
        yield Bars(id="media-bars")
        yield Vertical(id="media-table")  # its DataTable is made when a table is first shown
        yield Static("", id="media-text", markup=False)

    def on_mount(self) -> None:
        self._ready = True
        model, self.model = self.model, MediaModel([], [])
        self.set_model(model)

    def set_model(self, model: MediaModel) -> None:
        previous, self.model = self.model, model
        if not self._ready:  # shown once the pane's parts are mounted
            return
        self.query_one("#media-head", TextLine).set_content(model.head)
        self.query_one("#media-steps", TextLine).set_content(model.scrubber)
        for name in ("tiles", "bars", "table", "text"):
            self.query_one(f"#media-{name}").display = {"images": "tiles", "histogram": "bars"}.get(model.kind, model.kind) == name
        if model.kind == "images":
            self._show_tiles()
        elif model.kind == "histogram":
            self._show_bars()
        elif model.kind == "table" and (model.columns, model.rows) != (previous.columns, previous.rows):
            self._show_table()
        elif model.kind == "text":
            self.query_one("#media-text", Static).update(Text(clean(model.text)))

    def _show_tiles(self) -> None:
        holder = self.query_one("#media-tiles", Horizontal)
        width = holder.size.width or self._width_before_layout()
        if not width:
            self.call_after_refresh(self._show_tiles)
            return
        tiles = self.model.tiles
        shown = tiles[: self._room(width)]
        if len(shown) < len(tiles):
            # Next to the key, so a narrow pane keeps it: what is left out matters more than the rest of the line.
            more = (f" · {len(shown)} of {len(tiles)} shown", "warn")
            head = self.model.head
            self.query_one("#media-head", TextLine).set_content([*head[:2], more, *head[2:]])
        current = list(holder.query_children(Tile))
        if len(current) > len(shown):
            for extra in current[len(shown):]:
                extra.remove()
            current = current[: len(shown)]
        if len(current) < len(shown):
            new = [Tile(self.cache, self.mode) for _ in range(len(shown) - len(current))]
            holder.mount_all(new)
            current += new
        for widget, tile in zip(current, shown):
            widget.show(tile)

    @staticmethod
    def _room(width: int) -> int:
        """How many tiles fit ``width`` cells side by side."""
        return max(1, width // MIN_TILE_WIDTH)

    def _width_before_layout(self) -> int:
        """The width the pane will have when it first shows: its parent's, less what its shown siblings take beside it."""
        parent = self.parent
        if not isinstance(parent, Widget) or not parent.size.width:
            return 0
        if parent.styles.layout is None or parent.styles.layout.name != "horizontal":
            return parent.size.width
        taken = sum(sibling.outer_size.width for sibling in parent.children if sibling is not self and sibling.display)
        return max(0, parent.size.width - taken)

    def _show_bars(self) -> None:
        self.query_one("#media-bars", Bars).show(self.model.counts, self.model.edges)

    def _show_table(self) -> None:
        holder = self.query_one("#media-table", Vertical)
        if not holder.children:
            table: DataTable[str] = DataTable(show_cursor=False, zebra_stripes=True)
            table.can_focus = False  # the pane keeps the keys
            holder.mount(table)
            self.call_after_refresh(self._fill_table)
        else:
            self._fill_table()

    def _fill_table(self) -> None:
        table = self.query_one("#media-table > DataTable", DataTable)
        table.clear(columns=True)
        table.add_columns(*(clean(column) for column in self.model.columns))
        table.add_rows([tuple(clean(cell) for cell in row) for row in self.model.rows])

    @property
    def drawing(self) -> bool:
        """Whether a tile has yet to draw its picture (or why not): its image is still being read."""
        return self.display and self.model.kind == "images" and any(not tile.drawn for tile in self.query(TileImage))

    def on_resize(self) -> None:
        if self.model.kind == "images":
            self.call_after_refresh(self.set_model, self.model)

    def action_scrub(self, move: str) -> None:
        self.post_message(self.Scrub(move))

    def action_pick(self, step: int) -> None:
        self.post_message(self.Pick(step))

    def action_scroll_table(self, direction: int) -> None:
        tables = self.query("#media-table > DataTable")
        if tables and self.query_one("#media-table").display:
            table = tables.first(DataTable)
            table.scroll_relative(y=direction * max(1, table.size.height - 1), animate=False)

