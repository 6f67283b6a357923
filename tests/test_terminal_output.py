"""What leet writes to the terminal: the same picture in fewer bytes.

A small reference terminal (cursor moves, styles, text) replays a frame as
Textual wrote it and as ``compact_sgr`` rewrote it; every cell must look the
same: its character and background everywhere, and its colour and weight
where there is a character to see.
"""

from __future__ import annotations

import random
import re

import pytest
from textual.geometry import Region

from leet.testing.demo import make_demo
from leet.ui.output import compact_sgr, install_span_crop
from widgets.chartframe import changed_spans
from widgets.lines import dirty_regions

WIDTH, HEIGHT = 60, 8
_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)([mHGC])")


def _style_after(style: dict, params: str) -> dict:
    codes = [int(p) if p else 0 for p in params.split(";")]
    style = dict(style)
    i = 0
    while i < len(codes):
        code = codes[i]
        i += 1
        if code == 0:
            style = {}
        elif code in (38, 48):
            size = 2 if codes[i] == 5 else 4
            style["fg" if code == 38 else "bg"] = tuple(codes[i : i + size])
            i += size
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style["fg"] = (code,)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style["bg"] = (code,)
        elif code == 39:
            style.pop("fg", None)
        elif code == 49:
            style.pop("bg", None)
        elif code == 22:
            style.pop(1, None)
            style.pop(2, None)
        elif code in (23, 24, 25, 27, 29):
            style.pop({23: 3, 24: 4, 25: 5, 27: 7, 29: 9}[code], None)
        else:
            style[code] = True
    return style


def replay(stream: str, width: int = WIDTH, height: int = HEIGHT) -> list[list[tuple]]:
    """Each cell's (character, what of its style shows) after ``stream``."""
    cells: list[list[tuple]] = [[(" ", ())] * width for _ in range(height)]
    row = col = 0
    style: dict = {}
    pos = 0

    def put(text: str) -> None:
        nonlocal col
        for char in text:
            if char in "\r\n":
                continue
            if 0 <= row < height and 0 <= col < width:
                seen = {k: v for k, v in style.items() if k in ("bg", 4, 7, 9)}
                if char != " " or style.get(7) or style.get(4):
                    seen.update({k: v for k, v in style.items() if k in ("fg", 1, 2, 3)})
                cells[row][col] = (char, tuple(sorted(seen.items(), key=str)))
            col += 1

    for match in _SEQUENCE.finditer(stream):
        put(stream[pos : match.start()])
        pos = match.end()
        params, final = match.groups()
        if final == "m":
            style = _style_after(style, params)
        elif final == "H":
            r, c = (int(p) for p in params.split(";"))
            row, col = r - 1, c - 1
        elif final == "G":
            col = int(params) - 1
        elif final == "C":
            col += int(params or 1)
    put(stream[pos:])
    return cells


STYLES = ["", "1", "2", "3", "4", "7", "38;5;239", "38;5;253;48;5;233", "1;38;5;214;48;5;233", "48;5;233", "38;2;10;20;30", "100", "31;42", "1;97"]


def random_frame(rng: random.Random) -> str:
    """Frames as Textual writes them: a move, then runs each in a full style and a reset."""
    parts = []
    for _ in range(rng.randint(1, 12)):
        parts.append(f"\x1b[{rng.randint(1, HEIGHT)};{rng.randint(1, WIDTH - 12)}H")
        for _ in range(rng.randint(1, 4)):
            text = rng.choice(["ab", "  ", "⣿⣀", " x ", "│", "─┤", "12.5%", "   "])
            style = rng.choice(STYLES)
            parts.append(f"\x1b[{style}m{text}\x1b[0m" if style else text)
        if rng.random() < 0.5:
            parts.append("\n")
    return "".join(parts)


@pytest.mark.parametrize("seed", range(200))
def test_a_compacted_frame_draws_the_same_cells(seed):
    rng = random.Random(seed)
    frame = random_frame(rng)
    assert replay(compact_sgr(frame)) == replay(frame)


def test_the_reset_and_the_same_style_again_cancel_and_only_changes_are_written():
    frame = "\x1b[1;38;5;253;48;5;233mab\x1b[0m\x1b[38;5;253;48;5;233m c\x1b[0m"
    assert compact_sgr(frame) == "\x1b[1;38;5;253;48;5;233mab\x1b[22m c\x1b[0m"


