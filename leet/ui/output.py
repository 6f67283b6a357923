"""Fewer bytes to the terminal for the same picture.

Over SSH a monitor's cost is mostly what it writes. Textual writes each run of
cells as a full style, the text, then a reset (``ESC[38;5;239;48;5;233m╭─ESC[0m``),
and a partial update repaints from the left edge of each widget's line up to
the end of the changed cells. Two fixes, both invisible on screen:

* ``compact_sgr`` rewrites one frame so each style change says only what
  changed from the style in effect (often nothing: the reset and the
  identical style cancel), and blanks skip colour changes that cannot show.
* ``install_span_crop`` makes a partial update start at the first changed
  cell instead of the widget's left edge, and cuts up only the lines of the
  widgets that hold changed cells (Textual cuts every line of every widget
  inside the box around all changes: with a chart changed at each corner,
  the whole screen).

Each frame ends with the terminal's style reset, as Textual's own output does,
so whatever is written next starts from the state it expects.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rich.segment import Segment

# A style change, an absolute cursor move, or a line break just before a cursor move.
_TOKEN = re.compile(r"\x1b\[([0-9;]*)m|\x1b\[(\d+);(\d+)H|\r?\n(?=\x1b\[\d+;\d+H)")
# Text whose width every terminal agrees on: printable ASCII and braille. After
# anything else (box drawing is one cell or two depending on the terminal's
# locale) the next move is absolute, as Textual wrote it.
_SURE_WIDTH = re.compile(r"[\x20-\x7e\u2800-\u28ff]*")

# Attribute codes and the code that turns each off (22 turns off both bold and faint).
_OFF = {1: 22, 2: 22, 3: 23, 4: 24, 5: 25, 7: 27, 8: 28, 9: 29, 21: 24, 53: 55}
# Attributes a blank cell does not show: its foreground colour, weight and slant.
_UNSEEN_ON_BLANK = frozenset({1, 2, 3, 5})


class _Style(NamedTuple):
    fg: tuple[int, ...] | None
    bg: tuple[int, ...] | None
    flags: frozenset[int]


_PLAIN = _Style(None, None, frozenset())


def _colour(codes: list[int], i: int) -> tuple[tuple[int, ...], int]:
    """The extended colour at ``codes[i]`` (38/48 already read) and the index after it."""
    if i < len(codes) and codes[i] == 5 and i + 1 < len(codes):
        return (5, codes[i + 1]), i + 2
    if i < len(codes) and codes[i] == 2 and i + 3 < len(codes):
        return (2, codes[i + 1], codes[i + 2], codes[i + 3]), i + 4
    raise ValueError("malformed extended colour")


def _apply(style: _Style, params: str) -> _Style:
    """``style`` after one SGR sequence with ``params``."""
    codes = [int(part) if part else 0 for part in params.split(";")]
    fg, bg, flags = style.fg, style.bg, set(style.flags)
    i = 0
    while i < len(codes):
        code = codes[i]
        i += 1
        if code == 0:
            fg, bg, flags = None, None, set()
        elif code in (38, 48):
            colour, i = _colour(codes, i)
            if code == 38:
                fg = colour
            else:
                bg = colour
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        elif 30 <= code <= 37 or 90 <= code <= 97:
            fg = (code,)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            bg = (code,)
        elif code in _OFF:
            flags.add(code)
        elif code in (22, 23, 24, 25, 27, 28, 29, 55):
            flags -= {flag for flag, off in _OFF.items() if off == code}
        else:
            raise ValueError(f"SGR code {code} not understood")
    return _Style(fg, bg, frozenset(flags))


def _codes(colour: tuple[int, ...] | None, extended: int, default: int) -> list[int]:
    if colour is None:
        return [default]
    return list(colour) if len(colour) == 1 else [extended, *colour]


def _change(old: _Style, new: _Style) -> list[int]:
    """The shortest codes that turn ``old`` into ``new``."""
    codes: list[int] = []
    flags = set(old.flags)
    gone = flags - new.flags
    for off in sorted({_OFF[flag] for flag in gone}):
        codes.append(off)
        flags -= {flag for flag, code in _OFF.items() if code == off}
    codes += sorted(new.flags - flags)
    if new.fg != old.fg:
        codes += _codes(new.fg, 38, 39)
    if new.bg != old.bg:
        codes += _codes(new.bg, 48, 49)
    if new == _PLAIN:
        return [0]
    from_plain = [0, *_change(_PLAIN, new)] if old != _PLAIN else codes
    return from_plain if len(from_plain) < len(codes) else codes


def _as_shown(text: str, wanted: _Style, current: _Style) -> _Style:
    """The style ``text`` needs: on blanks, whatever does not show may stay as it is."""
    if not text.isspace() or not wanted.flags <= _UNSEEN_ON_BLANK:
        return wanted
    kept = current.flags & _UNSEEN_ON_BLANK
    return _Style(current.fg, wanted.bg, frozenset((wanted.flags - _UNSEEN_ON_BLANK) | kept))


def compact_sgr(frame: str) -> str:
    """``frame`` drawn the same with fewer bytes; unchanged if it holds a style this does not read."""
    try:
        return _compact(frame)
    except ValueError:
        return frame


def _move(row: int, column: int, cursor: tuple[int, int] | None) -> str:
    """The shortest way from ``cursor`` (None: unknown) to ``row``, ``column`` (1-based)."""
    absolute = f"\x1b[{row};{column}H"
    if cursor is None or cursor[0] != row:
        return absolute
    if cursor[1] == column:
        return ""
    moves = [absolute, f"\x1b[{column}G"]  # same row: to a column
    if column > cursor[1]:
        moves.append(f"\x1b[{column - cursor[1]}C")  # same row: forward
    return min(moves, key=len)


def _compact(frame: str) -> str:
    out: list[str] = []
    current = wanted = _PLAIN
    cursor: tuple[int, int] | None = None  # where the text written so far left it, when known
    pending: tuple[int, int] | None = None  # a move not yet written: only the last before text counts
    pos = 0

    def put(text: str) -> None:
        nonlocal current, cursor, pending
        if not text:
            return
        if pending is not None:
            out.append(_move(*pending, cursor))
            cursor, pending = pending, None
        target = _as_shown(text, wanted, current)
        if target != current:
            out.append("\x1b[" + ";".join(map(str, _change(current, target))) + "m")
            current = target
        out.append(text)
        if cursor is not None and _SURE_WIDTH.fullmatch(text):
            cursor = (cursor[0], cursor[1] + len(text))
        else:
            cursor = None

    for match in _TOKEN.finditer(frame):
        put(frame[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token.endswith("\n"):
            continue  # the cursor move that follows puts the cursor where it goes
        if token.endswith("H"):
            pending = (int(match.group(2)), int(match.group(3)))
        else:
            wanted = _apply(wanted, match.group(1))
    put(frame[pos:])
    if pending is not None:  # where the frame leaves the cursor
        out.append(_move(*pending, cursor))
    if current != _PLAIN:
        out.append("\x1b[0m")
    return "".join(out)


def _render_part(strip, start: int, stop: int, console) -> str:
    """Cells ``start`` to ``stop`` of ``strip`` as terminal sequences, as ``strip.crop(start, stop).render(console)`` gives.

    A frame crops a strip for every changed span; going straight to text
    skips the new Strip (and its caches) each crop would build.
    """
    from rich.color import ColorSystem
    from textual.strip import Strip

    from widgets.lines import cells

    if stop <= start:
        return ""
    color_system = console._color_system or ColorSystem.TRUECOLOR
    render = Strip.render_style
    out: list[str] = []
    pos = 0
    for text, style, control in strip._segments:
        if control:  # zero-width control codes: leave such a strip to Textual
            return strip.crop(start, stop).render(console)
        width = cells(text)
        end = pos + width
        if end > start and text:
            if pos >= stop:
                break
            if pos < start or end > stop:
                first, last = max(start - pos, 0), min(stop, end) - pos
                text = text[first:last] if width == len(text) else "".join(part.text for part in Strip([Segment(text)], width).crop(first, last))
            out.append(text if style is None else render(style, text, color_system=color_system))
        pos = end
    return "".join(out)


def install_span_crop() -> bool:
    """Partial updates start at the first changed cell (Textual 8.2's ``ChopsUpdate``).

    Returns whether it was installed: a Textual whose update class differs is left alone.
    """
    try:
        from rich.segment import Segment  # noqa: F401  (the update renders through Rich)
        from textual._compositor import ChopsUpdate
    except ImportError:
        return False
    if getattr(ChopsUpdate, "_leet_span_crop", False):
        return True
    if not all(hasattr(ChopsUpdate, name) for name in ("render_segments",)):
        return False

    from rich.control import Control

    def render_segments(self, console) -> str:
        sequences: list[str] = []
        append = sequences.append
        move_to = Control.move_to
        last_y = self.spans[-1][0]
        for y, x1, x2 in self.spans:
            for end, (x, strip) in zip(self.chop_ends[y], self.chops[y].items()):
                if strip is None or x >= x2 or end <= x1:
                    continue
                start, stop = max(x, x1), min(end, x2)
                append(move_to(start, y).segment.text)
                if start != x or stop != end:
                    append(_render_part(strip, start - x, stop - x, console))
                else:
                    append(strip.render(console))
            if y != last_y:
                append("\n")
        return "".join(sequences)

    ChopsUpdate.render_segments = render_segments  # type: ignore[method-assign]
    ChopsUpdate._leet_span_crop = True  # type: ignore[attr-defined]
    _install_changed_lines_only()
    return True


def _install_changed_lines_only() -> None:
    """A partial update renders and cuts only widget lines that hold changed cells."""
    from textual._compositor import ChopsUpdate, Compositor
    from textual.geometry import Region
    from textual.strip import Strip

    if not all(hasattr(Compositor, name) for name in ("render_partial_update", "_regions_to_spans", "cuts", "visible_widgets")):
        return

    def render_partial_update(self) -> ChopsUpdate | None:
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        screen = self.size.region
        spans = [span for span in self._regions_to_spans(update_regions) if 0 <= span[0] < screen.height]
        changed: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in spans:
            changed.setdefault(y, []).append((x1, x2))
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(line[:-1]) for line in cuts]
        # Front to back: where widgets overlap, the first to fill a cut wins.
        for widget, (region, clip) in self.visible_widgets.items():
            left, top, width, height = region.intersection(clip)
            right = left + width
            rows = [
                y for y in range(top, top + height)
                if any(x1 < right and x2 > left for x1, x2 in changed.get(y, ()))
            ]
            if not rows:
                continue
            first = rows[0]
            strips = widget.render_lines(Region(left - region.x, first - region.y, width, rows[-1] - first + 1))
            for y in rows:
                line_cuts = [cut for cut in cuts[y] if left <= cut <= right]
                line = chops[y]
                for cut, piece in zip(line_cuts, strips[y - first].divide([cut - left for cut in line_cuts[1:]])):
                    if line.get(cut) is None:
                        line[cut] = piece
        return ChopsUpdate(chops, spans, [line[1:] for line in cuts])

    Compositor.render_partial_update = render_partial_update  # type: ignore[method-assign]


# Textual keeps up to 4096 region intersections. Every changed span a frame
# repaints is a new pair, so a monitor left running fills that cache slowly,
# over many minutes, and its memory creeps up for as long; holding it to a
# quarter fills it in the first minute or two, and memory stays flat after.
GEOMETRY_CACHE_ENTRIES = 1024


def keep_geometry_cache_small() -> None:
    from textual.geometry import Region

    intersection = Region.intersection
    info = getattr(intersection, "cache_info", None)
    if info is not None and info().currsize > GEOMETRY_CACHE_ENTRIES:
        intersection.cache_clear()
