"""ASCII mode and colourless terminals: the glyph table, the ASCII canvas, heatmap shades, settings, whole screens."""

from __future__ import annotations

import io
import math
import re
from dataclasses import replace

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.color import Color

from leet.cli import build_parser
from leet.config import Config, load, resolve_ascii
from leet.config.terminal import locale_is_utf8, terminal_has_color
from leet.ui.app import LeetApp
from leet.ui.terminal import AsciiFilter, PlainFilter, terminal_filters
from widgets.asciicanvas import AsciiCanvas, glyph
from widgets.chartframe import ChartView, compose_rows, heat_scale, row_text
from widgets.glyphs import ASCII_HEAT_RAMP, HEAT_RAMP, ascii_char, heat_glyph, to_ascii
from widgets.raster import SeriesView, render_band, render_heatmap, render_lines
from widgets.vitals import GpuRow, GpuSection, Meter, VitalsModel, meter_bar, vitals_rows

# ------------------------------------------------------------------ the glyph table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("╭─ CPU ─╮", "+- CPU -+"),
        ("│100%┤", "|100%+"),
        ("╰─╯┼├┬┴━┃", "+-+++++-|"),
        ("● a • b · c … ⚠", "* a * b . c ~ !"),
        ("↑↓←→ ▲▼▶◀", "^v<> ^v><"),
        ("⣿⠉⣀⠀", ":'. "),
        ("72°C ± 2 × 3", "72oC + 2 x 3"),
        ("café naïve", "cafe naive"),
        ("█▉▊▋▌▍▎▏", "#####   "),
    ],
)
def test_to_ascii_maps_what_leet_and_textual_draw(text, expected):
    assert to_ascii(text) == expected


@pytest.mark.parametrize("text", ["训练 run", "e\u0301t\u0301e", "日本語のラン名", "a\u200db", "🔥 hot", "Ω∑∫≈", "\u3000x", "x\u00a0y"])
def test_to_ascii_keeps_every_cell_where_it_was(text):
    plain = to_ascii(text)
    assert plain.isascii()
    assert len(plain) == cell_len(text), f"{text!r} became {plain!r}"


def test_a_wide_character_is_two_question_marks_and_a_combining_one_goes():
    assert ascii_char("训") == "??"
    assert ascii_char("\u0301") == ""
    assert ascii_char("x") == "x"


# ------------------------------------------------------------------- the ASCII canvas


def test_ascii_glyphs_follow_the_dots():
    assert glyph(0) == " "
    assert glyph(0b000011) == "'"  # top row, both columns
    assert glyph(0b001100) == "-"  # middle row
    assert glyph(0b110000) == "_"  # bottom row
    assert glyph(0b010000) == "."  # one dot low in the cell
    assert glyph(0b010001 | 0b000100) == "|"  # the left column, top to bottom
    assert glyph(0b010001) == ":"  # top and bottom, a gap between
    assert glyph(0b000010 | 0b010000) == "/"  # low on the left, high on the right
    assert glyph(0b000001 | 0b100000) == "\\"
    assert all(char.isascii() and len(char) == 1 for char in map(glyph, range(64)))


def test_ascii_canvas_draws_lines_in_dots_with_owners():
    canvas = AsciiCanvas(4, 2)
    assert (canvas.dot_width, canvas.dot_height) == (8, 6)
    canvas.line(0, 5, 7, 0, owner=3)
    assert canvas.text() == ["  //", "//  "]
    assert {owner for row in canvas.rows() for _, owner in row} == {-1, 3}
    flat = AsciiCanvas(3, 1)
    flat.line(0, 1, 5, 1, owner=0)
    assert flat.text() == ["---"]
    tall = AsciiCanvas(1, 2)
    tall.vline(0, -4, 40, owner=1)  # clipped to the canvas
    assert tall.text() == ["|", "|"]


def test_ascii_line_chart_plots_where_braille_does():
    t = list(range(60))
    rising = SeriesView.points(t, [float(i) for i in t])
    ascii_rows = render_lines([rising], 20, 5, (0, 59), (0, 59), ascii=True)
    text = ["".join(part for part, _ in row) for row in ascii_rows]
    assert all(line.isascii() and len(line) == 20 for line in text)
    assert "/" in "".join(text)
    # Bottom left to top right, as on the braille canvas.
    assert text[-1][0] != " " and text[0][-1] != " "
    assert text[0][0] == " " and text[-1][-1] == " "