def test_blanks_keep_the_colour_they_cannot_show():
    frame = "\x1b[38;5;214;48;5;233m⣿\x1b[0m\x1b[48;5;233m \x1b[0m\x1b[38;5;214;48;5;233m⣿\x1b[0m"
    assert compact_sgr(frame) == "\x1b[38;5;214;48;5;233m⣿ ⣿\x1b[0m"


def test_a_blank_under_reverse_keeps_its_colour():
    frame = "\x1b[7;38;5;214m \x1b[0m"
    assert replay(compact_sgr(frame)) == replay(frame)
    assert "214" in compact_sgr(frame)


def test_moves_on_the_same_row_are_short_and_a_move_with_no_text_after_it_is_dropped():
    frame = "\x1b[2;5Hab\x1b[2;40Hcd\x1b[3;1H\x1b[2;2Hq"
    out = compact_sgr(frame)
    assert out == "\x1b[2;5Hab\x1b[40Gcd\x1b[2Gq"
    assert replay(out) == replay(frame)


def test_after_text_of_uncertain_width_the_next_move_stays_absolute():
    # Box drawing is one cell or two depending on the terminal: never count on where it ends.
    out = compact_sgr("\x1b[2;5H──\x1b[2;7Hx")
    assert out.endswith("\x1b[2;7Hx")


def test_a_frame_with_a_style_it_does_not_read_is_left_alone():
    frame = "\x1b[58;5;3mx\x1b[0m"
    assert compact_sgr(frame) == frame


async def test_a_real_screen_is_drawn_the_same_in_fewer_bytes():
    demo = make_demo(gpus=2)
    async with demo.app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        frame = demo.app.screen._compositor.render_update(full=True).render_segments(demo.app.console)
    compact = compact_sgr(frame)
    drawn, meant = replay(compact, 160, 48), replay(frame, 160, 48)
    differ = [(y, x, drawn[y][x], meant[y][x]) for y in range(48) for x in range(160) if drawn[y][x] != meant[y][x]]
    assert not differ, differ[:3]
    assert len(compact.encode()) < 0.6 * len(frame.encode())


def test_changed_cells_are_written_in_runs_split_at_long_unchanged_stretches():
    old = [("  7714 root  S    0.0 3.7M tmux -L d1", "value")]
    new = [("  7717 root  S    0.0 1.7M sleep 8   ", "value")]
    assert changed_spans(old, new) == [(5, 5), (22, 36)]
    assert changed_spans(old, old) == []
    assert changed_spans(old, new, gap=100) == [(5, 36)]


def test_runs_on_one_row_stay_apart_and_neighbouring_rows_merge_only_when_cheap():
    regions = dirty_regions([(0, 5, 5), (0, 22, 37), (1, 22, 37), (2, 22, 37)])
    assert Region(5, 0, 1, 1) in regions
    assert all(not (region.x <= 10 <= region.right - 1) for region in regions), "the unchanged middle is never repainted"


async def test_a_partial_update_starts_at_the_first_changed_cell():
    assert install_span_crop()
    demo = make_demo()
    async with demo.app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        compositor = demo.app.screen._compositor
        compositor._dirty_regions.add(Region(70, 5, 3, 1))
        update = compositor.render_partial_update()
        text = update.render_segments(demo.app.console)
    moves = re.findall(r"\x1b\[(\d+);(\d+)H", text)
    assert moves == [("6", "71")], "one move, to the changed cells, not to the left edge of the widget"


def test_a_changed_span_is_written_exactly_as_textual_would_crop_and_render_it():
    import random

    from rich.console import Console
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    from leet.ui.output import _render_part

    console = Console(color_system="truecolor", force_terminal=True)
    styles = [None, Style(color="red"), Style(bgcolor="#102030", bold=True)]
    chars = "ab ⣿⠁─│日é"  # one-cell, braille, box drawing, a wide and an accented character
    pick = random.Random(7)
    for _ in range(3000):
        segments = [Segment("".join(pick.choice(chars) for _ in range(pick.randint(1, 6))), pick.choice(styles)) for _ in range(pick.randint(0, 6))]
        strip = Strip(segments)
        start, stop = pick.randint(0, strip.cell_length + 1), pick.randint(0, strip.cell_length + 2)
        assert _render_part(strip, start, stop, console) == strip.crop(start, stop).render(console), (segments, start, stop)
