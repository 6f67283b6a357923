"""Braille cell encoding, drawing primitives and colour runs."""

from __future__ import annotations

import pytest

from widgets.braille import BRAILLE_BASE, BrailleCanvas, glyph, merge_runs


def lit(canvas: BrailleCanvas) -> set[tuple[int, int]]:
    """Every set dot as (x, y), read back from the rendered text."""
    bits_at = {0x01: (0, 0), 0x02: (0, 1), 0x04: (0, 2), 0x40: (0, 3),
               0x08: (1, 0), 0x10: (1, 1), 0x20: (1, 2), 0x80: (1, 3)}
    dots = set()
    for row, text in enumerate(canvas.text()):
        for column, char in enumerate(text):
            bits = 0 if char == " " else ord(char) - BRAILLE_BASE
            for bit, (dx, dy) in bits_at.items():
                if bits & bit:
                    dots.add((column * 2 + dx, row * 4 + dy))
    return dots


@pytest.mark.parametrize(
    ("x", "y", "code"),
    [(0, 0, 0x2801), (0, 1, 0x2802), (0, 2, 0x2804), (0, 3, 0x2840),
     (1, 0, 0x2808), (1, 1, 0x2810), (1, 2, 0x2820), (1, 3, 0x2880)],
)
def test_each_dot_has_its_braille_bit(x: int, y: int, code: int) -> None:
    canvas = BrailleCanvas(1, 1)
    canvas.set(x, y, 0)
    assert canvas.rows() == [[(chr(code), 0)]]


def test_all_eight_dots_make_a_full_cell() -> None:
    canvas = BrailleCanvas(1, 1)
    for x in range(2):
        for y in range(4):
            canvas.set(x, y, 3)
    assert canvas.rows() == [[("⣿", 3)]]


def test_empty_cells_are_spaces_owned_by_nobody() -> None:
    canvas = BrailleCanvas(5, 2)
    assert canvas.rows() == [[("     ", -1)], [("     ", -1)]]
    assert glyph(0) == " "


def test_dot_coordinates_run_top_down_across_cells() -> None:
    canvas = BrailleCanvas(2, 2)
    canvas.set(3, 7, 0)  # bottom-right dot of the bottom-right cell
    assert canvas.text() == ["  ", " ⢀"]
    assert canvas.cell(1, 1) == (0x80, 0)


def test_later_owner_takes_the_cell() -> None:
    canvas = BrailleCanvas(1, 1)
    canvas.set(0, 0, 0)
    canvas.set(1, 3, 1)
    assert canvas.rows() == [[(chr(0x2800 | 0x01 | 0x80), 1)]]


def test_dots_outside_the_canvas_are_ignored() -> None:
    canvas = BrailleCanvas(2, 1)
    for x, y in [(-1, 0), (4, 0), (0, -1), (0, 4), (100, 100)]:
        canvas.set(x, y, 0)
    assert canvas.text() == ["  "]


def test_negative_size_is_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match="negative"):
        BrailleCanvas(-1, 2)


def test_runs_merge_neighbouring_cells_of_one_owner() -> None:
    assert merge_runs("abcde", [0, 0, 1, -1, -1]) == [("ab", 0), ("c", 1), ("de", -1)]
    assert merge_runs("", []) == []


def test_row_runs_cover_the_full_width() -> None:
    canvas = BrailleCanvas(7, 3)
    canvas.line(0, 0, 13, 11, 0)
    canvas.line(0, 11, 13, 0, 1)
    canvas.vline(6, 0, 11, 2)
    for row in canvas.rows():
        assert sum(len(text) for text, _ in row) == 7
        owners = [owner for _, owner in row]
        assert all(a != b for a, b in zip(owners, owners[1:])), "runs must be merged"


def test_zero_width_canvas_has_empty_rows() -> None:
    assert BrailleCanvas(0, 2).rows() == [[], []]


def test_vline_fills_partial_and_whole_cells() -> None:
    canvas = BrailleCanvas(1, 3)
    canvas.vline(0, 9, 2, 0)  # reversed ends are fine
    assert [canvas.cell(0, r)[0] for r in range(3)] == [0x04 | 0x40, 0x47, 0x01 | 0x02]


def test_vline_is_clipped_to_the_canvas() -> None:
    canvas = BrailleCanvas(1, 1)
    canvas.vline(1, -50, 50, 0)
    canvas.vline(5, 0, 3, 0)
    assert canvas.text() == [chr(0x2800 | 0xB8)]


def test_horizontal_and_diagonal_lines() -> None:
    canvas = BrailleCanvas(3, 1)
    canvas.line(0, 1, 5, 1, 0)
    assert lit(canvas) == {(x, 1) for x in range(6)}

    canvas = BrailleCanvas(2, 1)
    canvas.line(3, 3, 0, 0, 0)
    assert lit(canvas) == {(0, 0), (1, 1), (2, 2), (3, 3)}


def test_steep_line_leaves_no_holes() -> None:
    canvas = BrailleCanvas(2, 3)
    canvas.line(0, 0, 3, 11, 0)
    rows = {y for _, y in lit(canvas)}
    assert rows == set(range(12))


def test_line_from_far_outside_enters_through_the_edge() -> None:
    canvas = BrailleCanvas(4, 2)
    canvas.line(-1_000_000, 4, 7, 4, 0)
    assert lit(canvas) == {(x, 4) for x in range(8)}


def test_line_entirely_outside_draws_nothing() -> None:
    canvas = BrailleCanvas(4, 2)
    canvas.line(-10, -5, -1, -1, 0)
    canvas.line(20, 0, 30, 7, 0)
    assert lit(canvas) == set()


def test_clear_forgets_everything() -> None:
    canvas = BrailleCanvas(2, 1)
    canvas.line(0, 0, 3, 3, 1)
    canvas.clear()
    assert canvas.rows() == [[("  ", -1)]]
