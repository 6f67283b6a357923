"""A widget drawn from rows of (text, style key) runs, repainting only what changed.

Subclasses produce rows and a style map; this base turns them into cached
Strips and, when rows change, marks just the changed cells dirty. Over SSH the
difference between "repaint the panel" and "repaint the three cells that
moved" is most of the bandwidth.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.filter import ANSIToTruecolor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from widgets.chartframe import Row, changed_spans
from widgets.palette import chart_styles

# A class on the App: every panel draws in ASCII only (a terminal whose locale is not UTF-8).
ASCII_CLASS = "-ascii"

# Text every terminal draws one cell per character: printable ASCII, Latin-1
# letters and signs, punctuation (dashes, bullets, ellipsis), arrows, box drawing, blocks, shapes and braille. Rows of
# these (nearly every row a panel draws) are measured by their length, without
# Rich's per-string cache, which a chart's ever-new braille rows only churn.
_ONE_CELL_EACH = re.compile("[ -~\u00a0-\u00ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2500-\u25fc\u25ff\u2800-\u28ff\u2026]*")


def cells(text: str) -> int:
    """Terminal cells ``text`` takes."""
    return len(text) if _ONE_CELL_EACH.fullmatch(text) else cell_len(text)


# Keys every list-like pane answers the same way: actions cursor(±1), page(±1), jump(0 | -1).
LIST_BINDINGS: list[BindingType] = [
    Binding("up,w", "cursor(-1)", "Up", show=False),
    Binding("down,s", "cursor(1)", "Down", show=False),
    Binding("pageup,N", "page(-1)", "Page up", show=False),
    Binding("pagedown,n", "page(1)", "Page down", show=False),
    Binding("home", "jump(0)", "First", show=False),
    Binding("end", "jump(-1)", "Last", show=False),
]


def dirty_regions(spans: list[tuple[int, int, int]]) -> list[Region]:
    """Regions covering changed cells ``(row, first, last)``.

    Runs of neighbouring rows become one rectangle when that repaints at
    most twice the cells that changed: the compositor pays per region, the
    terminal per cell, and both should stay small.
    """
    regions: list[Region] = []
    group: list[tuple[int, int, int]] = []

    def flush() -> None:
        if not group:
            return
        left = min(first for _, first, _ in group)
        right = max(last for _, _, last in group)
        top, bottom = group[0][0], group[-1][0]
        changed = sum(last - first + 1 for _, first, last in group)
        if (right - left + 1) * (bottom - top + 1) <= 2 * changed:
            regions.append(Region(left, top, right - left + 1, bottom - top + 1))
        else:
            regions.extend(Region(first, y, last - first + 1, 1) for y, first, last in group)
        group.clear()

    for span in spans:
        if group and span[0] != group[-1][0] + 1:
            # Not the next row (another run of the same row, or a gap): a rectangle of its own.
            flush()
        group.append(span)
    flush()
    return regions


class StyledLines(Widget):
    """Base for line-oriented panels: the chart, vitals, process table, header."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[Row] = []
        self._strips: dict[int, Strip] = {}
        self._styles: dict[str, Style] | None = None
        self._laid_out_size = (0, 0)
        self._filter_key: tuple | None = None
        self._active_filters: list = []

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._on_theme, init=False)

    def _on_theme(self) -> None:
        self._styles = None
        self._filter_key = None
        self._strips.clear()
        self.refresh()

    def on_resize(self) -> None:
        self.relayout(full=True)

    def _watch_has_focus(self, _focused: bool) -> None:
        # Textual sets ``has_focus`` after a subclass's on_focus/on_blur have run:
        # panels that draw their focus (a chart's frame, a pane's title) follow the value itself.
        self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        """Rows for the current state; each exactly ``width`` cells."""
        raise NotImplementedError

    @property
    def ascii(self) -> bool:
        """Draw in ASCII only: the app has ``ASCII_CLASS``."""
        return self.app.has_class(ASCII_CLASS)

    def relayout(self, full: bool = False) -> None:
        """Rebuild rows and repaint the cells that differ from the last frame."""
        width, height = self.size
        if width <= 0 or height <= 0:
            return
        new_rows = self.build_rows(width, height)
        if full or (width, height) != self._laid_out_size or len(new_rows) != len(self._rows):
            self._laid_out_size = (width, height)
            self._rows = new_rows
            self._strips.clear()
            self.refresh()
            return
        spans: list[tuple[int, int, int]] = []
        for y, (old, new) in enumerate(zip(self._rows, new_rows)):
            runs = changed_spans(old, new)
            if runs:
                self._strips.pop(y, None)
                spans.extend((y, first, last) for first, last in runs)
        self._rows = new_rows
        if spans:
            self.refresh(*dirty_regions(spans))

    def render_lines(self, crop: Region) -> list[Strip]:
        # Textual's general path restyles every line for borders, padding, tint
        # and opacity; these panels draw their own frames and have none, and
        # their strips are already cached per row. Going straight to the cached
        # strips halves the UI thread's share of each redraw.
        if not self._plain_box():
            return super().render_lines(crop)
        background = self.background_colors[1]
        filters = self._filters_that_change(background)
        x1, x2 = crop.column_span
        whole = x1 == 0 and x2 >= self.size.width
        strips = []
        cached = self._strips
        for y in crop.line_range:
            strip = cached.get(y) or self.render_line(y)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip if whole else strip.crop(x1, x2))
        return strips

    def _filters_that_change(self, background) -> list:
        """The app's line filters, less Textual's ANSI-to-true-colour one where it changes none of this panel's styles.

        Textual always installs that filter; these panels' colours come from the
        theme and are true colours already, and a filter that changes nothing
        would still copy every new line. Other filters (ASCII, no colour) rewrite
        text as well as styles, so they always run.
        """
        filters = self.get_line_filters()
        key = (id(self.style_map()), tuple(map(id, filters)), background)
        if self._filter_key != key:
            probe = [Segment("x", style) for style in self.style_map().values()]
            self._filter_key = key
            self._active_filters = [
                f for f in filters if not isinstance(f, ANSIToTruecolor) or f.apply(probe, background) != probe
            ]
        return self._active_filters

    def _plain_box(self) -> bool:
        """No border, padding, outline, tint or transparency: nothing for Textual to add to a line."""
        styles = self.styles
        return not (
            styles.gutter.width
            or styles.gutter.height
            or styles.opacity < 1
            or styles.text_opacity < 1
            or styles.tint.a
            or styles.background_tint.a
            or any(edge[0] for edge in styles.outline)
        )

    def style_map(self) -> dict[str, Style]:
        if self._styles is None:
            base = Style(bgcolor=self.rich_style.bgcolor)
            # No colour (NO_COLOR, a dumb terminal): the cursor and focus stand out by reverse and bold.
            self._styles = chart_styles(self.app.get_css_variables(), base, plain=self.app.no_color)
        return self._styles

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        if (width, height) != self._laid_out_size and width > 0 and height > 0:
            # The compositor can paint a resized widget before its Resize event
            # arrives: rows laid out for the old size would leave stale cells
            # or spill into the neighbours, so lay out for this size first.
            self._laid_out_size = (width, height)
            self._rows = self.build_rows(width, height)
            self._strips.clear()
        strip = self._strips.get(y)
        if strip is not None:
            return strip
        if y >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        styles = self.style_map()
        empty = styles["empty"]
        row = [(text, key) for text, key in self._rows[y] if text]
        segments = [Segment(text, styles.get(key, empty)) for text, key in row]
        # Measured, never assumed: a strip is exactly the widget's width.
        strip = Strip(segments, sum(cells(text) for text, _ in row))
        if strip.cell_length != width:
            strip = strip.adjust_cell_length(width, empty)
        self._strips[y] = strip
        return strip

    def plain_rows(self) -> list[str]:
        """What the panel shows, as plain text (tests, debugging)."""
        return ["".join(text for text, _ in row) for row in self._rows]