def test_ascii_band_and_log_charts_are_ascii():
    t = list(range(30))
    band = SeriesView(t, [i - 3.0 for i in t], [i + 3.0 for i in t], [float(i) for i in t])
    rows = render_band(band, [SeriesView.points(t, [2.0 * i for i in t])], 12, 4, (0, 29), (-3, 60), ascii=True)
    text = "".join(part for row in rows for part, _ in row)
    assert text.isascii() and ":" in text
    log = render_lines([SeriesView.points(t, [10.0 ** (i / 5) for i in t])], 12, 4, (0, 29), (1, 1e6), log_y=True, ascii=True)
    assert "".join(part for row in log for part, _ in row).strip()


# --------------------------------------------------------------------- heatmap shades


def test_heat_shades_grow_denser_with_the_level():
    assert [heat_glyph(level, 8) for level in range(8)] == list("░░▒▒▓▓██")
    ascii_shades = [heat_glyph(level, 8, ascii=True) for level in range(8)]
    assert ascii_shades[0] == ASCII_HEAT_RAMP[0] and ascii_shades[-1] == ASCII_HEAT_RAMP[-1]
    assert [ASCII_HEAT_RAMP.index(c) for c in ascii_shades] == sorted(ASCII_HEAT_RAMP.index(c) for c in ascii_shades)
    assert len(set(ascii_shades)) == 8, "every level its own character"
    assert heat_glyph(-3, 8) == HEAT_RAMP[0] and heat_glyph(99, 8) == HEAT_RAMP[-1]
    assert heat_glyph(0, 1) == HEAT_RAMP[-1]


def test_heatmap_cells_carry_their_level_as_a_shade():
    t = [0, 1, 2, 3]
    view = SeriesView.points(t, [5, 40, 70, 99])
    rows = render_heatmap([view], 4, 1, (0, 4), (0, 100), levels=4)
    assert rows[0] == [(HEAT_RAMP[0], 0), (HEAT_RAMP[1], 1), (HEAT_RAMP[2], 2), (HEAT_RAMP[3], 3)]
    rows = render_heatmap([view], 4, 1, (0, 4), (0, 100), levels=4, ascii=True)
    assert "".join(text for text, _ in rows[0]) == "".join(heat_glyph(level, 4, ascii=True) for level in range(4))


def test_a_heatmap_chart_has_a_scale_from_low_to_high():
    names = tuple(f"GPU {i}" for i in range(4))
    data = tuple(SeriesView.points([0, 1, 2], [i * 30.0, i * 30.0 + 5, i * 30.0 + 9]) for i in range(4))
    view = ChartView("GPU Utilization", "%", names, data, (0, 2), percent=True, mode="heatmap")
    bottom = row_text(compose_rows(view, 60, 10)[-1])
    assert " 0% ░░▒▒▓▓██ 100% " in bottom and "heatmap" in bottom
    bottom = row_text(compose_rows(view, 60, 10, ascii=True)[-1])
    assert " 0% " + "".join(heat_glyph(level, 8, ascii=True) for level in range(8)) + " 100% " in bottom
    # Each shade of the scale wears its level's colour.
    scale = heat_scale(0.0, 100.0, "%", 40)
    assert [style for _, style in scale[1:-1]] == [f"h{level}" for level in range(8)]
    assert heat_scale(0.0, 1e9, "B", 12) == [(" ", "label"), *scale[1:-1], (" ", "label")], "no room: the shades alone"
    assert heat_scale(0.0, 1.0, "", 5) == []


# ------------------------------------------------------------------------ whole panels


def _series(count: int, points: int = 120) -> tuple[SeriesView, ...]:
    t = [float(i) for i in range(points)]
    return tuple(SeriesView.points(t, [50 + 40 * math.sin(i / (7 + k)) for i in range(points)]) for k in range(count))


@pytest.mark.parametrize("mode", ["line", "log", "heatmap", "spread"])
def test_an_ascii_chart_panel_is_all_ascii_and_plots(mode):
    data = _series(3)
    band = SeriesView(data[0].t, [v - 5 for v in data[0].mean], [v + 5 for v in data[0].mean], list(data[0].mean))
    view = ChartView(
        "Température… ⚠", "°C", ("nœud 0", "训练", "c"), data, (0, 119), mode=mode,
        band=band if mode == "spread" else None, band_name="3 nodes", note="⚠ slow",
    )
    rows = [row_text(row) for row in compose_rows(view, 50, 12, focused=True, ascii=True)]
    assert all(row.isascii() and len(row) == 50 for row in rows), rows
    assert rows[0].startswith("+-") and rows[0].endswith("+") and rows[-1].startswith("+-")
    plot = "".join(row[6:-1] for row in rows[1:-2])
    assert set(plot) - set(" |+"), "nothing plotted:\n" + "\n".join(rows)


