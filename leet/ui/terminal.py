"""What the terminal can show: ASCII only, or no colour.

Two Textual line filters. ``LeetApp.get_line_filters`` adds them after
Textual's own, so they see every line every widget draws, leet's panels and
Textual's parts alike (borders, scrollbars, the footer, inputs, notices):

* ``AsciiFilter`` (``Config.ascii``): every character as ASCII taking the
  same cells (``widgets.glyphs.to_ascii``). The panels already draw ASCII
  themselves (charts on an ASCII canvas, bars of ``#``); this is the last line
  of defence for everything else.
* ``PlainFilter`` (``Config.color`` off: ``NO_COLOR``, ``TERM=dumb``): no
  colour at all, not even the greys of Textual's own NO_COLOR filter, and so
  no SGR 38/48 on the wire. Bold, dim, underline and reverse stay, and what
  colour alone marked is reversed where it is drawn: the cursor and a focused
  chart's title (``widgets.palette.chart_styles``), the filter's caret
  (``FilterBar``'s ``:nocolor`` rule; the app sets ``no_color``). Textual
  draws a scrollbar's thumb reversed already.
"""

from __future__ import annotations

from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter, Monochrome, NoColor

from widgets.glyphs import to_ascii

# Textual's filters for NO_COLOR: leet decides about colour itself (no-color.org: an empty NO_COLOR is no request).
TEXTUAL_COLOR_FILTERS = (Monochrome, NoColor)


class AsciiFilter(LineFilter):
    """Every character as ASCII, cell for cell."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        out = []
        for segment in segments:
            text = segment.text
            if text.isascii() or segment.control:
                out.append(segment)
                continue
            out.append(Segment(to_ascii(text), segment.style, segment.control))
        return out


@lru_cache(4096)
def plain_style(style: Style) -> Style:
    """``style`` without colour, its attributes (bold, reverse…) and mouse actions kept."""
    bare = style.without_color
    if style.meta:
        bare += Style.from_meta(style.meta)  # clicks ride on the style
    return bare


class PlainFilter(LineFilter):
    """No colour at all (see the module's docstring)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            segment if segment.control or segment.style is None else Segment(segment.text, plain_style(segment.style), None)
            for segment in segments
        ]


def terminal_filters(*, ascii: bool, color: bool) -> list[LineFilter]:
    """The filters a terminal with these abilities needs, in the order they run."""
    filters: list[LineFilter] = []
    if not color:
        filters.append(PlainFilter())
    if ascii:
        filters.append(AsciiFilter())
    return filters