def test_the_default_look_stays_unicode():
    view = ChartView("CPU", "%", ("a",), _series(1), (0, 119), percent=True)
    rows = [row_text(row) for row in compose_rows(view, 40, 8)]
    assert rows[0].startswith("╭─") and any(c in rows[3] + rows[4] + rows[5] for c in map(chr, range(0x2801, 0x2900)))


def test_ascii_vitals_draw_bars_of_hashes():
    assert meter_bar(0.5, 10, ascii=True) == ("#####", ".....")
    assert meter_bar(0.04, 10, ascii=True) == ("", "..........")
    assert meter_bar(1.0, 4, ascii=True) == ("####", "")
    model = VitalsModel(
        title="AMD EPYC · 64 cores", meters=(Meter("CPU", 0.42, "42% 60°C"), Meter("Mem", 0.9, "90%")),
        lines=(("Net", "↓ 3 MiB/s ↑ 1 MiB/s"),), notes=("GPU collector hung…",),
        gpu=GpuSection(heading="2 × H100", rows=(GpuRow("GPU0", "87%", 0.87, details=(("70°C", "value"),)),)),
    )
    rows = [row_text(row) for row in vitals_rows(model, 40, 12, ascii=True)]
    assert all(row.isascii() and len(row) == 40 for row in rows), rows
    assert any("#####" in row for row in rows) and any(row.startswith("! GPU collector") for row in rows)


# ------------------------------------------------------------------------ the settings


@pytest.mark.parametrize(
    ("environ", "utf8"),
    [
        ({}, False),
        ({"LANG": "C"}, False),
        ({"LANG": "POSIX"}, False),
        ({"LANG": "C.UTF-8"}, True),
        ({"LANG": "en_US.utf8"}, True),
        ({"LANG": "de_DE.ISO-8859-1"}, False),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "C"}, False),  # LC_ALL wins
        ({"LANG": "C", "LC_CTYPE": "C.UTF-8"}, True),  # then LC_CTYPE
        ({"LANG": "C.UTF-8", "LC_CTYPE": "C", "LC_ALL": ""}, False),  # an empty LC_ALL is not set
        ({"LANG": "sr_RS.UTF-8@latin"}, True),
        ({"LANG": "xx_NOWHERE"}, False),  # no codeset named, and the C library knows no such locale
    ],
)
def test_the_locale_decides_as_the_c_library_does(environ, utf8):
    assert locale_is_utf8(environ) is utf8


def test_ascii_layers_defaults_file_environment_flag(tmp_path):
    path = tmp_path / "config.toml"
    assert load(environ={}, path=path).ascii is None, "unset: the locale decides"
    assert resolve_ascii(Config(), {"LANG": "C"}).ascii is True
    assert resolve_ascii(Config(), {"LANG": "en_GB.UTF-8"}).ascii is False
    path.write_text("ascii = false\n")
    assert resolve_ascii(load(environ={}, path=path), {"LANG": "C"}).ascii is False, "the file beats the locale"
    assert load(environ={"LEET_ASCII": "1"}, path=path).ascii is True, "LEET_ASCII beats the file"
    assert load(environ={"LEET_ASCII": "0"}, path=path).ascii is False
    assert load({"ascii": True}, environ={"LEET_ASCII": "0"}, path=path).ascii is True, "the flag beats them all"
    path.write_text('ascii = "yes"\n')
    with pytest.raises(ValueError, match="ascii must be true or false"):
        load(environ={}, path=path)


def test_no_color_and_a_dumb_terminal_turn_colour_off(tmp_path):
    path = tmp_path / "config.toml"
    assert load(environ={}, path=path).color is True
    assert load(environ={"NO_COLOR": ""}, path=path).color is True, "no-color.org: an empty NO_COLOR is no request"
    assert load(environ={"NO_COLOR": "1"}, path=path).color is False
    assert load(environ={"TERM": "dumb"}, path=path).color is False
    path.write_text("color = true\n")
    assert load(environ={"NO_COLOR": "yes"}, path=path).color is False, "the environment beats the file"
    path.write_text("color = false\n")
    assert load(environ={}, path=path).color is False
    assert terminal_has_color({"TERM": "xterm-256color"}) and not terminal_has_color({"TERM": "dumb"})


@pytest.mark.parametrize("argv", [["symon", "--ascii"], ["symon", "--no-ascii"], ["symon"]])
def test_symon_takes_ascii_flags(argv):
    args = build_parser().parse_args(argv)
    assert args.ascii is {"--ascii": True, "--no-ascii": False}.get(argv[-1])


def test_leet_path_takes_the_ascii_flag():
    from leet.cli import _run_parser

    assert _run_parser().parse_args(["runs/", "--ascii"]).ascii is True
    assert _run_parser().parse_args(["runs/"]).ascii is None


# ------------------------------------------------------------------------- the filters


def test_the_ascii_filter_maps_every_cell_and_keeps_styles():
    bold = Style(bold=True)
    out = AsciiFilter().apply([Segment("╭─ 训 ─╮", bold), Segment("plain"), Segment("\x1b[?25l", None, [])], Color(0, 0, 0))
    assert out[0] == Segment("+- ?? -+", bold)
    assert out[1] == Segment("plain") and out[2] == Segment("\x1b[?25l", None, [])


def test_the_plain_filter_drops_colour_and_keeps_attributes_and_clicks():
    segments = [
        Segment("text", Style(color="red", bold=True)),
        Segment("thumb", Style(color="#5a5a5a", bgcolor="#121212", reverse=True)),
        Segment("click", Style(color="blue") + Style.from_meta({"@click": "app.quit"})),
        Segment("bare"),
    ]
    out = PlainFilter().apply(segments, Color.parse("#121212"))
    assert all(segment.style is None or (segment.style.color is None and segment.style.bgcolor is None) for segment in out)
    assert out[0].style.bold and not out[0].style.reverse
    assert out[1].style.reverse
    assert out[2].style.meta == {"@click": "app.quit"}, "mouse actions survive"
    assert out[3] == Segment("bare")
    assert terminal_filters(ascii=False, color=True) == []
    assert [type(f) for f in terminal_filters(ascii=True, color=False)] == [PlainFilter, AsciiFilter]


# ---------------------------------------------------------------------- whole screens


SGR = re.compile(r"\x1b\[([0-9;:]*)m")
COLOUR_PARAMS = re.compile(r"(^|;)(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;|$)")


def screen_text(app, styles: bool = False) -> str:
    """The whole screen as the terminal gets it (every filter applied), as text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text(styles=styles)


def symon_app(gpus: int, **settings) -> LeetApp:
    """The demo system monitor, with these terminal settings."""
    from leet.testing.demo import make_demo

    demo = make_demo(gpus=gpus)
    return LeetApp(demo.source, replace(demo.app.config, **settings), clock=demo.clock, live=False)


def non_ascii(text: str) -> set[str]:
    return {char for char in text if not char.isascii()}


async def test_symon_in_ascii_mode_puts_only_ascii_on_screen():
    app = symon_app(2, ascii=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = screen_text(app)
        assert not non_ascii(screen), non_ascii(screen)
        assert "+- CPU Core" in screen and "###" in screen
        for key in ("y", "y"):  # the focused chart as a heatmap, with its scale
            await pilot.press(key)
        await pilot.pause()
        screen = screen_text(app)
        assert not non_ascii(screen) and "heatmap" in screen and ".:-=" in screen
        await pilot.press("question_mark")  # help: Textual's own widgets, borders and scrollbar
        await pilot.pause()
        screen = screen_text(app)
        assert not non_ascii(screen), non_ascii(screen)


async def test_the_run_view_in_ascii_mode_puts_only_ascii_on_screen():
    from leet.testing.demo import make_run_demo
    from leet.ui.screens.run import RunScreen

    demo = make_run_demo()
    app = LeetApp(demo.source, replace(demo.app.config, ascii=True), live=False, screen=lambda: RunScreen(demo.source))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = screen_text(app)
        assert not non_ascii(screen), non_ascii(screen)


async def test_without_colour_the_screen_has_no_colour_and_focus_is_reversed():
    app = symon_app(1, color=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        await pilot.pause()
        codes = SGR.findall(screen_text(app, styles=True))
        assert codes, "bold and reverse still reach the screen"
        assert not [code for code in codes if COLOUR_PARAMS.search(code)], sorted(set(codes))
        assert any("7" in code.split(";") for code in codes), "the focused panel stands out in reverse"
